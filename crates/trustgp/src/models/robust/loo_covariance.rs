//! What the weighted leave-one-out objective needs of a covariance beyond [`Covariance`]:
//! `(K + diag(d))⁻¹`, the gradient contraction with the sandwich `P A P`, and the derivatives
//! of `P` for its Gauss–Newton matrix. Dense defaults serve any covariance; a multi-output
//! kernel with structure (a single-term ICM on homotopic data) does them faster.

use faer::MatRef;

use crate::kernels::{
    dense_inverse_plus_diagonal, Covariance, InverseDerivative, InversePlusDiagonal,
    InverseSandwich, Kernel, MultiOutputKernel,
};
use crate::linalg::{LinalgError, Parallelism};

/// A [`Covariance`] the weighted LOO-CV objective can use, with the inverse and its
/// derivatives that objective needs.
pub trait LooCovariance: Covariance {
    /// [`Covariance::grad_contract`] with `W` the [`InverseSandwich`] `w` (whose `P` was built
    /// from this covariance at `x`). By default `W` is formed (one `n³` product); a covariance
    /// with structure may contract it without forming it.
    fn grad_contract_sandwich(
        &self,
        x: MatRef<'_, f64>,
        w: &InverseSandwich<'_>,
        par: Parallelism,
        out: &mut [f64],
    ) {
        self.grad_contract(x, w.lower(par).as_ref(), out);
    }
    /// `(K + diag(d))⁻¹` in full with the diagonal of `K (K + diag(d))⁻¹`, `K` being
    /// [`Covariance::matrix`] at `x`; `what` names the matrix in errors. By default a
    /// Cholesky factorisation of the dense matrix (jitter only if it fails, see
    /// [`Cholesky`](crate::linalg::Cholesky)) and its inverse; a covariance with structure may
    /// invert it faster, without forming `K`.
    fn inverse_plus_diagonal(
        &self,
        x: MatRef<'_, f64>,
        d: &[f64],
        what: &str,
        par: Parallelism,
    ) -> Result<InversePlusDiagonal, LinalgError> {
        dense_inverse_plus_diagonal(&self.matrix(x), d, what, par)
    }
    /// For every parameter `θ_k`: the diagonal of `P ∂K/∂θ_k P` and the product
    /// `P ∂K/∂θ_k P V`, where `P = (K + diag(d))⁻¹` was built from this covariance at `x` and
    /// `u = P v` (both n × q). What a Gauss–Newton matrix of a leave-one-out objective needs;
    /// `None` (the default) where the covariance has no way to them cheaper than one `n³`
    /// product per parameter, and callers then go without.
    fn inverse_derivatives(
        &self,
        _x: MatRef<'_, f64>,
        _p: MatRef<'_, f64>,
        _d: &[f64],
        _v: MatRef<'_, f64>,
        _u: MatRef<'_, f64>,
        _par: Parallelism,
    ) -> Option<Vec<InverseDerivative>> {
        None
    }
}

// A single-output kernel has no structure to exploit: the dense defaults.
impl LooCovariance for Kernel {}

impl LooCovariance for MultiOutputKernel {
    // A single-term ICM on homotopic data folds the sandwich onto its Kronecker factors
    // (see `homotopic`): T times fewer flops than forming it.
    fn grad_contract_sandwich(
        &self,
        x: MatRef<'_, f64>,
        w: &InverseSandwich<'_>,
        par: Parallelism,
        out: &mut [f64],
    ) {
        if !crate::kernels::multi_output::homotopic::contract(self, x, w, par, out) {
            self.grad_contract(x, w.lower(par).as_ref(), out);
        }
    }

    // Two outputs of a single-term ICM on homotopic data invert by block elimination
    // (see `homotopic`): 5m³ instead of 8m³ flops.
    fn inverse_plus_diagonal(
        &self,
        x: MatRef<'_, f64>,
        d: &[f64],
        what: &str,
        par: Parallelism,
    ) -> Result<InversePlusDiagonal, LinalgError> {
        match crate::kernels::multi_output::homotopic::inverse_plus_diagonal(self, x, d, par) {
            Some(inv) => Ok(inv),
            None => dense_inverse_plus_diagonal(&self.matrix(x), d, what, par),
        }
    }

    // A single-term ICM on homotopic data in layout order: through `B⁻¹` for the
    // coregionalisation and one m × m × n product per output for each kernel parameter
    // (see `inverse_derivatives`).
    fn inverse_derivatives(
        &self,
        x: MatRef<'_, f64>,
        p: MatRef<'_, f64>,
        d: &[f64],
        v: MatRef<'_, f64>,
        u: MatRef<'_, f64>,
        par: Parallelism,
    ) -> Option<Vec<InverseDerivative>> {
        crate::kernels::multi_output::inverse_derivatives::icm(self, x, p, d, v, u, par)
    }
}
