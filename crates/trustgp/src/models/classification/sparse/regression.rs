//! Sparse GP regression under the FIC, DTC or VAR prior at fixed hyperparameters and inducing
//! inputs, with its approximate log marginal likelihood (Quiñonero-Candela & Rasmussen 2005
//! for FIC and DTC, Titsias 2009 for VAR):
//!
//! ```text
//! DTC, FIC:  log N(ỹ | 0, Q_ff + Λ),   Λ = σ²I (+ G for FIC)
//! VAR:       log N(ỹ | 0, Q_ff + σ²I) − tr(K_ff − Q_ff) / (2σ²)
//! ```
//!
//! All three are SGPR's collapsed core `G(P, ỹ)` at `P = Λ⁻¹` plus constants:
//! `log N(ỹ | 0, Q + Λ) = G + ½ Σ_j P_j (K_jj − Q_jj) + ½ Σ_j log P_j − (n/2) log 2π`, and VAR
//! drops the trace term, which makes VAR exactly SGPR's bound (tested against
//! [`SparseGp`](crate::models::sparse::SparseGp)).

use faer::{Mat, MatRef};

use super::{check_inducing, LowRank, SparsePrior};
use crate::kernels::Kernel;
use crate::means::Mean;
use crate::models::checks::{check_test_inputs, check_training_data};
use crate::models::sparse::check_model;
use crate::models::sparse::collapsed::{collapsed_bound, Factors, Wanted};
use crate::models::ModelError;
use crate::posterior::{LinearGaussian, LinearGaussianForm, Marginals};

/// Sparse GP regression under the FIC, DTC or VAR prior.
#[derive(Clone, Debug)]
pub struct SparseRegression {
    prior: SparsePrior,
    kernel: Kernel,
    mean: Mean,
    noise: f64,
    z: Mat<f64>,
    jitter: f64,
    factors: Factors,
    lml: f64,
}

impl SparseRegression {
    /// The posterior at fixed hyperparameters: training inputs `x` (n×d), targets `y`, kernel,
    /// prior mean, noise variance `σ²`, inducing inputs `z` (M×d) and the jitter added to the
    /// diagonal of `K_uu` ([`INDUCING_JITTER`](super::INDUCING_JITTER) by default; escalated
    /// further only if `K_uu` still cannot be factorised).
    ///
    /// # Errors
    /// Inconsistent or non-finite inputs, a kernel without lengthscale values or that does not
    /// fit the inputs, a non-positive noise, a negative jitter, or a `K_uu` that cannot be
    /// factorised.
    #[allow(clippy::too_many_arguments)]
    pub fn at(
        prior: SparsePrior,
        x: MatRef<'_, f64>,
        y: &[f64],
        kernel: Kernel,
        mean: Mean,
        noise: f64,
        z: MatRef<'_, f64>,
        jitter: f64,
    ) -> Result<SparseRegression, ModelError> {
        check_training_data(x, y)?;
        check_model(x.ncols(), &kernel, &mean, noise)?;
        check_inducing(z, x.ncols(), jitter)?;
        let low = LowRank::new(&kernel, x, z, jitter, prior)?;
        let m = mean.eval(x);
        let resid: Vec<f64> = y.iter().zip(&m).map(|(a, b)| a - b).collect();
        let p = low.precision(&vec![1.0 / noise; y.len()]);
        let core = collapsed_bound(&kernel, x, z, jitter, &p, &resid, Wanted::Value)?;
        let n = y.len() as f64;
        let mut lml = core.value - 0.5 * n * (2.0 * std::f64::consts::PI).ln()
            + 0.5 * p.iter().map(|v| v.ln()).sum::<f64>();
        if prior != SparsePrior::Var {
            lml += 0.5 * p.iter().zip(&low.trace).map(|(a, b)| a * b).sum::<f64>();
        }
        Ok(SparseRegression {
            prior,
            kernel,
            mean,
            noise,
            z: z.to_owned(),
            jitter,
            factors: core.factors,
            lml,
        })
    }

    /// The approximate log marginal likelihood (see the module docs).
    pub fn lml(&self) -> f64 {
        self.lml
    }

    /// Which sparse prior.
    pub fn prior(&self) -> SparsePrior {
        self.prior
    }

    /// The noise variance `σ²`.
    pub fn noise(&self) -> f64 {
        self.noise
    }

    /// The kernel.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The inducing inputs (M×d).
    pub fn inducing(&self) -> MatRef<'_, f64> {
        self.z.as_ref()
    }

    /// The jitter added to `K_uu` in the end (the given one plus any escalation).
    pub fn jitter(&self) -> f64 {
        self.jitter + self.factors.l_uu.jitter()
    }

    /// Latent predictive means and variances at the rows of `xs`.
    ///
    /// # Errors
    /// `xs` with the wrong number of columns or non-finite entries.
    pub fn predict(&self, xs: MatRef<'_, f64>) -> Result<Marginals, ModelError> {
        check_test_inputs(xs, self.z.ncols())?;
        Ok(self
            .factors
            .marginals(&self.kernel, &self.mean, self.z.as_ref(), xs))
    }
}

impl LinearGaussianForm for SparseRegression {
    type Covariance = Kernel;
    type Mean = Mean;
    /// Support points `U`, `t = Σ_u K_uf Λ⁻¹ ỹ`, `S = K_uu⁻¹ − Σ_u`.
    fn linear_gaussian(&self) -> LinearGaussian<'_, Kernel, Mean> {
        self.factors
            .linear_gaussian(&self.kernel, &self.mean, self.z.as_ref())
    }
}
