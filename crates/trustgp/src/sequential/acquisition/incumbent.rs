//! The incumbent of noisy observations: the best posterior mean at the evaluated inputs.

use faer::MatRef;

use crate::models::ModelError;
use crate::posterior::Posterior;

/// The largest posterior mean of the latent function at the rows of `x` (the evaluated
/// inputs): the incumbent `f*` of the improvement-based acquisitions when observations are
/// noisy, where the best observed `y` would reward noise rather than the objective.
///
/// # Errors
/// As for [`best_posterior_mean_row`].
pub fn best_posterior_mean(
    posterior: &dyn Posterior,
    x: MatRef<'_, f64>,
) -> Result<f64, ModelError> {
    Ok(best_posterior_mean_row(posterior, x)?.1)
}

/// The row of `x` (the evaluated inputs) with the largest posterior mean of the latent
/// function, and that mean: where TuRBO centres its trust region and Thompson sampling its
/// candidates. Ties go to the first row; NaN means are skipped.
///
/// # Errors
/// [`ModelError::Invalid`] if `x` has no rows or every mean is NaN; otherwise as for
/// [`Posterior::marginals`].
pub fn best_posterior_mean_row(
    posterior: &dyn Posterior,
    x: MatRef<'_, f64>,
) -> Result<(usize, f64), ModelError> {
    if x.nrows() == 0 {
        return Err(ModelError::Invalid(
            "the incumbent needs at least one evaluated input, got none".into(),
        ));
    }
    let m = posterior.marginals(x)?;
    let mut best: Option<(usize, f64)> = None;
    for (i, &v) in m.mean.iter().enumerate() {
        if !v.is_nan() && best.is_none_or(|(_, b)| v > b) {
            best = Some((i, v));
        }
    }
    best.ok_or_else(|| {
        ModelError::Invalid(format!(
            "the incumbent needs a posterior mean at an evaluated input; all {} are NaN",
            x.nrows()
        ))
    })
}
