//! A Gaussian-likelihood GP with one noise variance per group of entries: the multi-output GP
//! (MOGP) with a [`MultiOutputKernel`](crate::kernels::MultiOutputKernel) on task-indexed
//! inputs, one group per output (or one shared), fitted by the log marginal likelihood.
//!
//! It is the [conjugate core](crate::models::conjugate) with `D = diag(σ²_{g(j)})`; with a single-output
//! kernel and one group it is the exact GP with a fixed prior mean.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use faer::{Mat, MatRef};

use crate::fit::restarts::{maximize, maximize_until, Evaluation};
use crate::fit::FitOptions;
use crate::fit::FitReport;
use crate::kernels::Covariance;
use crate::likelihoods::{Gaussian, Likelihood};
use crate::linalg::{parallelism_for, Parallelism};
use crate::means::PriorMean;
use crate::models::conjugate::ConjugatePosterior;
use crate::models::exact::evidence::{evidence, Scale};
use crate::models::hyper::NOISE_BOUNDS;
use crate::models::ModelError;
use crate::posterior::Marginals;

/// Checks shared by the grouped-noise models: matching lengths, finite targets, valid groups
/// and positive noise variances.
pub(crate) fn check_entries(
    x: MatRef<'_, f64>,
    y: &[f64],
    group: &[usize],
    noise: &[f64],
) -> Result<(), ModelError> {
    let bad = |m: String| Err(ModelError::Invalid(m));
    if y.is_empty() {
        return bad("no training entries".into());
    }
    if x.nrows() != y.len() || group.len() != y.len() {
        return bad(format!(
            "{} input rows, {} targets and {} noise groups (expected equal counts)",
            x.nrows(),
            y.len(),
            group.len()
        ));
    }
    if let Some(j) = y.iter().position(|v| !v.is_finite()) {
        return bad(format!(
            "target of entry {j} is {} (expected a finite number)",
            y[j]
        ));
    }
    if let Some(j) = group.iter().position(|&g| g >= noise.len()) {
        return bad(format!(
            "entry {j} is in noise group {} but only {} noise variances were given",
            group[j],
            noise.len()
        ));
    }
    if let Some(g) = noise.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
        return bad(format!(
            "noise variance {g} is {} (expected a positive number)",
            noise[g]
        ));
    }
    Ok(())
}

/// Maximise `objective(covariance, noise variances, want_curvature)` (value, gradient and, if
/// asked for and available, a Fisher matrix that L-BFGS may start from) over the covariance
/// parameters and the log noise variances from `cov` and `noise`, with `opts`' restarts and
/// L-BFGS settings;
/// returns the best covariance, noise variances and the optimiser reports. Shared by every
/// grouped-noise model (MOGP by its evidence, the robust GPs by their weighted LOO-CV).
pub(crate) fn maximize_grouped<C: Covariance>(
    cov: &C,
    noise: &[f64],
    opts: &FitOptions,
    par: Parallelism,
    objective: impl Fn(&C, &[f64], bool) -> Result<Evaluation, ModelError> + Sync,
) -> Result<(C, Vec<f64>, Vec<FitReport>), ModelError> {
    let (v0, bounds) = pack(cov, noise);
    let names = names(cov, noise.len());
    let flat = |v: &[f64], want: bool| -> Result<Evaluation, String> {
        let (c, s) = unpack(cov, v).map_err(|e| e.to_string())?;
        objective(&c, &s, want).map_err(|e| e.to_string())
    };
    let (best, starts) = maximize(
        flat,
        &v0,
        &bounds,
        &names,
        opts.restarts,
        opts.seed,
        &opts.lbfgs,
        par,
    )?;
    let (c, s) = unpack(cov, &best)?;
    Ok((c, s, starts))
}

/// [`maximize_grouped`] for an objective with a profiled common scale of the covariance and
/// the noise variances. `profiled(cov, noise, want_fisher)` returns the objective maximised
/// over `c` at `(c·cov, c·noise)`, its gradient with respect to the unscaled
/// `[cov params, ln σ²_g …]` (`c` held fixed: the envelope theorem), the maximising `ĉ` and,
/// if asked for and available, its Fisher matrix over the same vector, which L-BFGS may start
/// from (see [`LbfgsOptions::curvature_iterations`](crate::optim::LbfgsOptions));
/// `full(cov, noise, want_fisher)` is the objective itself, with its own Fisher matrix where it
/// has one. The profiled optimum is mapped back by its `ĉ`.
///
/// The profile knows nothing of the bounds, and the bounds matter: the weighted LOO-CV can
/// keep improving as `B` grows without limit (focused outliers on Energy, where the bounded
/// optimum sits on `A`'s bound). So the profiled run stops at the first point whose scaled
/// parameters leave the bounds, and the fit continues with `full` from the best scaled point
/// found so far. Without `opts.profile_scale`, for a covariance that cannot carry an overall
/// scale, or if no profiled point could be evaluated (a degenerate profile), this is
/// [`maximize_grouped`] on `full`.
pub(crate) fn maximize_grouped_profiled<C: Covariance>(
    cov: &C,
    noise: &[f64],
    opts: &FitOptions,
    par: Parallelism,
    full: impl Fn(&C, &[f64], bool) -> Result<Evaluation, ModelError> + Sync,
    profiled: impl Fn(&C, &[f64], bool) -> Result<ProfiledEvaluation, ModelError> + Sync,
) -> Result<(C, Vec<f64>, Vec<FitReport>), ModelError> {
    if !opts.profile_scale || cov.scaled(1.0).is_none() || noise.is_empty() {
        return maximize_grouped(cov, noise, opts, par, full);
    }
    let (v0, bounds) = pack(cov, noise);
    let names = names(cov, noise.len());
    let inside = |v: &[f64]| (v.iter().zip(&bounds)).all(|(vi, (lo, hi))| (lo..=hi).contains(&vi));
    // The scaled point of `v` (covariance, noise variances and flat vector).
    let scaled = |v: &[f64], c: f64| -> Result<(C, Vec<f64>, Vec<f64>), ModelError> {
        let (k, s) = unpack(cov, v)?;
        let k = k.scaled(c).ok_or_else(|| {
            ModelError::Invalid("the covariance lost its overall scale while fitting".into())
        })?;
        let s: Vec<f64> = s.iter().map(|v| v * c).collect();
        let (w, _) = pack(&k, &s);
        Ok((k, s, w))
    };
    // Every point evaluated inside the bounds: (point, value, scale).
    let log = Mutex::new(Vec::<(Vec<f64>, f64, f64)>::new());
    let left = AtomicBool::new(false);
    let objective = |v: &[f64], want: bool| -> Result<Evaluation, String> {
        if left.load(Ordering::Relaxed) {
            return Err("the profiled fit has stopped: its scale left the bounds".into());
        }
        let (k, s) = unpack(cov, v).map_err(|e| e.to_string())?;
        let (value, grad, c, fisher) = profiled(&k, &s, want).map_err(|e| e.to_string())?;
        let (_, _, w) = scaled(v, c).map_err(|e| e.to_string())?;
        if !inside(&w) {
            left.store(true, Ordering::Relaxed);
            return Err("the profiled scale leaves the bounds".into());
        }
        (log.lock().unwrap_or_else(|e| e.into_inner())).push((v.to_vec(), value, c));
        let curvature = match fisher {
            Some(f) => {
                let (_, _, up) = scaled(v, SCALE_STEP.exp()).map_err(|e| e.to_string())?;
                let (_, _, down) = scaled(v, (-SCALE_STEP).exp()).map_err(|e| e.to_string())?;
                Some(with_scale_curvature(f, &up, &down))
            }
            None => None,
        };
        Ok((value, grad, curvature))
    };
    let found = maximize_until(
        &left,
        objective,
        &v0,
        &bounds,
        &names,
        opts.restarts,
        opts.seed,
        &opts.lbfgs,
        par,
    );
    let log = log.into_inner().unwrap_or_else(|e| e.into_inner());
    let best = log.iter().max_by(|a, b| a.1.total_cmp(&b.1));
    let (Some((v, _, c)), Ok((_, starts))) = (best, &found) else {
        let Some((v, _, c)) = best else {
            return maximize_grouped(cov, noise, opts, par, full);
        };
        // Every start failed after some points were evaluated: continue from the best.
        let (k, s, _) = scaled(v, *c)?;
        return maximize_grouped(&k, &s, opts, par, full);
    };
    let (k, s, _) = scaled(v, *c)?;
    if !left.load(Ordering::Relaxed) {
        return Ok((k, s, starts.clone()));
    }
    let once = FitOptions {
        restarts: 0,
        ..opts.clone()
    };
    let (k, s, more) = maximize_grouped(&k, &s, &once, par, full)?;
    let first = starts.len();
    // The optimiser's own message ("stopped at the objective's request", or the error of a
    // start that failed) would hide why an unconverged profiled start ended.
    let stopped = starts.iter().cloned().map(|mut r| {
        if !r.converged {
            r.message = format!(
                "stopped where the profiled scale left the bounds: {}",
                r.message
            );
        }
        r
    });
    let continued = more.into_iter().map(|mut r| {
        r.start += first;
        r.message = format!("continued unprofiled within the bounds: {}", r.message);
        r
    });
    Ok((k, s, stopped.chain(continued).collect()))
}

/// What a profiled objective returns at a point: the value at the best scale, its gradient,
/// that scale `ĉ` and, when asked for, the Fisher matrix of the profiled objective (over the
/// same flat vector as the gradient), if it has one.
pub(crate) type ProfiledEvaluation = (f64, Vec<f64>, f64, Option<Mat<f64>>);

/// Log-step of the central difference that finds the direction of the common scale.
const SCALE_STEP: f64 = 1e-4;

/// The profiled objective is constant along the common scale, `(cov, σ²) → (c·cov, c·σ²)`,
/// so its Fisher matrix `f` is singular along that curve's tangent `t` (the central
/// difference of the flat vectors `up` and `down`, scaled by `e^{±h}`). Adding `τ t tᵀ/‖t‖²`
/// with `τ` the largest diagonal entry gives the direction curvature, which keeps the
/// quasi-Newton steps off it; the gradient has no component along it, so nothing is lost.
fn with_scale_curvature(mut f: Mat<f64>, up: &[f64], down: &[f64]) -> Mat<f64> {
    let t: Vec<f64> = up
        .iter()
        .zip(down)
        .map(|(a, b)| (a - b) / (2.0 * SCALE_STEP))
        .collect();
    let norm2: f64 = t.iter().map(|v| v * v).sum();
    let tau = (0..f.nrows()).map(|i| f[(i, i)]).fold(0.0, f64::max);
    if norm2 > 0.0 {
        for i in 0..t.len() {
            for j in 0..t.len() {
                f[(i, j)] += tau * t[i] * t[j] / norm2;
            }
        }
    }
    f
}

/// Names of the entries of the flat vector `[covariance params, ln σ²_g …]` of [`pack`].
pub(crate) fn names<C: Covariance>(cov: &C, groups: usize) -> Vec<String> {
    let mut names = cov.param_names();
    names.extend((0..groups).map(|g| format!("noise[{g}]")));
    names
}

/// Splits a flat vector `[covariance params, ln σ²_g …]` into a covariance and variances.
pub(crate) fn unpack<C: Covariance>(cov: &C, v: &[f64]) -> Result<(C, Vec<f64>), ModelError> {
    let nk = cov.n_params();
    let mut c = cov.clone();
    c.set_params(&v[..nk])?;
    Ok((c, v[nk..].iter().map(|l| l.exp()).collect()))
}

/// The flat vector and bounds of a covariance plus grouped noise variances.
pub(crate) fn pack<C: Covariance>(cov: &C, noise: &[f64]) -> (Vec<f64>, Vec<(f64, f64)>) {
    let mut v = cov.params();
    v.extend(noise.iter().map(|s| s.ln()));
    let mut b = cov.bounds();
    b.extend(std::iter::repeat_n(
        (NOISE_BOUNDS.0.ln(), NOISE_BOUNDS.1.ln()),
        noise.len(),
    ));
    (v, b)
}

/// What every fitted grouped-noise conjugate model keeps (the MOGP here, the robust GPs in
/// [`crate::models::robust`]): its posterior, the noise variance of each group, the group and target of
/// each training entry, and the optimiser's reports. The models reach these accessors through
/// `Deref`.
#[derive(Clone, Debug)]
pub struct GroupedFit<C, M> {
    noise: Vec<f64>,
    group: Vec<usize>,
    y: Vec<f64>,
    posterior: ConjugatePosterior<C, M>,
    pub(crate) starts: Vec<FitReport>,
}

impl<C: Covariance, M: PriorMean> GroupedFit<C, M> {
    pub(crate) fn new(
        posterior: ConjugatePosterior<C, M>,
        noise: &[f64],
        group: &[usize],
        y: &[f64],
    ) -> Self {
        GroupedFit {
            noise: noise.to_vec(),
            group: group.to_vec(),
            y: y.to_vec(),
            posterior,
            starts: Vec::new(),
        }
    }

    /// The covariance function.
    pub fn covariance(&self) -> &C {
        self.posterior.kernel()
    }

    /// The noise variance of each group.
    pub fn noise(&self) -> &[f64] {
        &self.noise
    }

    /// The noise group of each training entry.
    pub fn groups(&self) -> &[usize] {
        &self.group
    }

    /// The training targets.
    pub fn y(&self) -> &[f64] {
        &self.y
    }

    /// Optimiser reports (empty without optimisation).
    pub fn starts(&self) -> &[FitReport] {
        &self.starts
    }

    /// The posterior (conjugate core).
    pub fn posterior(&self) -> &ConjugatePosterior<C, M> {
        &self.posterior
    }

    /// Posterior marginals at `xs`; with `latent = false` those of a new observation under the
    /// likelihood of each test row's group `group_s` (see [`GroupedFit::likelihood`]).
    pub fn predict(&self, xs: MatRef<'_, f64>, latent: bool, group_s: &[usize]) -> Marginals {
        let mut m = self.posterior.marginals(xs);
        if !latent {
            for (i, &g) in group_s.iter().enumerate() {
                (m.mean[i], m.var[i]) = self.likelihood(g).predict(m.mean[i], m.var[i]);
            }
        }
        m
    }

    /// The observation model of noise group `group`: Gaussian with its plain noise variance
    /// (the robust models' weights only shape the fit; a new point has no robust weight).
    ///
    /// # Panics
    /// If `group` is not a noise group of the model.
    pub fn likelihood(&self, group: usize) -> Gaussian {
        Gaussian::fitted(self.noise[group])
    }

    /// The joint latent covariance at `xs` (only on request: `m × m`).
    pub fn joint_covariance(&self, xs: MatRef<'_, f64>) -> Mat<f64> {
        self.posterior.joint_covariance(xs)
    }
}

/// A fitted Gaussian-likelihood GP with grouped noise.
#[derive(Clone, Debug)]
pub struct MultiOutputGp<C, M> {
    fit: GroupedFit<C, M>,
    lml: f64,
}

impl<C, M> std::ops::Deref for MultiOutputGp<C, M> {
    type Target = GroupedFit<C, M>;
    fn deref(&self) -> &GroupedFit<C, M> {
        &self.fit
    }
}

/// `log p(y)` and its gradient with respect to `[cov params, ln σ²_g …]`.
#[allow(clippy::too_many_arguments)]
pub fn grouped_log_marginal_likelihood<C: Covariance, M: PriorMean>(
    cov: &C,
    mean: &M,
    x: MatRef<'_, f64>,
    y: &[f64],
    group: &[usize],
    noise: &[f64],
    par: Parallelism,
    with_grad: bool,
) -> Result<(f64, Vec<f64>), ModelError> {
    check_entries(x, y, group, noise)?;
    let prior = mean.eval(x);
    let r: Vec<f64> = y.iter().zip(&prior).map(|(a, b)| a - b).collect();
    let d: Vec<f64> = group.iter().map(|&g| noise[g]).collect();
    let e = evidence(
        cov.clone(),
        mean.clone(),
        x,
        &r,
        &d,
        Scale::Given,
        par,
        with_grad,
    )?;
    let mut grad = Vec::new();
    if with_grad {
        grad = e.grad_kernel;
        let mut gn = vec![0.0; noise.len()];
        for (j, &g) in group.iter().enumerate() {
            gn[g] += e.grad_diag[j] * noise[g];
        }
        grad.extend(gn);
    }
    Ok((e.value, grad))
}

impl<C: Covariance, M: PriorMean> MultiOutputGp<C, M> {
    /// Fit the covariance parameters and noise variances by maximising the log marginal
    /// likelihood from `cov` and `noise` (`opts.profile_scale` does not apply).
    pub fn fit(
        cov: C,
        mean: M,
        x: MatRef<'_, f64>,
        y: &[f64],
        group: &[usize],
        noise: &[f64],
        opts: &FitOptions,
    ) -> Result<Self, ModelError> {
        check_entries(x, y, group, noise)?;
        if !opts.optimize {
            return Self::at(cov, mean, x, y, group, noise);
        }
        let par = parallelism_for(x.nrows());
        // Not profiled: on contaminated Energy (bench-robust) the profiled path took 24
        // instead of 40 evaluations but ended in another local optimum, 440 nats lower (noise
        // 2.9 instead of the lower bound); the robust objectives reach the same optimum.
        let (c, s, starts) = maximize_grouped(&cov, noise, opts, par, |c, s, _| {
            let (value, grad) =
                grouped_log_marginal_likelihood(c, &mean, x, y, group, s, par, true)?;
            Ok((value, grad, None))
        })?;
        let mut gp = Self::at(c, mean, x, y, group, &s)?;
        gp.fit.starts = starts;
        Ok(gp)
    }

    /// The GP at fixed parameters.
    pub fn at(
        cov: C,
        mean: M,
        x: MatRef<'_, f64>,
        y: &[f64],
        group: &[usize],
        noise: &[f64],
    ) -> Result<Self, ModelError> {
        check_entries(x, y, group, noise)?;
        let prior = mean.eval(x);
        let r: Vec<f64> = y.iter().zip(&prior).map(|(a, b)| a - b).collect();
        let d: Vec<f64> = group.iter().map(|&g| noise[g]).collect();
        let e = evidence(
            cov,
            mean,
            x,
            &r,
            &d,
            Scale::Given,
            parallelism_for(x.nrows()),
            false,
        )?;
        Ok(MultiOutputGp {
            fit: GroupedFit::new(e.posterior, noise, group, y),
            lml: e.value,
        })
    }

    /// The log marginal likelihood of the training targets.
    pub fn lml(&self) -> f64 {
        self.lml
    }
}
