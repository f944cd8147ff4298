//! The batch softplus utility of EULBO with `q > 1` (`rcagp.md` §2.11, Eq. 16): a Monte Carlo
//! estimate over the joint predictive `N(μ, Σ)` of the batch,
//!
//! ```text
//! U(μ, Σ) = (1/N) Σ_s max_j ln softplus(f⁽ˢ⁾_j − y*),   f⁽ˢ⁾ = μ + L ε⁽ˢ⁾,
//! L = chol(Σ + 10⁻⁶ I),
//! ```
//!
//! with quasi-random base samples `ε⁽ˢ⁾` ([`sobol_normal`], `N = 64` by default) drawn **once**
//! per utility object (common random numbers: the estimate is a deterministic, almost
//! everywhere smooth function of `μ` and `Σ`). The variances are floored at
//! [`MC_MIN_VARIANCE`] before the jitter (`rcagp.md` §6.6).
//!
//! Gradients (reparameterised): with `j*_s` the argmax of sample `s` and
//! `ḡ⁽ˢ⁾ = h'(f⁽ˢ⁾_{j*} − y*) e_{j*} / N` (`h = ln softplus`), `μ̄ = Σ_s ḡ⁽ˢ⁾` and
//! `L̄ = Σ_s ḡ⁽ˢ⁾ ε⁽ˢ⁾ᵀ`. The Cholesky factor moves as `dL = L Φ(L⁻¹ dΣ L⁻ᵀ)` (`Φ`: the lower
//! triangle with the diagonal halved, a self-adjoint mask), so
//! `⟨L̄, dL⟩ = ⟨L⁻ᵀ Φ(Lᵀ L̄) L⁻¹, dΣ⟩` and `Σ̄` is the symmetric part of `L⁻ᵀ Φ(Lᵀ L̄) L⁻¹`.

use faer::{Mat, MatRef};

use super::batch::MC_MIN_VARIANCE;
use super::finite;
use super::qmc::sobol_normal;
use super::softplus_ei::{log_softplus, log_softplus_derivative};
use crate::linalg::{Cholesky, Parallelism};
use crate::models::ModelError;

/// Base samples of the batch utility: the reference code's `N_mc = 64`.
pub const EULBO_MC_SAMPLES: usize = 64;
/// The jitter added to the batch covariance before its factorisation (`rcagp.md` §2.11).
pub const EULBO_BATCH_JITTER: f64 = 1e-6;

/// The value of [`BatchSoftplusEi::utility`] and its derivatives.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchUtility {
    /// The Monte Carlo estimate of `E[max_j ln softplus(f_j − y*)]`.
    pub value: f64,
    /// `∂U/∂μ_j`.
    pub d_mean: Vec<f64>,
    /// `∂U/∂Σ` (q×q, symmetric: the derivative along a symmetric perturbation `dΣ` is
    /// `⟨d_cov, dΣ⟩`).
    pub d_cov: Mat<f64>,
}

/// The batch softplus utility over an incumbent, with its fixed base samples.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchSoftplusEi {
    incumbent: f64,
    /// N × q standard normal base samples.
    base: Mat<f64>,
}

impl BatchSoftplusEi {
    /// The utility of batches of `q` points over `incumbent`, with `samples` base samples of
    /// the Sobol sequence scrambled by `seed`.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] for a non-finite incumbent, `q = 0`, or a sample count or `q`
    /// beyond the Sobol sequence ([`sobol_normal`]).
    pub fn new(incumbent: f64, q: usize, samples: usize, seed: u32) -> Result<Self, ModelError> {
        let incumbent = finite(incumbent, "the softplus-EI incumbent")?;
        if q == 0 {
            return Err(ModelError::Invalid(
                "the batch softplus utility needs at least one point (q ≥ 1), got q = 0".into(),
            ));
        }
        Ok(BatchSoftplusEi {
            incumbent,
            base: sobol_normal(samples, q, seed)?,
        })
    }

    /// The batch size `q`.
    pub fn q(&self) -> usize {
        self.base.ncols()
    }

    /// The incumbent `y*`.
    pub fn incumbent(&self) -> f64 {
        self.incumbent
    }

    /// The estimate at the joint predictive `N(mean, cov)` of a batch, and its derivatives.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] for a mean or covariance of the wrong shape or not finite, or a
    /// covariance that cannot be factorised even with jitter.
    pub fn utility(&self, mean: &[f64], cov: MatRef<'_, f64>) -> Result<BatchUtility, ModelError> {
        let q = self.q();
        if mean.len() != q || cov.nrows() != q || cov.ncols() != q {
            return Err(ModelError::Invalid(format!(
                "the batch utility was built for {q} points, got a mean of {} and a {}×{} \
                 covariance",
                mean.len(),
                cov.nrows(),
                cov.ncols()
            )));
        }
        if mean.iter().any(|v| !v.is_finite())
            || (0..q).any(|r| (0..q).any(|c| !cov[(r, c)].is_finite()))
        {
            return Err(ModelError::Invalid(
                "the batch predictive has a non-finite mean or covariance".into(),
            ));
        }
        let a = Mat::from_fn(q, q, |r, c| {
            if r == c {
                cov[(r, r)].max(MC_MIN_VARIANCE) + EULBO_BATCH_JITTER
            } else {
                cov[(r, c)]
            }
        });
        let chol = Cholesky::factor(
            &a,
            "the batch predictive covariance",
            Parallelism::Sequential,
        )
        .map_err(|e| ModelError::Invalid(e.to_string()))?;
        let l = chol.l();
        let n = self.base.nrows();
        let (mut value, mut d_mean, mut l_bar) = (0.0, vec![0.0; q], Mat::<f64>::zeros(q, q));
        let mut f = vec![0.0; q];
        for s in 0..n {
            for j in 0..q {
                f[j] = mean[j] + (0..=j).map(|k| l[(j, k)] * self.base[(s, k)]).sum::<f64>();
            }
            // ln softplus is increasing: the best sample point is the largest f.
            let best = (0..q).fold(0, |b, j| if f[j] > f[b] { j } else { b });
            let z = f[best] - self.incumbent;
            value += log_softplus(z);
            let g = log_softplus_derivative(z) / n as f64;
            d_mean[best] += g;
            for k in 0..=best {
                l_bar[(best, k)] += g * self.base[(s, k)];
            }
        }
        value /= n as f64;
        // Σ̄ = sym(L⁻ᵀ Φ(Lᵀ L̄) L⁻¹).
        let p = l.transpose() * &l_bar;
        let mut phi = Mat::from_fn(q, q, |r, c| match r.cmp(&c) {
            std::cmp::Ordering::Greater => p[(r, c)],
            std::cmp::Ordering::Equal => 0.5 * p[(r, c)],
            std::cmp::Ordering::Less => 0.0,
        });
        // L⁻ᵀ Φ, then (L⁻ᵀ (L⁻ᵀ Φ)ᵀ)ᵀ = L⁻ᵀ Φ L⁻¹.
        chol.solve_lower_transpose_in_place(phi.as_mut());
        let mut right = phi.transpose().to_owned();
        chol.solve_lower_transpose_in_place(right.as_mut());
        let d_cov = Mat::from_fn(q, q, |r, c| 0.5 * (right[(r, c)] + right[(c, r)]));
        Ok(BatchUtility {
            value,
            d_mean,
            d_cov,
        })
    }
}
