//! One module per subcommand, plus what `fit` and `evaluate` share: arguments → the library's
//! option checks (`trustgp::estimators`) → fit → JSON.

pub mod bo;
pub mod classify;
pub mod demo;
pub mod evaluate;
pub mod fit;
pub mod kernels;
pub mod predict;
pub mod safe_al;
pub mod safe_suggest;
pub mod suggest;
pub mod verify;

use serde_json::Value;
use trustgp::data::{read_csv, Dataset};
use trustgp::estimators::{
    physical_memory, Advice, FitCost, FitSummary, ModelOptions, Regressor, RegressorConfig,
};

use crate::args::ModelArgs;
use crate::progress::Progress;

/// Every command's error: printed as one line by `main`, which then exits non-zero.
pub type CliError = Box<dyn std::error::Error>;

/// Read the data set named by the arguments.
pub fn dataset(a: &ModelArgs) -> Result<Dataset, CliError> {
    Ok(read_csv(&a.data, &a.target, a.inputs.as_deref())?)
}

/// The model options as the user gave them.
pub fn options(a: &ModelArgs) -> ModelOptions {
    ModelOptions {
        model: a.model.clone(),
        kernel: a.kernel.clone(),
        noise: a.noise,
        mean: a.mean.clone(),
        restarts: a.restarts,
        seed: a.seed,
        optimize: !a.no_optimize,
        standardize: !a.no_standardize,
        epsilon: a.epsilon.clone(),
        weight: a.weight.clone(),
        shared_noise: a.shared_noise,
        rank: a.rank,
        inducing: a.inducing,
        actions: a.actions,
        action_kind: a.action_kind.clone(),
        likelihood: a.likelihood.clone(),
        optimizer: a.optimizer.clone(),
        iterations: a.iterations,
        lr: a.lr,
        batch_size: a.batch_size,
        free_noise: a.free_noise,
        kernels: a.kernels.clone(),
        top: a.top,
        epochs: a.epochs,
        mode: a.mode.clone(),
        period_init: a.period_init.clone(),
    }
}

/// Check the options against the data about to be fitted and estimate the fit's cost: a fit
/// that would not fit in memory is refused unless `--force`; an expensive one is announced on
/// stderr, and the announcement is returned for the summary's warnings.
pub fn checked_config(
    a: &ModelArgs,
    cfg: &RegressorConfig,
    data: &Dataset,
) -> Result<Option<String>, CliError> {
    cfg.check_data(data)?;
    let cost = FitCost::estimate(cfg, data.n(), data.d(), data.n_targets());
    match cost.advice(physical_memory()) {
        Advice::Fine => Ok(None),
        Advice::Refuse(m) if !a.force => Err(m.into()),
        Advice::Refuse(m) | Advice::Warn(m) => {
            eprintln!("warning: {m}");
            Ok(Some(m))
        }
    }
}

/// Fits with progress on stderr (the approximate models' evaluations as they come).
pub fn fit_with_progress(
    data: &Dataset,
    cfg: &RegressorConfig,
    rows: &str,
) -> Result<Regressor, CliError> {
    let what = format!("fitting {} to {} {rows}", cfg.model.name(), data.n());
    let progress = Progress::start(&what);
    // A model with more to say than its objective (vbks: the leading kernels) says it
    // through `status`, which then replaces the evaluation counter.
    let status_given = std::cell::Cell::new(false);
    let model = Regressor::fit_reporting(
        data,
        cfg,
        &mut |t, i, f| {
            if !status_given.get() {
                progress.set_message(format!(
                    "{what}: target {}, evaluation {i}, objective {f:.4}",
                    t + 1
                ))
            }
        },
        &mut |s| {
            status_given.set(true);
            progress.set_message(format!("{what}: {s}"))
        },
    );
    progress.finish();
    let model = model?;
    for w in &model.warnings {
        eprintln!("warning: {w}");
    }
    Ok(model)
}

/// The fit summary of a model fitted on `n` rows as JSON, refusing a non-finite number, with
/// `extra_warnings` (already shown on stderr) added to its warnings.
pub fn summary_json(
    model: &Regressor,
    n: usize,
    extra_warnings: Option<String>,
) -> Result<Value, CliError> {
    let mut summary = FitSummary::of(model, n);
    summary.warnings.extend(extra_warnings);
    summary.check_finite()?;
    Ok(serde_json::to_value(&summary)?)
}

/// Print one JSON object on stdout.
pub fn print_json(v: &Value) -> Result<(), CliError> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}
