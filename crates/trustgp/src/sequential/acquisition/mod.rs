//! Acquisition functions: how much evaluating the objective at a candidate input is worth,
//! judged from a fitted model's [`Posterior`], with gradients in the input for the optimiser.
//!
//! Convention: the objective is **maximised**. Each analytic acquisition is a function of the
//! posterior marginal at a candidate, a [`MarginalUtility`] of the mean `μ` and the standard
//! deviation `σ`; [`Analytic`] pairs it with a posterior and applies the chain rule through
//! [`Posterior::marginal_gradients`], so every acquisition works for every model.
//!
//! * [`Improvement`] over an incumbent `f*`, with `z = (μ − f*)/σ` and `h(z) = φ(z) + zΦ(z)`
//!   ([`ImprovementKind`]): expected improvement `σ h(z)`; LogEI `ln(σ h(z))`, finite and
//!   accurate far below the incumbent where EI underflows (Ament et al., 2023); probability of
//!   improvement `Φ(z)` and its logarithm `ln Φ(z)`;
//! * [`UpperConfidenceBound`] `μ + √β σ`;
//! * [`BatchImprovement`]: qEI and qLogEI of a batch of `q` points next to pending points, by
//!   Monte Carlo over quasi-random base samples ([`sobol_normal`], [`normal::quantile`]) fixed
//!   per acquisition, with gradients through the Cholesky factor of the joint posterior
//!   ([`Posterior::joint_gradients`]);
//! * Thompson sampling on a candidate set ([`thompson_sample`]: exact joint samples up to
//!   [`EXACT_THOMPSON_MAX`] candidates, pathwise samples beyond) around the incumbent
//!   ([`thompson_candidates`], `rcagp.md` §3.5).
//!
//! With noisy observations the incumbent `f*` is the best posterior mean at the evaluated
//! inputs ([`best_posterior_mean`]; the row with it: [`best_posterior_mean_row`]), not the best
//! noisy observation.

mod batch;
mod improvement;
mod incumbent;
pub mod normal;
mod qmc;
mod softplus_batch;
mod softplus_ei;
#[cfg(test)]
mod tests;
mod thompson;
mod ucb;

use faer::{Mat, MatRef};

pub use self::batch::{
    BatchImprovement, BatchImprovementKind, MonteCarloOptions, DEFAULT_MC_SAMPLES, DEFAULT_TAU_MAX,
    DEFAULT_TAU_RELU, MC_MIN_VARIANCE,
};
pub use self::improvement::{log_h, Improvement, ImprovementKind};
pub use self::incumbent::{best_posterior_mean, best_posterior_mean_row};
pub use self::qmc::{sobol_normal, MAX_BASE_DIMENSIONS, MAX_BASE_SAMPLES};
pub use self::softplus_batch::{
    BatchSoftplusEi, BatchUtility, EULBO_BATCH_JITTER, EULBO_MC_SAMPLES,
};
pub use self::softplus_ei::{log_softplus, log_softplus_derivative, softplus, SoftplusEi};
pub use self::thompson::{
    default_candidate_count, thompson_candidates, thompson_sample, thompson_sample_with,
    ThompsonPicks, ThompsonRoute, EXACT_THOMPSON_MAX, PATHWISE_FREQUENCIES,
};
pub use self::ucb::UpperConfidenceBound;
use crate::models::ModelError;
use crate::posterior::Posterior;

/// Posterior variances are floored here before the standard deviation is taken (where the
/// floor applies, the variance's gradient is taken as zero): a candidate at an evaluated input
/// of a noise-free model has variance zero up to rounding, possibly negative.
pub const MIN_VARIANCE: f64 = 1e-24;

/// Acquisition values at candidate inputs, with their gradients.
#[derive(Clone, Debug, PartialEq)]
pub struct AcquisitionGradients {
    /// The acquisition value at each candidate row.
    pub value: Vec<f64>,
    /// `∂value_a/∂x_{a,c}`: one row per candidate, one column per input column.
    pub gradient: Mat<f64>,
}

/// An acquisition function: a value per candidate input (rows of `xs`), larger is better.
pub trait Acquisition {
    /// The value at each row of `xs`.
    ///
    /// # Errors
    /// [`ModelError`] if `xs` is not a valid input of the model.
    fn values(&self, xs: MatRef<'_, f64>) -> Result<Vec<f64>, ModelError>;

    /// The value at each row of `xs` and its gradient with respect to that row.
    ///
    /// # Errors
    /// As for [`Acquisition::values`].
    fn gradients(&self, xs: MatRef<'_, f64>) -> Result<AcquisitionGradients, ModelError>;
}

/// A utility's value at one posterior marginal, and its partial derivatives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Utility {
    /// The value.
    pub value: f64,
    /// Its derivative in the posterior mean `μ`.
    pub d_mean: f64,
    /// Its derivative in the posterior standard deviation `σ`.
    pub d_sd: f64,
}

/// An acquisition that depends on the candidate only through the posterior mean and standard
/// deviation there.
pub trait MarginalUtility {
    /// The value and its derivatives at mean `mean` and standard deviation `sd > 0`.
    fn utility(&self, mean: f64, sd: f64) -> Utility;
}

/// A [`MarginalUtility`] evaluated on a posterior: an [`Acquisition`].
pub struct Analytic<'p, U> {
    posterior: &'p dyn Posterior,
    utility: U,
}

impl<'p, U: MarginalUtility> Analytic<'p, U> {
    /// `utility` on the marginals of `posterior`.
    pub fn new(posterior: &'p dyn Posterior, utility: U) -> Self {
        Analytic { posterior, utility }
    }

    /// The utility.
    pub fn utility(&self) -> &U {
        &self.utility
    }
}

/// The standard deviation from a variance, floored at `√MIN_VARIANCE`; whether the floor
/// applied.
pub(crate) fn standard_deviation(var: f64) -> (f64, bool) {
    if var > MIN_VARIANCE {
        (var.sqrt(), false)
    } else {
        (MIN_VARIANCE.sqrt(), true)
    }
}

impl<U: MarginalUtility> Acquisition for Analytic<'_, U> {
    fn values(&self, xs: MatRef<'_, f64>) -> Result<Vec<f64>, ModelError> {
        let m = self.posterior.marginals(xs)?;
        Ok(m.mean
            .iter()
            .zip(&m.var)
            .map(|(&mu, &v)| self.utility.utility(mu, standard_deviation(v).0).value)
            .collect())
    }

    fn gradients(&self, xs: MatRef<'_, f64>) -> Result<AcquisitionGradients, ModelError> {
        let g = self.posterior.marginal_gradients(xs)?;
        let mut value = Vec::with_capacity(xs.nrows());
        let mut gradient = Mat::zeros(xs.nrows(), xs.ncols());
        for (a, (&mu, &v)) in g.marginals.mean.iter().zip(&g.marginals.var).enumerate() {
            let (sd, floored) = standard_deviation(v);
            let u = self.utility.utility(mu, sd);
            value.push(u.value);
            // ∂σ/∂x = (∂v/∂x)/(2σ), zero where the floor holds σ constant.
            let d_var = if floored { 0.0 } else { u.d_sd / (2.0 * sd) };
            for c in 0..xs.ncols() {
                gradient[(a, c)] = u.d_mean * g.mean[(a, c)] + d_var * g.var[(a, c)];
            }
        }
        Ok(AcquisitionGradients { value, gradient })
    }
}

/// `value` checked to be finite, naming `what` otherwise.
fn finite(value: f64, what: &str) -> Result<f64, ModelError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(ModelError::Invalid(format!(
            "{what} must be a finite number, got {value}"
        )))
    }
}
