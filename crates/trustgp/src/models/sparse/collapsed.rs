//! The collapsed bound shared by SGPR and RCSVGP, with its adjoints.
//!
//! Both models have a Gaussian pseudo-likelihood in the centred latent values `g = f − m(X)`,
//!
//! ```text
//! log p̃(y | f) = −½ (g − t)ᵀ P (g − t) + κ,        P diagonal and positive,
//! ```
//!
//! and differ only in `P`, the target `t` and the constant `κ` (see [`super::likelihood`]).
//! Maximising `E_q[log p̃] − KL[q(u) ‖ p(u)]` over `q(u)` in closed form (Titsias 2009, in its
//! heteroscedastic form) leaves `κ` plus
//!
//! ```text
//! G(P, t) = −½ tᵀP(t − a) − ½ log det B − ½ Σ_j P_j (K_jj − Q_jj),
//! L Lᵀ = K_uu,   A = L⁻¹ K_uf,   B = I + A P Aᵀ = L_B L_Bᵀ,   γ = B⁻¹ A P t,   a = Aᵀ γ,
//! ```
//!
//! where `Q_jj = ‖A_j‖²` and `a` is the posterior mean of `g` at the training inputs. Nothing
//! larger than m×n is formed, and the cost is O(n m² + m³).
//!
//! The adjoints, derived by hand (and checked by finite differences in the tests), are
//!
//! ```text
//! ∂G/∂t       = −P (t − a)
//! ∂G/∂log P_j = −½ P_j [(t_j − a_j)² + K_jj − Q_jj + (AᵀB⁻¹A)_jj]
//! ∂G/∂K_jj    = −½ P_j
//! ∂G/∂K_uf    = L⁻ᵀ H,     H_j = P_j (A_j − (B⁻¹A)_j + γ (t_j − a_j))
//! ∂G/∂K_uu    = L⁻ᵀ (I − ½B − ½B⁻¹ − ½γγᵀ) L⁻¹      (symmetric)
//! ```
//!
//! The log-precision adjoint stays bounded when a gross outlier drives `P_j` to 0, where the
//! adjoint in `P_j` itself would grow like `1/P_j`.

use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::{Accum, Mat, MatRef};

use super::super::ModelError;
use crate::kernels::Kernel;
use crate::linalg::{parallelism_for, Cholesky};

/// Columns of `A` scaled by `√P` at a time when forming `B`: bounds the temporary to m × this.
const B_BLOCK: usize = 4096;

/// The factors that both the bound and the predictive need.
#[derive(Clone, Debug)]
pub(in crate::models) struct Factors {
    /// Cholesky factor of `K_uu` (with its jitter).
    pub l_uu: Cholesky,
    /// Cholesky factor of `B = I + A P Aᵀ`.
    pub l_b: Cholesky,
    /// `α = L⁻ᵀ γ = (K_uu + K_uf P K_fu)⁻¹ K_uf P t`: the posterior mean is `m(x) + k(x, Z) α`.
    pub alpha: Vec<f64>,
}

/// The bound `G(P, t)` and, on request, its gradients.
pub(in crate::models) struct Collapsed {
    /// `G(P, t)` (without the model's constant κ).
    pub value: f64,
    /// The factors, for prediction.
    pub factors: Factors,
    /// The gradients, if requested.
    pub grad: Option<CollapsedGrad>,
}

/// Which gradients an evaluation computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::models) enum Wanted {
    /// The value only.
    Value,
    /// Gradients in everything but the inducing inputs (which are then held fixed, and whose
    /// gradient is the costliest kernel contraction).
    FixedInducing,
    /// All gradients.
    All,
}

/// Gradients of `G` with respect to everything it depends on.
pub(in crate::models) struct CollapsedGrad {
    /// `∂G/∂log P_j`.
    pub log_p: Vec<f64>,
    /// `∂G/∂t_j`.
    pub t: Vec<f64>,
    /// `∂G/∂log θ` for the kernel's hyperparameters.
    pub kernel: Vec<f64>,
    /// `∂G/∂Z` (m×d), unless the inducing inputs are fixed.
    pub z: Option<Mat<f64>>,
}

/// `K_uu = k(Z, Z) + jitter·I`, factorised (further jitter, if needed, is recorded in the factor).
fn factor_kuu(kernel: &Kernel, z: MatRef<'_, f64>, jitter: f64) -> Result<Cholesky, ModelError> {
    let mut kuu = kernel.matrix(z);
    for i in 0..z.nrows() {
        kuu[(i, i)] += jitter;
    }
    Ok(Cholesky::factor(
        &kuu,
        "inducing covariance K_uu",
        parallelism_for(z.nrows()),
    )?)
}

/// The quantities of the module docs that the value and the adjoints share.
struct Forward {
    l_uu: Cholesky,
    l_b: Cholesky,
    /// `A = L⁻¹ K_uf` (m×n).
    a: Mat<f64>,
    /// `B = I + A P Aᵀ`.
    b: Mat<f64>,
    /// `γ = B⁻¹ A P t` (m×1).
    gamma: Mat<f64>,
    /// `t − a`.
    resid: Vec<f64>,
    /// `Q_jj = ‖A_j‖²`.
    q_diag: Vec<f64>,
    /// `K_jj`.
    kdiag: Vec<f64>,
}

impl Forward {
    fn new(
        kernel: &Kernel,
        x: MatRef<'_, f64>,
        z: MatRef<'_, f64>,
        jitter: f64,
        p: &[f64],
        t: &[f64],
    ) -> Result<Forward, ModelError> {
        let (n, m) = (x.nrows(), z.nrows());
        let par = parallelism_for(n).faer();
        let l_uu = factor_kuu(kernel, z, jitter)?;
        // A = L⁻¹ K_uf, overwriting K_uf (which is not needed again).
        let mut a = kernel.cross(z, x);
        solve_lower_triangular_in_place(l_uu.l(), a.as_mut(), par);

        let mut b = Mat::<f64>::identity(m, m);
        for start in (0..n).step_by(B_BLOCK) {
            let len = B_BLOCK.min(n - start);
            let scaled = Mat::from_fn(m, len, |i, j| a[(i, start + j)] * p[start + j].sqrt());
            let s = scaled.as_ref();
            matmul(b.as_mut(), Accum::Add, s, s.transpose(), 1.0, par);
        }
        let l_b = Cholesky::factor(&b, "I + A P Aᵀ", parallelism_for(m))?;

        let pt: Vec<f64> = p.iter().zip(t).map(|(p, t)| p * t).collect();
        let mut gamma = mat_vec(a.as_ref(), &pt);
        l_b.solve_in_place(gamma.as_mut());
        let a_mean = mat_t_vec(a.as_ref(), gamma.as_ref());
        Ok(Forward {
            resid: (0..n).map(|j| t[j] - a_mean[j]).collect(),
            q_diag: (0..n).map(|j| col_dot(a.as_ref(), a.as_ref(), j)).collect(),
            kdiag: kernel.diag(x),
            l_uu,
            l_b,
            a,
            b,
            gamma,
        })
    }
}

/// Evaluates `G(P, t)` for training inputs `x` and inducing inputs `z`, with the `wanted`
/// gradients. `p` and `t` have one entry per row of `x`.
pub(in crate::models) fn collapsed_bound(
    kernel: &Kernel,
    x: MatRef<'_, f64>,
    z: MatRef<'_, f64>,
    jitter: f64,
    p: &[f64],
    t: &[f64],
    wanted: Wanted,
) -> Result<Collapsed, ModelError> {
    let f = Forward::new(kernel, x, z, jitter, p, t)?;
    let mut value = -0.5 * f.l_b.log_det();
    for j in 0..x.nrows() {
        value -= 0.5 * p[j] * (t[j] * f.resid[j] + f.kdiag[j] - f.q_diag[j]);
    }
    let grad = (wanted != Wanted::Value).then(|| gradients(kernel, x, z, p, &f, wanted));
    let mut alpha = f.gamma;
    solve_upper_triangular_in_place(f.l_uu.l().transpose(), alpha.as_mut(), faer::Par::Seq);
    Ok(Collapsed {
        value,
        factors: Factors {
            l_uu: f.l_uu,
            l_b: f.l_b,
            alpha: (0..z.nrows()).map(|i| alpha[(i, 0)]).collect(),
        },
        grad,
    })
}

/// The adjoints of the module docs, contracted against the kernel's derivatives.
fn gradients(
    kernel: &Kernel,
    x: MatRef<'_, f64>,
    z: MatRef<'_, f64>,
    p: &[f64],
    f: &Forward,
    wanted: Wanted,
) -> CollapsedGrad {
    let Forward {
        l_uu,
        l_b,
        a,
        b,
        gamma,
        resid,
        q_diag,
        kdiag,
    } = f;
    let (n, m) = (x.nrows(), z.nrows());
    let par = parallelism_for(n).faer();
    // W = B⁻¹A by two triangular solves at the parallelism of the n columns (the factor's own
    // solve would use that of its m×m size); H then overwrites W column by column, once
    // diag(AᵀB⁻¹A) has been read from it.
    let mut h = a.clone();
    solve_lower_triangular_in_place(l_b.l(), h.as_mut(), par);
    solve_upper_triangular_in_place(l_b.l().transpose(), h.as_mut(), par);
    let mut log_p = vec![0.0; n];
    for j in 0..n {
        let quad = col_dot(a.as_ref(), h.as_ref(), j);
        log_p[j] = -0.5 * p[j] * (resid[j] * resid[j] + kdiag[j] - q_diag[j] + quad);
        for i in 0..m {
            h[(i, j)] = p[j] * (a[(i, j)] - h[(i, j)] + gamma[(i, 0)] * resid[j]);
        }
    }
    solve_upper_triangular_in_place(l_uu.l().transpose(), h.as_mut(), par);
    let kuf_bar = h;

    let b_inv = l_b.inverse();
    let mut mid = Mat::from_fn(m, m, |i, k| {
        let eye = if i == k { 1.0 } else { 0.0 };
        eye - 0.5 * (b[(i, k)] + b_inv[(i, k)] + gamma[(i, 0)] * gamma[(k, 0)])
    });
    // L⁻ᵀ M L⁻¹ = L⁻ᵀ (L⁻ᵀ M)ᵀ for the symmetric M.
    solve_upper_triangular_in_place(l_uu.l().transpose(), mid.as_mut(), faer::Par::Seq);
    let mut kuu_bar = mid.transpose().to_owned();
    solve_upper_triangular_in_place(l_uu.l().transpose(), kuu_bar.as_mut(), faer::Par::Seq);

    let kdiag_bar: Vec<f64> = p.iter().map(|p| -0.5 * p).collect();
    let mut g_kernel = vec![0.0; kernel.n_params()];
    kernel.grad_contract(z, kuu_bar.as_ref(), &mut g_kernel);
    kernel.grad_contract_cross(z, x, kuf_bar.as_ref(), &mut g_kernel);
    kernel.grad_contract_diag(x, &kdiag_bar, &mut g_kernel);

    let g_z = (wanted == Wanted::All).then(|| {
        let g_zz = kernel.grad_inputs_cross(z, z, kuu_bar.as_ref());
        kernel.grad_inputs_cross(z, x, kuf_bar.as_ref()) + 2.0 * g_zz
    });

    let t_bar = (0..n).map(|j| -p[j] * resid[j]).collect();
    CollapsedGrad {
        log_p,
        t: t_bar,
        kernel: g_kernel,
        z: g_z,
    }
}

/// `M v` as an m×1 matrix.
fn mat_vec(m: MatRef<'_, f64>, v: &[f64]) -> Mat<f64> {
    let mut out = Mat::<f64>::zeros(m.nrows(), 1);
    let vm = MatRef::from_column_major_slice(v, v.len(), 1);
    matmul(out.as_mut(), Accum::Replace, m, vm, 1.0, faer::Par::Seq);
    out
}

/// `Mᵀ v` for an m×1 matrix `v`.
fn mat_t_vec(m: MatRef<'_, f64>, v: MatRef<'_, f64>) -> Vec<f64> {
    (0..m.ncols())
        .map(|j| (0..m.nrows()).map(|i| m[(i, j)] * v[(i, 0)]).sum())
        .collect()
}

/// `Σ_i a_ij b_ij`: column j of `a` against column j of `b`.
pub(in crate::models) fn col_dot(a: MatRef<'_, f64>, b: MatRef<'_, f64>, j: usize) -> f64 {
    (0..a.nrows()).map(|i| a[(i, j)] * b[(i, j)]).sum()
}
