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
//!
//! **Profiled scale.** With the covariance `c (K + D)` and `c` at its maximiser
//! `ĉ = rᵀα / n` (the concentrated likelihood),
//!
//! ```text
//! log p̂(r) = −(n/2)(1 + log 2πĉ) − Σ log L_ii,      W = α αᵀ / ĉ − (K + D)⁻¹,
//! ```
//!
//! with the same gradient formulas: by the envelope theorem they are the gradient of the full
//! likelihood at `c = ĉ` (its `∂K/∂θ = ĉ ∂(K + D)/∂θ` cancels one `1/ĉ`).

use faer::MatRef;
use rayon::prelude::*;

use crate::kernels::Covariance;
use crate::linalg::{LinalgError, Parallelism};
use crate::means::PriorMean;
use crate::models::conjugate::ConjugatePosterior;

/// Whether the overall scale `c` of the covariance `c (K + D)` is fixed at 1 or profiled out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scale {
    /// The covariance is `K + D` as given.
    Given,
    /// The covariance is `ĉ (K + D)` with `ĉ = rᵀα/n`, the scale that maximises the likelihood.
    Profiled,
}

/// The evidence, its gradient pieces, and the posterior it was computed from.
pub(crate) struct Evidence<C, M> {
    /// `log p(r)` (at `c = ĉ` if the scale is profiled).
    pub value: f64,
    /// The scale `c` of the covariance: 1, or `ĉ` if profiled. The posterior is that of
    /// `K + D`; the model's is that of `c (K + D)`.
    pub scale: f64,
    /// `½ Σ W ∘ ∂K/∂θ` for the covariance's parameters (empty without gradient).
    pub grad_kernel: Vec<f64>,
    /// `½ W_jj`, the gradient with respect to each diagonal entry of `D` (empty without
    /// gradient).
    pub grad_diag: Vec<f64>,
    /// The posterior (`t = α`).
    pub posterior: ConjugatePosterior<C, M>,
}

/// The log marginal likelihood of the residual `r` under `N(0, c (K(x) + diag(d)))`, with
/// `c = 1` or profiled (see [`Scale`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn evidence<C: Covariance, M: PriorMean>(
    kernel: C,
    mean: M,
    x: MatRef<'_, f64>,
    r: &[f64],
    d: &[f64],
    scale: Scale,
    par: Parallelism,
    with_grad: bool,
) -> Result<Evidence<C, M>, LinalgError> {
    let n = r.len() as f64;
    let post = ConjugatePosterior::new(kernel, mean, x.to_owned(), r, d, par)?;
    let alpha = post.t();
    let fit: f64 = r.iter().zip(alpha).map(|(a, b)| a * b).sum();
    let log_2pi = (2.0 * std::f64::consts::PI).ln();
    let half_log_det = 0.5 * post.cholesky().log_det();
    let (value, c) = match scale {
        Scale::Given => (-0.5 * fit - half_log_det - 0.5 * n * log_2pi, 1.0),
        Scale::Profiled => {
            let c = fit / n;
            (-0.5 * n * (1.0 + log_2pi + c.ln()) - half_log_det, c)
        }
    };
    let (mut grad_kernel, mut grad_diag) = (Vec::new(), Vec::new());
    if with_grad {
        // W = α αᵀ / c − (K + D)⁻¹ on the lower triangle, which is all the kernels read.
        let mut w = post.cholesky().inverse_lower();
        lower_outer_minus(w.as_mut(), alpha, 1.0 / c, par);
        grad_kernel = vec![0.0; post.kernel().n_params()];
        post.kernel().grad_contract(x, w.as_ref(), &mut grad_kernel);
        grad_kernel.iter_mut().for_each(|g| *g *= 0.5);
        grad_diag = (0..r.len()).map(|i| 0.5 * w[(i, i)]).collect();
    }
    Ok(Evidence {
        value,
        scale: c,
        grad_kernel,
        grad_diag,
        posterior: post,
    })
}

/// Overwrite the lower triangle of `w` (holding `A`) with `weight · α αᵀ − A`.
pub(crate) fn lower_outer_minus(
    w: faer::MatMut<'_, f64>,
    alpha: &[f64],
    weight: f64,
    par: Parallelism,
) {
    let update = |(j, mut col): (usize, faer::ColMut<'_, f64>)| {
        let aj = weight * alpha[j];
        for i in j..alpha.len() {
            col[i] = alpha[i] * aj - col[i];
        }
    };
    if par == Parallelism::Parallel {
        w.par_col_iter_mut().enumerate().for_each(update);
    } else {
        w.col_iter_mut().enumerate().for_each(update);
    }
}
