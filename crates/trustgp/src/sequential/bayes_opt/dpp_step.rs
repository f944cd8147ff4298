//! The DPP-BO surrogate (Moss et al. 2023; `rcagp.md` §3.5, "DPP-BO variant"): the inducing
//! inputs of a sparse model, or the `Z` of a computation-aware model's dense actions
//! `S = k(X, Z)` (§2.5), are chosen by greedy MAP of a quality-weighted DPP, and the model is
//! fitted with them held fixed; the configured acquisition then proposes on it as usual.
//!
//! Choices, each against the reference code:
//! * **Candidates are the training inputs**, not the previous inducing inputs: the state of a
//!   run is plain data (no fitted model is kept between asks), and the training inputs are
//!   where the data are, so every inducing input sits on an observation.
//! * **The quality is EI under a first fit of the same model** (its default inducing inputs
//!   or actions) on the current data, with the best posterior mean at the training inputs as
//!   incumbent, normalised by its maximum (see [`dpp_select`]). The reference code uses the
//!   previous iteration's model; keeping none makes a resumed run propose bit for bit the same
//!   points, at the price of a second fit per ask.
//! * The DPP's kernel is that first fit's kernel, over the standardised inputs.

use faer::{Mat, MatRef};

use super::super::acquisition::{
    best_posterior_mean, Acquisition, Analytic, Improvement, ImprovementKind,
};
use super::super::dpp::{dpp_select, DPP_RESIDUAL_TOLERANCE};
use super::robust_centre::RobustCentre;
use super::surrogate::{fit_surrogate_with, latent_posterior};
use crate::data::Dataset;
use crate::estimators::regressor::Fitted;
use crate::estimators::Regressor;
use crate::models::ModelError;
use crate::posterior::Posterior;

/// The models whose inducing inputs (or dense actions) DPP-BO chooses.
pub const DPP_MODELS: [&str; 5] = ["sgpr", "svgp", "rcsvgp", "cagp", "rcagp"];

/// How many inducing inputs DPP-BO selects, `|Z|` (`rcagp.md` §3.5 and Table S4: 25 inducing
/// points, projection dimension 25), or every training input when there are fewer.
pub const DPP_INDUCING: usize = 25;

/// A surrogate fitted with DPP-selected inducing inputs.
#[derive(Clone, Debug)]
pub struct DppSurrogate {
    /// The model fitted with the selected inducing inputs held fixed.
    pub model: Regressor,
    /// The training rows selected as inducing inputs, in the order the DPP picked them.
    pub rows: Vec<usize>,
}

/// Fits the model `name` (one of [`DPP_MODELS`]) to `data` with at most [`DPP_INDUCING`]
/// inducing inputs chosen from the training inputs by the quality-weighted DPP (see the module
/// documentation), the robust models' weights centred by `centre` and their prior mean fixed at
/// `prior_mean` when given.
///
/// # Errors
/// [`ModelError::Invalid`] for a model outside [`DPP_MODELS`] or a selection that picks no
/// input; the errors of the fits and of [`dpp_select`].
pub fn dpp_surrogate(
    name: &str,
    seed: u64,
    data: &Dataset,
    centre: RobustCentre,
    prior_mean: Option<f64>,
) -> Result<DppSurrogate, ModelError> {
    if !DPP_MODELS.contains(&name) {
        return Err(unsupported("dpp", name));
    }
    let first = fit_surrogate_with(name, seed, data, None, centre, prior_mean)?;
    let xs = first.standardizer.transform_x(data.x.as_ref());
    let quality = dpp_quality(latent_posterior(&first)?, xs.as_ref())?;
    let Fitted::PerTarget(outputs) = &first.fitted else {
        return Err(unsupported("dpp", name));
    };
    let kernel = outputs
        .first()
        .ok_or_else(|| ModelError::Invalid("the first fit has no fitted output".into()))?
        .gp
        .kernel();
    let picked = dpp_select(
        xs.as_ref(),
        kernel,
        &quality,
        DPP_INDUCING.min(xs.nrows()),
        DPP_RESIDUAL_TOLERANCE,
    )
    .map_err(|e| ModelError::Invalid(format!("DPP selection of inducing inputs: {e}")))?;
    if picked.indices.is_empty() {
        return Err(ModelError::Invalid(
            "DPP selection of inducing inputs picked none: every candidate's quality-weighted \
             variance is below the tolerance"
                .into(),
        ));
    }
    let z = Mat::from_fn(picked.indices.len(), xs.ncols(), |i, c| {
        xs[(picked.indices[i], c)]
    });
    let model = fit_surrogate_with(name, seed, data, Some(z), centre, prior_mean)?;
    Ok(DppSurrogate {
        model,
        rows: picked.indices,
    })
}

/// The least DPP quality of a training input, relative to the largest ([`dpp_quality`]). A
/// confident surrogate's expected improvement underflows to zero, or nearly, at most training
/// inputs (Hartmann6, 60 evaluations: RCaGP's posterior sd there was 0.02–0.17 and 1–2 units
/// below the incumbent), and a DPP over such qualities stops after the few rows with a
/// usable EI: RCaGP got one inducing input, fitted a flat model and never improved on its
/// initial design in 100 evaluations (issue 22, `docs/decisions.md`). With the floor the
/// rows of non-negligible EI are still picked first (their `q²` is at least 10⁸ times larger)
/// and the remaining slots of `|Z|` go to the most diverse of the rest, as plain pivoted
/// Cholesky would choose them.
pub const DPP_QUALITY_FLOOR: f64 = 1e-4;

/// The DPP's quality of each row of `xs`: expected improvement over the best posterior mean at
/// `xs`, divided by its maximum and floored at [`DPP_QUALITY_FLOOR`]; all ones when every EI is
/// zero.
///
/// # Errors
/// Those of the posterior.
pub fn dpp_quality(posterior: &dyn Posterior, xs: MatRef<'_, f64>) -> Result<Vec<f64>, ModelError> {
    let incumbent = best_posterior_mean(posterior, xs)?;
    let ei = Analytic::new(
        posterior,
        Improvement::new(ImprovementKind::Expected, incumbent)?,
    )
    .values(xs)?;
    let top = ei.iter().copied().fold(0.0, f64::max);
    Ok(if top > 0.0 && top.is_finite() {
        ei.iter()
            .map(|v| (v / top).max(DPP_QUALITY_FLOOR))
            .collect()
    } else {
        vec![1.0; ei.len()]
    })
}

/// The error for a model DPP-BO cannot select inducing inputs for.
pub(super) fn unsupported(method: &str, model: &str) -> ModelError {
    ModelError::Invalid(format!(
        "method {method} selects the inducing inputs of the surrogate and needs model {} \
         (got '{model}')",
        DPP_MODELS.join(", ")
    ))
}
