//! Exact Gaussian-process regression with a Gaussian likelihood.
//!
//! The posterior is the [conjugate core](crate::models::conjugate) with `D = σ²I` and residual
//! `r = y − m(X)`. Hyperparameters are fitted by maximising the log marginal likelihood
//!
//! ```text
//! log p(y) = −½ rᵀ α − Σ log L_ii − (n/2) log 2π,     α = (K + σ²I)⁻¹ r,
//! ∂ log p(y)/∂θ_j = ½ Σ_ab (α αᵀ − (K + σ²I)⁻¹)_ab ∂K_ab/∂θ_j
//! ```
//!
//! with L-BFGS on the flat log-space vector of [`GpHyper`], from the given start plus seeded
//! random restarts.

use std::sync::Mutex;

use faer::{Mat, MatRef};

use crate::models::conjugate::ConjugatePosterior;
use crate::models::hyper::GpHyper;
use crate::models::ModelError;
use evidence::{evidence, Scale};
use scale_profile::ScaleProfile;

pub(crate) mod evidence;
mod scale_profile;
use crate::fit::pilot;
use crate::fit::restarts::maximize;
use crate::fit::{FitOptions, FitReport};
use crate::likelihoods::{Gaussian, Likelihood};
use crate::linalg::{parallelism_for, Parallelism};
use crate::posterior::{Marginals, Posterior};

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
    evaluate(h, x, y, extra_diag, Scale::Given, par, with_grad).map(|e| e.lml)
}

/// One evaluation of the likelihood, with the posterior it factorised on the way.
struct Evaluation {
    /// The likelihood and its gradient with respect to `h.to_vec()`: of the covariance
    /// `c (K + σ²I)` with `c` = `scale`.
    lml: Lml,
    /// 1, or the profiled scale `ĉ`.
    scale: f64,
    /// The posterior of `K + σ²I` at `h` (not scaled by `ĉ`).
    posterior: ConjugatePosterior,
    /// `y − m(X)`.
    residual: Vec<f64>,
}

/// The likelihood at `h`, with the kernel's overall scale as given or profiled out (then the
/// gradient's mean entries are those at `c = ĉ`; its kernel and noise entries need no change,
/// see [`evidence`]).
fn evaluate(
    h: &GpHyper,
    x: MatRef<'_, f64>,
    y: &[f64],
    extra_diag: f64,
    scale: Scale,
    par: Parallelism,
    with_grad: bool,
) -> Result<Evaluation, ModelError> {
    check_data(x, y)?;
    check_hyper(h, x)?;
    let m = h.mean.eval(x);
    let residual: Vec<f64> = y.iter().zip(&m).map(|(yi, mi)| yi - mi).collect();
    let d = vec![h.noise + extra_diag; y.len()];
    let e = evidence(
        h.kernel.clone(),
        h.mean.clone(),
        x,
        &residual,
        &d,
        scale,
        par,
        with_grad,
    )?;
    let mut grad = Vec::new();
    if with_grad {
        grad = e.grad_kernel;
        grad.push(h.noise * e.grad_diag.iter().sum::<f64>());
        let grad_mean = h.mean.grad_contract(x, e.posterior.t());
        grad.extend(grad_mean.into_iter().map(|g| g / e.scale));
    }
    Ok(Evaluation {
        lml: Lml {
            value: e.value,
            grad,
            jitter: e.posterior.cholesky().jitter(),
        },
        scale: e.scale,
        posterior: e.posterior,
        residual,
    })
}

/// A fitted exact GP.
#[derive(Clone, Debug)]
pub struct ExactGp {
    hyper: GpHyper,
    extra_diag: f64,
    posterior: ConjugatePosterior,
    residual: Vec<f64>,
    lml: f64,
    starts: Vec<FitReport>,
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
        if !opts.optimize {
            return Self::at(init, x, y, opts.extra_diag);
        }
        let par = parallelism_for(x.nrows());
        let fitted = match pilot::pilot_rows(x.nrows(), opts) {
            Some(rows) => optimize_piloted(&init, x, y, &rows, opts, par)?,
            None => optimize(&init, x, y, opts, par, None)?,
        };
        let mut gp = match fitted.evaluation {
            Some(e) => Self::from_evaluation(fitted.hyper, opts.extra_diag, e),
            None => Self::at(fitted.hyper, x, y, opts.extra_diag)?,
        };
        gp.starts = fitted.starts;
        Ok(gp)
    }

    /// The GP at fixed hyperparameters (no optimisation).
    pub fn at(
        hyper: GpHyper,
        x: MatRef<'_, f64>,
        y: &[f64],
        extra_diag: f64,
    ) -> Result<ExactGp, ModelError> {
        let par = parallelism_for(x.nrows());
        let e = evaluate(&hyper, x, y, extra_diag, Scale::Given, par, false)?;
        Ok(Self::from_evaluation(hyper, extra_diag, e))
    }

    /// The GP at `hyper` from an unscaled evaluation there.
    fn from_evaluation(hyper: GpHyper, extra_diag: f64, e: Evaluation) -> ExactGp {
        ExactGp {
            hyper,
            extra_diag,
            posterior: e.posterior,
            residual: e.residual,
            lml: e.lml.value,
            starts: Vec::new(),
        }
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
    pub fn starts(&self) -> &[FitReport] {
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
    /// observation (`latent = false`, through [`ExactGp::likelihood`]).
    pub fn predict(&self, xs: MatRef<'_, f64>, latent: bool) -> Result<Marginals, ModelError> {
        self.check_test_inputs(xs)?;
        let m = self.posterior.marginals(xs);
        Ok(if latent {
            m
        } else {
            self.likelihood().predict_marginals(&m)
        })
    }

    /// The observation model: Gaussian noise with the fitted variance σ².
    pub fn likelihood(&self) -> Gaussian {
        Gaussian::fitted(self.hyper.noise)
    }

    /// Joint latent posterior covariance at `xs` (m×m).
    pub fn predict_joint(&self, xs: MatRef<'_, f64>) -> Result<(Vec<f64>, Mat<f64>), ModelError> {
        self.check_test_inputs(xs)?;
        let mean = self.posterior.marginals(xs).mean;
        Ok((mean, self.posterior.joint_covariance(xs)))
    }

    /// `count` joint samples of the latent function at `xs` (an m × count matrix), seeded
    /// (see [`Posterior::sample`]).
    pub fn sample(
        &self,
        xs: MatRef<'_, f64>,
        count: usize,
        seed: u64,
    ) -> Result<Mat<f64>, ModelError> {
        self.check_test_inputs(xs)?;
        Posterior::sample_seeded(self, xs, count, seed)
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

/// The outcome of [`optimize`].
struct Fitted {
    hyper: GpHyper,
    starts: Vec<FitReport>,
    /// The evaluation at `hyper`, when one was made there with the scale as given (so that
    /// the fitted model is bit for bit the one [`ExactGp::at`] would build).
    evaluation: Option<Evaluation>,
}

/// Maximise the log marginal likelihood from the initial start and `opts.restarts` random ones,
/// over the profiled parameters when the kernel has an overall scale (see [`ScaleProfile`]).
/// `curvature` approximates the negated Hessian at the initial start in the coordinates
/// optimised (see [`start_coordinates`]), when a pilot supplied one.
fn optimize(
    init: &GpHyper,
    x: MatRef<'_, f64>,
    y: &[f64],
    opts: &FitOptions,
    par: Parallelism,
    curvature: Option<Mat<f64>>,
) -> Result<Fitted, ModelError> {
    match profile_for(init, opts) {
        Some(profile) => optimize_profiled(init, &profile, x, y, opts, par, curvature),
        None => optimize_full(
            init,
            &init.to_vec(),
            opts.restarts,
            x,
            y,
            opts,
            par,
            curvature,
        ),
    }
}

/// The scale profile [`optimize`] works in, if any.
fn profile_for(init: &GpHyper, opts: &FitOptions) -> Option<ScaleProfile> {
    ScaleProfile::of(init).filter(|_| opts.profile_scale && opts.extra_diag == 0.0)
}

/// The coordinates [`optimize`] starts from at `init` (profiled or full), their bounds, and
/// the log marginal likelihood with its gradient in them on the rows `x`, `y`.
#[allow(clippy::type_complexity)]
fn start_coordinates<'a>(
    init: &'a GpHyper,
    x: MatRef<'a, f64>,
    y: &'a [f64],
    opts: &'a FitOptions,
    par: Parallelism,
) -> (
    Vec<f64>,
    Vec<(f64, f64)>,
    Box<dyn Fn(&[f64]) -> Result<(f64, Vec<f64>), String> + 'a>,
) {
    match profile_for(init, opts) {
        Some(profile) => {
            let z0 = profile.profiled(&init.to_vec());
            let bounds = profile.bounds(&init.bounds());
            let objective = move |z: &[f64]| {
                eval_profiled(init, &profile, x, y, z, par).map(|(f, g, _)| (f, g))
            };
            (z0, bounds, Box::new(objective))
        }
        None => {
            let objective = move |v: &[f64]| {
                eval_full(init, x, y, opts.extra_diag, v, par).map(|(f, g, _)| (f, g))
            };
            (init.to_vec(), init.bounds(), Box::new(objective))
        }
    }
}

/// The log marginal likelihood concentrated over the overall scale at the profiled
/// coordinates `z` (see [`ScaleProfile`]), its gradient in them, and the fitted scale.
fn eval_profiled(
    init: &GpHyper,
    profile: &ScaleProfile,
    x: MatRef<'_, f64>,
    y: &[f64],
    z: &[f64],
    par: Parallelism,
) -> Result<(f64, Vec<f64>, f64), String> {
    let h = init
        .with_vec(&profile.full(z, 0.0))
        .map_err(|e| e.to_string())?;
    let e = evaluate(&h, x, y, 0.0, Scale::Profiled, par, true).map_err(|e| e.to_string())?;
    Ok((e.lml.value, profile.gradient(&e.lml.grad), e.scale))
}

/// The log marginal likelihood at the flat parameters `v` of [`GpHyper`], its gradient, and
/// the evaluation.
fn eval_full(
    init: &GpHyper,
    x: MatRef<'_, f64>,
    y: &[f64],
    extra_diag: f64,
    v: &[f64],
    par: Parallelism,
) -> Result<(f64, Vec<f64>, Evaluation), String> {
    let h = init.with_vec(v).map_err(|e| e.to_string())?;
    let mut e =
        evaluate(&h, x, y, extra_diag, Scale::Given, par, true).map_err(|e| e.to_string())?;
    let grad = std::mem::take(&mut e.lml.grad);
    Ok((e.lml.value, grad, e))
}

/// [`optimize`] on every row from the optimum of a pilot fit on `rows` (see [`pilot`]), or
/// from `init` if the pilot fails.
fn optimize_piloted(
    init: &GpHyper,
    x: MatRef<'_, f64>,
    y: &[f64],
    rows: &[usize],
    opts: &FitOptions,
    par: Parallelism,
) -> Result<Fitted, ModelError> {
    let (xs, ys) = (pilot::select_rows(x, rows), pilot::select(y, rows));
    let pilot_opts = pilot::pilot_options(opts);
    let Ok(p) = optimize(
        init,
        xs.as_ref(),
        &ys,
        &pilot_opts,
        parallelism_for(rows.len()),
        None,
    ) else {
        return optimize(init, x, y, opts, par, None);
    };
    // The pilot's curvature in the coordinates the full fit starts in, at its start.
    let full_opts = pilot::after_pilot(opts);
    let (v0, bounds, objective) = start_coordinates(
        &p.hyper,
        xs.as_ref(),
        &ys,
        &full_opts,
        parallelism_for(rows.len()),
    );
    let scale = pilot::curvature_scale(x.nrows(), rows.len());
    let curvature = pilot::curvature(objective, &v0, &bounds, scale);
    let spent = pilot::curvature_evaluations(v0.len());
    let mut fitted = optimize(&p.hyper, x, y, &full_opts, par, curvature)?;
    pilot::mark_piloted(&mut fitted.starts, &p.starts, spent, rows.len(), x.nrows());
    Ok(fitted)
}

/// Maximise over the full flat vector of [`GpHyper`] from `x0` (where `curvature`, if given,
/// approximates the negated Hessian) and `restarts` random starts.
#[allow(clippy::too_many_arguments)]
fn optimize_full(
    init: &GpHyper,
    x0: &[f64],
    restarts: usize,
    x: MatRef<'_, f64>,
    y: &[f64],
    opts: &FitOptions,
    par: Parallelism,
    curvature: Option<Mat<f64>>,
) -> Result<Fitted, ModelError> {
    let best = BestSoFar::default();
    let objective = |v: &[f64]| -> Result<(f64, Vec<f64>), String> {
        let (value, grad, e) = eval_full(init, x, y, opts.extra_diag, v, par)?;
        best.offer(v, value, e);
        Ok((value, grad))
    };
    let (v, starts) = maximize(
        pilot::curved_at_start(objective, x0.to_vec(), curvature),
        x0,
        &init.bounds(),
        &init.param_names(),
        restarts,
        opts.seed,
        &opts.lbfgs,
        par,
    )?;
    Ok(Fitted {
        hyper: init.with_vec(&v)?,
        starts,
        evaluation: best.take_if_at(&v),
    })
}

/// Maximise the likelihood concentrated over the kernel's overall scale, then map the optimum
/// back to the full parameters. If the profiled scale or the noise it implies falls outside its
/// bounds, continue from the nearest point inside them in the full parameterisation.
#[allow(clippy::too_many_arguments)]
fn optimize_profiled(
    init: &GpHyper,
    profile: &ScaleProfile,
    x: MatRef<'_, f64>,
    y: &[f64],
    opts: &FitOptions,
    par: Parallelism,
    curvature: Option<Mat<f64>>,
) -> Result<Fitted, ModelError> {
    let best = BestSoFar::default();
    let objective = |z: &[f64]| -> Result<(f64, Vec<f64>), String> {
        let (value, grad, scale) = eval_profiled(init, profile, x, y, z, par)?;
        best.offer(z, value, scale);
        Ok((value, grad))
    };
    let full_bounds = init.bounds();
    let z0 = profile.profiled(&init.to_vec());
    let profiled = maximize(
        pilot::curved_at_start(objective, z0.clone(), curvature),
        &z0,
        &profile.bounds(&full_bounds),
        &profile.names(init.param_names()),
        opts.restarts,
        opts.seed,
        &opts.lbfgs,
        par,
    );
    // Degenerate data (a residual of exactly zero makes ĉ = 0) fail every profiled start;
    // the full parameterisation handles them as it always did.
    let Ok((z, starts)) = profiled else {
        return optimize_full(init, &init.to_vec(), opts.restarts, x, y, opts, par, None);
    };
    let scale = best
        .take_if_at(&z)
        .ok_or_else(|| ModelError::Invalid("the optimiser returned an unevaluated point".into()))?;
    let v = profile.full(&z, scale.ln());
    let inside = v
        .iter()
        .zip(&full_bounds)
        .all(|(vi, (lo, hi))| (lo..=hi).contains(&vi));
    if inside {
        return Ok(Fitted {
            hyper: init.with_vec(&v)?,
            starts,
            evaluation: None,
        });
    }
    let clamped: Vec<f64> = v
        .iter()
        .zip(&full_bounds)
        .map(|(vi, (lo, hi))| vi.clamp(*lo, *hi))
        .collect();
    let mut polished = optimize_full(init, &clamped, 0, x, y, opts, par, None)?;
    let first = starts.len();
    let continued = polished.starts.drain(..).map(|mut r| {
        r.start += first;
        r.message = format!("continued within the scale and noise bounds: {}", r.message);
        r
    });
    polished.starts = starts.into_iter().chain(continued).collect();
    Ok(polished)
}

/// The best point evaluated so far and what was computed there, shared by parallel starts.
struct BestSoFar<T> {
    best: Mutex<Option<(Vec<f64>, f64, T)>>,
}

impl<T> Default for BestSoFar<T> {
    fn default() -> Self {
        BestSoFar {
            best: Mutex::new(None),
        }
    }
}

impl<T> BestSoFar<T> {
    /// Keep `item`, computed at `x` with objective `value`, if `value` is the highest so far.
    fn offer(&self, x: &[f64], value: f64, item: T) {
        let mut best = self.best.lock().unwrap_or_else(|e| e.into_inner());
        if best.as_ref().is_none_or(|(_, b, _)| value > *b) {
            *best = Some((x.to_vec(), value, item));
        }
    }

    /// The kept item, if it was computed at exactly `x`.
    fn take_if_at(self, x: &[f64]) -> Option<T> {
        let best = self.best.into_inner().unwrap_or_else(|e| e.into_inner());
        best.filter(|(at, _, _)| at == x).map(|(_, _, item)| item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::Kernel;
    use crate::means::Mean;

    /// A deterministic 2-D regression problem.
    fn data(n: usize) -> (Mat<f64>, Vec<f64>) {
        let x = Mat::from_fn(n, 2, |i, j| {
            ((i * (7 + 5 * j) + 3 * j) % 23) as f64 / 6.0 - 1.9
        });
        let y = (0..n)
            .map(|i| 2.0 * (1.3 * x[(i, 0)]).sin() + x[(i, 1)] + 0.1 * ((i * 13) % 7) as f64)
            .collect();
        (x, y)
    }

    #[test]
    fn profiled_likelihood_is_the_full_one_at_the_best_scale_with_matching_gradient() {
        let (x, y) = data(35);
        let par = Parallelism::Sequential;
        for expr in ["const * se", "se(ls=[0.8, 1.5]) * const(2) * per(period=3)"] {
            let mut kernel = Kernel::parse(expr).unwrap();
            kernel.initialize(x.as_ref()).unwrap();
            let h = GpHyper {
                kernel,
                mean: Mean::Constant { c: 0.3 },
                noise: 0.07,
            };
            let profile = ScaleProfile::of(&h).unwrap();
            let z0 = profile.profiled(&h.to_vec());
            let at = |z: &[f64], with_grad: bool| {
                let unit = h.with_vec(&profile.full(z, 0.0)).unwrap();
                evaluate(&unit, x.as_ref(), &y, 0.0, Scale::Profiled, par, with_grad).unwrap()
            };
            let e = at(&z0, true);
            // The value is the full likelihood at c = ĉ, where scaling c and σ² together (the
            // one direction the profile leaves out) changes nothing to first order.
            let full = h.with_vec(&profile.full(&z0, e.scale.ln())).unwrap();
            let lml = log_marginal_likelihood(&full, x.as_ref(), &y, 0.0, par, true).unwrap();
            assert!(
                (lml.value - e.lml.value).abs() < 1e-11 * lml.value.abs(),
                "{expr}: {} vs {}",
                lml.value,
                e.lml.value
            );
            let scale = full.kernel.overall_scale_index().unwrap();
            let along_scale = lml.grad[scale] + lml.grad[full.noise_index()];
            assert!(
                lml.grad[scale].abs() > 1e-3 && along_scale.abs() < 1e-10,
                "{expr}: {:?}",
                lml.grad
            );
            // The profiled gradient against central differences of the profiled value.
            let g = profile.gradient(&e.lml.grad);
            assert_eq!(g.len(), z0.len());
            for j in 0..z0.len() {
                let step = 1e-5;
                let f = |delta: f64| {
                    let mut z = z0.clone();
                    z[j] += delta;
                    at(&z, false).lml.value
                };
                let fd = (f(step) - f(-step)) / (2.0 * step);
                assert!(
                    (fd - g[j]).abs() < 1e-6 * (1.0 + g[j].abs()),
                    "{expr}, entry {j}: analytic {} vs fd {fd}",
                    g[j]
                );
            }
        }
    }
}
