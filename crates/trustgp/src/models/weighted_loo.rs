//! The robust conjugate posterior's closed-form leave-one-out predictive and the weighted
//! LOO-CV objective that fits its hyperparameters (MO-RCGP spec §2.6–§2.8; RCGP is T = 1).
//!
//! With frozen normalised weights `ŵ_j` and score corrections `g_j`, entry `j` (noise variance
//! `σ²_j` of its output) has effective noise `n_j = σ²_j/ŵ_j²` and shifted target
//! `z_j = y_j − m_j − σ²_j g_j`. With `Q = K + diag(n)`, `P = Q⁻¹`, `α = P z`, `d_j = P_jj`:
//!
//! ```text
//! s_j = [K P]_jj / P_jj                      (LOO latent variance; = 1/d_j − n_j, stably)
//! y_j − μ_j = σ²_j g_j + α_j / d_j,          v_j = s_j + σ²_j
//! φ_w = Σ_j ŵ_j² [ −½ log(2π v_j) − (y_j − μ_j)² / (2 v_j) ]
//! ```
//!
//! The LOO variance uses `n_j = σ⁴/(2w²)` as the spec's erratum corrects (the paper prints
//! `σ⁴ w / 2`). The gradient is the adjoint form of spec §2.8: one `O(n³)` matrix
//! `M_s = −P diag(e) P − ½(α pᵀ + p αᵀ)` contracted with `∂K`, plus diagonal terms for the
//! noise variances, so its cost does not grow with the number of parameters.

use faer::linalg::matmul::triangular::{matmul, BlockStructure};
use faer::{Accum, Mat, MatRef};

use crate::kernels::Covariance;
use crate::linalg::{sum_pairs, Cholesky, LinalgError, Parallelism};
use crate::robust::ImqWeights;

/// The frozen per-entry quantities of a robust conjugate objective.
#[derive(Clone, Copy, Debug)]
pub struct RobustTerms<'a> {
    /// Observed targets `y_j`.
    pub y: &'a [f64],
    /// Prior mean `m_j` at each entry.
    pub prior: &'a [f64],
    /// Noise group (index into the noise variances) of each entry.
    pub group: &'a [usize],
    /// Normalised weights and score corrections.
    pub weights: &'a ImqWeights,
}

impl RobustTerms<'_> {
    /// Effective noise variances `n_j = σ²_j / ŵ_j²` and shifted targets `z_j`.
    pub fn noise_and_targets(&self, noise: &[f64]) -> (Vec<f64>, Vec<f64>) {
        (0..self.y.len())
            .map(|j| {
                let s2 = noise[self.group[j]];
                let w = self.weights.w_hat[j];
                (
                    s2 / (w * w),
                    self.y[j] - self.prior[j] - s2 * self.weights.g[j],
                )
            })
            .unzip()
    }
}

/// The closed-form leave-one-out predictive of every entry.
#[derive(Clone, Debug, PartialEq)]
pub struct LooPredictive {
    /// LOO predictive mean `μ_j`.
    pub mean: Vec<f64>,
    /// LOO latent variance `s_j` (floored at 0).
    pub latent_var: Vec<f64>,
    /// LOO predictive variance of `y_j`: `s_j + σ²_j`.
    pub var: Vec<f64>,
}

/// The weighted LOO-CV objective and its gradient (covariance parameters, then `ln σ²` of each
/// noise group).
#[derive(Clone, Debug)]
pub struct WeightedLoo {
    /// `φ_w` (to be maximised).
    pub value: f64,
    /// `∂φ_w/∂ϑ` (empty if not requested).
    pub grad: Vec<f64>,
    /// The LOO predictive the objective was computed from.
    pub loo: LooPredictive,
}

/// Everything the objective and the LOO predictive share.
struct Factored {
    p: Mat<f64>,
    alpha: Vec<f64>,
    loo: LooPredictive,
    n_eff: Vec<f64>,
    sigma2: Vec<f64>,
    residual: Vec<f64>,
}

fn factor<C: Covariance>(
    cov: &C,
    x: MatRef<'_, f64>,
    terms: &RobustTerms<'_>,
    noise: &[f64],
    par: Parallelism,
) -> Result<Factored, LinalgError> {
    let n = terms.y.len();
    let (n_eff, z) = terms.noise_and_targets(noise);
    let sigma2: Vec<f64> = terms.group.iter().map(|&g| noise[g]).collect();
    let k = cov.matrix(x);
    let build = || {
        let mut q = k.clone();
        for (j, nj) in n_eff.iter().enumerate() {
            q[(j, j)] += nj;
        }
        q
    };
    let chol = Cholesky::factor_owned(build(), "robust kernel matrix K + diag(n)", par, build)?;
    let p = chol.inverse();
    let alpha = chol.solve_vec(&z);
    let mut mean = Vec::with_capacity(n);
    let mut latent_var = Vec::with_capacity(n);
    let mut var = Vec::with_capacity(n);
    let mut residual = Vec::with_capacity(n);
    for j in 0..n {
        let d = p[(j, j)];
        // [K P]_jj / P_jj: no cancellation even when n_j is huge (an outlier).
        let kp = sum_pairs(k.col_as_slice(j), p.col_as_slice(j), |a, b| a * b);
        let s = (kp / d).max(0.0);
        let r = sigma2[j] * terms.weights.g[j] + alpha[j] / d;
        mean.push(terms.y[j] - r);
        latent_var.push(s);
        var.push(s + sigma2[j]);
        residual.push(r);
    }
    Ok(Factored {
        p,
        alpha,
        loo: LooPredictive {
            mean,
            latent_var,
            var,
        },
        n_eff,
        sigma2,
        residual,
    })
}

/// The closed-form LOO predictive of every entry (weights of the other entries held fixed).
pub fn loo_predictive<C: Covariance>(
    cov: &C,
    x: MatRef<'_, f64>,
    terms: &RobustTerms<'_>,
    noise: &[f64],
    par: Parallelism,
) -> Result<LooPredictive, LinalgError> {
    Ok(factor(cov, x, terms, noise, par)?.loo)
}

/// The weighted LOO-CV objective `φ_w` at covariance `cov` and noise variances `noise` (one
/// per group), with its gradient if `with_grad`.
pub fn weighted_loo<C: Covariance>(
    cov: &C,
    x: MatRef<'_, f64>,
    terms: &RobustTerms<'_>,
    noise: &[f64],
    par: Parallelism,
    with_grad: bool,
) -> Result<WeightedLoo, LinalgError> {
    let f = factor(cov, x, terms, noise, par)?;
    let n = terms.y.len();
    let w2: Vec<f64> = terms.weights.w_hat.iter().map(|w| w * w).collect();
    let ln2pi = (2.0 * std::f64::consts::PI).ln();
    let value: f64 = (0..n)
        .map(|j| {
            let (r, v) = (f.residual[j], f.loo.var[j]);
            w2[j] * (-0.5 * (ln2pi + v.ln()) - r * r / (2.0 * v))
        })
        .sum();
    if !with_grad {
        return Ok(WeightedLoo {
            value,
            grad: Vec::new(),
            loo: f.loo,
        });
    }
    let mut a = vec![0.0; n];
    let mut b = vec![0.0; n];
    let mut e = vec![0.0; n];
    let mut h = vec![0.0; n];
    for j in 0..n {
        let (r, v, d) = (f.residual[j], f.loo.var[j], f.p[(j, j)]);
        a[j] = w2[j] * (r * r - v) / (2.0 * v * v);
        b[j] = -w2[j] * r / v;
        e[j] = -(a[j] + b[j] * f.alpha[j]) / (d * d);
        h[j] = b[j] / d;
    }
    let hv = Mat::from_fn(n, 1, |k, _| h[k]);
    let pm = &f.p * &hv;
    let pv: Vec<f64> = (0..n).map(|i| pm[(i, 0)]).collect();
    // Lower triangle of M_s = −P diag(e) P − ½(α pᵀ + p αᵀ).
    let mut ep = f.p.clone();
    for j in 0..n {
        (ep.col_as_slice_mut(j).iter_mut().zip(&e)).for_each(|(v, ei)| *v *= ei);
    }
    let mut ms = Mat::<f64>::zeros(n, n);
    matmul(
        ms.as_mut(),
        BlockStructure::TriangularLower,
        Accum::Replace,
        f.p.as_ref(),
        BlockStructure::Rectangular,
        ep.as_ref(),
        BlockStructure::Rectangular,
        -1.0,
        par.faer(),
    );
    for j in 0..n {
        let (aj, pj) = (f.alpha[j], pv[j]);
        let col = &mut ms.col_as_slice_mut(j)[j..];
        for ((m, ai), pi) in col.iter_mut().zip(&f.alpha[j..]).zip(&pv[j..]) {
            *m -= 0.5 * (ai * pj + pi * aj);
        }
    }
    let mut grad = vec![0.0; cov.n_params() + noise.len()];
    let nk = cov.n_params();
    cov.grad_contract(x, ms.as_ref(), &mut grad[..nk]);
    for j in 0..n {
        let (s2, g) = (f.sigma2[j], terms.weights.g[j]);
        grad[nk + terms.group[j]] +=
            ms[(j, j)] * f.n_eff[j] - pv[j] * s2 * g + a[j] * (s2 - f.n_eff[j]) + b[j] * g * s2;
    }
    Ok(WeightedLoo {
        value,
        grad,
        loo: f.loo,
    })
}

#[cfg(test)]
mod tests;
