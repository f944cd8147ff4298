//! The observation models of the SVGP behind one interface: the expected log-likelihood under
//! a Gaussian marginal `q(f_j) = N(μ_j, v_j)` with its derivatives, the parametrisation, and
//! the noise a new observation adds.
//!
//! Parameters come in two forms: *natural* values (what model files store and
//! [`Svgp::likelihood`](super::Svgp::likelihood) returns) and *unconstrained* ones (what the
//! optimiser moves, each within a box).

use super::gaussian::Gaussian;
use super::student_t::StudentT;
use super::SvgpLikelihood;
use crate::models::ModelError;

/// Where [`Likelihood::expected_log_lik`] writes its derivatives.
pub(super) struct ExpectedGrad<'a> {
    /// `∂/∂μ_j`, one per point (overwritten).
    pub(super) d_mu: &'a mut [f64],
    /// `∂/∂v_j`, one per point (overwritten).
    pub(super) d_v: &'a mut [f64],
    /// `Σ_j ∂/∂u` for every unconstrained parameter `u` (added to).
    pub(super) d_params: &'a mut [f64],
}

/// An observation model `p(y | f)` of the SVGP.
pub(super) trait Likelihood {
    /// `Σ_j E_{N(f; μ_j, v_j)}[log p(y_j | f)]`, with the derivatives written to `grad` if given.
    fn expected_log_lik(
        &self,
        y: &[f64],
        mu: &[f64],
        v: &[f64],
        grad: Option<ExpectedGrad<'_>>,
    ) -> f64;

    /// The variance a new observation adds to the latent variance.
    fn predictive_noise(&self) -> f64;

    /// The parameters in natural form.
    fn natural(&self) -> Vec<f64>;

    /// The parameters in unconstrained form.
    fn unconstrained(&self) -> Vec<f64>;
}

impl SvgpLikelihood {
    /// Number of likelihood parameters: 1 (σ²) for Gaussian, 2 (ν, s²) for Student-t.
    pub fn n_params(self) -> usize {
        self.param_names().len()
    }

    /// Names of the natural parameters, in the order of
    /// [`Svgp::likelihood`](super::Svgp::likelihood).
    pub fn param_names(self) -> &'static [&'static str] {
        match self {
            SvgpLikelihood::Gaussian => &["noise"],
            SvgpLikelihood::StudentT => &["nu", "scale2"],
        }
    }

    /// The short name (`gaussian`, `student_t`).
    pub fn name(self) -> &'static str {
        match self {
            SvgpLikelihood::Gaussian => "gaussian",
            SvgpLikelihood::StudentT => "student_t",
        }
    }

    /// The likelihood named by [`SvgpLikelihood::name`], if any.
    pub fn from_name(name: &str) -> Option<SvgpLikelihood> {
        [SvgpLikelihood::Gaussian, SvgpLikelihood::StudentT]
            .into_iter()
            .find(|l| l.name() == name)
    }

    /// The likelihood at natural parameters.
    ///
    /// # Errors
    /// A wrong count, or a value out of its domain (σ², s² positive and finite; ν > 2 finite).
    pub(super) fn build(self, natural: &[f64]) -> Result<Box<dyn Likelihood>, ModelError> {
        if natural.len() != self.n_params() {
            return Err(ModelError::Invalid(format!(
                "the {} likelihood has {} parameters ({}), got {}",
                self.name(),
                self.n_params(),
                self.param_names().join(", "),
                natural.len()
            )));
        }
        Ok(match self {
            SvgpLikelihood::Gaussian => Box::new(Gaussian::new(natural[0])?),
            SvgpLikelihood::StudentT => Box::new(StudentT::new(natural[0], natural[1])?),
        })
    }

    /// The likelihood at unconstrained parameters (any finite values map into the domain).
    pub(super) fn build_unconstrained(self, u: &[f64]) -> Result<Box<dyn Likelihood>, ModelError> {
        let natural = match self {
            SvgpLikelihood::Gaussian => Gaussian::natural_from(u),
            SvgpLikelihood::StudentT => StudentT::natural_from(u),
        };
        self.build(&natural)
    }

    /// The optimiser's box for the unconstrained parameters.
    pub(super) fn bounds(self) -> Vec<(f64, f64)> {
        match self {
            SvgpLikelihood::Gaussian => Gaussian::bounds(),
            SvgpLikelihood::StudentT => StudentT::bounds(),
        }
    }

    /// Initial natural parameters from the initial noise (σ², or the Student-t scale s² with
    /// the library's default ν).
    pub(super) fn initial(self, noise: f64) -> Vec<f64> {
        match self {
            SvgpLikelihood::Gaussian => vec![noise],
            SvgpLikelihood::StudentT => vec![crate::models::student_t::DEFAULT_NU, noise],
        }
    }
}

/// Checks that a variance parameter is a positive finite number.
pub(super) fn check_variance(name: &str, value: f64) -> Result<f64, ModelError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(ModelError::Invalid(format!(
            "{name} must be a positive finite variance, got {value}"
        )))
    }
}
