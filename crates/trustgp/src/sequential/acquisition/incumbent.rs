//! The incumbent of noisy observations: the best posterior mean at the evaluated inputs.

use faer::MatRef;

use crate::models::ModelError;
use crate::posterior::Posterior;

/// The largest posterior mean of the latent function at the rows of `x` (the evaluated
/// inputs): the incumbent `f*` of the improvement-based acquisitions when observations are
/// noisy, where the best observed `y` would reward noise rather than the objective.
///
/// # Errors
/// [`ModelError::Invalid`] if `x` has no rows; otherwise as for
/// [`Posterior::marginals`].
pub fn best_posterior_mean(
    posterior: &dyn Posterior,
    x: MatRef<'_, f64>,
) -> Result<f64, ModelError> {
    if x.nrows() == 0 {
        return Err(ModelError::Invalid(
            "the incumbent needs at least one evaluated input, got none".into(),
        ));
    }
    let m = posterior.marginals(x)?;
    Ok(m.mean.iter().copied().fold(f64::NEG_INFINITY, f64::max))
}
