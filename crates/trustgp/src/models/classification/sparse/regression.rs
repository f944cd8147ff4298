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
use crate::fit::restarts::{maximize, plain};
use crate::fit::FitOptions;
use crate::kernels::{Covariance, Kernel};
use crate::linalg::parallelism_for;
use crate::means::Mean;
use crate::models::checks::{check_test_inputs, check_training_data};
use crate::models::hyper::NOISE_BOUNDS;
use crate::models::sparse::check_model;
use crate::models::sparse::collapsed::{collapsed_bound, Factors, Wanted};
use crate::models::ModelError;
use crate::posterior::{LinearGaussian, LinearGaussianForm, Marginals};

/// Sparse GP regression under the FIC, DTC or VAR prior.
#[derive(Clone, Debug)]
pub struct SparseRegression {
    prior: SparsePrior,
    x: Mat<f64>,
    y: Vec<f64>,
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
            x: x.to_owned(),
            y: y.to_vec(),
            kernel,
            mean,
            noise,
            z: z.to_owned(),
            jitter,
            factors: core.factors,
            lml,
        })
    }

    /// Fits the kernel's log-hyperparameters and `log σ²` by maximising
    /// [`SparseRegression::lml`] (analytic gradient; L-BFGS-B from the given values plus
    /// `options.restarts` seeded restarts; only `optimize`, `restarts`, `seed` and `lbfgs` of
    /// `options` are used). The inducing inputs and the mean stay fixed. A kernel without
    /// lengthscale values is initialised from the data first.
    ///
    /// # Errors
    /// As for [`SparseRegression::at`], or every optimiser start failing.
    #[allow(clippy::too_many_arguments)]
    pub fn fit(
        prior: SparsePrior,
        x: MatRef<'_, f64>,
        y: &[f64],
        kernel: Kernel,
        mean: Mean,
        noise: f64,
        z: MatRef<'_, f64>,
        jitter: f64,
        options: &FitOptions,
    ) -> Result<SparseRegression, ModelError> {
        let mut kernel = kernel;
        kernel.initialize(x)?;
        let start = Self::at(prior, x, y, kernel.clone(), mean.clone(), noise, z, jitter)?;
        if !options.optimize {
            return Ok(start);
        }
        let np = kernel.n_params();
        let mut x0 = kernel.params();
        x0.push(noise.ln());
        let mut bounds = kernel.bounds();
        bounds.push((NOISE_BOUNDS.0.ln(), NOISE_BOUNDS.1.ln()));
        let mut names = kernel.param_names();
        names.push("log noise".into());
        let objective = |v: &[f64]| -> Result<(f64, Vec<f64>), String> {
            let mut k = kernel.clone();
            k.set_params(&v[..np]).map_err(|e| e.to_string())?;
            let m = Self::at(prior, x, y, k, mean.clone(), v[np].exp(), z, jitter)
                .map_err(|e| e.to_string())?;
            let g = m.lml_gradient().map_err(|e| e.to_string())?;
            Ok((m.lml, g))
        };
        let (best, _) = maximize(
            plain(objective),
            &x0,
            &bounds,
            &names,
            options.restarts,
            options.seed,
            &options.lbfgs,
            parallelism_for(x.nrows()),
        )?;
        kernel.set_params(&best[..np])?;
        Self::at(prior, x, y, kernel, mean, best[np].exp(), z, jitter)
    }

    /// The approximate log marginal likelihood (see the module docs).
    pub fn lml(&self) -> f64 {
        self.lml
    }

    /// The gradient of [`SparseRegression::lml`] in the kernel's log-hyperparameters followed
    /// by `log σ²`.
    ///
    /// # Errors
    /// A `K_uu` that cannot be factorised (not for a model that [`SparseRegression::at`] built).
    pub fn lml_gradient(&self) -> Result<Vec<f64>, ModelError> {
        let (x, y) = (self.x.as_ref(), self.y.as_slice());
        let low = LowRank::new(&self.kernel, x, self.z.as_ref(), self.jitter, self.prior)?;
        let m = self.mean.eval(x);
        let resid: Vec<f64> = y.iter().zip(&m).map(|(a, b)| a - b).collect();
        let tau = vec![1.0 / self.noise; y.len()];
        let (mut grad, d_log_tau) = low.evidence_gradient(
            &self.kernel,
            x,
            self.z.as_ref(),
            self.jitter,
            self.prior,
            &tau,
            &resid,
        )?;
        // τ = 1/σ²: ∂/∂log σ² = −∂/∂log τ.
        grad.push(-d_log_tau.iter().sum::<f64>());
        Ok(grad)
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
