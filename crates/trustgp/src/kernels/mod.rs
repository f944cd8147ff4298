//! Covariance kernels: base kernels, their sums and products, a textual
//! expression language, log-space hyperparameters and fast gradient contractions.
//!
//! ```text
//! expr   := term ('+' term)*
//! term   := factor ('*' factor)*
//! factor := base | '(' expr ')'
//! base   := name ['(' arg (',' arg)* ')']
//! arg    := key '=' value | value        (bare value: const only, = var)
//! value  := number | '[' number (',' number)* ']'
//! ```
//!
//! Inputs are n×d matrices with one observation per row.

mod base;
mod composite;
mod covariance;
mod engine;
mod error;
mod eval;
mod expr;
mod hierarchical;
pub(crate) mod multi_output;
mod pair;
mod params;
mod print;
mod radial;
mod sandwich;
mod simd;
mod spectral;
#[cfg(test)]
mod tests;

use faer::{Mat, MatRef};

use crate::linalg::mirror_lower;

pub use base::{BaseKernel, BaseKind, Lengthscale};
pub use composite::ProductVariance;
pub(crate) use covariance::dense_inverse_plus_diagonal;
pub use covariance::{Covariance, InverseDerivative, InversePlusDiagonal};
pub use error::KernelError;
pub use expr::{MAX_EXPR_BASES, MAX_EXPR_DEPTH};
pub use hierarchical::HierarchicalKernel;
pub use multi_output::{Coregion, LmcTerm, MultiOutputKernel, A_BOUND_FACTOR};
pub(crate) use radial::{Matern12, Matern32, Matern52, Radial, RationalQuadratic, SquaredExp};
pub use sandwich::InverseSandwich;
pub use spectral::{PriorSample, SpectralKernel};

/// A covariance kernel: a base kernel, or a sum or elementwise product of kernels.
///
/// Build kernels with [`Kernel::parse`], [`Kernel::sum`] and [`Kernel::product`], which
/// give the canonical form (flattened, identifiability rule applied) that printing
/// round-trips exactly.
#[derive(Clone, Debug, PartialEq)]
pub enum Kernel {
    /// A single base kernel.
    Base(BaseKernel),
    /// Elementwise sum of the terms.
    Sum(Vec<Kernel>),
    /// Elementwise product of the factors, and which of them carry a learnable variance.
    Product(Vec<Kernel>, ProductVariance),
}

/// What a kernel is evaluated on; one recursive evaluator serves all three so that
/// the sum and product rules are written once.
#[derive(Clone, Copy)]
pub(crate) enum Target<'a> {
    /// K(x, x), where white noise sits on the diagonal.
    Symmetric(MatRef<'a, f64>),
    /// K(x1, x2) between two sets, where white noise is 0.
    Cross(MatRef<'a, f64>, MatRef<'a, f64>),
    /// diag K(x, x) as an n×1 matrix.
    Diag(MatRef<'a, f64>),
}

impl<'a> Target<'a> {
    /// The input whose rows index the result's rows.
    fn first(self) -> MatRef<'a, f64> {
        match self {
            Target::Symmetric(x) | Target::Cross(x, _) | Target::Diag(x) => x,
        }
    }

    /// Shape of the result.
    fn shape(self) -> (usize, usize) {
        match self {
            Target::Symmetric(x) => (x.nrows(), x.nrows()),
            Target::Cross(x1, x2) => (x1.nrows(), x2.nrows()),
            Target::Diag(x) => (x.nrows(), 1),
        }
    }
}

impl Kernel {
    /// Validates the kernel against the data (dims in range, ARD list lengths) and
    /// fills data-driven defaults: an omitted `ls` becomes ARD with
    /// ℓ_d = std_d(active column)·√(#active dims) (population std, 1 when the std is 0
    /// or not finite). per's period default stays 1.
    pub fn initialize(&mut self, x: MatRef<'_, f64>) -> Result<(), KernelError> {
        self.bases_mut()
            .into_iter()
            .try_for_each(|b| b.initialize(x))
    }

    /// Whether every lengthscale has a value (no ARD list left for `initialize`).
    pub fn is_initialized(&self) -> bool {
        self.bases().iter().all(|b| b.is_initialized())
    }

    /// Checks that the kernel fits data with `ncols` columns, without changing it.
    pub fn validate(&self, ncols: usize) -> Result<(), KernelError> {
        self.bases().iter().try_for_each(|b| b.validate(ncols))
    }

    /// Whether any term is white noise (which depends on row identity, so that
    /// `cross(x, x)` differs from `matrix(x)` on the diagonal).
    pub(crate) fn has_white(&self) -> bool {
        self.bases().iter().any(|b| b.kind() == BaseKind::White)
    }

    /// The n×n covariance matrix K(x, x) (full, symmetric).
    ///
    /// # Panics
    /// If the kernel does not fit `x` (see [`Kernel::validate`]) or is not initialised.
    pub fn matrix(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        let mut k = self.matrix_lower(x);
        mirror_lower(k.as_mut());
        k
    }

    /// The lower triangle and diagonal of [`Kernel::matrix`], with zeros above: all that a
    /// Cholesky factorisation reads, without the cost of mirroring.
    ///
    /// # Panics
    /// As for [`Kernel::matrix`].
    pub fn matrix_lower(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        self.evaluate(Target::Symmetric(x), 1.0)
    }

    /// The n1×n2 cross-covariance K(x1, x2); white noise contributes 0 here.
    ///
    /// # Panics
    /// If `x1` and `x2` have different column counts, or as for [`Kernel::matrix`].
    pub fn cross(&self, x1: MatRef<'_, f64>, x2: MatRef<'_, f64>) -> Mat<f64> {
        assert_eq!(
            x1.ncols(),
            x2.ncols(),
            "cross: inputs need the same number of columns"
        );
        self.evaluate(Target::Cross(x1, x2), 1.0)
    }

    /// The diagonal of [`Kernel::matrix`], without forming the matrix.
    ///
    /// # Panics
    /// As for [`Kernel::matrix`].
    pub fn diag(&self, x: MatRef<'_, f64>) -> Vec<f64> {
        let d = self.evaluate(Target::Diag(x), 1.0);
        (0..d.nrows()).map(|i| d[(i, 0)]).collect()
    }

    /// Adds Σ_{a,b} W_ab ∂K_ab/∂(log θ_j) to `out[j]` for every hyperparameter, where
    /// K = matrix(x). W is symmetric and only its lower triangle (a ≥ b) is read.
    ///
    /// # Panics
    /// If `out.len() != self.n_params()`, `w` is not n×n, or as for [`Kernel::matrix`].
    pub fn grad_contract(&self, x: MatRef<'_, f64>, w: MatRef<'_, f64>, out: &mut [f64]) {
        assert_eq!(
            out.len(),
            self.n_params(),
            "grad_contract: out needs one slot per parameter"
        );
        assert!(
            w.nrows() == x.nrows() && w.ncols() == x.nrows(),
            "grad_contract: W must be n×n"
        );
        self.contract_scaled(Target::Symmetric(x), w, 1.0, out, None);
    }

    /// Adds Σ_{a,b} W_ab ∂K_ab/∂(log θ_j) to `out[j]` for every hyperparameter, where
    /// K = cross(x1, x2) and W is a general n1×n2 matrix.
    ///
    /// # Panics
    /// If `out.len() != self.n_params()`, `w` is not n1×n2, or as for [`Kernel::cross`].
    pub fn grad_contract_cross(
        &self,
        x1: MatRef<'_, f64>,
        x2: MatRef<'_, f64>,
        w: MatRef<'_, f64>,
        out: &mut [f64],
    ) {
        self.check_cross_contraction(x1, x2, w, out, "grad_contract_cross");
        self.contract_scaled(Target::Cross(x1, x2), w, 1.0, out, None);
    }

    /// [`Kernel::grad_contract_cross`] that also returns [`Kernel::cross`]`(x1, x2)`, taken
    /// from the same pass over the pairs instead of evaluating the kernel a second time.
    ///
    /// # Panics
    /// As for [`Kernel::grad_contract_cross`].
    pub fn cross_and_grad_contract(
        &self,
        x1: MatRef<'_, f64>,
        x2: MatRef<'_, f64>,
        w: MatRef<'_, f64>,
        out: &mut [f64],
    ) -> Mat<f64> {
        self.check_cross_contraction(x1, x2, w, out, "cross_and_grad_contract");
        let mut values = Mat::zeros(x1.nrows(), x2.nrows());
        self.contract_scaled(Target::Cross(x1, x2), w, 1.0, out, Some(&mut values));
        values
    }

    /// Panics unless `out` has one slot per parameter, `w` is n1×n2 and the inputs have the
    /// same columns (a programming error of the caller, named by `what`).
    fn check_cross_contraction(
        &self,
        x1: MatRef<'_, f64>,
        x2: MatRef<'_, f64>,
        w: MatRef<'_, f64>,
        out: &[f64],
        what: &str,
    ) {
        assert_eq!(
            out.len(),
            self.n_params(),
            "{what}: out needs one slot per parameter"
        );
        assert!(
            w.nrows() == x1.nrows() && w.ncols() == x2.nrows() && x1.ncols() == x2.ncols(),
            "{what}: W must be n1×n2 and the inputs need the same columns"
        );
    }

    /// Adds Σ_a w_a ∂K_aa/∂(log θ_j) to `out[j]` for every hyperparameter, where K_aa is
    /// [`Kernel::diag`] of `x`: the gradient of a weighted sum of prior variances.
    ///
    /// # Panics
    /// If `out.len() != self.n_params()`, `w.len() != x.nrows()`, or as for [`Kernel::diag`].
    pub fn grad_contract_diag(&self, x: MatRef<'_, f64>, w: &[f64], out: &mut [f64]) {
        assert_eq!(
            out.len(),
            self.n_params(),
            "grad_contract_diag: out needs one slot per parameter"
        );
        assert_eq!(w.len(), x.nrows(), "grad_contract_diag: one weight per row");
        let wm = MatRef::from_column_major_slice(w, w.len(), 1);
        self.contract_scaled(Target::Diag(x), wm, 1.0, out, None);
    }

    /// G[a, c] = Σ_b W_ab ∂k(x1_a, x2_b)/∂x1_{a,c}: the gradient of Σ W∘cross(x1, x2) with
    /// respect to the first set of inputs (n1×d). The gradient of Σ W∘matrix(z) with
    /// respect to z, for a symmetric W, is twice this with x1 = x2 = z.
    ///
    /// # Panics
    /// If `w` is not n1×n2, or as for [`Kernel::cross`].
    pub fn grad_inputs_cross(
        &self,
        x1: MatRef<'_, f64>,
        x2: MatRef<'_, f64>,
        w: MatRef<'_, f64>,
    ) -> Mat<f64> {
        assert_inputs_cross_shapes(x1, x2, w);
        self.inputs_contract(x1, x2, w, 1.0)
    }

    /// Σ_b W_ab ∂(s·k(x1_a, x2_b))/∂x1_a for every row a.
    fn inputs_contract(
        &self,
        x1: MatRef<'_, f64>,
        x2: MatRef<'_, f64>,
        w: MatRef<'_, f64>,
        s: f64,
    ) -> Mat<f64> {
        match self {
            Kernel::Base(b) => b.inputs_contract(x1, x2, w, s),
            Kernel::Sum(terms) => composite::sum_inputs_contract(terms, x1, x2, w, s),
            Kernel::Product(factors, _) => {
                composite::product_inputs_contract(factors, x1, x2, w, s)
            }
        }
    }

    /// G[b, c] = ∂k(x*, x_b)/∂x*_c for each row b of `x` (n×d). Where k is not
    /// differentiable (matern12 at r = 0) the one-sided limit 0 is used.
    ///
    /// # Panics
    /// If `xstar.len() != x.ncols()`, or as for [`Kernel::matrix`].
    pub fn grad_x(&self, xstar: &[f64], x: MatRef<'_, f64>) -> Mat<f64> {
        assert_eq!(
            xstar.len(),
            x.ncols(),
            "grad_x: x* needs one entry per column of x"
        );
        match self {
            Kernel::Base(b) => b.grad_x(xstar, x),
            Kernel::Sum(terms) => composite::sum_grad_x(terms, xstar, x),
            Kernel::Product(factors, _) => composite::product_grad_x(factors, xstar, x),
        }
    }

    /// s·K on `target` (only the lower triangle, zeros above, for a symmetric target).
    fn evaluate(&self, target: Target<'_>, s: f64) -> Mat<f64> {
        match self {
            Kernel::Base(b) => b.evaluate(target, s),
            Kernel::Sum(terms) => composite::sum_evaluate(terms, target, s),
            Kernel::Product(factors, _) => composite::product_evaluate(factors, target, s),
        }
    }

    /// Adds Σ W∘∂(sK)/∂log θ to `out` and returns Σ W∘(sK), K evaluated on `target`;
    /// `values` (cross targets only) receives sK added to it.
    fn contract_scaled(
        &self,
        target: Target<'_>,
        w: MatRef<'_, f64>,
        s: f64,
        out: &mut [f64],
        values: Option<&mut Mat<f64>>,
    ) -> f64 {
        match self {
            Kernel::Base(b) => b.contract_scaled(target, w, s, out, values),
            Kernel::Sum(terms) => composite::sum_contract(terms, target, w, s, out, values),
            Kernel::Product(factors, _) => {
                composite::product_contract(factors, target, w, s, out, values)
            }
        }
    }

    /// The base kernels in depth-first order.
    fn bases(&self) -> Vec<&BaseKernel> {
        match self {
            Kernel::Base(b) => vec![b],
            Kernel::Sum(ks) | Kernel::Product(ks, _) => ks.iter().flat_map(Kernel::bases).collect(),
        }
    }

    /// The base kernels in depth-first order, mutably.
    fn bases_mut(&mut self) -> Vec<&mut BaseKernel> {
        match self {
            Kernel::Base(b) => vec![b],
            Kernel::Sum(ks) | Kernel::Product(ks, _) => {
                ks.iter_mut().flat_map(Kernel::bases_mut).collect()
            }
        }
    }
}

/// The shapes [`Kernel::grad_inputs_cross`] and the multi-output one need: `w` is n1×n2 and
/// both input sets have the same columns.
///
/// # Panics
/// If they do not.
pub(crate) fn assert_inputs_cross_shapes(
    x1: MatRef<'_, f64>,
    x2: MatRef<'_, f64>,
    w: MatRef<'_, f64>,
) {
    assert!(
        w.nrows() == x1.nrows() && w.ncols() == x2.nrows() && x1.ncols() == x2.ncols(),
        "grad_inputs_cross: W must be n1×n2 and the inputs need the same columns"
    );
}
