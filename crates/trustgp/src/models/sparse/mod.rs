//! Sparse GPs with inducing inputs and a collapsed bound: SGPR (Titsias 2009) and RCSVGP
//! (the robust, score-matching variant of spec §2.8).
//!
//! Both bounds are "a Gaussian pseudo-likelihood with diagonal precision `P` and a shifted
//! target, collapsed over the optimal `q(u)`", so one core (`collapsed.rs`) computes the bound,
//! its gradient and the predictive factors, and the models differ only in how they build `P`,
//! the target and the constant (`likelihood.rs`):
//!
//! * SGPR: `ℓ = log N(y | m, Q + σ²I) − tr(K − Q)/(2σ²)`, `Q = K_fu K_uu⁻¹ K_uf`;
//! * RCSVGP: `P = 2w²/σ⁴`, target `y − m_w`, plus the score-matching constant; with `Z = X` it
//!   recovers RCGP, and with `w ≡ σ/√2` it is SGPR plus `n + (n/2) log 2πσ²`.
//!
//! Each evaluation costs O(n m² + m³) time and O(n m) memory. The parameters — the kernel's
//! log-hyperparameters, `log σ²`, the mean's parameters and (unless frozen) the inducing inputs
//! — are fitted by the shared [training loop](crate::fit::maximize) with analytic gradients.
//! The soft threshold `c` of the robust weight is fixed at the start from the initial mean, and
//! `β` is a setting. `joint` adds a function of the predictive at query points to the bound's
//! gradient (for EULBO).

pub(in crate::models) mod collapsed;
mod fit;
mod joint;
mod likelihood;
mod posterior;
mod predict;
#[cfg(test)]
mod tests;

use faer::{Mat, MatRef};

use self::collapsed::{collapsed_bound, Factors, Wanted};
pub(in crate::models) use self::fit::check_model;
use self::likelihood::WeightSettings;
use super::checks::{check_matrix, check_training_data};
use super::inducing::InducingInit;
use super::ModelError;
use crate::fit::{FitReport, Optimizer};
use crate::kernels::Kernel;
use crate::means::Mean;
use crate::posterior::Marginals;

/// The jitter added to the diagonal of `K_uu` (spec §6.1); the factorisation escalates it
/// further only if that is not enough.
pub const KUU_JITTER: f64 = 1e-6;

/// Which collapsed model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SparseKind {
    /// Titsias' sparse GP regression (Gaussian likelihood).
    Sgpr,
    /// The robust conjugate sparse GP (IMQ-weighted score-matching pseudo-likelihood).
    Rcsvgp,
}

/// Settings of [`SparseGp::fit`].
#[derive(Clone, Debug, PartialEq)]
pub struct SparseConfig {
    /// Which model.
    pub kind: SparseKind,
    /// Number of inducing inputs; capped at the number of training rows.
    pub inducing: usize,
    /// How the inducing inputs start.
    pub init: InducingInit,
    /// Optimise the inducing inputs (otherwise they stay at their initial values).
    pub learn_inducing: bool,
    /// RCSVGP: the soft threshold is the `(1 − ε)` quantile of `|y − m(x)|` at the initial mean.
    pub epsilon: f64,
    /// RCSVGP: the weight scale `β` (fixed; 1 in the RCaGP paper).
    pub beta: f64,
    /// Optimise the noise variance (otherwise it stays at its initial value).
    pub learn_noise: bool,
    /// Optimise the mean's parameters (otherwise they stay at their initial values).
    pub learn_mean: bool,
    /// The optimiser (L-BFGS suits the deterministic bound).
    pub optimizer: Optimizer,
    /// Seed of the inducing-input initialisation.
    pub seed: u64,
}

impl Default for SparseConfig {
    /// SGPR with 100 k-means inducing inputs (learned), ε = 0.2, β = 1 and L-BFGS.
    fn default() -> Self {
        SparseConfig {
            kind: SparseKind::Sgpr,
            inducing: 100,
            init: InducingInit::KMeans,
            learn_inducing: true,
            epsilon: 0.2,
            beta: 1.0,
            learn_noise: true,
            learn_mean: true,
            optimizer: Optimizer::lbfgs(500),
            seed: 0,
        }
    }
}

/// A fitted (or reconstructed) collapsed sparse GP.
#[derive(Clone, Debug)]
pub struct SparseGp {
    kind: SparseKind,
    x: Mat<f64>,
    y: Vec<f64>,
    kernel: Kernel,
    mean: Mean,
    noise: f64,
    z: Mat<f64>,
    weight: WeightSettings,
    jitter: f64,
    factors: Factors,
    bound: f64,
    report: Option<FitReport>,
}

/// The training data and fixed settings that the bound is a function of.
struct Problem<'a> {
    kind: SparseKind,
    x: MatRef<'a, f64>,
    y: &'a [f64],
    weight: WeightSettings,
    jitter: f64,
}

/// The bound at one parameter setting.
struct Evaluation {
    value: f64,
    factors: Factors,
    /// In the order kernel log-parameters, `log σ²`, mean parameters, then Z (column-major)
    /// if it was wanted.
    grad: Option<Vec<f64>>,
}

impl Problem<'_> {
    fn evaluate(
        &self,
        kernel: &Kernel,
        mean: &Mean,
        noise: f64,
        z: MatRef<'_, f64>,
        wanted: Wanted,
    ) -> Result<Evaluation, ModelError> {
        self.evaluate_seeded(kernel, mean, noise, z, wanted, None)
    }

    /// [`Problem::evaluate`] whose gradient also carries the adjoints that `seed` computes
    /// from the factors and the pseudo-likelihood (a function of the predictive at query
    /// points, see [`joint`]); `Wanted::Value` ignores the seed.
    fn evaluate_seeded(
        &self,
        kernel: &Kernel,
        mean: &Mean,
        noise: f64,
        z: MatRef<'_, f64>,
        wanted: Wanted,
        seed: Option<joint::SeedFn<'_>>,
    ) -> Result<Evaluation, ModelError> {
        let prior = mean.eval(self.x);
        let pseudo = self.kind.pseudo(self.y, &prior, noise, self.weight);
        let core = collapsed_bound(kernel, self.x, z, self.jitter, &pseudo.p, &pseudo.t, wanted)?;
        let extra = match seed {
            Some(f) if wanted != Wanted::Value => Some(f(&core.factors, &pseudo)?),
            _ => None,
        };
        let grad = core.grad.map(|mut g| {
            if let Some(e) = &extra {
                e.add_to(&mut g);
            }
            let (d_noise, d_prior) =
                self.kind
                    .chain(self.y, &prior, noise, self.weight, &g.log_p, &g.t);
            let mut out = g.kernel;
            out.push(d_noise);
            let d_mean = mean.grad_contract(self.x, &d_prior);
            match &extra {
                Some(e) => out.extend(d_mean.iter().zip(&e.mean).map(|(a, b)| a + b)),
                None => out.extend(d_mean),
            }
            if let Some(gz) = g.z {
                for c in 0..z.ncols() {
                    out.extend((0..z.nrows()).map(|a| gz[(a, c)]));
                }
            }
            out
        });
        Ok(Evaluation {
            value: core.value + pseudo.kappa,
            factors: core.factors,
            grad,
        })
    }
}

impl SparseGp {
    /// The model at fixed parameters, with its caches recomputed (for model files): training
    /// data `x`, `y`, kernel, mean, noise variance, inducing inputs `z`, the soft threshold `c`
    /// and the weight scale `beta` (both unused by SGPR, but must be positive).
    ///
    /// # Errors
    /// Inconsistent or non-finite inputs, or a `K_uu` that cannot be factorised.
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        kind: SparseKind,
        x: Mat<f64>,
        y: Vec<f64>,
        kernel: Kernel,
        mean: Mean,
        noise: f64,
        z: Mat<f64>,
        c: f64,
        beta: f64,
    ) -> Result<SparseGp, ModelError> {
        Self::build(kind, x, y, kernel, mean, noise, z, c, beta, KUU_JITTER)
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        kind: SparseKind,
        x: Mat<f64>,
        y: Vec<f64>,
        kernel: Kernel,
        mean: Mean,
        noise: f64,
        z: Mat<f64>,
        c: f64,
        beta: f64,
        jitter: f64,
    ) -> Result<SparseGp, ModelError> {
        check_training_data(x.as_ref(), &y)?;
        fit::check_model(x.ncols(), &kernel, &mean, noise)?;
        fit::check_positive("soft threshold c", c)?;
        fit::check_positive("weight scale beta", beta)?;
        check_matrix("inducing input", z.as_ref(), x.ncols())?;
        let weight = WeightSettings { c, beta };
        let problem = Problem {
            kind,
            x: x.as_ref(),
            y: &y,
            weight,
            jitter,
        };
        let e = problem.evaluate(&kernel, &mean, noise, z.as_ref(), Wanted::Value)?;
        Ok(SparseGp {
            kind,
            kernel,
            mean,
            noise,
            weight,
            jitter,
            factors: e.factors,
            bound: e.value,
            report: None,
            x,
            y,
            z,
        })
    }

    /// Latent predictive mean and variance at the rows of `xs` (no test×test matrix is formed).
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
    /// As for [`SparseGp::predict`].
    pub fn predict_joint(&self, xs: MatRef<'_, f64>) -> (Vec<f64>, Mat<f64>) {
        self.factors
            .joint(&self.kernel, &self.mean, self.z.as_ref(), xs)
    }

    /// The training inputs (as the model saw them).
    pub fn x(&self) -> MatRef<'_, f64> {
        self.x.as_ref()
    }

    /// The training targets (as the model saw them).
    pub fn y(&self) -> &[f64] {
        &self.y
    }

    /// The collapsed bound at the current parameters.
    pub fn bound(&self) -> f64 {
        self.bound
    }

    /// The noise variance σ².
    pub fn noise(&self) -> f64 {
        self.noise
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

    /// Which model this is.
    pub fn kind(&self) -> SparseKind {
        self.kind
    }

    /// The soft threshold `c` of the robust weight (computed for SGPR too, but unused).
    pub fn threshold(&self) -> f64 {
        self.weight.c
    }

    /// The weight scale `β` (unused by SGPR).
    pub fn beta(&self) -> f64 {
        self.weight.beta
    }

    /// The weight `w_j` of every training point at the current parameters; for SGPR the
    /// constant `σ/√2` under which the robust model is Gaussian.
    pub fn weights(&self) -> Vec<f64> {
        let prior = self.mean.eval(self.x.as_ref());
        self.kind.weights(&self.y, &prior, self.noise, self.weight)
    }

    /// The jitter added to `K_uu` in the end (the fixed [`KUU_JITTER`] plus any escalation).
    pub fn jitter(&self) -> f64 {
        self.jitter + self.factors.l_uu.jitter()
    }

    /// The training run's report (`None` for a model built with [`SparseGp::from_parts`]).
    pub fn report(&self) -> Option<&FitReport> {
        self.report.as_ref()
    }
}
