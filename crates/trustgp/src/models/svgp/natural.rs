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

use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::Mat;

use super::elbo::Elbo;
use super::state::{lower, par_for, product_with, State, LOWER, UPPER};
use crate::linalg::{Cholesky, Parallelism};
use crate::models::ModelError;

/// Step size on minibatches: `q` then averages the targets of about `1/γ` batches.
pub(super) const MINIBATCH_STEP: f64 = 0.1;

/// `(m̃, L̃)` after one natural-gradient step of size `gamma` from those of `state`, given the
/// statistics of an evaluation at `state`.
///
/// # Errors
/// If the new precision or covariance cannot be factorised (only on numerical breakdown: both
/// are symmetric positive definite whenever `G` is negative semidefinite).
pub(super) fn natural_step(
    state: &State,
    stats: &Elbo,
    gamma: f64,
) -> Result<(Vec<f64>, Mat<f64>), ModelError> {
    let m = state.m();
    let mut l_inv = Mat::<f64>::identity(m, m);
    solve_lower_triangular_in_place(
        state.l_tilde.as_ref(),
        l_inv.as_mut(),
        par_for(m * m * m / 3),
    );
    let precision = product_with(l_inv.transpose(), UPPER, l_inv.as_ref(), LOWER);
    let g = &stats.g;
    let theta1: Vec<f64> = (0..m)
        .map(|i| {
            let current: f64 = (0..m).map(|k| precision[(i, k)] * state.m_tilde[k]).sum();
            let g_m: f64 = (0..m).map(|k| g[(i, k)] * state.m_tilde[k]).sum();
            (1.0 - gamma) * current + gamma * (stats.h[i] - 2.0 * g_m)
        })
        .collect();
    let new_precision = Mat::from_fn(m, m, |i, j| {
        let identity = if i == j { 1.0 } else { 0.0 };
        (1.0 - gamma) * precision[(i, j)] + gamma * (identity - 2.0 * g[(i, j)])
    });
    let what = "variational precision after a natural-gradient step";
    let chol = Cholesky::factor(&new_precision, what, Parallelism::Sequential)?;
    let m_tilde = chol.solve_vec(&theta1);
    let covariance = chol.inverse();
    let what = "variational covariance after a natural-gradient step";
    let l_tilde = lower(Cholesky::factor(&covariance, what, Parallelism::Sequential)?.l());
    Ok((m_tilde, l_tilde))
}
