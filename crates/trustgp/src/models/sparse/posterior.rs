//! The linear-Gaussian form of SGPR and RCSVGP: support points `Z` (the inducing inputs),
//! `t = α` and `S = K_uu⁻¹ − (K_uu + K_uf P K_fu)⁻¹`, the second term through `L_B`:
//! `kᵀ S k = ‖L⁻¹ k‖² − ‖L_B⁻¹ L⁻¹ k‖²` (see [`predict`](super::predict)).

use std::borrow::Cow;

use faer::MatRef;

use super::collapsed::Factors;
use super::SparseGp;
use crate::kernels::Kernel;
use crate::means::Mean;
use crate::posterior::{LinearGaussian, LinearGaussianForm, Term};

impl LinearGaussianForm for SparseGp {
    type Covariance = Kernel;
    type Mean = Mean;
    fn linear_gaussian(&self) -> LinearGaussian<'_, Kernel, Mean> {
        self.factors
            .linear_gaussian(&self.kernel, &self.mean, self.z.as_ref())
    }
}

impl Factors {
    /// The form over inducing inputs `z` (shared with the other models whose posterior is a
    /// collapsed core's, such as relevance pursuit).
    pub(in crate::models) fn linear_gaussian<'a>(
        &'a self,
        kernel: &'a Kernel,
        mean: &'a Mean,
        z: MatRef<'a, f64>,
    ) -> LinearGaussian<'a, Kernel, Mean> {
        let l_uu = self.l_uu.l();
        LinearGaussian::of_model(
            kernel,
            Cow::Borrowed(mean),
            z,
            &self.alpha,
            vec![
                Term::Chain {
                    sign: 1.0,
                    project: None,
                    lower: vec![l_uu],
                },
                Term::Chain {
                    sign: -1.0,
                    project: None,
                    lower: vec![l_uu, self.l_b.l()],
                },
            ],
        )
    }
}
