//! Exact Gaussian-process regression with a Gaussian likelihood.
//!
//! The posterior is the [conjugate core](super::conjugate) with `D = σ²I` and residual
//! `r = y − m(X)`. Hyperparameters are fitted by maximising the log marginal likelihood
//!
//! ```text
//! log p(y) = −½ rᵀ α − Σ log L_ii − (n/2) log 2π,     α = (K + σ²I)⁻¹ r,
//! ∂ log p(y)/∂θ_j = ½ Σ_ab (α αᵀ − (K + σ²I)⁻¹)_ab ∂K_ab/∂θ_j
//! ```
//!
//! with L-BFGS on the flat log-space vector of [`GpHyper`], from the given start plus seeded
//! random restarts.

use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

use super::conjugate::{ConjugatePosterior, Marginals};
use super::evidence::evidence;
use super::hyper::GpHyper;
use super::multistart::maximize;
pub use super::multistart::StartReport;
use super::ModelError;
use crate::linalg::{parallelism_for, Cholesky, Parallelism};
use crate::optim::LbfgsOptions;

/// Log marginal likelihood with its gradient (with respect to [`GpHyper::to_vec`]).
#[derive(Clone, Debug)]
pub struct Lml {
    /// `log p(y | θ)`.
    pub value: f64,
    /// Gradient, empty if it was not requested.
    pub grad: Vec<f64>,
    /// Jitter the factorisation needed (0 if none).
    pub jitter: f64,
}

/// Check that the hyperparameters fit the data: the kernel is initialised and its dims and
/// ARD lengths match the inputs, and the mean has the right number of weights.
fn check_hyper(h: &GpHyper, x: MatRef<'_, f64>) -> Result<(), ModelError> {
    if !h.kernel.is_initialized() {
        return Err(ModelError::Invalid(format!(
            "kernel '{}' has lengthscales without values: initialise it from the data first",
            h.kernel
        )));
    }
    h.kernel.validate(x.ncols())?;
    h.mean.check_inputs(x.ncols())?;
    if !(h.noise.is_finite() && h.noise > 0.0) {
        return Err(ModelError::Invalid(format!(
            "noise must be a positive variance, got {}",
            h.noise
        )));
    }
    Ok(())
}

/// The largest training set the exact GP accepts. A likelihood gradient holds three n×n
/// matrices of f64 (kernel/factor, inverse, faer's workspace): 3·8·n² bytes, about 15 GB at
/// this size — the most that fits a 24 GB machine with room to spare. Larger data sets need
/// the sparse or computation-aware models.
pub const MAX_EXACT_ROWS: usize = 25_000;

/// Check the shapes and values that every exact-GP computation relies on.
fn check_data(x: MatRef<'_, f64>, y: &[f64]) -> Result<(), ModelError> {
    if x.nrows() == 0 {
        return Err(ModelError::Invalid("no training rows".into()));
    }
    if x.nrows() > MAX_EXACT_ROWS {
        let gib = 3.0 * 8.0 * (x.nrows() as f64).powi(2) / (1u64 << 30) as f64;
        return Err(ModelError::Invalid(format!(
            "{} training rows is more than the exact GP handles ({MAX_EXACT_ROWS}): it would need \
             about {gib:.0} GiB for its n×n matrices; use a subset or a scalable model",
            x.nrows()
        )));
    }
    if x.nrows() != y.len() {
        return Err(ModelError::Invalid(format!(
            "{} input rows but {} targets",
            x.nrows(),
            y.len()
        )));
    }
    if let Some(i) = y.iter().position(|v| !v.is_finite()) {
        return Err(ModelError::Invalid(format!(
            "target of training row {i} is {} (expected a finite number)",
            y[i]
        )));
    }
    Ok(())
}

/// The log marginal likelihood of `y` at hyperparameters `h`, and its gradient if `with_grad`.
pub fn log_marginal_likelihood(
    h: &GpHyper,
    x: MatRef<'_, f64>,
    y: &[f64],
    extra_diag: f64,
    par: Parallelism,
    with_grad: bool,
) -> Result<Lml, ModelError> {
    check_data(x, y)?;
    check_hyper(h, x)?;
    let m = h.mean.eval(x);
    let r: Vec<f64> = y.iter().zip(&m).map(|(yi, mi)| yi - mi).collect();
    let d = vec![h.noise + extra_diag; y.len()];
    let e = evidence(h.kernel.clone(), h.mean.clone(), x, &r, &d, par, with_grad)?;
    let mut grad = Vec::new();
    if with_grad {
        grad = e.grad_kernel;
        grad.push(h.noise * e.grad_diag.iter().sum::<f64>());
        grad.extend(h.mean.grad_contract(x, e.posterior.t()));
    }
    Ok(Lml {
        value: e.value,
        grad,
        jitter: e.posterior.cholesky().jitter(),
    })
}

/// Options of [`ExactGp::fit`].
#[derive(Clone, Debug)]
pub struct FitOptions {
    /// Optimise the hyperparameters (otherwise keep the initial ones).
    pub optimize: bool,
    /// Random restarts in addition to the initial start.
    pub restarts: usize,
    /// Seed of the random restarts.
    pub seed: u64,
    /// L-BFGS settings.
    pub lbfgs: LbfgsOptions,
    /// A fixed value added to the noise on the training diagonal (scikit-learn's `alpha`).
    pub extra_diag: f64,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            optimize: true,
            restarts: 0,
            seed: 0,
            lbfgs: LbfgsOptions::default(),
            extra_diag: 0.0,
        }
    }
}

/// A fitted exact GP.
#[derive(Clone, Debug)]
pub struct ExactGp {
    hyper: GpHyper,
    extra_diag: f64,
    posterior: ConjugatePosterior,
    residual: Vec<f64>,
    lml: f64,
    starts: Vec<StartReport>,
}

impl ExactGp {
    /// Fit to inputs `x` (n×d) and targets `y`, starting from `init` (whose kernel is
    /// initialised from the data if it has data-driven defaults).
    pub fn fit(
        x: MatRef<'_, f64>,
        y: &[f64],
        init: GpHyper,
        opts: &FitOptions,
    ) -> Result<ExactGp, ModelError> {
        check_data(x, y)?;
        let mut init = init;
        init.kernel.initialize(x)?;
        init.mean.check_inputs(x.ncols())?;
        let par = parallelism_for(x.nrows());
        let mut starts = Vec::new();
        let hyper = if opts.optimize {
            let (best, reports) = optimize(&init, x, y, opts, par)?;
            starts = reports;
            best
        } else {
            init
        };
        Self::at(hyper, x, y, opts.extra_diag).map(|mut gp| {
            gp.starts = starts;
            gp
        })
    }

    /// The GP at fixed hyperparameters (no optimisation).
    pub fn at(
        hyper: GpHyper,
        x: MatRef<'_, f64>,
        y: &[f64],
        extra_diag: f64,
    ) -> Result<ExactGp, ModelError> {
        check_data(x, y)?;
        check_hyper(&hyper, x)?;
        let par = parallelism_for(x.nrows());
        let m = hyper.mean.eval(x);
        let residual: Vec<f64> = y.iter().zip(&m).map(|(yi, mi)| yi - mi).collect();
        let d = vec![hyper.noise + extra_diag; y.len()];
        let e = evidence(
            hyper.kernel.clone(),
            hyper.mean.clone(),
            x,
            &residual,
            &d,
            par,
            false,
        )?;
        Ok(ExactGp {
            hyper,
            extra_diag,
            posterior: e.posterior,
            residual,
            lml: e.value,
            starts: Vec::new(),
        })
    }

    /// The hyperparameters.
    pub fn hyper(&self) -> &GpHyper {
        &self.hyper
    }

    /// The fixed value added to the noise on the training diagonal.
    pub fn extra_diag(&self) -> f64 {
        self.extra_diag
    }

    /// The log marginal likelihood of the training targets.
    pub fn lml(&self) -> f64 {
        self.lml
    }

    /// The jitter the final factorisation needed.
    pub fn jitter(&self) -> f64 {
        self.posterior.cholesky().jitter()
    }

    /// Reports of the optimiser starts (empty without optimisation).
    pub fn starts(&self) -> &[StartReport] {
        &self.starts
    }

    /// The conjugate posterior (and through it the linear-Gaussian form `(t, S)`).
    pub fn posterior(&self) -> &ConjugatePosterior {
        &self.posterior
    }

    /// Training targets.
    pub fn y(&self) -> Vec<f64> {
        let m = self.hyper.mean.eval(self.posterior.x());
        m.iter().zip(&self.residual).map(|(a, b)| a + b).collect()
    }

    /// Posterior mean and variance at `xs`: of the latent function, or of a new noisy
    /// observation (`latent = false`, adds σ²).
    pub fn predict(&self, xs: MatRef<'_, f64>, latent: bool) -> Result<Marginals, ModelError> {
        self.check_test_inputs(xs)?;
        let mut m = self.posterior.marginals(xs);
        if !latent {
            for v in &mut m.var {
                *v += self.hyper.noise;
            }
        }
        Ok(m)
    }

    /// Joint latent posterior covariance at `xs` (m×m).
    pub fn predict_joint(&self, xs: MatRef<'_, f64>) -> Result<(Vec<f64>, Mat<f64>), ModelError> {
        self.check_test_inputs(xs)?;
        let mean = self.posterior.marginals(xs).mean;
        Ok((mean, self.posterior.joint_covariance(xs)))
    }

    /// `count` joint samples of the latent function at `xs` (an m × count matrix), seeded.
    pub fn sample(
        &self,
        xs: MatRef<'_, f64>,
        count: usize,
        seed: u64,
    ) -> Result<Mat<f64>, ModelError> {
        let (mean, cov) = self.predict_joint(xs)?;
        let m = mean.len();
        let chol = Cholesky::factor(&cov, "posterior covariance", Parallelism::Sequential)?;
        let mut rng = StdRng::seed_from_u64(seed);
        let z = Mat::from_fn(m, count, |_, _| rng.sample::<f64, _>(StandardNormal));
        let l = Mat::from_fn(m, m, |i, j| if i >= j { chol.l()[(i, j)] } else { 0.0 });
        let mut s = &l * &z;
        for j in 0..count {
            for (i, mi) in mean.iter().enumerate() {
                s[(i, j)] += mi;
            }
        }
        Ok(s)
    }

    /// Closed-form leave-one-out predictions of each training target from all the others:
    /// mean `y_i − α_i / [K⁻¹]_ii` and variance `1 / [K⁻¹]_ii` (of a noisy observation).
    pub fn loo(&self) -> Marginals {
        let inv = self.posterior.cholesky().inverse_lower();
        let y = self.y();
        let t = self.posterior.t();
        let n = y.len();
        Marginals {
            mean: (0..n).map(|i| y[i] - t[i] / inv[(i, i)]).collect(),
            var: (0..n).map(|i| 1.0 / inv[(i, i)]).collect(),
        }
    }

    fn check_test_inputs(&self, xs: MatRef<'_, f64>) -> Result<(), ModelError> {
        let d = self.posterior.x().ncols();
        if xs.ncols() != d {
            return Err(ModelError::Invalid(format!(
                "test inputs have {} columns, the model was trained on {d}",
                xs.ncols()
            )));
        }
        for j in 0..d {
            for i in 0..xs.nrows() {
                if !xs[(i, j)].is_finite() {
                    return Err(ModelError::Invalid(format!(
                        "test input row {i}, column {j} is {} (expected a finite number)",
                        xs[(i, j)]
                    )));
                }
            }
        }
        Ok(())
    }
}

/// Maximise the log marginal likelihood from the initial start and `opts.restarts` random ones.
fn optimize(
    init: &GpHyper,
    x: MatRef<'_, f64>,
    y: &[f64],
    opts: &FitOptions,
    par: Parallelism,
) -> Result<(GpHyper, Vec<StartReport>), ModelError> {
    let objective = |v: &[f64]| -> Result<(f64, Vec<f64>), String> {
        let h = init.with_vec(v).map_err(|e| e.to_string())?;
        let l = log_marginal_likelihood(&h, x, y, opts.extra_diag, par, true)
            .map_err(|e| e.to_string())?;
        Ok((l.value, l.grad))
    };
    let (best, reports) = maximize(
        objective,
        &init.to_vec(),
        &init.bounds(),
        opts.restarts,
        opts.seed,
        &opts.lbfgs,
        par,
    )?;
    Ok((init.with_vec(&best)?, reports))
}
