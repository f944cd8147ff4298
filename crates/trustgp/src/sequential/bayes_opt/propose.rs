//! The points a fitted surrogate proposes: every batch size and every acquisition goes
//! through [`propose`].
//!
//! * One point (`q = 1`) of an analytic acquisition (LogEI, EI, PI, UCB): [`maximize`].
//! * qLogEI, and batches (`q > 1`) of LogEI or EI: the Monte Carlo batch improvement
//!   ([`BatchImprovement`], qLogEI for `logei`/`qlogei`, qEI for `ei`), its points picked by
//!   sequential greedy conditioning ([`maximize_batch`], as BoTorch's `optimize_acqf` with
//!   `sequential=True`). The value reported is the batch's joint improvement.
//! * Thompson sampling (`ts`): exact joint samples at the candidate set of
//!   [`thompson_candidates`] around the incumbent (the evaluated input with the best posterior
//!   mean), one sample per point.
//!
//! PI and UCB have no batch form here: a batch of them is a clear error.

use faer::{Mat, MatRef};

use super::super::acquisition::{
    best_posterior_mean, best_posterior_mean_row, default_candidate_count, thompson_candidates,
    thompson_sample, Analytic, BatchImprovement, BatchImprovementKind, Improvement,
    ImprovementKind, MonteCarloOptions, UpperConfidenceBound,
};
use super::super::optimize::{maximize, maximize_batch, MaximizeOptions};
use super::super::suggest::{SuggestAcquisition, DEFAULT_UCB_BETA};
use crate::models::ModelError;
use crate::posterior::Posterior;

/// A proposed batch in the model's units.
#[derive(Clone, Debug, PartialEq)]
pub struct Proposed {
    /// The points, one row of the model's (standardised) inputs each.
    pub points: Vec<Vec<f64>>,
    /// The acquisition's value at the batch; `None` for Thompson sampling, which has none.
    pub value: Option<f64>,
}

/// The `q` points of the box `bounds` (model units) that `acquisition` picks under
/// `posterior`, whose evaluated inputs are the rows of `xs` (model units); `seed` seeds the
/// optimiser's raw samples, the Monte Carlo base samples and Thompson's candidates and samples.
///
/// # Errors
/// [`ModelError::Invalid`] for `q = 0` or a batch of PI or UCB; the errors of the acquisition
/// and of its optimiser.
pub fn propose(
    posterior: &dyn Posterior,
    xs: MatRef<'_, f64>,
    bounds: &[(f64, f64)],
    q: usize,
    acquisition: SuggestAcquisition,
    seed: u32,
) -> Result<Proposed, ModelError> {
    if q == 0 {
        return Err(ModelError::Invalid("a proposal needs q ≥ 1 points".into()));
    }
    let options = MaximizeOptions {
        seed,
        ..MaximizeOptions::default()
    };
    let one = |acq: &dyn super::super::acquisition::Acquisition| -> Result<Proposed, ModelError> {
        let best = maximize(acq, bounds, &options)?;
        Ok(Proposed {
            points: vec![best.x],
            value: Some(best.value),
        })
    };
    let incumbent = || best_posterior_mean(posterior, xs);
    let analytic = |kind| -> Result<Proposed, ModelError> {
        one(&Analytic::new(
            posterior,
            Improvement::new(kind, incumbent()?)?,
        ))
    };
    use SuggestAcquisition as A;
    match (acquisition, q) {
        (A::LogEi, 1) => analytic(ImprovementKind::LogExpected),
        (A::Ei, 1) => analytic(ImprovementKind::Expected),
        (A::Pi, 1) => analytic(ImprovementKind::Probability),
        (A::Ucb, 1) => one(&Analytic::new(
            posterior,
            UpperConfidenceBound::new(DEFAULT_UCB_BETA)?,
        )),
        (A::LogEi | A::QLogEi, _) => batch(
            posterior,
            incumbent()?,
            BatchImprovementKind::log_expected(),
            bounds,
            q,
            &options,
        ),
        (A::Ei, _) => batch(
            posterior,
            incumbent()?,
            BatchImprovementKind::Expected,
            bounds,
            q,
            &options,
        ),
        (A::Ts, _) => thompson(posterior, xs, bounds, q, seed),
        (A::Pi | A::Ucb, _) => Err(ModelError::Invalid(format!(
            "acquisition '{}' proposes one point at a time; for a batch of {q} use logei, \
             qlogei, ei or ts",
            acquisition.name()
        ))),
    }
}

/// `q` points by sequential greedy conditioning on the batch improvement `kind` over
/// `incumbent`, and the joint improvement of the whole batch.
fn batch(
    posterior: &dyn Posterior,
    incumbent: f64,
    kind: BatchImprovementKind,
    bounds: &[(f64, f64)],
    q: usize,
    options: &MaximizeOptions,
) -> Result<Proposed, ModelError> {
    let mc = MonteCarloOptions {
        seed: options.seed,
        ..MonteCarloOptions::default()
    };
    let none = Mat::<f64>::zeros(0, bounds.len());
    let picked = maximize_batch(q, none.as_ref(), bounds, options, |fixed| {
        BatchImprovement::new(posterior, kind, incumbent, fixed, 1, &mc)
    })?;
    let joint = BatchImprovement::new(posterior, kind, incumbent, none.as_ref(), q, &mc)?;
    let value = joint.value(picked.points.as_ref())?;
    Ok(Proposed {
        points: rows(picked.points.as_ref()),
        value: Some(value),
    })
}

/// `q` Thompson picks among candidates around the evaluated input with the best posterior
/// mean.
fn thompson(
    posterior: &dyn Posterior,
    xs: MatRef<'_, f64>,
    bounds: &[(f64, f64)],
    q: usize,
    seed: u32,
) -> Result<Proposed, ModelError> {
    let (best, _) = best_posterior_mean_row(posterior, xs)?;
    // The incumbent may lie outside a trust region's box only by rounding: clamp it in.
    let incumbent: Vec<f64> = bounds
        .iter()
        .enumerate()
        .map(|(c, &(lo, hi))| xs[(best, c)].clamp(lo, hi))
        .collect();
    let count = default_candidate_count(bounds.len()).max(q);
    let candidates = thompson_candidates(&incumbent, bounds, count, seed)?;
    let picks = thompson_sample(posterior, candidates.as_ref(), q, u64::from(seed))?;
    Ok(Proposed {
        points: rows(picks.points.as_ref()),
        value: None,
    })
}

/// The rows of `m` as vectors.
fn rows(m: MatRef<'_, f64>) -> Vec<Vec<f64>> {
    (0..m.nrows())
        .map(|i| (0..m.ncols()).map(|c| m[(i, c)]).collect())
        .collect()
}
