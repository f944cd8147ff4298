//! Natural-gradient steps on the whitened variational distribution (Salimbeni et al. 2018),
//! for the Gaussian likelihood.
//!
//! In natural parameters `θ₁ = S̃⁻¹ m̃`, `Θ₂ = S̃⁻¹` the ELBO's natural gradient step of size
//! `γ` is
//!
//! ```text
//! Θ₂ ← (1 − γ) Θ₂ + γ (I − 2G),      θ₁ ← (1 − γ) θ₁ + γ (h − 2G m̃)
//! ```
//!
//! with the statistics `h = Σ A g_μ`, `G = Σ A diag(g_v) Aᵀ` of the (scaled) data term. With the
//! Gaussian likelihood `g_v = −c/(2σ²)`, so `I − 2G = I + (c/σ²) A Aᵀ` and
//! `h − 2G m̃ = (c/σ²) A (y − m(X))`: the target is the exact optimum of `q` for those data,
//! and `γ = 1` on the full data jumps to the optimal `q` (Titsias' bound) in one step.
//!
//! Cost: the new precision is factorised once (`m³/3`); the new `L̃` is the inverse transpose
//! of that factor in reversed order (below), a triangular inversion (`m³/6`), instead of
//! forming the covariance `Θ₂⁻¹` and factorising it again. The current precision
//! `S̃⁻¹ = L̃⁻ᵀ L̃⁻¹` costs a triangular inversion and a triangular product.

use faer::Mat;

use super::elbo::Elbo;
use super::state::{lower, lower_inverse, product_with, State, LOWER, UPPER};
use crate::linalg::{Cholesky, Parallelism};
use crate::models::ModelError;

/// Step size on minibatches: `q` then averages the targets of about `1/γ` batches.
pub(super) const MINIBATCH_STEP: f64 = 0.1;

/// `(m̃, L̃)` after one natural-gradient step of size `gamma` from those of `state`, given the
/// statistics of an evaluation at `state`.
///
/// # Errors
/// If the new precision cannot be factorised (only on numerical breakdown: it is symmetric
/// positive definite whenever `G` is negative semidefinite).
pub(super) fn natural_step(
    state: &State,
    stats: &Elbo,
    gamma: f64,
) -> Result<(Vec<f64>, Mat<f64>), ModelError> {
    let m = state.m();
    let l_inv = lower_inverse(state.l_tilde.as_ref());
    let precision = product_with(l_inv.transpose(), UPPER, l_inv.as_ref(), LOWER);
    let g = &stats.g;
    let theta1: Vec<f64> = (0..m)
        .map(|i| {
            let current: f64 = (0..m).map(|k| precision[(i, k)] * state.m_tilde[k]).sum();
            let g_m: f64 = (0..m).map(|k| g[(i, k)] * state.m_tilde[k]).sum();
            (1.0 - gamma) * current + gamma * (stats.h[i] - 2.0 * g_m)
        })
        .collect();
    // The new precision Θ₂ in reversed order, J Θ₂ J (J the exchange matrix): its factor
    // J Θ₂ J = R Rᵀ gives Θ₂ = U Uᵀ with U = J R J upper-triangular, so the covariance is
    // Θ₂⁻¹ = U⁻ᵀ U⁻¹ and its lower Cholesky factor (unique, positive diagonal) is
    // L̃ = U⁻ᵀ = J R⁻ᵀ J, i.e. L̃_ij = (R⁻¹)_{m−1−j, m−1−i}.
    let r = |i: usize| m - 1 - i;
    let reversed = Mat::from_fn(m, m, |i, j| {
        let identity = if i == j { 1.0 } else { 0.0 };
        (1.0 - gamma) * precision[(r(i), r(j))] + gamma * (identity - 2.0 * g[(r(i), r(j))])
    });
    let what = "variational precision after a natural-gradient step";
    let chol = Cholesky::factor(&reversed, what, Parallelism::Sequential)?;
    let r_inv = lower_inverse(lower(chol.l()).as_ref());
    let l_tilde = Mat::from_fn(m, m, |i, j| if i >= j { r_inv[(r(j), r(i))] } else { 0.0 });
    // m̃ = Θ₂⁻¹ θ₁ = L̃ (L̃ᵀ θ₁).
    let t: Vec<f64> = (0..m)
        .map(|j| (j..m).map(|i| l_tilde[(i, j)] * theta1[i]).sum())
        .collect();
    let m_tilde = (0..m)
        .map(|i| (0..=i).map(|j| l_tilde[(i, j)] * t[j]).sum())
        .collect();
    Ok((m_tilde, l_tilde))
}
