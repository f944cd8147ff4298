//! Expectation propagation for binary probit classification under the FIC, DTC or VAR prior
//! (Naish-Guzman & Holden 2008; the sequential updates of R&W Alg. 3.5 carried out against the
//! low-rank + diagonal prior `Q_ff + G`, as GPML's `infFITC_EP`).
//!
//! The prior is written `f = Vᵀw + e`, `w ~ N(0, I_M)`, `e ~ N(0, G)`, `V = L_uu⁻¹ K_uf`. With
//! Gaussian sites `N(f_i; ν̃_i/τ̃_i, 1/τ̃_i)`, marginalising `e` gives the posterior of `w` with
//! precision `B = I + V diag(p) Vᵀ`, `p_i = τ̃_i / (1 + g_i τ̃_i)`, and mean `B⁻¹ V r`,
//! `r_i = ν̃_i / (1 + g_i τ̃_i)`; then `e_i | w` is a scalar conjugate update, so
//!
//! ```text
//! mean_i = (v_iᵀ B⁻¹ V r + g_i ν̃_i) / (1 + g_i τ̃_i),
//! var_i  = v_iᵀ B⁻¹ v_i / (1 + g_i τ̃_i)² + g_i / (1 + g_i τ̃_i),
//! ```
//!
//! finite at `τ̃_i = 0`. A site update changes `p_i` alone, a rank-one change of `B`, so `B⁻¹` is
//! kept by Sherman–Morrison (`O(M²)` per site, `O(n M²)` per sweep) and rebuilt from a
//! Cholesky factorisation at the start of every sweep to stop round-off from accumulating.
//!
//! The evidence is R&W Eq. 3.65 rewritten in `(τ̃, ν̃)` so that it stays finite at `τ̃_i = 0`
//! (cavity mean `μ_i`, variance `s_i`, posterior marginal means `m`):
//!
//! ```text
//! log Z_EP = Σ_i log Φ(y_i μ_i / √(1 + s_i)) + ½ Σ_i log(1 + τ̃_i s_i)
//!          + Σ_i (τ̃_i μ_i² − 2 μ_i ν̃_i − ν̃_i² s_i) / (2 (1 + τ̃_i s_i)) + ½ ν̃ᵀ m
//!          − ½ [Σ_i log(1 + g_i τ̃_i) + log|B|]
//! ```
//!
//! (the last bracket is `log|I + T̃^½ (Q_ff + G) T̃^½|` by the determinant lemma). VAR runs
//! DTC's EP and subtracts `½ Σ_i τ̃_i (K_ii − Q_ii)`, the trace term of Titsias' bound with the
//! sites as the Gaussian pseudo-likelihood [choice, as GPstuff]; its predictions are DTC's.

use faer::{Mat, MatRef};

use super::{check_inducing, LowRank, SparsePrior};
use crate::fit::restarts::{maximize, plain};
use crate::fit::FitOptions;
use crate::kernels::{Covariance, Kernel};
use crate::linalg::{parallelism_for, Cholesky};
use crate::means::Mean;
use crate::models::checks::check_matrix;
use crate::models::classification::ep::{EpSite, Probit};
use crate::models::sparse::check_model;
use crate::models::sparse::collapsed::{collapsed_bound, Factors, Wanted};
use crate::models::ModelError;
use crate::posterior::{LinearGaussian, LinearGaussianForm};
use crate::sequential::acquisition::normal::{cdf, log_cdf};

/// Settings of the EP iteration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EpOptions {
    /// Sweeps over the sites before giving up.
    pub max_sweeps: usize,
    /// Converged when no site parameter changes by more than this in a sweep.
    pub tol: f64,
    /// Damping `δ ∈ (0, 1]`: new site = `(1 − δ)·old + δ·proposed` (1: undamped).
    pub damping: f64,
}

impl Default for EpOptions {
    /// 200 sweeps, tolerance 1e-9, undamped (probit sites are log-concave: EP is stable).
    fn default() -> Self {
        EpOptions {
            max_sweeps: 200,
            tol: 1e-9,
            damping: 1.0,
        }
    }
}

/// The moments of the tilted distribution `Φ(y f) N(f; μ, s)` (R&W Eq. 3.58) as
/// `(log Ẑ, mean, variance)`, `y = ±1`: the binary EP's probit site, shared.
pub(super) fn probit_tilted_moments(y: f64, mu: f64, s: f64) -> (f64, f64, f64) {
    let t = Probit.tilted(y, mu, s);
    (t.log_z, t.mean, t.var)
}

/// Binary probit GP classification by EP under a sparse prior, at fixed hyperparameters and
/// inducing inputs. Labels are class indices 0/1 with `p(y = 1 | f) = Φ(f)`.
#[derive(Clone, Debug)]
pub struct SparseEp {
    prior: SparsePrior,
    x: Mat<f64>,
    jitter: f64,
    kernel: Kernel,
    mean: Mean,
    z: Mat<f64>,
    tau: Vec<f64>,
    nu: Vec<f64>,
    factors: Factors,
    lml: f64,
    sweeps: usize,
}

/// `B⁻¹` for `B = I + V diag(p) Vᵀ`, and `log|B|`.
fn b_inverse(v: &Mat<f64>, p: &[f64]) -> Result<(Mat<f64>, f64), ModelError> {
    let m = v.nrows();
    let scaled = Mat::from_fn(m, v.ncols(), |a, j| v[(a, j)] * p[j].sqrt());
    let mut b = &scaled * scaled.transpose();
    for a in 0..m {
        b[(a, a)] += 1.0;
    }
    let l = Cholesky::factor(&b, "EP inducing precision B", parallelism_for(m))?;
    Ok((l.inverse(), l.log_det()))
}

/// `A v` for a symmetric `A` and a column `v`.
fn sym_apply(a: &Mat<f64>, v: MatRef<'_, f64>) -> Vec<f64> {
    let mut out = vec![0.0; a.nrows()];
    for (j, vj) in v.col(0).iter().enumerate() {
        for (i, o) in out.iter_mut().enumerate() {
            *o += a[(i, j)] * vj;
        }
    }
    out
}

fn dot(a: &[f64], b: impl IntoIterator<Item = f64>) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl SparseEp {
    /// Runs EP for inputs `x` (n×d), labels `labels` (0 or 1), kernel, inducing inputs `z`
    /// (M×d) and the jitter added to `K_uu` ([`INDUCING_JITTER`](super::INDUCING_JITTER) by
    /// default).
    ///
    /// # Errors
    /// Inconsistent or non-finite inputs, a label that is not 0 or 1 (the message names the
    /// row), bad options, a kernel that does not fit, a `K_uu` that cannot be factorised, or
    /// EP not converging within `options.max_sweeps`.
    #[allow(clippy::too_many_arguments)]
    pub fn at(
        prior: SparsePrior,
        x: MatRef<'_, f64>,
        labels: &[usize],
        kernel: Kernel,
        z: MatRef<'_, f64>,
        jitter: f64,
        options: &EpOptions,
    ) -> Result<SparseEp, ModelError> {
        check_matrix("training input", x, x.ncols())?;
        if x.nrows() != labels.len() {
            return Err(ModelError::Invalid(format!(
                "{} input rows but {} labels",
                x.nrows(),
                labels.len()
            )));
        }
        if let Some(i) = labels.iter().position(|&c| c > 1) {
            return Err(ModelError::Invalid(format!(
                "label of training row {i} is {} (expected a class index 0 or 1)",
                labels[i]
            )));
        }
        let damping_ok = options.damping > 0.0 && options.damping <= 1.0;
        if !damping_ok || options.tol.is_nan() || options.tol <= 0.0 {
            return Err(ModelError::Invalid(format!(
                "EP options: damping must lie in (0, 1] and tol be positive, got {} and {}",
                options.damping, options.tol
            )));
        }
        check_model(x.ncols(), &kernel, &Mean::Zero, 1.0)?;
        check_inducing(z, x.ncols(), jitter)?;
        let y: Vec<f64> = labels
            .iter()
            .map(|&c| if c == 1 { 1.0 } else { -1.0 })
            .collect();
        let low = LowRank::new(&kernel, x, z, jitter, prior)?;
        let (tau, nu, sweeps) = run_ep(&low, &y, options)?;
        let lml = evidence(&low, &y, &tau, &nu, prior)?;
        // The factors of the form: SGPR's core at P = Λ⁻¹ with target μ̃ = ν̃/τ̃ (P μ̃ = r is
        // what enters; a site with τ̃ = 0 has P = 0 and any target).
        let p = low.precision(&tau);
        let target: Vec<f64> = tau
            .iter()
            .zip(&nu)
            .map(|(t, v)| if *t > 0.0 { v / t } else { 0.0 })
            .collect();
        let core = collapsed_bound(&kernel, x, z, jitter, &p, &target, Wanted::Value)?;
        Ok(SparseEp {
            prior,
            x: x.to_owned(),
            jitter,
            kernel,
            mean: Mean::Zero,
            z: z.to_owned(),
            tau,
            nu,
            factors: core.factors,
            lml,
            sweeps,
        })
    }

    /// Fits the kernel's log-hyperparameters by maximising the EP evidence (FIC, DTC; see
    /// [`SparseEp::lml_gradient`] for VAR)
    /// ([`SparseEp::lml`], analytic gradient at converged sites), running EP from scratch at
    /// every evaluation (so the result does not depend on the evaluation order); L-BFGS-B from
    /// the given values plus `options.restarts` seeded restarts (only `optimize`, `restarts`,
    /// `seed` and `lbfgs` of `fit` are used). The inducing inputs stay fixed. A kernel without
    /// lengthscale values is initialised from the data first.
    ///
    /// # Errors
    /// As for [`SparseEp::at`], the VAR prior with `fit.optimize`, or every optimiser start
    /// failing.
    #[allow(clippy::too_many_arguments)]
    pub fn fit(
        prior: SparsePrior,
        x: MatRef<'_, f64>,
        labels: &[usize],
        kernel: Kernel,
        z: MatRef<'_, f64>,
        jitter: f64,
        options: &EpOptions,
        fit: &FitOptions,
    ) -> Result<SparseEp, ModelError> {
        let mut kernel = kernel;
        kernel.initialize(x)?;
        let start = Self::at(prior, x, labels, kernel.clone(), z, jitter, options)?;
        if !fit.optimize {
            return Ok(start);
        }
        start.lml_gradient()?;
        let objective = |v: &[f64]| -> Result<(f64, Vec<f64>), String> {
            let mut k = kernel.clone();
            k.set_params(v).map_err(|e| e.to_string())?;
            let m = Self::at(prior, x, labels, k, z, jitter, options).map_err(|e| e.to_string())?;
            let g = m.lml_gradient().map_err(|e| e.to_string())?;
            Ok((m.lml, g))
        };
        let (best, _) = maximize(
            plain(objective),
            &kernel.params(),
            &kernel.bounds(),
            &kernel.param_names(),
            fit.restarts,
            fit.seed,
            &fit.lbfgs,
            parallelism_for(x.nrows()),
        )?;
        kernel.set_params(&best)?;
        Self::at(prior, x, labels, kernel, z, jitter, options)
    }

    /// The EP approximation of the log marginal likelihood (see the module docs).
    pub fn lml(&self) -> f64 {
        self.lml
    }

    /// The gradient of [`SparseEp::lml`] in the kernel's log-hyperparameters (FIC and DTC): at
    /// converged sites it is that of `log N(μ̃ | 0, Q_ff + G + T̃⁻¹)` with the sites held fixed,
    /// because the EP evidence is stationary in the sites there (R&W §5.5.2); checked against
    /// finite differences of the whole EP.
    ///
    /// # Errors
    /// VAR, whose evidence (DTC's minus `½ Σ τ̃_i (K_ii − Q_ii)`) is *not* stationary in its
    /// sites (they are DTC's), so the fixed-site gradient is not its derivative and the exact
    /// one needs the sites' implicit derivatives; or a `K_uu` that cannot be factorised.
    pub fn lml_gradient(&self) -> Result<Vec<f64>, ModelError> {
        if self.prior == SparsePrior::Var {
            return Err(ModelError::Invalid(
                "sparse EP: no analytic evidence gradient under the VAR prior (its evidence is \
                 not stationary in the EP sites); fit under DTC, whose sites and predictions \
                 VAR shares"
                    .into(),
            ));
        }
        let (x, z) = (self.x.as_ref(), self.z.as_ref());
        let low = LowRank::new(&self.kernel, x, z, self.jitter, self.prior)?;
        let target: Vec<f64> = self
            .tau
            .iter()
            .zip(&self.nu)
            .map(|(t, v)| if *t > 0.0 { v / t } else { 0.0 })
            .collect();
        let (grad, _) = low.evidence_gradient(
            &self.kernel,
            x,
            z,
            self.jitter,
            self.prior,
            &self.tau,
            &target,
        )?;
        Ok(grad)
    }

    /// The site precisions `τ̃` and natural means `ν̃ = τ̃ μ̃`, one per training point.
    pub fn sites(&self) -> (&[f64], &[f64]) {
        (&self.tau, &self.nu)
    }

    /// Sweeps EP took.
    pub fn sweeps(&self) -> usize {
        self.sweeps
    }

    /// Which sparse prior.
    pub fn prior(&self) -> SparsePrior {
        self.prior
    }

    /// The kernel.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The inducing inputs (M×d).
    pub fn inducing(&self) -> MatRef<'_, f64> {
        self.z.as_ref()
    }

    /// `p(y = 1 | x) = Φ(μ(x) / √(1 + σ²(x)))` at the rows of `xs` (the closed form).
    ///
    /// # Errors
    /// `xs` with the wrong number of columns or non-finite entries.
    pub fn predict_proba(&self, xs: MatRef<'_, f64>) -> Result<Vec<f64>, ModelError> {
        crate::models::checks::check_test_inputs(xs, self.z.ncols())?;
        let m = self.linear_gaussian().marginals(xs)?;
        Ok(m.mean
            .iter()
            .zip(&m.var)
            .map(|(mu, v)| cdf(mu / (1.0 + v.max(0.0)).sqrt()))
            .collect())
    }
}

impl LinearGaussianForm for SparseEp {
    type Covariance = Kernel;
    type Mean = Mean;
    /// Support points `U`, `t = Σ_u K_uf Λ⁻¹ μ̃`, `S = K_uu⁻¹ − Σ_u` with `Λ_s = diag(1/τ̃)`.
    fn linear_gaussian(&self) -> LinearGaussian<'_, Kernel, Mean> {
        self.factors
            .linear_gaussian(&self.kernel, &self.mean, self.z.as_ref())
    }
}

/// The posterior marginal of `f_i` given `B⁻¹ v_i`, `vᵀB⁻¹v`, `h = V r` and the site.
fn marginal(bv: &[f64], vbv: f64, h: &[f64], g: f64, tau: f64, nu: f64) -> (f64, f64) {
    let denom = 1.0 + g * tau;
    let mean = (dot(bv, h.iter().copied()) + g * nu) / denom;
    let var = vbv / (denom * denom) + g / denom;
    (mean, var)
}

/// Sequential EP sweeps to convergence: the sites `(τ̃, ν̃)` and the number of sweeps.
fn run_ep(
    low: &LowRank,
    y: &[f64],
    options: &EpOptions,
) -> Result<(Vec<f64>, Vec<f64>, usize), ModelError> {
    let n = y.len();
    let v = &low.v;
    let mut tau = vec![0.0; n];
    let mut nu = vec![0.0; n];
    let mut largest = f64::INFINITY;
    for sweep in 1..=options.max_sweeps {
        let mut p = low.precision(&tau);
        let mut r: Vec<f64> = (0..n).map(|i| nu[i] / (1.0 + low.g[i] * tau[i])).collect();
        let (mut binv, _) = b_inverse(v, &p)?;
        // h = V r.
        let mut h: Vec<f64> = (0..v.nrows())
            .map(|a| (0..n).map(|j| v[(a, j)] * r[j]).sum())
            .collect();
        largest = 0.0f64;
        for i in 0..n {
            let vi = v.col(i);
            let bv = sym_apply(&binv, v.subcols(i, 1));
            let vbv = dot(&bv, vi.iter().copied());
            let (mean, var) = marginal(&bv, vbv, &h, low.g[i], tau[i], nu[i]);
            let tau_c = 1.0 / var - tau[i];
            let nu_c = mean / var - nu[i];
            if tau_c.is_nan() || tau_c <= 0.0 || tau_c.is_infinite() {
                // A cavity without positive precision cannot be updated (as GPML): skip.
                continue;
            }
            let (_, m_hat, v_hat) = probit_tilted_moments(y[i], nu_c / tau_c, 1.0 / tau_c);
            let d = options.damping;
            let tau_new = (1.0 - d) * tau[i] + d * (1.0 / v_hat - tau_c).max(0.0);
            let nu_new = (1.0 - d) * nu[i] + d * (m_hat / v_hat - nu_c);
            if !(tau_new.is_finite() && nu_new.is_finite()) {
                return Err(ModelError::Invalid(format!(
                    "sparse EP: the site of training row {i} became non-finite"
                )));
            }
            largest = largest.max((tau_new - tau[i]).abs().max((nu_new - nu[i]).abs()));
            let denom = 1.0 + low.g[i] * tau_new;
            let (p_new, r_new) = (tau_new / denom, nu_new / denom);
            let dp = p_new - p[i];
            if dp != 0.0 {
                // B⁻¹ ← B⁻¹ − dp (B⁻¹v)(B⁻¹v)ᵀ / (1 + dp vᵀB⁻¹v).
                let scale = dp / (1.0 + dp * vbv);
                for b in 0..bv.len() {
                    for a in 0..bv.len() {
                        binv[(a, b)] -= scale * bv[a] * bv[b];
                    }
                }
            }
            let dr = r_new - r[i];
            for (a, ha) in h.iter_mut().enumerate() {
                *ha += vi[a] * dr;
            }
            tau[i] = tau_new;
            nu[i] = nu_new;
            p[i] = p_new;
            r[i] = r_new;
        }
        if largest <= options.tol {
            return Ok((tau, nu, sweep));
        }
    }
    Err(ModelError::Invalid(format!(
        "sparse EP did not converge in {} sweeps (largest site change in the last sweep {largest:.3e}); \
         raise max_sweeps or damp the updates",
        options.max_sweeps
    )))
}

/// The EP log marginal likelihood at converged sites (module docs).
fn evidence(
    low: &LowRank,
    y: &[f64],
    tau: &[f64],
    nu: &[f64],
    prior: SparsePrior,
) -> Result<f64, ModelError> {
    let n = y.len();
    let v = &low.v;
    let p = low.precision(tau);
    let (binv, log_det_b) = b_inverse(v, &p)?;
    let h: Vec<f64> = (0..v.nrows())
        .map(|a| {
            (0..n)
                .map(|j| v[(a, j)] * nu[j] / (1.0 + low.g[j] * tau[j]))
                .sum()
        })
        .collect();
    let mut lml = -0.5 * log_det_b;
    for i in 0..n {
        let bv = sym_apply(&binv, v.subcols(i, 1));
        let vbv = dot(&bv, v.col(i).iter().copied());
        let (mean, var) = marginal(&bv, vbv, &h, low.g[i], tau[i], nu[i]);
        let s = 1.0 / (1.0 / var - tau[i]);
        let mu = s * (mean / var - nu[i]);
        let one = 1.0 + tau[i] * s;
        lml += log_cdf(y[i] * mu / (1.0 + s).sqrt())
            + 0.5 * one.ln()
            + (tau[i] * mu * mu - 2.0 * mu * nu[i] - nu[i] * nu[i] * s) / (2.0 * one)
            + 0.5 * nu[i] * mean
            - 0.5 * (1.0 + low.g[i] * tau[i]).ln();
        if prior == SparsePrior::Var {
            lml -= 0.5 * tau[i] * low.trace[i];
        }
    }
    Ok(lml)
}
