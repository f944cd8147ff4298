//! The surrogate of a Bayesian optimisation run: any single-output registry model, fitted
//! through [`Regressor`] on standardised data, and its latent [`Posterior`].

use faer::{Mat, MatRef};

use crate::data::Dataset;
use crate::estimators::regressor::Fitted;
use crate::estimators::{ModelKind, ModelOptions, Regressor};
use crate::models::computation_aware::ActionKind;
use crate::models::ModelError;
use crate::posterior::Posterior;

use super::super::acquisition::best_posterior_mean_row;

use super::robust_centre::RobustCentre;

/// The single-output model named `name`.
///
/// # Errors
/// [`ModelError::Invalid`] for an unknown name or a multi-output model, listing the models
/// that can serve.
pub fn surrogate_kind(name: &str) -> Result<ModelKind, ModelError> {
    let usable: Vec<&str> = ModelKind::ALL
        .iter()
        .filter(|k| !k.is_multi_output())
        .map(|k| k.name())
        .collect();
    match ModelKind::parse(name) {
        Some(kind) if !kind.is_multi_output() => Ok(kind),
        Some(_) => Err(ModelError::Invalid(format!(
            "model '{name}' is multi-output and cannot be the surrogate of one objective \
             (expected one of {})",
            usable.join(", ")
        ))),
        None => Err(ModelError::Invalid(format!(
            "unknown surrogate model '{name}' (expected one of {})",
            usable.join(", ")
        ))),
    }
}

/// The surrogate's kernel: Matérn-5/2 with one lengthscale per input (ARD) and a scale, as in
/// the RCaGP paper's BO (`rcagp.md` §3.5) and BoTorch's `SingleTaskGP`. On Hartmann6 (20 + 80
/// evaluations, 10 seeds) it cut the exact GP's median simple regret from 0.023 (the
/// regression default `const * se`) to 6e-5 (`results/bo_quality.md`).
pub const SURROGATE_KERNEL: &str = "const * matern52";

/// The surrogate's prior mean: a learned constant (the regression default of the exact models
/// is zero), as BoTorch's `SingleTaskGP`.
pub const SURROGATE_MEAN: &str = "constant";

/// The robust approximate surrogates that learn their noise variance in their own bound
/// (β = 1, `ApproxOptions::free_noise`), as the RCaGP paper's BO does (`rcagp.md` §3.5, Table
/// S4: Adam on every RCaGP parameter), instead of the regression default, which fixes it at
/// an exact RCGP's estimate raised to the robust scale of its leave-one-out residuals
/// (`models::approximate::robust_start`). On an objective evaluated without noise those
/// residuals are interpolation error, not noise: on Hartmann6 (100 points, 12 of them
/// asymmetric outliers) the default fixed RCaGP's noise at 0.49 (standardised), where the
/// learned one is 0.03, smoothed three of the six inputs away and its predictions' correlation
/// with the clean values fell from 0.92 to 0.83; over 6 seeds of the robust BO benchmark the
/// default-noise RCaGP ended 0.7 below CaGP (issue 22, `docs/decisions.md`).
pub const FREE_NOISE_SURROGATES: [ModelKind; 2] = [ModelKind::Rcsvgp, ModelKind::Rcagp];

/// Fits the model `name` (checked by [`surrogate_kind`]) with the surrogate's kernel and mean
/// ([`SURROGATE_KERNEL`], [`SURROGATE_MEAN`]), its other defaults and `seed` to the one target
/// of `data`.
///
/// # Errors
/// The option checks' and the fit's errors.
pub fn fit_surrogate(name: &str, seed: u64, data: &Dataset) -> Result<Regressor, ModelError> {
    fit_surrogate_with(name, seed, data, None, RobustCentre::Prior, None)
}

/// [`fit_surrogate`] with given inducing inputs `z` (standardised units, held fixed; see
/// [`crate::models::approximate::ApproxOptions::inducing_inputs`]): the inducing inputs of
/// sgpr, svgp and rcsvgp, the `Z` of cagp's and rcagp's dense actions `S = k(X, Z)`; and the
/// robust models' weights centred by `centre` ([`RobustCentre::centres`]); and, for rcgp,
/// rcsvgp and rcagp, the constant `prior_mean` (standardised units) held fixed, the
/// expert-guided mean ([`RegressorConfig::prior_mean`](crate::estimators::RegressorConfig)).
///
/// # Errors
/// As for [`fit_surrogate`]; inducing inputs for a model without them; the errors of the
/// centres' fit; a prior mean for another model.
pub fn fit_surrogate_with(
    name: &str,
    seed: u64,
    data: &Dataset,
    z: Option<Mat<f64>>,
    centre: RobustCentre,
    prior_mean: Option<f64>,
) -> Result<Regressor, ModelError> {
    let kind = surrogate_kind(name)?;
    let mut config = ModelOptions {
        model: name.to_string(),
        seed,
        kernel: Some(SURROGATE_KERNEL.into()),
        mean: Some(SURROGATE_MEAN.into()),
        ..ModelOptions::default()
    }
    .check()
    .map_err(|e| ModelError::Invalid(e.to_string()))?;
    config.robust_centres = centre.centres(name, seed, data)?;
    config.prior_mean = prior_mean;
    config.approx.free_noise = FREE_NOISE_SURROGATES.contains(&kind);
    if let Some(z) = z {
        if kind.approximate().is_none() {
            return Err(ModelError::Invalid(format!(
                "model '{name}' has no inducing inputs to give"
            )));
        }
        if matches!(kind, ModelKind::Cagp | ModelKind::Rcagp) {
            config.approx.action_kind = ActionKind::Inducing;
        }
        config.approx.inducing_inputs = Some(z);
    }
    Regressor::fit(data, &config)
}

/// The latent posterior of a single-output fitted model (in its standardised units).
///
/// # Errors
/// [`ModelError::Invalid`] for a multi-output model or one without a fitted output.
pub fn latent_posterior(model: &Regressor) -> Result<&dyn Posterior, ModelError> {
    let Fitted::PerTarget(outputs) = &model.fitted else {
        return Err(ModelError::Invalid(format!(
            "model '{}' is multi-output and has no single latent posterior",
            model.model_name()
        )));
    };
    let Some(output) = outputs.first() else {
        return Err(ModelError::Invalid("the model has no fitted output".into()));
    };
    output.gp.posterior()
}

/// The incumbent of the fitted surrogate `model` whose standardised training inputs are the
/// rows of `xs`: the row with the largest posterior mean of the latent function and that mean
/// (issue 22: "the incumbent is the best posterior mean, not the best noisy y"). EULBO's
/// utility takes the mean ([`eulbo_incumbent`](super::eulbo_incumbent)), TuRBO's trust region
/// is centred at the row.
///
/// # Errors
/// As for [`latent_posterior`] and [`best_posterior_mean_row`].
pub fn surrogate_incumbent(
    model: &Regressor,
    xs: MatRef<'_, f64>,
) -> Result<(usize, f64), ModelError> {
    best_posterior_mean_row(latent_posterior(model)?, xs)
}
