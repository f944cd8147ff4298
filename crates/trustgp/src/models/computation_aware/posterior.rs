//! The linear-Gaussian form of CaGP and RCaGP (the action form of `rcagp.md` §2.4): support
//! points `Z = X`, `t = ṽ = S a` and `S_post = S (SᵀK̂S)⁻¹ Sᵀ = S L⁻ᵀ L⁻¹ Sᵀ` over the action
//! matrix `S` (block or inducing-point actions alike), so `kᵀ S_post k = ‖L⁻¹ Sᵀ k‖²` (see
//! [`predict`](super::predict)).

use std::borrow::Cow;

use super::CaGp;
use crate::kernels::Kernel;
use crate::means::Mean;
use crate::posterior::{LinearGaussian, LinearGaussianForm, Term};

impl LinearGaussianForm for CaGp {
    type Covariance = Kernel;
    type Mean = Mean;
    fn linear_gaussian(&self) -> LinearGaussian<'_, Kernel, Mean> {
        LinearGaussian::of_model(
            &self.state.kernel,
            Cow::Owned(Mean::Constant { c: self.state.mean }),
            self.x.as_ref(),
            &self.v,
            vec![Term::Chain {
                sign: 1.0,
                project: Some(self.s.as_ref()),
                lower: vec![self.chol.l()],
            }],
        )
    }
}
