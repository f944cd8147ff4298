//! Sparse GP regression with relevance pursuit (RRP; Ament et al. 2024, the RCaGP paper's
//! App. F.3, spec `rcagp.md` §2.10): every training point may carry its own extra noise
//! variance `ρ_j ≥ 0`, and a greedy search decides which points need one. A gross outlier gets
//! a large `ρ_j` and stops pulling the fit; a clean point keeps `ρ_j = 0`.
//!
//! The model is Titsias' collapsed bound with the heteroscedastic noise `D_ρ = diag(σ² + ρ)`,
//!
//! ```text
//! −2ℓ = n log 2π + log det(Q + D_ρ) + (y − m)ᵀ(Q + D_ρ)⁻¹(y − m) + tr(D_ρ⁻¹(K − Q)),
//! ```
//!
//! which is the collapsed core of SGPR (`sparse/collapsed.rs`) with precision
//! `P = D_ρ⁻¹` (see `objective.rs`). The greedy loop (`pursuit.rs`) alternates an optimisation of
//! the hyperparameters, the inducing inputs and the support's `log ρ` with the addition of the
//! `κ = ⌈0.05 n⌉` points whose own best `ρ_j` (the exact one-dimensional optimum of the bound,
//! `loo.rs`) is largest, up to `|S| ≤ 0.3 n`, and keeps the support size with the best bound.
//! Prediction is SGPR's with noise `D_ρ`; a new observation has noise σ².

mod loo;
mod objective;
mod pursuit;
#[cfg(test)]
mod tests;

use faer::{Mat, MatRef};

use self::objective::Problem;
use super::checks::{check_matrix, check_training_data};
use super::inducing::InducingInit;
use super::sparse::collapsed::{Factors, Wanted};
use super::sparse::{check_model, KUU_JITTER};
use super::ModelError;
use crate::fit::{FitReport, Optimizer};
use crate::kernels::Kernel;
use crate::means::Mean;
use crate::posterior::{LinearGaussian, LinearGaussianForm, Marginals};

pub use loo::{LeaveOneOut, RhoUpdate};

/// Settings of [`RelevancePursuit::fit`].
#[derive(Clone, Debug, PartialEq)]
pub struct RrpConfig {
    /// Number of inducing inputs; capped at the number of training rows.
    pub inducing: usize,
    /// How the inducing inputs start.
    pub init: InducingInit,
    /// Optimise the inducing inputs (otherwise they stay at their initial values).
    pub learn_inducing: bool,
    /// Optimise the noise variance σ².
    pub learn_noise: bool,
    /// Optimise the mean's parameters.
    pub learn_mean: bool,
    /// The optimiser of each round (over the hyperparameters, the inducing inputs and the
    /// support's `log ρ`).
    pub optimizer: Optimizer,
    /// Points added per round, as a fraction of `n` (rounded up): `κ = ⌈expansion · n⌉`.
    pub expansion: f64,
    /// The largest support, as a fraction of `n` (rounded down).
    pub max_support: f64,
    /// How a candidate's `ρ_j` is chosen: the exact one-dimensional optimum or the paper's
    /// closed form.
    pub update: RhoUpdate,
    /// Seed of the inducing-input initialisation.
    pub seed: u64,
}

impl Default for RrpConfig {
    /// 100 k-means inducing inputs (learned), L-BFGS (at most 500 iterations) in every round,
    /// `κ = ⌈0.05 n⌉`, `|S| ≤ 0.3 n`, the exact one-dimensional `ρ` update.
    fn default() -> Self {
        RrpConfig {
            inducing: 100,
            init: InducingInit::KMeans,
            learn_inducing: true,
            learn_noise: true,
            learn_mean: true,
            optimizer: Optimizer::lbfgs(500),
            expansion: 0.05,
            max_support: 0.3,
            update: RhoUpdate::Exact,
            seed: 0,
        }
    }
}

impl RrpConfig {
    /// The most rounds of the greedy loop: the empty support, then one per `κ` points added
    /// until `|S|` reaches `⌊max_support · n⌋` (for large `n`; fewer when candidates run out).
    pub fn max_rounds(&self) -> usize {
        1 + (self.max_support / self.expansion).ceil() as usize
    }
}

/// One round of the greedy loop: the support size it optimised and the bound it reached.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PursuitRound {
    /// `|S|` during the round.
    pub support: usize,
    /// The collapsed bound at the end of the round.
    pub bound: f64,
}

/// A fitted (or reconstructed) sparse GP with relevance pursuit.
#[derive(Clone, Debug)]
pub struct RelevancePursuit {
    x: Mat<f64>,
    y: Vec<f64>,
    kernel: Kernel,
    mean: Mean,
    noise: f64,
    z: Mat<f64>,
    rho: Vec<f64>,
    factors: Factors,
    bound: f64,
    report: Option<FitReport>,
    rounds: Vec<PursuitRound>,
}

impl RelevancePursuit {
    /// The model at fixed parameters, with its caches recomputed (for model files): training
    /// data `x`, `y`, kernel, mean, noise variance σ², inducing inputs `z` and the extra noise
    /// `rho` of every training point (0 outside the support).
    ///
    /// # Errors
    /// Inconsistent or non-finite inputs, a negative `ρ`, or a `K_uu` that cannot be factorised.
    pub fn from_parts(
        x: Mat<f64>,
        y: Vec<f64>,
        kernel: Kernel,
        mean: Mean,
        noise: f64,
        z: Mat<f64>,
        rho: Vec<f64>,
    ) -> Result<RelevancePursuit, ModelError> {
        check_training_data(x.as_ref(), &y)?;
        check_model(x.ncols(), &kernel, &mean, noise)?;
        check_matrix("inducing input", z.as_ref(), x.ncols())?;
        if rho.len() != y.len() {
            return Err(ModelError::Invalid(format!(
                "{} extra noise variances (rho) for {} training rows: expected one per row",
                rho.len(),
                y.len()
            )));
        }
        if let Some(j) = rho.iter().position(|r| !(r.is_finite() && *r >= 0.0)) {
            return Err(ModelError::Invalid(format!(
                "extra noise variance rho of row {j} is {}: expected a finite value ≥ 0",
                rho[j]
            )));
        }
        let problem = Problem {
            x: x.as_ref(),
            y: &y,
        };
        let e = problem.evaluate(&kernel, &mean, noise, z.as_ref(), &rho, &[], Wanted::Value)?;
        Ok(RelevancePursuit {
            kernel,
            mean,
            noise,
            factors: e.factors,
            bound: e.value,
            report: None,
            rounds: Vec::new(),
            x,
            y,
            z,
            rho,
        })
    }

    /// Latent predictive mean and variance at the rows of `xs`.
    ///
    /// # Panics
    /// If `xs` does not have the training inputs' number of columns.
    pub fn predict(&self, xs: MatRef<'_, f64>) -> Marginals {
        self.factors
            .marginals(&self.kernel, &self.mean, self.z.as_ref(), xs)
    }

    /// Latent predictive mean and joint covariance at the rows of `xs`.
    ///
    /// # Panics
    /// As for [`RelevancePursuit::predict`].
    pub fn predict_joint(&self, xs: MatRef<'_, f64>) -> (Vec<f64>, Mat<f64>) {
        self.factors
            .joint(&self.kernel, &self.mean, self.z.as_ref(), xs)
    }

    /// The leave-one-out quantities of every training point at the current parameters.
    pub fn leave_one_out(&self) -> LeaveOneOut {
        loo::leave_one_out(self)
    }

    /// The training inputs.
    pub fn x(&self) -> MatRef<'_, f64> {
        self.x.as_ref()
    }

    /// The training targets.
    pub fn y(&self) -> &[f64] {
        &self.y
    }

    /// The collapsed bound at the current parameters.
    pub fn bound(&self) -> f64 {
        self.bound
    }

    /// The noise variance σ² shared by every point (and by a new observation).
    pub fn noise(&self) -> f64 {
        self.noise
    }

    /// The extra noise variance `ρ_j` of every training point (0 outside the support).
    pub fn rho(&self) -> &[f64] {
        &self.rho
    }

    /// The support: the training rows with `ρ_j > 0`, in row order.
    pub fn support(&self) -> Vec<usize> {
        (0..self.rho.len()).filter(|&j| self.rho[j] > 0.0).collect()
    }

    /// The covariance function.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The prior mean.
    pub fn mean(&self) -> &Mean {
        &self.mean
    }

    /// The inducing inputs (m×d).
    pub fn inducing(&self) -> MatRef<'_, f64> {
        self.z.as_ref()
    }

    /// The jitter added to `K_uu` in the end.
    pub fn jitter(&self) -> f64 {
        KUU_JITTER + self.factors.l_uu.jitter()
    }

    /// The report of the kept round's optimiser run (`None` for a model built with
    /// [`RelevancePursuit::from_parts`]).
    pub fn report(&self) -> Option<&FitReport> {
        self.report.as_ref()
    }

    /// Every round of the greedy loop, in order (empty for a model built with
    /// [`RelevancePursuit::from_parts`]).
    pub fn rounds(&self) -> &[PursuitRound] {
        &self.rounds
    }
}

impl LinearGaussianForm for RelevancePursuit {
    type Covariance = Kernel;
    type Mean = Mean;
    fn linear_gaussian(&self) -> LinearGaussian<'_, Kernel, Mean> {
        self.factors
            .linear_gaussian(&self.kernel, &self.mean, self.z.as_ref())
    }
}
