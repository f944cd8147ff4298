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
//! (a function of a query batch's joint covariance enters the same way with a dense symmetric
//! `Σ̄` in place of `D`, and `K̄_ff = Σ̄`: [`CovBar`]),
//! and with `h = L⁻¹ w̄` and `G = L⁻¹ H L⁻ᵀ` (the statistics `Σ A g_μ`, `Σ A D Aᵀ` of
//! `A = L⁻¹ K_uf`) the rest is `m × m` work once per evaluation:
//!
//! ```text
//! ∂/∂m̃ = h − m̃,      ∂/∂L̃ = tril(2 G L̃ − L̃) + diag(1/L̃_ii),
//! L̄ = −w̃ hᵀ − 2 P H L⁻ᵀ              (through w̃ and P),
//! K̄_uu = L⁻ᵀ sym(Φ(Lᵀ tril L̄)) L⁻¹   (Murray 2016; Φ = lower triangle, diagonal halved).
//! ```
//!
//! A block of `b < m` rows (a minibatch) takes the whitened path of
//! [`Whitened::marginals`]: it has `A` and adds `A D Aᵀ` to `G` and `(P K_uf) D Aᵀ` to
//! `P H L⁻ᵀ` directly (`1.5 m² b`), so a minibatch evaluation does no `m × m × m` product
//! for them; larger blocks accumulate `H` (`m² b / 2`) and pay the `m³` products once.
//!
//! The kernel contractions turn `K̄_uf`, `K̄_ff,diag` and `K̄_uu` into gradients in the
//! log-hyperparameters and the inducing inputs. `h` and `G` are also exactly what a
//! natural-gradient step needs (see [`natural`](super::natural)).

use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::{Accum, Mat, MatRef};

use super::state::{
    par_for, product, product_with, BlockMarginals, State, Whitened, CHUNK, FULL, LOWER, UPPER,
};
use crate::kernels::{Covariance, Kernel};
use crate::likelihoods::{ExpectedGrad, Likelihood};
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
    /// Everything; the gradient in the inducing inputs only if `z`, in `(m̃, L̃)` only if
    /// `variational` (natural-gradient training moves them otherwise and skips the `m³`
    /// product).
    Gradient {
        /// Whether to compute `∂/∂Z`.
        z: bool,
        /// Whether to compute `∂/∂m̃` and `∂/∂L̃`.
        variational: bool,
    },
}

/// The gradient of the ELBO in natural coordinates (`L̃` entries, not their logarithms).
#[derive(Clone, Debug)]
pub(super) struct Grad {
    /// `∂/∂m̃` (empty unless requested).
    pub(super) m_tilde: Vec<f64>,
    /// `∂/∂L̃_ij` for `i ≥ j` (zeros above the diagonal; 0×0 unless requested).
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
    evaluate_seeded(state, w, x, y, rows, need, None)
}

/// The adjoint `Σ̄` of the covariance of a block of rows. Data rows enter the ELBO through
/// their marginal variances only (`Σ̄ = diag(g_v)`); a query batch's function may read its
/// whole joint covariance `K_ff + K_fu P K_uf` (`Σ̄` dense and symmetric). The paths of the
/// two differ only in `Σ̄`'s products, so one backward pass serves both.
#[derive(Clone, Copy, Debug)]
pub(super) enum CovBar<'a> {
    /// `diag(g_v)`.
    Diagonal(&'a [f64]),
    /// A dense symmetric `b × b` adjoint.
    Full(MatRef<'a, f64>),
}

impl CovBar<'_> {
    /// `A Σ̄` for an `m × b` matrix `A`.
    pub(super) fn right_multiply(&self, a: MatRef<'_, f64>) -> Mat<f64> {
        match *self {
            CovBar::Diagonal(g) => Mat::from_fn(a.nrows(), a.ncols(), |i, j| a[(i, j)] * g[j]),
            CovBar::Full(s) => product(a, s),
        }
    }

    /// Adds `Σ_ab Σ̄_ab ∂K(X, X)_ab/∂θ` (the prior covariance's own path) to `grad`.
    fn contract_kernel(&self, kernel: &Kernel, xb: MatRef<'_, f64>, grad: &mut [f64]) {
        match *self {
            CovBar::Diagonal(g) => kernel.grad_contract_diag(xb, g, grad),
            CovBar::Full(s) => kernel.grad_contract(xb, s, grad),
        }
    }

    /// The gradient of `⟨Σ̄, K(X, X)⟩` in the rows of `xb` (both arguments of each entry move:
    /// twice the first argument's derivative, by symmetry of `k` and `Σ̄`).
    pub(super) fn input_gradient(&self, kernel: &Kernel, xb: MatRef<'_, f64>) -> Mat<f64> {
        match *self {
            CovBar::Diagonal(g) => {
                let diag = kernel.grad_inputs_diag(xb);
                Mat::from_fn(diag.nrows(), diag.ncols(), |t, c| g[t] * diag[(t, c)])
            }
            CovBar::Full(s) => 2.0 * kernel.grad_inputs_cross(xb, xb, s),
        }
    }
}

/// Adjoints `(μ̄, Σ̄)` of a function of the predictive at query rows `xq` (with their
/// marginals), added to the ELBO's gradient: they enter exactly as a data block's `g_μ`,
/// `diag(g_v)`, with `Σ̄` dense for a function of the joint predictive.
pub(super) struct QuerySeed<'a> {
    pub(super) xq: MatRef<'a, f64>,
    pub(super) marginals: &'a BlockMarginals,
    pub(super) mean_bar: &'a [f64],
    pub(super) cov_bar: CovBar<'a>,
}

/// [`evaluate`] whose gradient also carries a [`QuerySeed`] (the value is the ELBO's alone).
///
/// # Errors
/// As for [`evaluate`].
pub(super) fn evaluate_seeded(
    state: &State,
    w: &Whitened,
    x: MatRef<'_, f64>,
    y: &[f64],
    rows: Rows<'_>,
    need: Need,
    seed: Option<QuerySeed<'_>>,
) -> Result<Elbo, ModelError> {
    let lik = state.likelihood.build(&state.lik_params)?;
    let (count, scale) = match rows {
        Rows::All => (x.nrows(), 1.0),
        Rows::Batch(idx) => (idx.len(), x.nrows() as f64 / idx.len() as f64),
    };
    let mut sums = Sums::new(state, need);
    for start in (0..count).step_by(CHUNK) {
        let len = CHUNK.min(count - start);
        let row = |k: usize| match rows {
            Rows::All => start + k,
            Rows::Batch(idx) => idx[start + k],
        };
        let xb = Mat::from_fn(len, x.ncols(), |i, c| x[(row(i), c)]);
        let yb: Vec<f64> = (0..len).map(|i| y[row(i)]).collect();
        sums.add_block(state, w, lik.as_ref(), xb.as_ref(), &yb, scale);
    }
    if let (Some(q), true) = (seed, need != Need::Value) {
        sums.add_adjoints(state, w, q.xq, q.marginals, q.mean_bar, q.cov_bar);
    }
    Ok(sums.finish(state, w))
}

/// The running sums over blocks of rows.
struct Sums {
    need: Need,
    value: f64,
    /// `w̄ = Σ K_uf g_μ`.
    w_bar: Vec<f64>,
    /// `H = Σ K_uf D K_fu` over the large blocks (lower triangle).
    big_h: Mat<f64>,
    /// Whether any block added to `H`.
    h_used: bool,
    /// `Σ A D Aᵀ` over the small blocks (lower triangle): their share of `G`.
    g_small: Mat<f64>,
    /// `Σ (P K_uf) D Aᵀ` over the small blocks: their share of `P H L⁻ᵀ`.
    phl_small: Mat<f64>,
    grad: Grad,
}

impl Sums {
    fn new(state: &State, need: Need) -> Sums {
        let m = state.m();
        Sums {
            need,
            value: 0.0,
            w_bar: vec![0.0; m],
            big_h: Mat::zeros(m, m),
            h_used: false,
            g_small: Mat::zeros(m, m),
            phl_small: Mat::zeros(m, m),
            grad: Grad {
                m_tilde: Vec::new(),
                l_tilde: Mat::zeros(0, 0),
                kernel: vec![0.0; state.kernel.n_params()],
                lik: vec![0.0; state.likelihood.n_params()],
                mean: vec![0.0; state.mean.n_params()],
                z: matches!(need, Need::Gradient { z: true, .. })
                    .then(|| Mat::zeros(m, state.z.ncols())),
            },
        }
    }

    /// Adds the data term of the rows `xb`, `yb`, scaled by `scale`.
    fn add_block(
        &mut self,
        state: &State,
        w: &Whitened,
        lik: &dyn Likelihood,
        xb: MatRef<'_, f64>,
        yb: &[f64],
        scale: f64,
    ) {
        let len = yb.len();
        let bm = w.marginals(state, xb);
        if self.need == Need::Value {
            self.value += scale * lik.expected_log_lik(yb, &bm.mu, &bm.v, None);
            return;
        }
        let (mut g_mu, mut g_v) = (vec![0.0; len], vec![0.0; len]);
        let mut d_lik = vec![0.0; state.likelihood.n_params()];
        let grads = ExpectedGrad {
            d_mu: &mut g_mu,
            d_v: &mut g_v,
            d_params: &mut d_lik,
        };
        self.value += scale * lik.expected_log_lik(yb, &bm.mu, &bm.v, Some(grads));
        g_mu.iter_mut()
            .chain(g_v.iter_mut())
            .for_each(|v| *v *= scale);
        self.add_adjoints(state, w, xb, &bm, &g_mu, CovBar::Diagonal(&g_v));
        if self.need != Need::Statistics {
            self.grad
                .lik
                .iter_mut()
                .zip(&d_lik)
                .for_each(|(t, s)| *t += scale * s);
        }
    }

    /// Adds the paths of the adjoints `g_μ`, `Σ̄` of the predictive at the rows `xb` (with
    /// their [`BlockMarginals`] `bm`): the statistics `w̄`, `H` (`+= K_uf Σ̄ K_fu`, the
    /// adjoint of `P`), and with [`Need::Gradient`] the kernel's, the mean's and the inducing
    /// inputs' gradients through `K_uf`, `K_ff` and `m(X)`.
    fn add_adjoints(
        &mut self,
        state: &State,
        w: &Whitened,
        xb: MatRef<'_, f64>,
        bm: &BlockMarginals,
        g_mu: &[f64],
        cov_bar: CovBar<'_>,
    ) {
        let len = g_mu.len();
        for (i, wi) in self.w_bar.iter_mut().enumerate() {
            *wi += (0..len).map(|j| bm.kuf[(i, j)] * g_mu[j]).sum::<f64>();
        }
        // Only the lower triangles of the symmetric accumulators are formed (half the work).
        let pk_cov = match &bm.a {
            None => {
                let kd = cov_bar.right_multiply(bm.kuf.as_ref());
                add_product(&mut self.big_h, LOWER, kd.as_ref(), bm.kuf.transpose());
                self.h_used = true;
                None
            }
            Some(a) => {
                let ad = cov_bar.right_multiply(a.as_ref());
                add_product(&mut self.g_small, LOWER, ad.as_ref(), a.transpose());
                if self.need == Need::Statistics {
                    return;
                }
                let pk_cov = cov_bar.right_multiply(bm.pk.as_ref());
                add_product(&mut self.phl_small, FULL, pk_cov.as_ref(), a.transpose());
                Some(pk_cov)
            }
        };
        if self.need == Need::Statistics {
            return;
        }
        let grad = &mut self.grad;
        let pk_cov = pk_cov.unwrap_or_else(|| cov_bar.right_multiply(bm.pk.as_ref()));
        let kuf_bar = kuf_adjoint(w, bm, g_mu, &pk_cov);
        let z = state.z.as_ref();
        let kernel = &state.kernel;
        kernel.grad_contract_cross(z, xb, kuf_bar.as_ref(), &mut grad.kernel);
        cov_bar.contract_kernel(kernel, xb, &mut grad.kernel);
        let dm = state.mean.grad_contract(xb, g_mu);
        grad.mean.iter_mut().zip(dm).for_each(|(t, s)| *t += s);
        if let Some(gz) = grad.z.as_mut() {
            *gz += kernel.grad_inputs_cross(z, xb, kuf_bar.as_ref());
        }
    }

    /// Subtracts the KL term and, as needed, forms `h = L⁻¹ w̄`, `G = L⁻¹ H L⁻ᵀ` and the rest
    /// of the gradient.
    fn finish(mut self, state: &State, w: &Whitened) -> Elbo {
        let value = self.value - kl(state);
        if self.need == Need::Value {
            return Elbo {
                value,
                h: Vec::new(),
                g: Mat::zeros(0, 0),
                grad: None,
            };
        }
        let m = state.m();
        let h: Vec<f64> = (0..m)
            .map(|i| (0..=i).map(|k| w.l_inv[(i, k)] * self.w_bar[k]).sum())
            .collect();
        mirror_lower(self.g_small.as_mut());
        let mut g = self.g_small;
        // The large blocks' share: G += L⁻¹ H L⁻ᵀ, P H L⁻ᵀ += P H L⁻ᵀ.
        let mut phl = self.phl_small;
        if self.h_used {
            mirror_lower(self.big_h.as_mut());
            let hl = product_with(self.big_h.as_ref(), FULL, w.l_inv.transpose(), UPPER);
            g += product_with(w.l_inv.as_ref(), LOWER, hl.as_ref(), FULL);
            if matches!(self.need, Need::Gradient { .. }) {
                let ph = product(w.p(state).as_ref(), self.big_h.as_ref());
                phl += product_with(ph.as_ref(), FULL, w.l_inv.transpose(), UPPER);
            }
        }
        let grad = match self.need {
            Need::Gradient { variational, .. } => {
                finish_gradient(state, w, (&h, &g, &phl), variational, &mut self.grad);
                Some(self.grad)
            }
            _ => None,
        };
        Elbo { value, h, g, grad }
    }
}

/// `dst (its `part`) += lhs · rhs`.
fn add_product(
    dst: &mut Mat<f64>,
    part: BlockStructure,
    lhs: MatRef<'_, f64>,
    rhs: MatRef<'_, f64>,
) {
    let flops = lhs.nrows() * lhs.ncols() * rhs.ncols();
    let flops = if part == LOWER { flops / 2 } else { flops };
    triangular::matmul(
        dst.as_mut(),
        part,
        Accum::Add,
        lhs,
        FULL,
        rhs,
        FULL,
        1.0,
        par_for(flops),
    );
}

/// Adds the KL term and the paths through `K_uu` (the factor `L` of the whitening) to `grad`,
/// given `h`, `G` and `P H L⁻ᵀ`; the gradient in `(m̃, L̃)` only if `variational`.
fn finish_gradient(
    state: &State,
    w: &Whitened,
    (h, g, phl): (&[f64], &Mat<f64>, &Mat<f64>),
    variational: bool,
    grad: &mut Grad,
) {
    let m = state.m();
    if variational {
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
    }
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

/// `K̄_uf = w̃ g_μᵀ + 2 P K_uf Σ̄`: the adjoint of the cross-covariances of rows whose
/// predictive has adjoints `g_μ`, `Σ̄` (symmetric), given `pk_cov = P K_uf Σ̄`.
pub(super) fn kuf_adjoint(
    w: &Whitened,
    bm: &BlockMarginals,
    g_mu: &[f64],
    pk_cov: &Mat<f64>,
) -> Mat<f64> {
    Mat::from_fn(bm.kuf.nrows(), g_mu.len(), |i, j| {
        w.w_tilde[i] * g_mu[j] + 2.0 * pk_cov[(i, j)]
    })
}

/// The symmetric adjoint of `K = L Lᵀ` from the adjoint of its lower factor:
/// `K̄ = L⁻ᵀ sym(Φ(Lᵀ L̄)) L⁻¹`, where `sym(Φ(C))_ij = ½ C_max(i,j),min(i,j)`.
pub(super) fn cholesky_adjoint(w: &Whitened, l_bar: MatRef<'_, f64>) -> Mat<f64> {
    let m = l_bar.nrows();
    let c = product_with(w.l.transpose(), UPPER, l_bar, LOWER);
    let sym = Mat::from_fn(m, m, |i, j| 0.5 * c[(i.max(j), i.min(j))]);
    let sl = product_with(sym.as_ref(), FULL, w.l_inv.as_ref(), LOWER);
    product_with(w.l_inv.transpose(), UPPER, sl.as_ref(), FULL)
}
