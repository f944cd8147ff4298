//! Gaussian-process regression with a Student-t likelihood, by the Laplace approximation.
//!
//! Entry `j` (noise group `g = group[j]`, scale `σ_g`, degrees of freedom `ν` shared and fixed)
//! has the likelihood
//!
//! ```text
//! p(y_j | f_j) = Γ((ν+1)/2) / (Γ(ν/2) √(νπ) σ_g) · (1 + r²/(νσ_g²))^(−(ν+1)/2),   r = y_j − f_j
//! ```
//!
//! and the latent `f ~ GP(m, K)` has fixed prior mean values `m` and any [`Covariance`] `K`.
//! With `u = νσ² + r²` the derivatives in `f` are
//!
//! ```text
//! ℓ' = (ν+1) r/u,   W = −ℓ'' = (ν+1)(νσ² − r²)/u²,   ℓ''' = 2(ν+1) r (r² − 3νσ²)/u³
//! ```
//!
//! so `W < 0` for outliers (`r² > νσ²`): the likelihood is not log-concave, `K⁻¹ + W` need not
//! be positive definite and the usual `B = I + W^½ K W^½` does not exist. Everything is
//! therefore written with the Cholesky factor `K = L Lᵀ` and `B = I + Lᵀ W L`, which is positive
//! definite exactly when `K⁻¹ + W = L⁻ᵀ B L⁻¹` is.
//!
//! **Mode.** Newton's method on `Ψ(f) = log p(y|f) − ½ (f−m)ᵀK⁻¹(f−m)` in `f = m + K a`:
//! `Δf = L B⁻¹ Lᵀ (ℓ' − a)`, `Δa = (ℓ' − a) − W Δf` (no `K⁻¹` anywhere), with step halving on
//! `Ψ`. When `B` is not positive definite the Newton direction need not ascend, and the step is
//! damped Levenberg-style: `W` is replaced per entry by `W + 2(ν+1)r²/u² = (ν+1)/u ≥ max(W, 0)`,
//! the curvature of the quadratic that minorises `ℓ` (it is convex in `r²`). That `B` is
//! positive definite, and the step maximises a minoriser of `Ψ`, so it always increases `Ψ`
//! (the EM step of the Student-t as a scale mixture). Plain `max(W, 0)` also ascends but gives
//! outliers no curvature; on standardised UCI data it needed three times as many iterations.
//! Stops when an accepted step changes `Ψ` by less than `1e-10 (1 + |Ψ|)`.
//!
//! **Evidence.** `log q(y|θ) = log p(y|f̂) − ½ âᵀ(f̂ − m) − ½ log|B|`, with `Σ = (K⁻¹+W)⁻¹ =
//! L B⁻¹ Lᵀ` and `R = W − W Σ W = (K + W⁻¹)⁻¹`. Its gradient (Rasmussen & Williams Alg. 5.1 in
//! the `B = I + LᵀWL` form) is, with `s₂ = ½ diag(Σ) ℓ'''` (the derivative of `log q` in the
//! mode) and `t = (I + WK)⁻¹ s₂ = s₂ − W Σ s₂`,
//!
//! ```text
//! ∂/∂θ_k   = Σ_ab [½ ââᵀ − ½ R + ½(t âᵀ + â tᵀ)]_ab ∂K_ab/∂θ_k          (one contraction)
//! ∂/∂ln σ²_g = Σ_{j∈g} ∂ℓ_j/∂η − ½ Σ_jj ∂W_jj/∂η + (K t)_j ∂ℓ'_j/∂η
//! ```
//!
//! where the `t` terms are the implicit dependence through `f̂` (`df̂ = (I + KW)⁻¹ (∂K â + K ∂ℓ'/∂η)`).
//!
//! **Any likelihood.** Nothing above is specific to the Student-t but `ℓ` and its derivatives:
//! the machinery takes any [`Likelihood`] per noise group ([`laplace_approximation`]), and the
//! damping uses the likelihood's [`Likelihood::newton_curvature`]; the Student-t GP is the
//! case of one [`StudentT`] with fixed `ν` per group.
//!
//! **Prediction.** Latent mean `m* + k*ᵀ ℓ'(f̂)`, variance `k** − ‖v‖² + vᵀB⁻¹v` with
//! `v = L⁻¹k*` (`= k** − k*ᵀ (K + W⁻¹)⁻¹ k*`, valid for negative `W`).

use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::{Mat, MatRef};
use rayon::prelude::*;

use crate::kernels::Covariance;
use crate::linalg::{Cholesky, Parallelism};
use crate::models::hyper::NOISE_BOUNDS;
use crate::models::ModelError;
use crate::optim::{minimize_lbfgsb, LbfgsOptions};

pub(crate) mod laplace;
mod posterior;

pub use crate::likelihoods::{student_t_log_pdf, student_t_noise_variance};
use crate::likelihoods::{Likelihood, StudentT};
use laplace::MODE_TOL;

/// The default degrees of freedom: heavy tails, yet a finite predictive variance.
pub const DEFAULT_NU: f64 = 4.0;
/// Test points per prediction block: bounds the cross-covariance to `n × PREDICT_BLOCK`.
const PREDICT_BLOCK: usize = 512;
/// The largest training set accepted: the gradient holds five n×n matrices (`K`'s factor and
/// a clean copy, `B`'s factor, `L_B⁻¹Lᵀ` and `Σ`), 40·n² bytes, about 9 GB at this size.
pub const MAX_STUDENT_T_ROWS: usize = 15_000;

#[cfg(test)]
mod generic_tests;
#[cfg(test)]
mod tests;

/// Settings of [`StudentTGp::fit`].
#[derive(Clone, Debug)]
pub struct StudentTSettings {
    /// Degrees of freedom ν (> 0), fixed during the fit.
    pub nu: f64,
    /// L-BFGS settings of the hyperparameter fit.
    pub lbfgs: LbfgsOptions,
    /// Optimise the covariance parameters and noise scales (otherwise keep the initial ones).
    pub optimize: bool,
}

impl Default for StudentTSettings {
    fn default() -> Self {
        StudentTSettings {
            nu: DEFAULT_NU,
            lbfgs: LbfgsOptions::default(),
            optimize: true,
        }
    }
}

/// The training data of a Student-t GP, one entry per row of `x`.
#[derive(Clone, Copy, Debug)]
pub struct StudentTData<'a> {
    /// Inputs (rows = entries; task-indexed for a multi-output covariance).
    pub x: MatRef<'a, f64>,
    /// Targets.
    pub y: &'a [f64],
    /// Fixed prior mean value of the latent function at each entry.
    pub prior: &'a [f64],
    /// Noise group of each entry (an index into the noise variances).
    pub group: &'a [usize],
}

/// The Laplace approximation at one set of hyperparameters.
#[derive(Clone, Debug)]
pub struct Laplace {
    /// The approximate log marginal likelihood `log q(y|θ)`.
    pub value: f64,
    /// Its gradient with respect to the covariance parameters, then `ln σ²_g` of every group
    /// (empty unless requested).
    pub grad: Vec<f64>,
    /// The latent mode `f̂`.
    pub mode: Vec<f64>,
    /// `â = K⁻¹(f̂ − m)`: pass it as the warm start of the next evaluation.
    pub alpha: Vec<f64>,
    /// Newton iterations the mode search took.
    pub newton_iterations: usize,
    /// How many of them were damped (see the module docs) because `B` was not positive definite.
    pub damped_steps: usize,
}

/// What a fit did.
#[derive(Clone, Debug)]
pub struct StudentTReport {
    /// `log q` at the initial hyperparameters.
    pub initial_log_marginal: f64,
    /// Objective evaluations.
    pub evals: usize,
    /// Optimiser iterations.
    pub iterations: usize,
    /// Whether the optimiser's convergence test was met.
    pub converged: bool,
    /// The optimiser's final message.
    pub message: String,
    /// Newton iterations over all evaluations (warm starts keep this a small multiple of
    /// `evals`).
    pub newton_iterations: usize,
    /// How many of those were damped steps.
    pub damped_steps: usize,
}

/// Validates the data against `groups` likelihoods (named `what` in messages) and the warm
/// start.
fn check_data(
    data: &StudentTData<'_>,
    groups: usize,
    what: &str,
    warm: Option<&[f64]>,
) -> Result<(), ModelError> {
    let bad = |m: String| Err(ModelError::Invalid(m));
    let n = data.x.nrows();
    if n == 0 {
        return bad("no training rows".into());
    }
    if n > MAX_STUDENT_T_ROWS {
        return bad(format!(
            "{n} training rows is more than the Laplace GP handles ({MAX_STUDENT_T_ROWS}): \
             its n×n matrices would need about {:.0} GB",
            40.0 * (n as f64).powi(2) / 1e9
        ));
    }
    for (name, len) in [
        ("y", data.y.len()),
        ("prior", data.prior.len()),
        ("group", data.group.len()),
    ] {
        if len != n {
            return bad(format!("{name} has {len} entries but x has {n} rows"));
        }
    }
    if let Some(w) = warm {
        if w.len() != n {
            return bad(format!(
                "warm_start has {} entries but x has {n} rows",
                w.len()
            ));
        }
    }
    for j in 0..n {
        if !data.y[j].is_finite() {
            return bad(format!("y[{j}] = {} is not finite", data.y[j]));
        }
        if !data.prior[j].is_finite() {
            return bad(format!("prior[{j}] = {} is not finite", data.prior[j]));
        }
        if data.group[j] >= groups {
            return bad(format!(
                "group[{j}] = {} but only {groups} {what} were given",
                data.group[j]
            ));
        }
        if let Some(c) = (0..data.x.ncols()).find(|&c| !data.x[(j, c)].is_finite()) {
            return bad(format!("x[{j}, {c}] = {} is not finite", data.x[(j, c)]));
        }
    }
    Ok(())
}

/// One Student-t likelihood per noise group, with `nu` fixed: the likelihoods of the Laplace
/// approximation, whose gradient then covers `ln σ²_g` of every group.
fn student_t_likelihoods(noise: &[f64], nu: f64) -> Result<Vec<StudentT>, ModelError> {
    if !(nu.is_finite() && nu > 0.0) {
        return Err(ModelError::Invalid(format!(
            "nu = {nu} must be a positive finite number"
        )));
    }
    if noise.is_empty() {
        return Err(ModelError::Invalid(
            "noise needs one variance per group, got none".into(),
        ));
    }
    noise
        .iter()
        .enumerate()
        .map(|(g, &s2)| {
            StudentT::fixed_nu(nu, s2).map_err(|_| {
                ModelError::Invalid(format!(
                    "noise[{g}] = {s2} must be a positive finite variance"
                ))
            })
        })
        .collect()
}

/// [`laplace::evaluate`] for the Student-t GP with noise variances `noise` and `nu` degrees of
/// freedom.
fn evaluate<C: Covariance>(
    cov: &C,
    data: &StudentTData<'_>,
    noise: &[f64],
    nu: f64,
    warm: Option<&[f64]>,
    with_grad: bool,
    tol: f64,
) -> Result<(Laplace, laplace::ModeState), ModelError> {
    let likelihoods = student_t_likelihoods(noise, nu)?;
    laplace::evaluate(cov, data, &likelihoods, warm, with_grad, tol)
}

/// The Laplace approximation of a GP with any likelihood: entry `j` of `data` is observed
/// through `likelihoods[data.group[j]]`. Returns the approximate log marginal likelihood `log q`,
/// its gradient if `with_grad` (covariance parameters, then the unconstrained parameters of
/// each likelihood in turn) and the mode. `warm_start` as in [`laplace_log_marginal`].
///
/// # Errors
/// [`ModelError::Invalid`] for inconsistent lengths, non-finite data, a group without a
/// likelihood or a failed mode search; [`ModelError::Linalg`] if `K` cannot be factorised.
pub fn laplace_approximation<C: Covariance, L: Likelihood>(
    cov: &C,
    data: &StudentTData<'_>,
    likelihoods: &[L],
    warm_start: Option<&[f64]>,
    with_grad: bool,
) -> Result<Laplace, ModelError> {
    Ok(laplace::evaluate(cov, data, likelihoods, warm_start, with_grad, MODE_TOL)?.0)
}

/// The Laplace approximation of the Student-t GP at covariance `cov`, noise variances `noise`
/// (`σ²_g`, one per group) and `nu` degrees of freedom: the log marginal likelihood `log q`, its
/// gradient (covariance parameters, then `ln σ²_g`) if `with_grad`, and the mode.
///
/// `warm_start` is the [`Laplace::alpha`] of an earlier evaluation (at nearby hyperparameters);
/// it is used when it gives a larger `Ψ` than the prior mean.
///
/// # Errors
/// [`ModelError::Invalid`] for inconsistent lengths, non-finite data, `nu ≤ 0`, non-positive
/// noise or a group without a noise variance; [`ModelError::Linalg`] if `K` cannot be
/// factorised; [`ModelError::Invalid`] if the mode search fails.
pub fn laplace_log_marginal<C: Covariance>(
    cov: &C,
    data: &StudentTData<'_>,
    noise: &[f64],
    nu: f64,
    warm_start: Option<&[f64]>,
    with_grad: bool,
) -> Result<Laplace, ModelError> {
    Ok(evaluate(cov, data, noise, nu, warm_start, with_grad, MODE_TOL)?.0)
}

/// A fitted Student-t GP.
#[derive(Clone, Debug)]
pub struct StudentTGp<C> {
    cov: C,
    x: Mat<f64>,
    noise: Vec<f64>,
    nu: f64,
    chol: Cholesky,
    lb: Mat<f64>,
    grad_lik: Vec<f64>,
    mode: Vec<f64>,
    log_marginal: f64,
    report: Option<StudentTReport>,
}

impl<C: Covariance> StudentTGp<C> {
    /// Fit to inputs `x`, targets `y`, prior mean values `prior` and noise groups `group`,
    /// starting from covariance `cov` and noise variances `noise` (`σ²_g`). With
    /// `s.optimize`, maximises `log q` over the covariance parameters and `ln σ²_g` (bounded
    /// by the covariance's bounds and `[1e-6, 1e5]`) by L-BFGS from this one start, each
    /// mode search warm-started from the previous one.
    ///
    /// # Errors
    /// As [`laplace_log_marginal`], or if the optimiser cannot start.
    pub fn fit(
        cov: C,
        x: MatRef<'_, f64>,
        y: &[f64],
        prior: &[f64],
        group: &[usize],
        noise: &[f64],
        s: &StudentTSettings,
    ) -> Result<Self, ModelError> {
        let data = StudentTData { x, y, prior, group };
        student_t_likelihoods(noise, s.nu)?;
        check_data(&data, noise.len(), "noise variances", None)?;
        let mut cov = cov;
        let mut noise = noise.to_vec();
        let mut warm: Option<Vec<f64>> = None;
        let mut report = None;
        if s.optimize {
            let nk = cov.n_params();
            let mut bounds = cov.bounds();
            bounds.extend(std::iter::repeat_n(
                (NOISE_BOUNDS.0.ln(), NOISE_BOUNDS.1.ln()),
                noise.len(),
            ));
            let mut x0 = cov.params();
            x0.extend(noise.iter().map(|v| v.ln()));
            let mut first = None;
            let (mut newton, mut damped) = (0, 0);
            // The mode of the best point, so that the final model sits on the same mode (the
            // posterior can be multimodal) and every run retraces the same path.
            let mut best: Option<(f64, Vec<f64>)> = None;
            let objective = |v: &[f64]| -> Result<(f64, Vec<f64>), String> {
                let mut c = cov.clone();
                c.set_params(&v[..nk]).map_err(|e| e.to_string())?;
                let nz: Vec<f64> = v[nk..].iter().map(|l| l.exp()).collect();
                let r = laplace_log_marginal(&c, &data, &nz, s.nu, warm.as_deref(), true)
                    .map_err(|e| e.to_string())?;
                first.get_or_insert(r.value);
                newton += r.newton_iterations;
                damped += r.damped_steps;
                if best.as_ref().is_none_or(|b| r.value > b.0) {
                    best = Some((r.value, r.alpha.clone()));
                }
                warm = Some(r.alpha);
                Ok((-r.value, r.grad.iter().map(|g| -g).collect()))
            };
            let res = minimize_lbfgsb(objective, &x0, &bounds, &s.lbfgs)?;
            cov.set_params(&res.x[..nk])?;
            noise = res.x[nk..].iter().map(|l| l.exp()).collect();
            warm = best.map(|b| b.1);
            report = Some(StudentTReport {
                initial_log_marginal: first.unwrap_or(f64::NAN),
                evals: res.n_evals,
                iterations: res.n_iter,
                converged: res.converged,
                message: res.message,
                newton_iterations: newton,
                damped_steps: damped,
            });
        }
        // Re-find the mode warm-started from the best point's; should that end on a saddle
        // (possible with the non-log-concave likelihood), search again from the prior mean.
        let (lap, st) = match evaluate(&cov, &data, &noise, s.nu, warm.as_deref(), false, MODE_TOL)
        {
            Ok(found) => found,
            Err(_) if warm.is_some() => evaluate(&cov, &data, &noise, s.nu, None, false, MODE_TOL)?,
            Err(e) => return Err(e),
        };
        Ok(StudentTGp {
            cov,
            x: x.to_owned(),
            noise,
            nu: s.nu,
            chol: st.chol,
            lb: st.lb,
            grad_lik: st.d.iter().map(|d| d.d1).collect(),
            mode: lap.mode,
            log_marginal: lap.value,
            report,
        })
    }

    /// The approximate log marginal likelihood `log q(y|θ)` at the fitted hyperparameters.
    pub fn log_marginal(&self) -> f64 {
        self.log_marginal
    }

    /// The (fitted) covariance.
    pub fn covariance(&self) -> &C {
        &self.cov
    }

    /// The (fitted) noise variances `σ²_g`, one per group.
    pub fn noise(&self) -> &[f64] {
        &self.noise
    }

    /// The degrees of freedom ν.
    pub fn nu(&self) -> f64 {
        self.nu
    }

    /// The latent mode `f̂` at the training entries.
    pub fn mode(&self) -> &[f64] {
        &self.mode
    }

    /// What the fit did (`None` without optimisation).
    pub fn report(&self) -> Option<&StudentTReport> {
        self.report.as_ref()
    }

    /// Latent mean and variance at test inputs `xs` (rows like the training `x`) with prior
    /// mean values `prior_s`, block by block so that no test×test matrix is ever formed.
    ///
    /// # Errors
    /// If `xs` has the wrong number of columns or non-finite entries, or `prior_s` does not
    /// have one finite value per row.
    pub fn predict_latent(
        &self,
        xs: MatRef<'_, f64>,
        prior_s: &[f64],
    ) -> Result<(Vec<f64>, Vec<f64>), ModelError> {
        let m = xs.nrows();
        if xs.ncols() != self.x.ncols() {
            return Err(ModelError::Invalid(format!(
                "test inputs have {} columns, the model was trained on {}",
                xs.ncols(),
                self.x.ncols()
            )));
        }
        if prior_s.len() != m {
            return Err(ModelError::Invalid(format!(
                "prior_s has {} entries but xs has {m} rows",
                prior_s.len()
            )));
        }
        for i in 0..m {
            if !prior_s[i].is_finite() {
                return Err(ModelError::Invalid(format!("prior_s[{i}] is not finite")));
            }
            if let Some(c) = (0..xs.ncols()).find(|&c| !xs[(i, c)].is_finite()) {
                return Err(ModelError::Invalid(format!("xs[{i}, {c}] is not finite")));
            }
        }
        let blocks: Vec<usize> = (0..m).step_by(PREDICT_BLOCK).collect();
        let run = |&s: &usize| self.predict_block(xs.subrows(s, PREDICT_BLOCK.min(m - s)));
        // Never nest rayon inside faer's parallel solves.
        let parts: Vec<(Vec<f64>, Vec<f64>)> =
            if blocks.len() > 1 && self.chol.parallelism() == Parallelism::Sequential {
                blocks.par_iter().map(run).collect()
            } else {
                blocks.iter().map(run).collect()
            };
        let mut mean = Vec::with_capacity(m);
        let mut var = Vec::with_capacity(m);
        for (mu, v) in parts {
            mean.extend(mu);
            var.extend(v);
        }
        for (mu, p) in mean.iter_mut().zip(prior_s) {
            *mu += p;
        }
        Ok((mean, var))
    }

    /// Latent mean (without the prior) and variance of one block of test points.
    fn predict_block(&self, xs: MatRef<'_, f64>) -> (Vec<f64>, Vec<f64>) {
        let n = self.x.nrows();
        let mut kx = self.cov.cross(self.x.as_ref(), xs);
        let kss = self.cov.diag(xs);
        let mean: Vec<f64> = (0..xs.nrows())
            .map(|j| (0..n).map(|i| kx[(i, j)] * self.grad_lik[i]).sum())
            .collect();
        self.chol.solve_lower_in_place(kx.as_mut());
        let q: Vec<f64> = (0..xs.nrows())
            .map(|j| (0..n).map(|i| kx[(i, j)] * kx[(i, j)]).sum())
            .collect();
        let par = self.chol.parallelism().faer();
        solve_lower_triangular_in_place(self.lb.as_ref(), kx.as_mut(), par);
        let var = (0..xs.nrows())
            .map(|j| {
                let qb: f64 = (0..n).map(|i| kx[(i, j)] * kx[(i, j)]).sum();
                (kss[j] - q[j] + qb).max(0.0)
            })
            .collect();
        (mean, var)
    }

    /// The predictive variance of a new observation: `latent_var[i] + σ²_g ν/(ν−2)` with
    /// `g = group_s[i]` — the latent variance plus the Student-t noise variance (infinite for
    /// ν ≤ 2). The predictive of `y*` (Gaussian latent convolved with Student-t noise) is not
    /// Gaussian; this is its variance, the one a Gaussian-form NLPD needs.
    ///
    /// # Errors
    /// If the lengths differ or a group has no noise variance.
    pub fn observation_variance(
        &self,
        latent_var: &[f64],
        group_s: &[usize],
    ) -> Result<Vec<f64>, ModelError> {
        if latent_var.len() != group_s.len() {
            return Err(ModelError::Invalid(format!(
                "latent_var has {} entries but group_s has {}",
                latent_var.len(),
                group_s.len()
            )));
        }
        latent_var
            .iter()
            .zip(group_s)
            .enumerate()
            .map(|(i, (v, &g))| match self.noise.get(g) {
                Some(&s2) => Ok(v + student_t_noise_variance(s2, self.nu)),
                None => Err(ModelError::Invalid(format!(
                    "group_s[{i}] = {g} but the model has {} noise groups",
                    self.noise.len()
                ))),
            })
            .collect()
    }
}
