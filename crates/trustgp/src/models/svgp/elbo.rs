//! The ELBO `c Σ_j E_q[log p(y_j | f_j)] − KL(N(m̃, S̃) ‖ N(0, I))` (`c = n/|batch|`, 1 for the
//! full data) and its gradient, block by block so that memory does not grow with the data.
//!
//! **Adjoints.** With `g_μ, g_v` the per-point derivatives of the expected log-likelihood
//! (times `c`) and `D = diag(g_v)`, each block of rows contributes (in the notation of
//! [`state`](super::state))
//!
//! ```text
//! K̄_uf = w̃ g_μᵀ + 2 P K_uf D,   K̄_ff,diag = g_v,   m̄(X) = g_μ,
//! w̄ += K_uf g_μ,   H += K_uf D K_fu,
//! ```
//!
//! and with `h = L⁻¹ w̄` and `G = L⁻¹ H L⁻ᵀ` (the statistics `Σ A g_μ`, `Σ A D Aᵀ` of
//! `A = L⁻¹ K_uf`, never formed) the rest is `m × m` work once per evaluation:
//!
//! ```text
//! ∂/∂m̃ = h − m̃,      ∂/∂L̃ = tril(2 G L̃ − L̃) + diag(1/L̃_ii),
//! L̄ = −w̃ hᵀ − 2 P H L⁻ᵀ              (through w̃ and P),
//! K̄_uu = L⁻ᵀ sym(Φ(Lᵀ tril L̄)) L⁻¹   (Murray 2016; Φ = lower triangle, diagonal halved).
//! ```
//!
//! The kernel contractions turn `K̄_uf`, `K̄_ff,diag` and `K̄_uu` into gradients in the
//! log-hyperparameters and the inducing inputs. `h` and `G` are also exactly what a
//! natural-gradient step needs (see [`natural`](super::natural)).

use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::{Accum, Mat, MatRef};

use super::likelihood::ExpectedGrad;
use super::state::{par_for, product, product_with, State, Whitened, CHUNK, FULL, LOWER, UPPER};
use crate::linalg::mirror_lower;
use crate::models::ModelError;

/// Which rows the data term sums over.
#[derive(Clone, Copy, Debug)]
pub(super) enum Rows<'a> {
    /// Every row, each once: the exact full-data ELBO.
    All,
    /// A minibatch (row indices), scaled by `n / |batch|`: an unbiased estimate.
    Batch(&'a [usize]),
}

/// What to compute beyond the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Need {
    /// The value only.
    Value,
    /// The value and the statistics `h` and `G` (enough for a natural-gradient step).
    Statistics,
    /// Everything; the gradient in the inducing inputs only if `z`.
    Gradient {
        /// Whether to compute `∂/∂Z`.
        z: bool,
    },
}

/// The gradient of the ELBO in natural coordinates (`L̃` entries, not their logarithms).
#[derive(Clone, Debug)]
pub(super) struct Grad {
    pub(super) m_tilde: Vec<f64>,
    /// `∂/∂L̃_ij` for `i ≥ j` (zeros above the diagonal).
    pub(super) l_tilde: Mat<f64>,
    /// In the kernel's log-hyperparameters.
    pub(super) kernel: Vec<f64>,
    /// In the likelihood's unconstrained parameters.
    pub(super) lik: Vec<f64>,
    pub(super) mean: Vec<f64>,
    /// In the inducing inputs (m×d), if requested.
    pub(super) z: Option<Mat<f64>>,
}

/// The result of an evaluation.
pub(super) struct Elbo {
    pub(super) value: f64,
    /// `h = Σ A g_μ` (with [`Need::Statistics`] or [`Need::Gradient`]).
    pub(super) h: Vec<f64>,
    /// `G = Σ A diag(g_v) Aᵀ` (likewise).
    pub(super) g: Mat<f64>,
    /// With [`Need::Gradient`].
    pub(super) grad: Option<Grad>,
}

/// `KL(N(m̃, L̃L̃ᵀ) ‖ N(0, I)) = ½ (‖L̃‖²_F + ‖m̃‖² − m − 2 Σ log L̃_ii)`.
pub(super) fn kl(state: &State) -> f64 {
    let m = state.m();
    let frob: f64 = (0..m)
        .map(|j| (j..m).map(|i| state.l_tilde[(i, j)].powi(2)).sum::<f64>())
        .sum();
    let mean: f64 = state.m_tilde.iter().map(|v| v * v).sum();
    let log_diag: f64 = (0..m).map(|i| state.l_tilde[(i, i)].ln()).sum();
    0.5 * (frob + mean - m as f64 - 2.0 * log_diag)
}

/// Evaluates the ELBO of `state` on `(x, y)` over `rows`.
///
/// # Errors
/// Likelihood parameters out of their domain.
pub(super) fn evaluate(
    state: &State,
    w: &Whitened,
    x: MatRef<'_, f64>,
    y: &[f64],
    rows: Rows<'_>,
    need: Need,
) -> Result<Elbo, ModelError> {
    let lik = state.likelihood.build(&state.lik_params)?;
    let (m, d) = (state.m(), x.ncols());
    let (count, scale) = match rows {
        Rows::All => (x.nrows(), 1.0),
        Rows::Batch(idx) => (idx.len(), x.nrows() as f64 / idx.len() as f64),
    };
    let stats = need != Need::Value;
    let want_grad = matches!(need, Need::Gradient { .. });
    let want_z = need == Need::Gradient { z: true };
    let mut value = 0.0;
    let mut w_bar = vec![0.0; if stats { m } else { 0 }];
    let mut big_h = if stats {
        Mat::zeros(m, m)
    } else {
        Mat::zeros(0, 0)
    };
    let mut grad = Grad {
        m_tilde: Vec::new(),
        l_tilde: Mat::zeros(0, 0),
        kernel: vec![
            0.0;
            if want_grad {
                state.kernel.n_params()
            } else {
                0
            }
        ],
        lik: vec![
            0.0;
            if want_grad {
                state.likelihood.n_params()
            } else {
                0
            }
        ],
        mean: vec![0.0; if want_grad { state.mean.n_params() } else { 0 }],
        z: want_z.then(|| Mat::zeros(m, d)),
    };
    for start in (0..count).step_by(CHUNK) {
        let len = CHUNK.min(count - start);
        let row = |k: usize| match rows {
            Rows::All => start + k,
            Rows::Batch(idx) => idx[start + k],
        };
        let xb = Mat::from_fn(len, d, |i, c| x[(row(i), c)]);
        let yb: Vec<f64> = (0..len).map(|i| y[row(i)]).collect();
        let bm = w.marginals(state, xb.as_ref());
        if !stats {
            value += scale * lik.expected_log_lik(&yb, &bm.mu, &bm.v, None);
            continue;
        }
        let (mut g_mu, mut g_v) = (vec![0.0; len], vec![0.0; len]);
        let mut d_lik = vec![0.0; state.likelihood.n_params()];
        let grads = ExpectedGrad {
            d_mu: &mut g_mu,
            d_v: &mut g_v,
            d_params: &mut d_lik,
        };
        value += scale * lik.expected_log_lik(&yb, &bm.mu, &bm.v, Some(grads));
        g_mu.iter_mut()
            .chain(g_v.iter_mut())
            .for_each(|v| *v *= scale);
        for (i, wi) in w_bar.iter_mut().enumerate() {
            *wi += (0..len).map(|j| bm.kuf[(i, j)] * g_mu[j]).sum::<f64>();
        }
        // H is symmetric: accumulate its lower triangle only (half the work).
        let kd = Mat::from_fn(m, len, |i, j| bm.kuf[(i, j)] * g_v[j]);
        triangular::matmul(
            big_h.as_mut(),
            BlockStructure::TriangularLower,
            Accum::Add,
            kd.as_ref(),
            BlockStructure::Rectangular,
            bm.kuf.transpose(),
            BlockStructure::Rectangular,
            1.0,
            par_for(m * m * len / 2),
        );
        if !want_grad {
            continue;
        }
        grad.lik
            .iter_mut()
            .zip(&d_lik)
            .for_each(|(t, s)| *t += scale * s);
        let kuf_bar = Mat::from_fn(m, len, |i, j| {
            w.w_tilde[i] * g_mu[j] + 2.0 * bm.pk[(i, j)] * g_v[j]
        });
        let z = state.z.as_ref();
        state
            .kernel
            .grad_contract_cross(z, xb.as_ref(), kuf_bar.as_ref(), &mut grad.kernel);
        state
            .kernel
            .grad_contract_diag(xb.as_ref(), &g_v, &mut grad.kernel);
        let dm = state.mean.grad_contract(xb.as_ref(), &g_mu);
        grad.mean.iter_mut().zip(dm).for_each(|(t, s)| *t += s);
        if let Some(gz) = grad.z.as_mut() {
            *gz += state
                .kernel
                .grad_inputs_cross(z, xb.as_ref(), kuf_bar.as_ref());
        }
    }
    // h = L⁻¹ w̄ and G = L⁻¹ H L⁻ᵀ.
    let (h, g) = if stats {
        mirror_lower(big_h.as_mut());
        let h = (0..m)
            .map(|i| (0..=i).map(|k| w.l_inv[(i, k)] * w_bar[k]).sum())
            .collect();
        let hl = product_with(big_h.as_ref(), FULL, w.l_inv.transpose(), UPPER);
        (h, product_with(w.l_inv.as_ref(), LOWER, hl.as_ref(), FULL))
    } else {
        (Vec::new(), Mat::zeros(0, 0))
    };
    value -= kl(state);
    if want_grad {
        finish_gradient(state, w, (&h, &g, &big_h), &mut grad);
    }
    Ok(Elbo {
        value,
        h,
        g,
        grad: want_grad.then_some(grad),
    })
}

/// Adds the KL term and the paths through `K_uu` (the factor `L` of the whitening) to `grad`.
fn finish_gradient(
    state: &State,
    w: &Whitened,
    (h, g, big_h): (&[f64], &Mat<f64>, &Mat<f64>),
    grad: &mut Grad,
) {
    let m = state.m();
    let lt = state.l_tilde.as_ref();
    grad.m_tilde = h.iter().zip(&state.m_tilde).map(|(a, b)| a - b).collect();
    let gl = product_with(g.as_ref(), FULL, lt, LOWER);
    grad.l_tilde = Mat::from_fn(m, m, |i, j| {
        let diag = if i == j { 1.0 / lt[(i, i)] } else { 0.0 };
        if i >= j {
            2.0 * gl[(i, j)] - lt[(i, j)] + diag
        } else {
            0.0
        }
    });
    let ph = product(w.p.as_ref(), big_h.as_ref());
    let phl = product_with(ph.as_ref(), FULL, w.l_inv.transpose(), UPPER);
    let l_bar = Mat::from_fn(m, m, |i, j| {
        if i >= j {
            -w.w_tilde[i] * h[j] - 2.0 * phl[(i, j)]
        } else {
            0.0
        }
    });
    let kuu_bar = cholesky_adjoint(w, l_bar.as_ref());
    let z = state.z.as_ref();
    state
        .kernel
        .grad_contract(z, kuu_bar.as_ref(), &mut grad.kernel);
    if let Some(gz) = grad.z.as_mut() {
        *gz += 2.0 * state.kernel.grad_inputs_cross(z, z, kuu_bar.as_ref());
    }
}

/// The symmetric adjoint of `K = L Lᵀ` from the adjoint of its lower factor:
/// `K̄ = L⁻ᵀ sym(Φ(Lᵀ L̄)) L⁻¹`, where `sym(Φ(C))_ij = ½ C_max(i,j),min(i,j)`.
fn cholesky_adjoint(w: &Whitened, l_bar: MatRef<'_, f64>) -> Mat<f64> {
    let m = l_bar.nrows();
    let c = product_with(w.l.transpose(), UPPER, l_bar, LOWER);
    let sym = Mat::from_fn(m, m, |i, j| 0.5 * c[(i.max(j), i.min(j))]);
    let sl = product_with(sym.as_ref(), FULL, w.l_inv.as_ref(), LOWER);
    product_with(w.l_inv.transpose(), UPPER, sl.as_ref(), FULL)
}
