//! The linear-Gaussian form of the SVGP (either likelihood): support points `Z` (the inducing
//! inputs), `t = w̃ = L⁻ᵀ m̃` and `S = −P = K_uu⁻¹ − L⁻ᵀ S̃ L⁻¹`, with `S̃ = L̃ L̃ᵀ` the whitened
//! variational covariance (see [`state`](super::state)).

use std::borrow::Cow;

use super::Svgp;
use crate::kernels::Kernel;
use crate::means::Mean;
use crate::posterior::{LinearGaussian, LinearGaussianForm, Term};

impl LinearGaussianForm for Svgp {
    type Covariance = Kernel;
    type Mean = Mean;
    fn linear_gaussian(&self) -> LinearGaussian<'_, Kernel, Mean> {
        LinearGaussian::of_model(
            &self.state.kernel,
            Cow::Borrowed(&self.state.mean),
            self.state.z.as_ref(),
            &self.whitened.w_tilde,
            vec![Term::Dense {
                sign: -1.0,
                a: self.whitened.p(&self.state).as_ref(),
            }],
        )
    }
}
