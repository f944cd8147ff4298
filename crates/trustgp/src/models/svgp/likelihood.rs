//! The observation models of the SVGP: which [`Likelihood`] each [`SvgpLikelihood`] is, with
//! its parameter names, initial values and box. The expected log-likelihood under a Gaussian
//! marginal `q(f_j) = N(μ_j, v_j)`, the parametrisation and the noise a new observation adds
//! are the likelihood's own.
//!
//! Parameters come in two forms: *natural* values (what model files store and
//! [`Svgp::likelihood`](super::Svgp::likelihood) returns) and *unconstrained* ones (what the
//! optimiser moves, each within a box).

use super::SvgpLikelihood;
use crate::likelihoods::{Gaussian, Likelihood, StudentT};
use crate::models::ModelError;

impl SvgpLikelihood {
    /// Number of likelihood parameters: 1 (σ²) for Gaussian, 2 (ν, s²) for Student-t.
    pub fn n_params(self) -> usize {
        self.param_names().len()
    }

    /// Names of the natural parameters, in the order of
    /// [`Svgp::likelihood`](super::Svgp::likelihood).
    pub fn param_names(self) -> &'static [&'static str] {
        self.prototype().param_names()
    }

    /// The short name (`gaussian`, `student_t`).
    pub fn name(self) -> &'static str {
        self.prototype().name()
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
        if natural.len() != self.initial(1.0).len() {
            return Err(ModelError::Invalid(format!(
                "the {} likelihood has {} parameters ({}), got {}",
                self.name(),
                self.n_params(),
                self.param_names().join(", "),
                natural.len()
            )));
        }
        let lik: Box<dyn Likelihood> = match self {
            SvgpLikelihood::Gaussian => Box::new(Gaussian::new(natural[0]).map_err(invalid)?),
            SvgpLikelihood::StudentT => {
                Box::new(StudentT::learned_nu(natural[0], natural[1]).map_err(invalid)?)
            }
        };
        Ok(lik)
    }

    /// The likelihood at unconstrained parameters (any finite values map into the domain).
    pub(super) fn build_unconstrained(self, u: &[f64]) -> Result<Box<dyn Likelihood>, ModelError> {
        let mut lik = self.prototype();
        lik.set_unconstrained(u).map_err(invalid)?;
        Ok(lik)
    }

    /// The optimiser's box for the unconstrained parameters.
    pub(super) fn bounds(self) -> Vec<(f64, f64)> {
        self.prototype().bounds()
    }

    /// The likelihood at its initial parameters: what names, counts and boxes are read from.
    fn prototype(self) -> Box<dyn Likelihood> {
        self.build(&self.initial(1.0))
            .expect("the initial parameters of every likelihood are in its domain")
    }

    /// Initial natural parameters from the initial noise (σ², or the Student-t scale s² with
    /// the library's default ν).
    pub(super) fn initial(self, noise: f64) -> Vec<f64> {
        match self {
            SvgpLikelihood::Gaussian => vec![noise],
            SvgpLikelihood::StudentT => vec![crate::models::laplace::student_t::DEFAULT_NU, noise],
        }
    }
}

fn invalid(e: crate::likelihoods::LikelihoodError) -> ModelError {
    ModelError::Invalid(e.0)
}
