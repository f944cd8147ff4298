//! The joint posterior of a batch with its gradients in the batch's inputs.
//!
//! For the rows `x_1 … x_m` of `[fixed; free]` the joint covariance is
//! `C_ij = k(x_i, x_j) − k(x_i, Z)ᵀ S k(Z, x_j)`. Moving the free row `x_a` changes only
//! row and column `a` of `C`:
//!
//! ```text
//! ∂C/∂x_{a,c} = u e_aᵀ + e_a uᵀ,   u_j = ∂₁k(x_a, x_j)/∂x_{a,c} − Σ_b ∂k(x_a, z_b)/∂x_{a,c} [S k(Z, x_j)]_b,
//! ```
//!
//! the derivative in the first argument only (at `j = a` the two terms add up to the full
//! derivative of the variance, `2 ∂₁k(x, x)` for a symmetric `k`). Both parts of every `u` are
//! one [`Covariance::grad_inputs_cross`] contraction each, over the free rows repeated once per
//! joint row: the same kernel input-gradient code as the marginal gradients.

use faer::{Mat, MatRef};

use super::LinearGaussian;
use crate::kernels::Covariance;
use crate::means::PriorMean;
use crate::models::ModelError;
use crate::posterior::JointGradients;

impl<C: Covariance, M: PriorMean> LinearGaussian<'_, C, M> {
    /// The joint posterior at the rows of `fixed` followed by the rows of `free`, with its
    /// gradients with respect to each row of `free` (see [`JointGradients`]).
    ///
    /// # Errors
    /// [`ModelError::Invalid`] if `fixed` and `free` have different widths; otherwise as for
    /// [`LinearGaussian::marginals`] on either.
    pub fn joint_gradients(
        &self,
        fixed: MatRef<'_, f64>,
        free: MatRef<'_, f64>,
    ) -> Result<JointGradients, ModelError> {
        if fixed.ncols() != free.ncols() {
            return Err(ModelError::Invalid(format!(
                "joint gradients: the fixed rows have {} columns but the free rows {}",
                fixed.ncols(),
                free.ncols()
            )));
        }
        self.check(fixed)?;
        self.check(free)?;
        let (p, q, d) = (fixed.nrows(), free.nrows(), free.ncols());
        let m = p + q;
        let xs = Mat::from_fn(m, d, |i, c| {
            if i < p {
                fixed[(i, c)]
            } else {
                free[(i - p, c)]
            }
        });
        let kz = self.covariance.cross(self.support, xs.as_ref());
        let joint = self.joint_of(xs.as_ref(), kz.as_ref());
        let mean = self.mean_gradient(free);
        // Row a·m + j of `repeated` is free row a, paired with joint row j.
        let repeated = Mat::from_fn(q * m, d, |r, c| free[(r / m, c)]);
        let pick = Mat::from_fn(q * m, m, |r, j| if r % m == j { 1.0 } else { 0.0 });
        let prior =
            self.covariance
                .grad_inputs_cross(repeated.as_ref(), xs.as_ref(), pick.as_ref());
        let sk = self.apply_s(kz.as_ref());
        let w = Mat::from_fn(q * m, self.support.nrows(), |r, b| sk[(b, r % m)]);
        let posterior =
            self.covariance
                .grad_inputs_cross(repeated.as_ref(), self.support, w.as_ref());
        let cov = (0..q)
            .map(|a| {
                Mat::from_fn(m, d, |j, c| {
                    prior[(a * m + j, c)] - posterior[(a * m + j, c)]
                })
            })
            .collect();
        Ok(JointGradients {
            fixed: p,
            joint,
            mean,
            cov,
        })
    }
}
