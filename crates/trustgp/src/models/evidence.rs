//! The Gaussian log marginal likelihood ("evidence") of the conjugate core, for any covariance.
//!
//! ```text
//! log p(r) = −½ rᵀ α − Σ log L_ii − (n/2) log 2π,      α = (K + D)⁻¹ r,
//! ∂ log p(r)/∂θ = ½ Σ_ab W_ab ∂K_ab/∂θ,                  W = α αᵀ − (K + D)⁻¹,
//! ∂ log p(r)/∂D_jj = ½ W_jj
//! ```
//!
//! The exact GP (one noise variance) and the multi-output GP (one per output) differ only in
//! how their noise parameters map onto `D`, so both call [`evidence`].

use faer::MatRef;
use rayon::prelude::*;

use super::conjugate::ConjugatePosterior;
use crate::kernels::Covariance;
use crate::linalg::{LinalgError, Parallelism};
use crate::means::PriorMean;

/// The evidence, its gradient pieces, and the posterior it was computed from.
pub(crate) struct Evidence<C, M> {
    /// `log p(r)`.
    pub value: f64,
    /// `½ Σ W ∘ ∂K/∂θ` for the covariance's parameters (empty without gradient).
    pub grad_kernel: Vec<f64>,
    /// `½ W_jj`, the gradient with respect to each diagonal entry of `D` (empty without
    /// gradient).
    pub grad_diag: Vec<f64>,
    /// The posterior (`t = α`).
    pub posterior: ConjugatePosterior<C, M>,
}

/// The log marginal likelihood of the residual `r` under `N(0, K(x) + diag(d))`.
pub(crate) fn evidence<C: Covariance, M: PriorMean>(
    kernel: C,
    mean: M,
    x: MatRef<'_, f64>,
    r: &[f64],
    d: &[f64],
    par: Parallelism,
    with_grad: bool,
) -> Result<Evidence<C, M>, LinalgError> {
    let n = r.len();
    let post = ConjugatePosterior::new(kernel, mean, x.to_owned(), r, d, par)?;
    let alpha = post.t();
    let fit: f64 = r.iter().zip(alpha).map(|(a, b)| a * b).sum();
    let value = -0.5 * fit
        - 0.5 * post.cholesky().log_det()
        - 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln();
    let (mut grad_kernel, mut grad_diag) = (Vec::new(), Vec::new());
    if with_grad {
        // W = α αᵀ − (K + D)⁻¹ on the lower triangle, which is all the kernels read.
        let mut w = post.cholesky().inverse_lower();
        lower_outer_minus(w.as_mut(), alpha, par);
        grad_kernel = vec![0.0; post.kernel().n_params()];
        post.kernel().grad_contract(x, w.as_ref(), &mut grad_kernel);
        grad_kernel.iter_mut().for_each(|g| *g *= 0.5);
        grad_diag = (0..n).map(|i| 0.5 * w[(i, i)]).collect();
    }
    Ok(Evidence {
        value,
        grad_kernel,
        grad_diag,
        posterior: post,
    })
}

/// Overwrite the lower triangle of `w` (holding `A`) with `α αᵀ − A`.
fn lower_outer_minus(w: faer::MatMut<'_, f64>, alpha: &[f64], par: Parallelism) {
    let update = |(j, mut col): (usize, faer::ColMut<'_, f64>)| {
        for i in j..alpha.len() {
            col[i] = alpha[i] * alpha[j] - col[i];
        }
    };
    if par == Parallelism::Parallel {
        w.par_col_iter_mut().enumerate().for_each(update);
    } else {
        w.col_iter_mut().enumerate().for_each(update);
    }
}
