//! Binary GP classification by the Laplace approximation (Rasmussen & Williams Alg. 3.1/3.2;
//! evidence gradient Alg. 5.1).
//!
//! Nothing here is specific to classification but the likelihood: the mode search, the
//! approximate log marginal likelihood `log q(y|θ) = log p(y|f̂) − ½ âᵀf̂ − ½ log|B|` and its
//! gradient are the generic Laplace machinery
//! ([`laplace_approximation`](crate::models::laplace::student_t::laplace_approximation)) with one
//! [`Bernoulli`] likelihood, a zero prior mean and every row in one group. The Bernoulli
//! log densities are concave, so the mode is unique and `W = −∇∇ log p(y|f̂) > 0`: the
//! evidence (what a fit evaluates) and the fitted model both use the machinery's log-concave
//! form `B = I + W½KW½` (no factor of `K`, so no jitter, one Cholesky per Newton step).
//!
//! The fitted posterior is linear-Gaussian (`adversarial-bounds.md` §2.2): support `X`,
//! `t = ∇ log p(y|f̂) (= K⁻¹f̂)`, `S = (K + W⁻¹)⁻¹`, held as `W½ B⁻¹ W½` with
//! `B = I + W½KW½ = L_B L_Bᵀ` (R&W Alg. 3.2). `B ⪰ I` is well conditioned whatever `K` is; the
//! generic factors' equal `K⁻¹ − L⁻ᵀ(I + LᵀWL)⁻¹L⁻¹` is a difference of two matrices of the size
//! of `K⁻¹`, which for a smooth kernel (an SE's `K` needs jitter) loses the variance's digits
//! once `S` is materialised, as verification does
//! (`the_posterior_form_is_accurate_where_k_is_ill_conditioned`).

use std::borrow::Cow;

use faer::{Mat, MatRef};

use super::checks::check_binary;
use super::warm::{evaluations_in_sequence, Warm};
use crate::fit::pilot;
use crate::fit::restarts::maximize;
use crate::fit::{FitOptions, FitReport};
use crate::kernels::{Covariance, Kernel};
use crate::likelihoods::{Bernoulli, Likelihood, Link};
use crate::linalg::{parallelism_for, Cholesky};
use crate::means::Mean;
use crate::models::laplace::student_t::laplace::{
    evaluate, evaluate_log_concave_from, PreviousMode, MODE_TOL,
};
use crate::models::laplace::student_t::{Laplace, StudentTData};
use crate::models::ModelError;
use crate::posterior::{LinearGaussian, LinearGaussianForm, Marginals, Term};

/// The Laplace approximation of a binary classifier with covariance `kernel` and link `link`
/// on inputs `x` and labels `y ∈ {−1, +1}`: `log q(y|θ)`, its gradient in the kernel's
/// parameters if `with_grad`, and the mode. `warm_start` is the [`Laplace::alpha`] of an
/// earlier evaluation, used when it starts the mode search higher than `f = 0`.
///
/// # Errors
/// [`ModelError::Invalid`] for labels other than `±1`, non-finite inputs or a failed mode
/// search; [`ModelError::Linalg`] if `K` cannot be factorised.
pub fn laplace_evidence<C: Covariance>(
    kernel: &C,
    x: MatRef<'_, f64>,
    y: &[f64],
    link: Link,
    warm_start: Option<&[f64]>,
    with_grad: bool,
) -> Result<Laplace, ModelError> {
    laplace_evidence_from(kernel, x, y, link, warm_start, None, with_grad).map(|r| r.0)
}

/// [`laplace_evidence`] whose mode search may also start from the mode of an evaluation at
/// other parameters (see [`evaluate_log_concave_from`]); also returns this evaluation's mode
/// for the next one.
fn laplace_evidence_from<C: Covariance>(
    kernel: &C,
    x: MatRef<'_, f64>,
    y: &[f64],
    link: Link,
    warm_start: Option<&[f64]>,
    previous: Option<&PreviousMode>,
    with_grad: bool,
) -> Result<(Laplace, PreviousMode), ModelError> {
    check_binary(x, y)?;
    let (prior, group) = (vec![0.0; y.len()], vec![0; y.len()]);
    let data = StudentTData {
        x,
        y,
        prior: &prior,
        group: &group,
    };
    let lik = [Bernoulli::new(link)];
    // The Bernoulli is log-concave (W > 0): the fast form of R&W Alg. 3.1/5.1 applies.
    evaluate_log_concave_from(
        kernel, &data, &lik, warm_start, previous, with_grad, MODE_TOL,
    )
}

/// A fitted binary Laplace GP classifier (labels `±1`, zero prior mean).
#[derive(Clone, Debug)]
pub struct BinaryLaplace {
    kernel: Kernel,
    likelihood: Bernoulli,
    x: Mat<f64>,
    /// `W½` at the mode, as a diagonal matrix (the projection of the form's term).
    sqrt_w: Mat<f64>,
    /// `B = I + W½KW½ = L_B L_Bᵀ` at the mode.
    lb: Cholesky,
    t: Vec<f64>,
    mode: Vec<f64>,
    lml: f64,
    newton_iterations: usize,
    mode_start: Option<Vec<f64>>,
    starts: Vec<FitReport>,
}

/// Where an evaluation's mode search may start: the pilot posterior's mean (the first full-size
/// evaluation), then the mode of the evaluation before it.
enum ModeStart {
    Pilot(Vec<f64>),
    Previous(PreviousMode),
}

impl ModeStart {
    fn alpha(&self) -> &[f64] {
        match self {
            ModeStart::Pilot(a) => a,
            ModeStart::Previous(p) => p.alpha(),
        }
    }
}

/// The Laplace evidence with `kernel`'s parameters set to `v`, and its gradient; `warm`
/// starts the mode search and receives where it ended.
fn evidence_at(
    kernel: &Kernel,
    v: &[f64],
    x: MatRef<'_, f64>,
    y: &[f64],
    link: Link,
    warm: &Warm<ModeStart>,
) -> Result<(f64, Vec<f64>), String> {
    let mut k = kernel.clone();
    k.set_params(v).map_err(|e| e.to_string())?;
    let start = warm.take();
    let (alpha, previous) = match &start {
        Some(ModeStart::Pilot(a)) => (Some(a.as_slice()), None),
        Some(ModeStart::Previous(p)) => (None, Some(p)),
        None => (None, None),
    };
    match laplace_evidence_from(&k, x, y, link, alpha, previous, true) {
        Ok((r, ended)) => {
            warm.set(ModeStart::Previous(ended));
            Ok((r.value, r.grad))
        }
        Err(e) => {
            if let Some(s) = start {
                warm.set(s);
            }
            Err(e.to_string())
        }
    }
}

/// Maximise the Laplace evidence over `kernel`'s parameters from its values (where
/// `curvature`, if given, approximates the negated Hessian, and `alpha`, if given, starts the
/// first mode search) and `opts.restarts` seeded restarts; the best parameters, a report
/// per start and the last evaluation's mode (when evaluations are warm-started, see
/// [`Warm`]), which starts later mode searches near the optimum.
fn optimize(
    kernel: &Kernel,
    x: MatRef<'_, f64>,
    y: &[f64],
    link: Link,
    opts: &FitOptions,
    curvature: Option<Mat<f64>>,
    alpha: Option<Vec<f64>>,
) -> Result<Optimized, ModelError> {
    let par = parallelism_for(x.nrows());
    let in_sequence = evaluations_in_sequence(par, opts.restarts);
    let warm = match alpha {
        Some(a) => Warm::starting_from(in_sequence, ModeStart::Pilot(a)),
        None => Warm::new(in_sequence),
    };
    let objective = |v: &[f64]| evidence_at(kernel, v, x, y, link, &warm);
    let x0 = kernel.params();
    let (v, starts) = maximize(
        pilot::curved_at_start(objective, x0.clone(), curvature),
        &x0,
        &kernel.bounds(),
        &kernel.param_names(),
        opts.restarts,
        opts.seed,
        &opts.lbfgs,
        par,
    )?;
    Ok((v, starts, warm.take()))
}

/// The best parameters, a report per optimiser start, and a mode near the optimum.
type Optimized = (Vec<f64>, Vec<FitReport>, Option<ModeStart>);

/// [`optimize`] on every row from the optimum of a pilot fit on `rows` (see
/// [`pilot`](crate::fit::pilot)), or from `kernel` if the pilot fails (a subset with one class).
fn optimize_piloted(
    kernel: &Kernel,
    x: MatRef<'_, f64>,
    y: &[f64],
    rows: &[usize],
    link: Link,
    opts: &FitOptions,
) -> Result<Optimized, ModelError> {
    let (xs, ys) = (pilot::select_rows(x, rows), pilot::select(y, rows));
    let pilot_opts = pilot::pilot_options(opts);
    let piloted = check_binary(xs.as_ref(), &ys)
        .and_then(|()| optimize(kernel, xs.as_ref(), &ys, link, &pilot_opts, None, None));
    let Ok((v, pilot_starts, pilot_mode)) = piloted else {
        return optimize(kernel, x, y, link, opts, None, None);
    };
    let mut start = kernel.clone();
    start.set_params(&v)?;
    // The pilot's mode at its optimum (its last evaluation's, when the pilot was
    // warm-started; else a fresh one) starts the first full-size mode search: `â` on the
    // pilot's rows and 0 elsewhere gives `f = K â`, the pilot posterior's mean at every row (a
    // start the search keeps only if it beats `f = 0`).
    let pilot_alpha = match &pilot_mode {
        Some(m) => Some(m.alpha().to_vec()),
        None => laplace_evidence(&start, xs.as_ref(), &ys, link, None, false)
            .ok()
            .map(|m| m.alpha),
    };
    let spent = pilot::curvature_evaluations(v.len()) + usize::from(pilot_mode.is_none());
    let alpha = pilot_alpha.map(|pa| {
        let mut a = vec![0.0; x.nrows()];
        rows.iter().zip(&pa).for_each(|(&i, &ai)| a[i] = ai);
        a
    });
    // The pilot's curvature at the full fit's start, its evaluations (one after another)
    // warm-started from the pilot's mode.
    let warm = Warm::new(true);
    if let Some(m) = pilot_mode {
        warm.set(m);
    }
    let curvature = pilot::curvature(
        |v: &[f64]| evidence_at(&start, v, xs.as_ref(), &ys, link, &warm),
        &start.params(),
        &start.bounds(),
        pilot::curvature_scale(x.nrows(), rows.len()),
    );
    let full_opts = pilot::after_pilot(opts);
    let (v, mut starts, alpha) = optimize(&start, x, y, link, &full_opts, curvature, alpha)?;
    pilot::mark_piloted(&mut starts, &pilot_starts, spent, rows.len(), x.nrows());
    Ok((v, starts, alpha))
}

impl BinaryLaplace {
    /// Fit to inputs `x` (n×d) and labels `y ∈ {−1, +1}`, starting from `kernel` (initialised
    /// from the data where it has data-driven defaults). With `opts.optimize`, maximises
    /// `log q(y|θ)` over the kernel's parameters by L-BFGS-B from the start and
    /// `opts.restarts` seeded restarts (`opts.extra_diag` and `opts.profile_scale` do not
    /// apply and are ignored).
    ///
    /// # Errors
    /// As [`laplace_evidence`], or if every optimiser start fails.
    pub fn fit(
        x: MatRef<'_, f64>,
        y: &[f64],
        kernel: Kernel,
        link: Link,
        opts: &FitOptions,
    ) -> Result<Self, ModelError> {
        check_binary(x, y)?;
        let mut kernel = kernel;
        kernel.initialize(x)?;
        if !opts.optimize {
            return Self::at(x, y, kernel, link);
        }
        let (v, starts, alpha) = match pilot::pilot_rows(x.nrows(), opts) {
            Some(rows) => optimize_piloted(&kernel, x, y, &rows, link, opts)?,
            None => optimize(&kernel, x, y, link, opts, None, None)?,
        };
        kernel.set_params(&v)?;
        let mut model = Self::at_from(x, y, kernel, link, alpha.as_ref().map(ModeStart::alpha))?;
        model.starts = starts;
        Ok(model)
    }

    /// The classifier at fixed hyperparameters (no optimisation; `kernel` used as given).
    ///
    /// # Errors
    /// As [`laplace_evidence`].
    pub fn at(
        x: MatRef<'_, f64>,
        y: &[f64],
        kernel: Kernel,
        link: Link,
    ) -> Result<Self, ModelError> {
        Self::at_from(x, y, kernel, link, None)
    }

    /// [`BinaryLaplace::at`] with its mode search also started from `alpha` (the `â` of a
    /// mode at nearby parameters, such as a fit's last evaluation), used if it beats `f = 0`:
    /// the same mode to the search's tolerance, in fewer Newton steps. Given the
    /// [`BinaryLaplace::mode_start`] of a model, it repeats that model's computation exactly
    /// (how a model file is loaded).
    ///
    /// # Errors
    /// As [`laplace_evidence`] (also if `alpha` does not have one entry per row).
    pub fn at_from(
        x: MatRef<'_, f64>,
        y: &[f64],
        kernel: Kernel,
        link: Link,
        alpha: Option<&[f64]>,
    ) -> Result<Self, ModelError> {
        check_binary(x, y)?;
        let (prior, group) = (vec![0.0; y.len()], vec![0; y.len()]);
        let data = StudentTData {
            x,
            y,
            prior: &prior,
            group: &group,
        };
        let likelihood = Bernoulli::new(link);
        // The log-concave form: no factor of K, so no jitter that a change of K in its last
        // digits (a model file's parameters after exp(ln v)) could switch on or off. Where K is
        // huge (a variance of 1e10) its Newton step cancels digits and may not converge; the
        // generic form, on a jittered factor of K, still does.
        let lik = [likelihood];
        let lap =
            match evaluate_log_concave_from(&kernel, &data, &lik, alpha, None, false, MODE_TOL) {
                Ok((lap, _)) => lap,
                Err(_) => evaluate(&kernel, &data, &lik, alpha, false, MODE_TOL)?.0,
            };
        let n = y.len();
        let d: Vec<_> = (0..n)
            .map(|i| likelihood.latent_derivatives(y[i], lap.mode[i]))
            .collect();
        // The Bernoulli is log-concave: W = −∂² log p ≥ 0 at every f.
        let s = d
            .iter()
            .map(|d| (-d.d2 >= 0.0).then(|| (-d.d2).sqrt()))
            .collect::<Option<Vec<f64>>>()
            .ok_or_else(|| {
                ModelError::Invalid("W < 0 at the Laplace mode of a Bernoulli likelihood".into())
            })?;
        let k = kernel.matrix(x);
        let b = Mat::from_fn(n, n, |i, j| {
            let v = s[i] * k[(i, j)] * s[j];
            if i == j {
                1.0 + v
            } else {
                v
            }
        });
        let lb = Cholesky::factor(&b, "Laplace matrix B = I + W½KW½", parallelism_for(n))?;
        Ok(BinaryLaplace {
            kernel,
            likelihood,
            x: x.to_owned(),
            sqrt_w: Mat::from_fn(n, n, |i, j| if i == j { s[i] } else { 0.0 }),
            lb,
            t: d.iter().map(|d| d.d1).collect(),
            mode: lap.mode,
            lml: lap.value,
            newton_iterations: lap.newton_iterations,
            mode_start: alpha.map(<[f64]>::to_vec),
            starts: Vec::new(),
        })
    }

    /// The approximate log marginal likelihood `log q(y|θ)` at the fitted hyperparameters.
    pub fn lml(&self) -> f64 {
        self.lml
    }

    /// The (fitted) kernel.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The likelihood (its link, and how the logit's class probability is integrated).
    pub fn likelihood(&self) -> &Bernoulli {
        &self.likelihood
    }

    /// Sets how class probabilities of the logit are integrated (see [`Bernoulli`]).
    pub fn set_likelihood(&mut self, likelihood: Bernoulli) -> Result<(), ModelError> {
        if likelihood.link() != self.likelihood.link() {
            return Err(ModelError::Invalid(format!(
                "the model was fitted with the {} link, not {}",
                self.likelihood.link().name(),
                likelihood.link().name()
            )));
        }
        self.likelihood = likelihood;
        Ok(())
    }

    /// The latent mode `f̂` at the training inputs.
    pub fn mode(&self) -> &[f64] {
        &self.mode
    }

    /// Training inputs.
    pub fn x(&self) -> MatRef<'_, f64> {
        self.x.as_ref()
    }

    /// Newton iterations of the final mode search.
    pub fn newton_iterations(&self) -> usize {
        self.newton_iterations
    }

    /// Where the mode search started besides `f = 0` (see [`BinaryLaplace::at_from`]): a fit
    /// starts it from the mode of its last evaluation.
    pub fn mode_start(&self) -> Option<&[f64]> {
        self.mode_start.as_deref()
    }

    /// The jitter the factorisation of `B = I + W½KW½` needed (none unless `B ⪰ I` is
    /// numerically singular; `K` itself is never factorised).
    pub fn jitter(&self) -> f64 {
        self.lb.jitter()
    }

    /// Reports of the optimiser starts (empty without optimisation).
    pub fn starts(&self) -> &[FitReport] {
        &self.starts
    }

    /// Latent marginals at the rows of `xs`.
    ///
    /// # Errors
    /// If `xs` has the wrong width or non-finite entries.
    pub fn predict_latent(&self, xs: MatRef<'_, f64>) -> Result<Marginals, ModelError> {
        self.linear_gaussian().marginals(xs)
    }

    /// `P(y = +1)` at the rows of `xs`.
    ///
    /// # Errors
    /// As [`BinaryLaplace::predict_latent`].
    pub fn predict_proba(&self, xs: MatRef<'_, f64>) -> Result<Vec<f64>, ModelError> {
        let m = self.predict_latent(xs)?;
        Ok(m.mean
            .iter()
            .zip(&m.var)
            .map(|(&mu, &v)| self.likelihood.class_probability(mu, v))
            .collect())
    }
}

impl LinearGaussianForm for BinaryLaplace {
    type Covariance = Kernel;
    type Mean = Mean;

    fn linear_gaussian(&self) -> LinearGaussian<'_, Kernel, Mean> {
        LinearGaussian::of_model(
            &self.kernel,
            Cow::Owned(Mean::Zero),
            self.x.as_ref(),
            &self.t,
            vec![Term::Chain {
                sign: 1.0,
                project: Some(self.sqrt_w.as_ref()),
                lower: vec![self.lb.l()],
            }],
        )
    }
}
