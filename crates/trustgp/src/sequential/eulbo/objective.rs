//! The EULBO objective at a model's parameters and a query point (`rcagp.md` §2.11, q = 1):
//!
//! ```text
//! L(ϑ, S, x) = s · ELBO(ϑ, S) + E_{N(f; μ(x), v(x))}[ln softplus(f − y*)],
//! ```
//!
//! with `s` = 1 (`Sum`) or `1/n` (`PerDatum`, §6.9) and the expectation under the model's
//! posterior predictive (the spec's fix of the reference, which used the prior). The utility's
//! derivatives in `μ` and `σ` become adjoints `μ̄ = ∂u/∂μ`, `v̄ = (∂u/∂σ)/(2σ)` of the predictive,
//! which the model turns into the joint gradient.

use faer::MatRef;

use super::{EulboModel, Trainable};
use crate::models::ModelError;
use crate::sequential::acquisition::{standard_deviation, MarginalUtility, SoftplusEi, Utility};

/// The objective and its parts at one point, with the gradients.
#[derive(Clone, Debug)]
pub(super) struct Evaluation {
    /// `s · ELBO + u`.
    pub objective: f64,
    /// The ELBO (unscaled).
    pub elbo: f64,
    /// The softplus expected utility `u`.
    pub utility: f64,
    /// `∂L/∂(parameters)`.
    pub d_parameters: Vec<f64>,
    /// `∂L/∂x`.
    pub d_x: Vec<f64>,
}

impl Evaluation {
    /// Whether the value and every derivative are finite (anything else is a numerical
    /// failure of the step that led here).
    pub(super) fn is_finite(&self) -> bool {
        self.objective.is_finite()
            && self.d_parameters.iter().all(|g| g.is_finite())
            && self.d_x.iter().all(|g| g.is_finite())
    }
}

/// [`Evaluation`] of `model` at parameters `v` and query `x`; `with_utility = false` drops the
/// utility (the warm start's plain ELBO ascent).
pub(super) fn evaluate<M: EulboModel>(
    model: &M,
    v: &[f64],
    learn: Trainable,
    elbo_weight: f64,
    x: &[f64],
    utility: &SoftplusEi,
    with_utility: bool,
) -> Result<Evaluation, ModelError> {
    let xq = MatRef::from_row_major_slice(x, 1, x.len());
    let mut u = Utility {
        value: 0.0,
        d_mean: 0.0,
        d_sd: 0.0,
    };
    let mut adjoints = |p: &crate::posterior::Marginals| {
        if !with_utility {
            return (vec![0.0], vec![0.0]);
        }
        let (sd, floored) = standard_deviation(p.var[0]);
        u = utility.utility(p.mean[0], sd);
        // ∂σ/∂v = 1/(2σ), zero where the floor holds σ constant.
        let d_var = if floored { 0.0 } else { u.d_sd / (2.0 * sd) };
        (vec![u.d_mean], vec![d_var])
    };
    let ev = model.joint_evaluation(v, learn, elbo_weight, xq, &mut adjoints)?;
    Ok(Evaluation {
        objective: elbo_weight * ev.elbo + u.value,
        elbo: ev.elbo,
        utility: u.value,
        d_parameters: ev.parameters,
        d_x: (0..x.len()).map(|c| ev.inputs[(0, c)]).collect(),
    })
}
