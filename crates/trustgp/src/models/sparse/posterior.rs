//! The linear-Gaussian form of SGPR and RCSVGP: support points `Z` (the inducing inputs),
//! `t = α` and `S = K_uu⁻¹ − (K_uu + K_uf P K_fu)⁻¹`, the second term through `L_B`:
//! `kᵀ S k = ‖L⁻¹ k‖² − ‖L_B⁻¹ L⁻¹ k‖²` (see [`predict`](super::predict)).

use std::borrow::Cow;

use super::SparseGp;
use crate::kernels::Kernel;
use crate::means::Mean;
use crate::posterior::{LinearGaussian, LinearGaussianForm, Term};

impl LinearGaussianForm for SparseGp {
    type Covariance = Kernel;
    type Mean = Mean;
    fn linear_gaussian(&self) -> LinearGaussian<'_, Kernel, Mean> {
        let l_uu = self.factors.l_uu.l();
        LinearGaussian::of_model(
            &self.kernel,
            Cow::Borrowed(&self.mean),
            self.z.as_ref(),
            &self.factors.alpha,
            vec![
                Term::Chain {
                    sign: 1.0,
                    project: None,
                    lower: vec![l_uu],
                },
                Term::Chain {
                    sign: -1.0,
                    project: None,
                    lower: vec![l_uu, self.factors.l_b.l()],
                },
            ],
        )
    }
}
