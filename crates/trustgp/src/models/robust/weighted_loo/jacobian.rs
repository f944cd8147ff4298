//! The Jacobian of the weighted LOO-CV objective's leave-one-out residuals and variances, and
//! from it the objective's gradient and its Fisher (Gauss–Newton) matrix: a positive
//! semi-definite model of `−∇²φ_w` that L-BFGS starts from on its first iterations.
//!
//! `φ_w = Σ_j ŵ_j² log N(y_j; μ_j, v_j)` is a weighted sum of Gaussian log densities of the
//! LOO residual `r_j = y_j − μ_j` and variance `v_j`, so with their Jacobian
//!
//! ```text
//! ∇φ_w = Σ_j ŵ_j² [ −(r_j/v_j) ∂r_j + (r_j² − v_j)/(2v_j²) ∂v_j ],
//! F    = Σ_j ŵ_j² [ ∂r_j ∂r_jᵀ / v_j + ∂v_j ∂v_jᵀ / (2 v_j²) ]
//! ```
//!
//! (the Fisher information of a Gaussian in `(μ, v)` is `diag(1/v, 1/(2v²))`; `F` drops the
//! residual terms of the Hessian, exact when every residual has its expected size). At unit
//! scale, with `d_j = P_jj`, `ζ = P z₀` (`z₀ = y − m`), `η = P h` (`h_j = σ²_j g_j`) and
//! `∂P = −P ∂Q P`, the residual at scale `c` is `a_j + c b_j` with `a_j = ζ_j/d_j`,
//! `b_j = h_j − η_j/d_j`, and `v_j = c (1/d_j − n_j + σ²_j)`. Profiled, `ln c` is one more
//! column (`∂r_j = c b_j`, `∂v_j = v_j`) whose Schur complement is the profiled objective's
//! Fisher matrix; its gradient is the other columns' (the envelope theorem).
//!
//! The Jacobian costs T products of m × m × n per kernel parameter of an ICM (see
//! [`LooCovariance::inverse_derivatives`]), about as much as the adjoint gradient's one
//! contraction for a single kernel parameter, so where it is computed the gradient comes from
//! it and the contraction is skipped. Started from `F` on its first two iterations, L-BFGS fits
//! MO-RCGP on Energy in 11 instead of 19 evaluations (`docs/benchmarks.md`); the unprofiled
//! objective has the same matrix without the `ln c` column, which the fit uses where the
//! profiled scale leaves the bounds (clean and focused Energy: about 15 fewer evaluations).

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef};

use super::{Factored, RobustTerms};
use crate::kernels::InverseDerivative;
use crate::linalg::Parallelism;
use crate::models::robust::LooCovariance;

/// The columns of `∂r` and `∂v` (one row per entry) over the covariance parameters, the noise
/// groups' `ln σ²` and, if profiled, `ln c` last.
pub(super) struct LooJacobian {
    r: Mat<f64>,
    v: Mat<f64>,
    profiled: bool,
}

/// The Jacobian at the factorisation `f` (with the `ln c` column if `profiled`); `None` if the
/// covariance has no cheap inverse derivatives.
pub(super) fn jacobian<C: LooCovariance>(
    f: &Factored,
    cov: &C,
    x: MatRef<'_, f64>,
    terms: &RobustTerms<'_>,
    profiled: bool,
    par: Parallelism,
) -> Option<LooJacobian> {
    let n = terms.y.len();
    let c = f.scale;
    let p = f.p.as_ref();
    let n_unit: Vec<f64> = f.n_eff.iter().map(|v| v / c).collect();
    let sigma2: Vec<f64> = f.sigma2.iter().map(|v| v / c).collect();
    let h: Vec<f64> = (0..n).map(|j| sigma2[j] * terms.weights.g[j]).collect();
    let v = Mat::from_fn(n, 2, |j, k| match k {
        0 => terms.y[j] - terms.prior[j],
        _ => h[j],
    });
    let u = product(p, v.as_ref(), par);
    let mut derivatives = cov.inverse_derivatives(x, p, &n_unit, v.as_ref(), u.as_ref(), par)?;
    for g in 0..f.n_groups {
        derivatives.push(noise_derivative(
            f,
            &n_unit,
            terms.group,
            g,
            u.as_ref(),
            par,
        ));
    }
    let nk = cov.n_params();
    let d: Vec<f64> = (0..n).map(|j| p[(j, j)]).collect();
    let cols = derivatives.len() + usize::from(profiled);
    let mut jr = Mat::<f64>::zeros(n, cols);
    let mut jv = Mat::<f64>::zeros(n, cols);
    for (k, dk) in derivatives.iter().enumerate() {
        // The noise group of column k, if it is one: it also moves n_j, σ²_j and h_j, and
        // through h the product P h.
        let group = k.checked_sub(nk);
        let in_group = |j: usize| group == Some(terms.group[j]);
        let masked_h: Vec<f64> = (0..n)
            .map(|j| if in_group(j) { h[j] } else { 0.0 })
            .collect();
        let p_dh = match group {
            Some(_) => product(p, MatRef::from_column_major_slice(&masked_h, n, 1), par),
            None => Mat::zeros(n, 1),
        };
        for j in 0..n {
            let dd = -dk.diag[j];
            let dzeta = -dk.times_v[(j, 0)];
            let deta = -dk.times_v[(j, 1)] + p_dh[(j, 0)];
            let (zeta, eta) = (u[(j, 0)], u[(j, 1)]);
            let da = dzeta / d[j] - zeta * dd / (d[j] * d[j]);
            let db = masked_h[j] - deta / d[j] + eta * dd / (d[j] * d[j]);
            let own = if in_group(j) {
                sigma2[j] - n_unit[j]
            } else {
                0.0
            };
            jr[(j, k)] = da + c * db;
            jv[(j, k)] = c * (-dd / (d[j] * d[j]) + own);
        }
    }
    if profiled {
        for j in 0..n {
            jr[(j, cols - 1)] = c * (h[j] - u[(j, 1)] / d[j]);
            jv[(j, cols - 1)] = f.loo.var[j];
        }
    }
    Some(LooJacobian {
        r: jr,
        v: jv,
        profiled,
    })
}

impl LooJacobian {
    /// `∇φ_w` over every column but `ln c`, from the residuals and variances at `f`.
    pub(super) fn gradient(&self, f: &Factored, w_hat: &[f64]) -> Vec<f64> {
        let cols = self.r.ncols() - usize::from(self.profiled);
        let mut grad = vec![0.0; cols];
        for (j, w) in w_hat.iter().enumerate() {
            let (r, v, w2) = (f.residual[j], f.loo.var[j], w * w);
            let (dr, dv) = (-w2 * r / v, w2 * (r * r - v) / (2.0 * v * v));
            for (k, g) in grad.iter_mut().enumerate() {
                *g += dr * self.r[(j, k)] + dv * self.v[(j, k)];
            }
        }
        grad
    }

    /// `F` over every column, `ln c` Schur-complemented away if profiled.
    pub(super) fn fisher(&self, f: &Factored, w_hat: &[f64]) -> Mat<f64> {
        let (n, cols) = (self.r.nrows(), self.r.ncols());
        // F = J̃_rᵀ J̃_r + J̃_vᵀ J̃_v with the rows scaled by the Fisher weights.
        let (mut jr, mut jv) = (self.r.clone(), self.v.clone());
        for j in 0..n {
            let (w, var) = (w_hat[j], f.loo.var[j]);
            let (sr, sv) = (w / var.sqrt(), w / (var * 2f64.sqrt()));
            for k in 0..cols {
                jr[(j, k)] *= sr;
                jv[(j, k)] *= sv;
            }
        }
        let mut fisher = jr.transpose() * &jr;
        fisher += jv.transpose() * &jv;
        if !self.profiled {
            return fisher;
        }
        let last = cols - 1;
        let pivot = fisher[(last, last)];
        Mat::from_fn(last, last, |a, b| {
            fisher[(a, b)] - fisher[(a, last)] * fisher[(last, b)] / pivot
        })
    }
}

/// `[P ∂Q P]_jj` and `P ∂Q P V` (`U = P V`) for `∂Q = diag(n_j [group j = g])`, the derivative
/// in `ln σ²_g` of the effective noise.
fn noise_derivative(
    f: &Factored,
    n_unit: &[f64],
    group: &[usize],
    g: usize,
    u: MatRef<'_, f64>,
    par: Parallelism,
) -> InverseDerivative {
    let n = n_unit.len();
    let delta: Vec<f64> = (0..n)
        .map(|j| if group[j] == g { n_unit[j] } else { 0.0 })
        .collect();
    let mut diag = vec![0.0; n];
    for (l, dl) in delta.iter().enumerate() {
        if *dl != 0.0 {
            // P symmetric: column l holds P_jl for every j.
            for (dj, pjl) in diag.iter_mut().zip(f.p.col_as_slice(l)) {
                *dj += pjl * pjl * dl;
            }
        }
    }
    let scaled = Mat::from_fn(n, u.ncols(), |j, k| delta[j] * u[(j, k)]);
    InverseDerivative {
        diag,
        times_v: product(f.p.as_ref(), scaled.as_ref(), par),
    }
}

/// `P M`.
fn product(p: MatRef<'_, f64>, m: MatRef<'_, f64>, par: Parallelism) -> Mat<f64> {
    let mut out = Mat::<f64>::zeros(p.nrows(), m.ncols());
    matmul(out.as_mut(), Accum::Replace, p, m, 1.0, par.faer());
    out
}
