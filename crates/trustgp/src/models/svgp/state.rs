//! The SVGP's parameters, and what is derived from them once per evaluation: the factor `L`
//! of `K_uu`, `L⁻¹`, and the two prediction weights
//!
//! ```text
//! w̃ = L⁻ᵀ m̃,      P = L⁻ᵀ (S̃ − I) L⁻¹,
//! ```
//!
//! so that the marginals of a block of rows cost one product with `K_uf`:
//!
//! ```text
//! μ_f = m(X) + K_fu w̃,      v_f = diag K_ff + colsum(K_uf ∘ P K_uf)
//! ```
//!
//! (the spec's `k_xx − k_xu K_uu⁻¹ k_ux + k_xu L⁻ᵀ S̃ L⁻¹ k_ux`).
//!
//! Forming `P` costs about `1.5 m³`; a block of `b < m` rows instead gets `P K_uf` from the
//! whitened cross-covariance `A = L⁻¹ K_uf` as `L⁻ᵀ (L̃ (L̃ᵀ A) − A)` (`2 m² b`), which is what
//! a minibatch step does (B = 128 against m = 800). `P` is formed on first use by a larger
//! block (prediction, full-data passes) and kept.

use std::cell::Cell;
use std::sync::OnceLock;

use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::linalg::triangular_inverse::invert_lower_triangular;
use faer::{Accum, Mat, MatRef, Par};

use super::SvgpLikelihood;
use crate::kernels::Kernel;
use crate::linalg::{Cholesky, Parallelism};
use crate::means::Mean;
use crate::models::ModelError;

/// Jitter added to `K_uu` (spec §6.1); the factorisation escalates it only if that fails.
pub(super) const KUU_JITTER: f64 = 1e-6;

/// Rows per block: bounds every data-sized intermediate to `m × CHUNK`.
pub(super) const CHUNK: usize = 1024;

/// A whole operand.
pub(super) const FULL: BlockStructure = BlockStructure::Rectangular;
/// The lower triangle of an operand.
pub(super) const LOWER: BlockStructure = BlockStructure::TriangularLower;
/// The upper triangle of an operand (e.g. the transpose of a lower factor).
pub(super) const UPPER: BlockStructure = BlockStructure::TriangularUpper;

/// Products below this many multiply-adds run on one thread (hand-off costs more).
const PARALLEL_FLOPS: usize = 1 << 22;

/// Everything that defines a (trained or in-training) SVGP.
#[derive(Clone, Debug)]
pub(super) struct State {
    pub(super) kernel: Kernel,
    pub(super) mean: Mean,
    pub(super) likelihood: SvgpLikelihood,
    /// Natural likelihood parameters (see [`SvgpLikelihood::param_names`]).
    pub(super) lik_params: Vec<f64>,
    /// Inducing inputs, m×d.
    pub(super) z: Mat<f64>,
    /// Whitened variational mean.
    pub(super) m_tilde: Vec<f64>,
    /// Lower-triangular factor of the whitened covariance (strict upper triangle zero).
    pub(super) l_tilde: Mat<f64>,
}

impl State {
    /// Number of inducing points.
    pub(super) fn m(&self) -> usize {
        self.z.nrows()
    }

    /// Checks shapes, finiteness and domains.
    pub(super) fn validate(&self) -> Result<(), ModelError> {
        let (m, d) = (self.z.nrows(), self.z.ncols());
        if m == 0 || d == 0 {
            return Err(ModelError::Invalid(format!(
                "the inducing inputs must be a non-empty matrix, got {m}×{d}"
            )));
        }
        check_finite("inducing inputs", self.z.as_ref())?;
        if !self.kernel.is_initialized() {
            return Err(ModelError::Invalid(format!(
                "kernel '{}' has lengthscales without values",
                self.kernel
            )));
        }
        self.kernel.validate(d)?;
        self.mean.check_inputs(d)?;
        if self.m_tilde.len() != m || self.l_tilde.nrows() != m || self.l_tilde.ncols() != m {
            return Err(ModelError::Invalid(format!(
                "the variational parameters must be a mean of length {m} and an {m}×{m} factor \
                 (one per inducing point), got {} and {}×{}",
                self.m_tilde.len(),
                self.l_tilde.nrows(),
                self.l_tilde.ncols()
            )));
        }
        let mt = MatRef::from_column_major_slice(&self.m_tilde, m, 1);
        check_finite("variational mean", mt)?;
        check_finite("variational factor", self.l_tilde.as_ref())?;
        if let Some(i) = (0..m).find(|&i| self.l_tilde[(i, i)] <= 0.0) {
            return Err(ModelError::Invalid(format!(
                "the variational factor needs a positive diagonal, got {} at ({i}, {i})",
                self.l_tilde[(i, i)]
            )));
        }
        self.likelihood.build(&self.lik_params).map(|_| ())
    }
}

/// An error naming the first non-finite entry of `a`, if any.
fn check_finite(what: &str, a: MatRef<'_, f64>) -> Result<(), ModelError> {
    for j in 0..a.ncols() {
        if let Some(i) = (0..a.nrows()).find(|&i| !a[(i, j)].is_finite()) {
            return Err(ModelError::Invalid(format!(
                "{what} have a non-finite entry at ({i}, {j}): {}",
                a[(i, j)]
            )));
        }
    }
    Ok(())
}

/// The lower triangle of `a` with zeros above (faer leaves the strict upper triangle of its
/// factors unspecified).
pub(super) fn lower(a: MatRef<'_, f64>) -> Mat<f64> {
    Mat::from_fn(
        a.nrows(),
        a.ncols(),
        |i, j| if i >= j { a[(i, j)] } else { 0.0 },
    )
}

thread_local! {
    /// Set while [`one_thread`] runs on this thread.
    static ONE_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with every SVGP product on the calling thread. Callers that already train many
/// models in parallel (one per core) use it: splitting each model's products over the same
/// cores again only adds hand-off costs (nested rayon tasks), it cannot add cores.
pub(crate) fn one_thread<R>(f: impl FnOnce() -> R) -> R {
    /// Restores the previous setting, also if `f` panics.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            ONE_THREAD.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(ONE_THREAD.with(|c| c.replace(true)));
    f()
}

/// The faer parallelism for a product of `flops` multiply-adds.
pub(super) fn par_for(flops: usize) -> Par {
    if flops >= PARALLEL_FLOPS && rayon::current_num_threads() > 1 && !ONE_THREAD.with(Cell::get) {
        Par::rayon(0)
    } else {
        Par::Seq
    }
}

/// `lhs · rhs` as a new matrix.
pub(super) fn product(lhs: MatRef<'_, f64>, rhs: MatRef<'_, f64>) -> Mat<f64> {
    product_with(lhs, FULL, rhs, FULL)
}

/// `lhs · rhs` reading only the given part of each operand (the triangular factors take half
/// the work, which matters: the `m × m` products dominate an evaluation on small batches).
pub(super) fn product_with(
    lhs: MatRef<'_, f64>,
    lhs_part: BlockStructure,
    rhs: MatRef<'_, f64>,
    rhs_part: BlockStructure,
) -> Mat<f64> {
    let mut out = Mat::<f64>::zeros(lhs.nrows(), rhs.ncols());
    let par = par_for(lhs.nrows() * lhs.ncols() * rhs.ncols());
    triangular::matmul(
        out.as_mut(),
        FULL,
        Accum::Replace,
        lhs,
        lhs_part,
        rhs,
        rhs_part,
        1.0,
        par,
    );
    out
}

/// The parameter-dependent, data-independent part of an evaluation (and of prediction).
#[derive(Clone, Debug)]
pub(super) struct Whitened {
    /// `L` with `K_uu + jitter·I = L Lᵀ` (zeros above the diagonal).
    pub(super) l: Mat<f64>,
    /// `L⁻¹` (zeros above the diagonal).
    pub(super) l_inv: Mat<f64>,
    /// `w̃ = L⁻ᵀ m̃`.
    pub(super) w_tilde: Vec<f64>,
    /// `P = L⁻ᵀ (S̃ − I) L⁻¹`, formed on first use ([`Whitened::p`]).
    p: OnceLock<Mat<f64>>,
}

/// Marginals of the latent function at a block of rows, with the intermediates the gradient
/// reuses.
pub(super) struct BlockMarginals {
    /// `K_uf` (m×b).
    pub(super) kuf: Mat<f64>,
    /// `P K_uf` (m×b).
    pub(super) pk: Mat<f64>,
    /// `A = L⁻¹ K_uf` (m×b) when the block was small enough to take the whitened path (the
    /// gradient then accumulates its `m × m` statistics from `A` instead of `K_uf`).
    pub(super) a: Option<Mat<f64>>,
    /// `μ_f`.
    pub(super) mu: Vec<f64>,
    /// `v_f`, clamped at 0 against rounding.
    pub(super) v: Vec<f64>,
}

impl Whitened {
    /// Factorise `K_uu` and form `L⁻¹` and `w̃` (`P` follows on first use).
    ///
    /// # Errors
    /// If `K_uu` cannot be factorised even with escalated jitter.
    pub(super) fn new(state: &State) -> Result<Whitened, ModelError> {
        let m = state.m();
        let build = || {
            let mut k = state.kernel.matrix(state.z.as_ref());
            (0..m).for_each(|i| k[(i, i)] += KUU_JITTER);
            k
        };
        let chol = Cholesky::factor_owned(
            build(),
            "inducing kernel matrix K_uu",
            Parallelism::Sequential,
            build,
        )?;
        let l = lower(chol.l());
        let l_inv = lower_inverse(l.as_ref());
        let w_tilde = (0..m)
            .map(|i| (i..m).map(|k| l_inv[(k, i)] * state.m_tilde[k]).sum())
            .collect();
        Ok(Whitened {
            l,
            l_inv,
            w_tilde,
            p: OnceLock::new(),
        })
    }

    /// `P = L⁻ᵀ (S̃ − I) L⁻¹ = Rᵀ R − K_uu⁻¹` with `R = L̃ᵀ L⁻¹` (for the `state` this was
    /// built from), formed once.
    pub(super) fn p(&self, state: &State) -> &Mat<f64> {
        self.p.get_or_init(|| {
            let r = product_with(state.l_tilde.transpose(), UPPER, self.l_inv.as_ref(), LOWER);
            let kuu_inv = product_with(self.l_inv.transpose(), UPPER, self.l_inv.as_ref(), LOWER);
            product(r.transpose(), r.as_ref()) - kuu_inv
        })
    }

    /// Marginals at the rows of `xb`: a block of fewer than `m` rows (a minibatch step) takes
    /// the whitened path, which needs no `m³` work; a larger one goes through `P`.
    pub(super) fn marginals(&self, state: &State, xb: MatRef<'_, f64>) -> BlockMarginals {
        self.marginals_by(state, xb, xb.nrows() < state.m())
    }

    /// Marginals at the rows of `xb` through the formed `P`, for prediction. This is the
    /// arithmetic of the model's linear-Gaussian form (`posterior/`), so the two prediction
    /// routes agree to rounding; where `K_uu` is ill-conditioned the whitened path rounds
    /// differently (by up to ~1e-5 relative in the latent std on a 40-row fit).
    pub(super) fn marginals_through_p(&self, state: &State, xb: MatRef<'_, f64>) -> BlockMarginals {
        self.marginals_by(state, xb, false)
    }

    fn marginals_by(&self, state: &State, xb: MatRef<'_, f64>, whitened: bool) -> BlockMarginals {
        let kuf = state.kernel.cross(state.z.as_ref(), xb);
        let (pk, a) = if whitened {
            // P K_uf = L⁻ᵀ (L̃ (L̃ᵀ A) − A), A = L⁻¹ K_uf: 2 m² b, no m³ work.
            let a = product_with(self.l_inv.as_ref(), LOWER, kuf.as_ref(), FULL);
            let lt = state.l_tilde.as_ref();
            let lta = product_with(lt.transpose(), UPPER, a.as_ref(), FULL);
            let sa = product_with(lt, LOWER, lta.as_ref(), FULL) - &a;
            let pk = product_with(self.l_inv.transpose(), UPPER, sa.as_ref(), FULL);
            (pk, Some(a))
        } else {
            (product(self.p(state).as_ref(), kuf.as_ref()), None)
        };
        let (mut mu, mut v) = (state.mean.eval(xb), state.kernel.diag(xb));
        for j in 0..xb.nrows() {
            let (k, pk) = (kuf.col(j), pk.col(j));
            mu[j] += (0..k.nrows()).map(|i| k[i] * self.w_tilde[i]).sum::<f64>();
            v[j] = (v[j] + (0..k.nrows()).map(|i| k[i] * pk[i]).sum::<f64>()).max(0.0);
        }
        BlockMarginals { kuf, pk, a, mu, v }
    }
}

/// The inverse of a lower-triangular `l` (zeros above the diagonal), by faer's recursive
/// triangular inversion (`m³/6` multiply-adds, a third of a solve against the identity).
pub(super) fn lower_inverse(l: MatRef<'_, f64>) -> Mat<f64> {
    let m = l.nrows();
    let mut inv = Mat::<f64>::zeros(m, m);
    invert_lower_triangular(inv.as_mut(), l, par_for(m * m * m / 6));
    lower(inv.as_ref())
}
