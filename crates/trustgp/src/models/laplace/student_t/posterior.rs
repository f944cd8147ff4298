//! The linear-Gaussian form of the Student-t GP's Laplace posterior: support points `Z = X`,
//! `t = ∇ log p(y | f̂)` and `S = (K + W⁻¹)⁻¹`, written stably (W may be negative) with
//! `K = L Lᵀ` and `B = I + Lᵀ W L = L_B L_Bᵀ` as `S = K⁻¹ − L⁻ᵀ B⁻¹ L⁻¹`:
//! `kᵀ S k = ‖L⁻¹ k‖² − ‖L_B⁻¹ L⁻¹ k‖²`.

use std::borrow::Cow;

use super::StudentTGp;
use crate::kernels::Covariance;
use crate::means::PriorMean;
use crate::posterior::{LinearGaussian, Term};

impl<C: Covariance> StudentTGp<C> {
    /// The posterior in linear-Gaussian form under the prior mean `mean` (the model keeps
    /// only the prior mean's values at the training inputs, so the caller supplies the
    /// function; it must agree with those values for the posterior to be the fitted one).
    pub fn linear_gaussian<M: PriorMean>(&self, mean: M) -> LinearGaussian<'_, C, M> {
        let l = self.chol.l();
        LinearGaussian::of_model(
            &self.cov,
            Cow::Owned(mean),
            self.x.as_ref(),
            &self.grad_lik,
            vec![
                Term::Chain {
                    sign: 1.0,
                    project: None,
                    lower: vec![l],
                },
                Term::Chain {
                    sign: -1.0,
                    project: None,
                    lower: vec![l, self.lb.as_ref()],
                },
            ],
        )
    }
}
