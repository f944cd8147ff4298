//! The EULBO objective at a model's parameters and a batch of query points (`rcagp.md`
//! §2.11):
//!
//! ```text
//! L(ϑ, S, x_{1:q}) = s · ELBO(ϑ, S) + E_{q(f(x_{1:q}))}[max_j ln softplus(f(x_j) − y*)],
//! ```
//!
//! with `s` = 1 (`Sum`) or `1/n` (`PerDatum`, §6.9) and the expectation under the model's
//! posterior predictive (the spec's fix of the reference, which used the prior). For `q = 1`
//! the expectation is the 20-node Gauss–Hermite rule of [`SoftplusEi`], whose derivatives in
//! `μ` and `σ` become adjoints `μ̄ = ∂u/∂μ`, `v̄ = (∂u/∂σ)/(2σ)`; for `q > 1` it is the Monte
//! Carlo estimate of [`BatchSoftplusEi`] over the joint predictive, with adjoints `(μ̄, Σ̄)`.
//! The model turns either into the joint gradient.

use faer::{Mat, MatRef};

use super::{EulboModel, Trainable};
use crate::models::ModelError;
use crate::posterior::JointGaussian;
use crate::sequential::acquisition::{
    standard_deviation, BatchSoftplusEi, MarginalUtility, SoftplusEi,
};

/// The expected utility of a query: one point by quadrature, a batch by Monte Carlo.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum QueryUtility {
    /// `q = 1`: [`SoftplusEi`] (Gauss–Hermite).
    Single(SoftplusEi),
    /// `q > 1`: [`BatchSoftplusEi`] (fixed quasi-random base samples).
    Batch(BatchSoftplusEi),
}

impl QueryUtility {
    /// The utility's value and adjoints `(μ̄, Σ̄)` at the joint predictive.
    fn at(&self, joint: &JointGaussian) -> Result<(f64, Vec<f64>, Mat<f64>), ModelError> {
        match self {
            QueryUtility::Single(u) => {
                let (sd, floored) = standard_deviation(joint.cov[(0, 0)]);
                let v = u.utility(joint.mean[0], sd);
                // ∂σ/∂v = 1/(2σ), zero where the floor holds σ constant.
                let d_var = if floored { 0.0 } else { v.d_sd / (2.0 * sd) };
                Ok((v.value, vec![v.d_mean], Mat::from_fn(1, 1, |_, _| d_var)))
            }
            QueryUtility::Batch(u) => {
                let v = u.utility(&joint.mean, joint.cov.as_ref())?;
                Ok((v.value, v.d_mean, v.d_cov))
            }
        }
    }
}

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

/// [`Evaluation`] of `model` at parameters `v` and the query batch `x` (row after row, `q·d`
/// values for a model of `d` inputs); `with_utility = false` drops the utility (the warm
/// start's plain ELBO ascent).
pub(super) fn evaluate<M: EulboModel>(
    model: &M,
    v: &[f64],
    learn: Trainable,
    elbo_weight: f64,
    x: &[f64],
    utility: &QueryUtility,
    with_utility: bool,
) -> Result<Evaluation, ModelError> {
    let d = model.input_dim();
    let q = x.len() / d.max(1);
    let xq = MatRef::from_row_major_slice(x, q, d);
    let mut value = 0.0;
    let mut failure = None;
    let mut adjoints = |joint: &JointGaussian| {
        let zero = (vec![0.0; q], Mat::zeros(q, q));
        if !with_utility {
            return zero;
        }
        match utility.at(joint) {
            Ok((u, mean_bar, cov_bar)) => {
                value = u;
                (mean_bar, cov_bar)
            }
            Err(e) => {
                failure = Some(e);
                zero
            }
        }
    };
    let ev = model.joint_evaluation(v, learn, elbo_weight, xq, &mut adjoints)?;
    if let Some(e) = failure {
        return Err(e);
    }
    Ok(Evaluation {
        objective: elbo_weight * ev.elbo + value,
        elbo: ev.elbo,
        utility: value,
        d_parameters: ev.parameters,
        d_x: (0..q)
            .flat_map(|t| (0..d).map(move |c| (t, c)))
            .map(|(t, c)| ev.inputs[(t, c)])
            .collect(),
    })
}
