//! The EULBO refinement of a proposal (`rcagp.md` §3.5 step 9): the fitted sparse or
//! computation-aware surrogate and the acquisition's point (or batch, with the Monte Carlo
//! batch utility of §2.11) are optimised jointly under the softplus expected utility, and the
//! refined points are proposed.
//!
//! The utility's incumbent is the best posterior mean at the evaluated inputs (as for LogEI,
//! issue 22: "the incumbent is the best posterior mean, not the best noisy y"), not the best
//! standardised observation of the reference code: with the paper's asymmetric outliers the
//! largest observation is usually an outlier (on Hartmann6 runs with 25% of them, the largest
//! observed value was an injected outlier at 8 of 9 checkpoints, see `docs/decisions.md`), and
//! an incumbent that high leaves the softplus utility almost flat, so EULBO's query step
//! follows the ELBO rather than the improvement.

use faer::MatRef;

use super::super::eulbo::{optimize, EulboModel, EulboOptions, SvgpOnData};
use super::surrogate::surrogate_incumbent;
use crate::estimators::regressor::{Fitted, SingleOutput};
use crate::estimators::Regressor;
use crate::models::approximate::ApproxModel;
use crate::models::ModelError;

/// The models EULBO can train jointly with the query point.
pub const EULBO_MODELS: [&str; 4] = ["svgp", "rcsvgp", "cagp", "rcagp"];

/// The points of `bounds` (the model's standardised input units) that EULBO reaches from the
/// batch `x0` (one or more points) with the fitted `model`, whose standardised training rows
/// are `xs`/`ys`; the incumbent of the utility is [`eulbo_incumbent`] (the best posterior mean
/// at `xs`), and `seed` seeds a batch's Monte Carlo base samples. Returns the points and the
/// EULBO objective there.
///
/// # Errors
/// [`ModelError::Invalid`] for a surrogate EULBO cannot train (not one of [`EULBO_MODELS`]);
/// the errors of [`optimize`].
pub fn eulbo_refine(
    model: &Regressor,
    xs: MatRef<'_, f64>,
    ys: &[f64],
    x0: &[Vec<f64>],
    bounds: &[(f64, f64)],
    seed: u32,
) -> Result<(Vec<Vec<f64>>, f64), ModelError> {
    let incumbent = eulbo_incumbent(model, xs)?;
    let options = EulboOptions {
        mc_seed: seed,
        ..EulboOptions::default()
    };
    let x0: Vec<f64> = x0.concat();
    let unsupported = || {
        ModelError::Invalid(format!(
            "method eulbo trains the surrogate with the query point and needs model {} (got '{}')",
            EULBO_MODELS.join(", "),
            model.model_name()
        ))
    };
    let Fitted::PerTarget(outputs) = &model.fitted else {
        return Err(unsupported());
    };
    let output = outputs.first().ok_or_else(unsupported)?;
    match &output.gp {
        SingleOutput::Approx(ApproxModel::Ca(g), _) => run(g, &x0, bounds, incumbent, &options),
        SingleOutput::Approx(ApproxModel::Sparse(g), _) => run(g, &x0, bounds, incumbent, &options),
        SingleOutput::Approx(ApproxModel::Svgp(g, _), _) => {
            let on_data = SvgpOnData::new(g.clone(), xs.to_owned(), ys.to_vec())?;
            run(&on_data, &x0, bounds, incumbent, &options)
        }
        _ => Err(unsupported()),
    }
}

/// The incumbent of EULBO's softplus utility for the fitted `model` whose standardised
/// training inputs are the rows of `xs`: the largest posterior mean of the latent function
/// there (see the module notes for why not the largest observation).
///
/// # Errors
/// As for [`surrogate_incumbent`].
pub fn eulbo_incumbent(model: &Regressor, xs: MatRef<'_, f64>) -> Result<f64, ModelError> {
    Ok(surrogate_incumbent(model, xs)?.1)
}

/// One EULBO run: its points and objective.
fn run<M: EulboModel>(
    model: &M,
    x0: &[f64],
    bounds: &[(f64, f64)],
    incumbent: f64,
    options: &EulboOptions,
) -> Result<(Vec<Vec<f64>>, f64), ModelError> {
    let result = optimize(model, x0, bounds, incumbent, options)?;
    let points = result.x.chunks(bounds.len()).map(<[f64]>::to_vec).collect();
    Ok((points, result.objective))
}
