//! The points a fitted surrogate proposes: every batch size and every acquisition goes
//! through [`propose`], the one place where batches (`q > 1`), qLogEI and Thompson sampling
//! join the analytic acquisitions.

use faer::MatRef;

use super::super::acquisition::{
    best_posterior_mean, Analytic, Improvement, ImprovementKind, UpperConfidenceBound,
};
use super::super::optimize::{maximize, MaximizeOptions};
use super::super::suggest::{SuggestAcquisition, DEFAULT_UCB_BETA};
use crate::models::ModelError;
use crate::posterior::Posterior;

/// A proposed batch in the model's units.
#[derive(Clone, Debug, PartialEq)]
pub struct Proposed {
    /// The points, one row of the model's (standardised) inputs each.
    pub points: Vec<Vec<f64>>,
    /// The acquisition's value at the batch.
    pub value: f64,
}

/// The `q` points of the box `bounds` (model units) that maximise `acquisition` under
/// `posterior`, whose evaluated inputs are the rows of `xs` (model units); `seed` seeds the
/// optimiser's raw samples.
///
/// # Errors
/// [`ModelError::Invalid`] for `q > 1` or an acquisition not wired yet; the errors of
/// [`maximize`].
pub fn propose(
    posterior: &dyn Posterior,
    xs: MatRef<'_, f64>,
    bounds: &[(f64, f64)],
    q: usize,
    acquisition: SuggestAcquisition,
    seed: u32,
) -> Result<Proposed, ModelError> {
    let options = MaximizeOptions {
        seed,
        ..MaximizeOptions::default()
    };
    let improvement = |kind| -> Result<Proposed, ModelError> {
        let incumbent = best_posterior_mean(posterior, xs)?;
        let acq = Analytic::new(posterior, Improvement::new(kind, incumbent)?);
        let best = maximize(&acq, bounds, &options)?;
        Ok(Proposed {
            points: vec![best.x],
            value: best.value,
        })
    };
    match (acquisition, q) {
        (SuggestAcquisition::LogEi, 1) => improvement(ImprovementKind::LogExpected),
        (SuggestAcquisition::Ei, 1) => improvement(ImprovementKind::Expected),
        (SuggestAcquisition::Pi, 1) => improvement(ImprovementKind::Probability),
        (SuggestAcquisition::Ucb, 1) => {
            let acq = Analytic::new(posterior, UpperConfidenceBound::new(DEFAULT_UCB_BETA)?);
            let best = maximize(&acq, bounds, &options)?;
            Ok(Proposed {
                points: vec![best.x],
                value: best.value,
            })
        }
        // Extension point (issue 22): qLogEI and Thompson sampling, and batches by greedy
        // conditioning on pending points (`optimize::maximize_batch`), are wired here.
        (SuggestAcquisition::QLogEi | SuggestAcquisition::Ts, _) => Err(ModelError::Invalid(
            format!("acquisition '{}' is not yet wired", acquisition.name()),
        )),
        _ => Err(ModelError::Invalid(format!(
            "batches need qLogEI (not yet wired): asked for q = {q} points"
        ))),
    }
}
