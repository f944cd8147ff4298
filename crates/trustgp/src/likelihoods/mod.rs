//! Observation models `p(y | f)` of a latent Gaussian process behind one [`Likelihood`] trait.
//!
//! A likelihood gives, per observation, `log p(y | f)` and its first three derivatives in the
//! latent value `f` (what the Laplace approximation needs), the derivatives of those in its
//! own parameters (held in unconstrained, log-type space, each within a box), the predictive
//! distribution of `y` when `f ~ N(μ, v)` and the expected log-likelihood
//! `E_{N(f; μ, v)}[log p(y | f)]` with its gradients in `μ`, `v` and the parameters (what a
//! variational ELBO needs). Closed forms are used where they exist (Gaussian, the quadratic IMQ
//! pseudo-likelihood); otherwise the shared 20-node Gauss–Hermite rule of [`quadrature`].
//!
//! * [`Gaussian`] — `N(y; f, σ²)`, parameter `log σ²`.
//! * [`StudentT`] — Student-t with scale `s²` and degrees of freedom `ν`, either fixed or learned.
//! * [`Imq`] — the robust IMQ pseudo-likelihood of RCGP, RCSVGP and RCaGP, built on the one
//!   home of the IMQ weight algebra, [`imq`].
//! * [`Bernoulli`] — binary classification, labels `±1`, probit or logit link.
//! * [`Softmax`] — the multi-class softmax over `C` latent values per observation (its own
//!   type: the trait above has one latent value per observation).

mod bernoulli;
mod gaussian;
pub mod imq;
mod imq_likelihood;
pub mod logistic_normal;
pub mod quadrature;
mod softmax;
mod student_t;
#[cfg(test)]
mod tests;

use crate::posterior::Marginals;
pub(crate) use bernoulli::inverse_mills;
pub use bernoulli::{Bernoulli, Link, LogitIntegral};
pub use gaussian::Gaussian;
pub use imq::{ImqPoint, ImqWeighting};
pub use imq_likelihood::Imq;
pub use softmax::Softmax;
pub use student_t::{ln_gamma_half_ratio, ln_gamma_half_ratio_derivative};

pub use student_t::{student_t_log_pdf, student_t_noise_variance, StudentT};

/// A likelihood's parameters out of their domain, or given in the wrong number.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct LikelihoodError(pub String);

/// `log p(y | f)` and its first three derivatives in `f`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatentDerivatives {
    /// `log p(y | f)`.
    pub value: f64,
    /// `∂/∂f`.
    pub d1: f64,
    /// `∂²/∂f²` (`−W` of the Laplace approximation).
    pub d2: f64,
    /// `∂³/∂f³`.
    pub d3: f64,
}

/// The derivatives of `log p(y | f)`, `∂/∂f` and `∂²/∂f²` in one unconstrained parameter.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ParamDerivatives {
    /// `∂ log p / ∂θ`.
    pub value: f64,
    /// `∂² log p / ∂f ∂θ`.
    pub d1: f64,
    /// `∂³ log p / ∂f² ∂θ`.
    pub d2: f64,
}

/// Where [`Likelihood::expected_log_lik`] writes its derivatives.
pub struct ExpectedGrad<'a> {
    /// `∂/∂μ_j`, one per observation (overwritten).
    pub d_mu: &'a mut [f64],
    /// `∂/∂v_j`, one per observation (overwritten).
    pub d_v: &'a mut [f64],
    /// `Σ_j ∂/∂θ` for every unconstrained parameter `θ` (added to).
    pub d_params: &'a mut [f64],
}

/// An observation model `p(y | f)` with scalar latent value `f` per observation.
pub trait Likelihood: Send + Sync {
    /// A short name (`gaussian`, `student_t`, `imq`).
    fn name(&self) -> &'static str;

    /// `log p(y | f)`.
    fn log_density(&self, y: f64, f: f64) -> f64;

    /// `log p(y | f)` and its first three derivatives in `f`.
    fn latent_derivatives(&self, y: f64, f: f64) -> LatentDerivatives;

    /// A curvature `≥ max(−∂²log p/∂f², 0)` for which a Newton step on the Laplace objective
    /// still ascends where the exact curvature would make it indefinite. The default is
    /// `max(W, 0)`; a likelihood with a tighter quadratic minoriser overrides it.
    fn newton_curvature(&self, y: f64, f: f64) -> f64 {
        (-self.latent_derivatives(y, f).d2).max(0.0)
    }

    /// Names of the natural parameters, in the order of [`natural`](Self::natural).
    fn param_names(&self) -> &'static [&'static str];

    /// The parameters in natural form (what model files store).
    fn natural(&self) -> Vec<f64>;

    /// The parameters in unconstrained form (what an optimiser moves), one per natural one.
    fn unconstrained(&self) -> Vec<f64>;

    /// Sets the parameters from unconstrained values.
    ///
    /// # Errors
    /// A wrong count, or values that map outside the domain (non-finite, or underflowing).
    fn set_unconstrained(&mut self, u: &[f64]) -> Result<(), LikelihoodError>;

    /// The optimiser's box for each unconstrained parameter.
    fn bounds(&self) -> Vec<(f64, f64)>;

    /// The derivatives of `log p(y | f)`, `∂/∂f` and `∂²/∂f²` in every unconstrained parameter,
    /// written to `out` (one entry per parameter).
    fn param_derivatives(&self, y: f64, f: f64, out: &mut [ParamDerivatives]);

    /// Mean and variance of a new observation `y` when `f ~ N(mu, v)` (infinite variance when
    /// the observation noise has none).
    fn predict(&self, mu: f64, v: f64) -> (f64, f64);

    /// The predictive of new observations at test points whose latent marginals are `latent`
    /// ([`Likelihood::predict`] applied to each): the one place where a model's observation
    /// noise enters a prediction of `y`.
    fn predict_marginals(&self, latent: &Marginals) -> Marginals {
        let (mean, var) = latent
            .mean
            .iter()
            .zip(&latent.var)
            .map(|(&mu, &v)| self.predict(mu, v))
            .unzip();
        Marginals { mean, var }
    }

    /// `log ∫ p(y | f) N(f; mu, v) df`; by default by Gauss–Hermite quadrature.
    fn log_predictive_density(&self, y: f64, mu: f64, v: f64) -> f64 {
        quadrature::log_predictive_density(self, y, mu, v)
    }

    /// `Σ_j E_{N(f; μ_j, v_j)}[log p(y_j | f)]`, with the derivatives written to `grad` if given;
    /// by default by Gauss–Hermite quadrature (see [`quadrature::expected_log_lik`]).
    fn expected_log_lik(
        &self,
        y: &[f64],
        mu: &[f64],
        v: &[f64],
        grad: Option<ExpectedGrad<'_>>,
    ) -> f64 {
        quadrature::expected_log_lik(self, y, mu, v, grad)
    }
}

/// Checks that a variance parameter is a positive finite number.
pub(crate) fn check_variance(name: &str, value: f64) -> Result<f64, LikelihoodError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(LikelihoodError(format!(
            "{name} must be a positive finite variance, got {value}"
        )))
    }
}

/// Checks the number of unconstrained parameters given to `set_unconstrained`.
fn check_count(name: &str, expected: usize, u: &[f64]) -> Result<(), LikelihoodError> {
    if u.len() == expected {
        Ok(())
    } else {
        Err(LikelihoodError(format!(
            "the {name} likelihood has {expected} parameters, got {}",
            u.len()
        )))
    }
}
