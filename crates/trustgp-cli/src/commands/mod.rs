//! One module per subcommand, plus what `fit` and `evaluate` share.

pub mod demo;
pub mod evaluate;
pub mod fit;
pub mod predict;

use serde_json::{json, Value};
use trustgp::data::{read_csv, Dataset};
use trustgp::models::exact::FitOptions;
use trustgp::models::regressor::{Regressor, RegressorConfig};

use crate::args::ModelArgs;

/// Every command's error: printed as one line by `main`, which then exits non-zero.
pub type CliError = Box<dyn std::error::Error>;

/// The models this build can fit.
const MODELS: &[&str] = &["gp"];

/// Read the data set named by the arguments.
pub fn dataset(a: &ModelArgs) -> Result<Dataset, CliError> {
    Ok(read_csv(&a.data, &a.target, a.inputs.as_deref())?)
}

/// The regressor configuration the arguments ask for.
pub fn config(a: &ModelArgs) -> Result<RegressorConfig, CliError> {
    if !MODELS.contains(&a.model.as_str()) {
        return Err(format!(
            "--model {}: not available in this build (available: {})",
            a.model,
            MODELS.join(", ")
        )
        .into());
    }
    Ok(RegressorConfig {
        kernel: a.kernel.clone(),
        noise: a.noise,
        mean: a.mean.clone(),
        standardize: !a.no_standardize,
        fit: FitOptions {
            optimize: !a.no_optimize,
            restarts: a.restarts,
            seed: a.seed,
            ..FitOptions::default()
        },
    })
}

/// The fit summary shared by `fit` and `evaluate`: per-output hyperparameters and objective.
pub fn fit_summary(r: &Regressor) -> Value {
    let per_output: Vec<Value> = r
        .outputs
        .iter()
        .map(|o| {
            let h = o.gp.hyper();
            json!({
                "target": o.target,
                "lml": o.gp.lml(),
                "kernel": h.kernel.to_expr(),
                "noise": h.noise,
                "mean": h.mean,
                "jitter": o.gp.jitter(),
                "n_train": o.gp.posterior().x().nrows(),
                "missing_target_rows": o.missing_rows,
                "starts": o.gp.starts(),
            })
        })
        .collect();
    let lml: f64 = r.outputs.iter().map(|o| o.gp.lml()).sum();
    let first = &r.outputs[0];
    json!({
        "model": "gp",
        "outputs": r.outputs.iter().map(|o| o.target.clone()).collect::<Vec<_>>(),
        "objective": {"name": "log_marginal_likelihood", "value": lml},
        "lml": lml,
        "kernel": first.gp.hyper().kernel.to_expr(),
        "noise": first.gp.hyper().noise,
        "jitter": r.outputs.iter().map(|o| o.gp.jitter()).fold(0.0, f64::max),
        "fit_seconds": r.fit_seconds,
        "per_output": per_output,
        "warnings": r.warnings,
    })
}

/// Tell the user (on stderr) what the fit reported that they should know.
pub fn report_warnings(r: &Regressor) {
    for w in &r.warnings {
        eprintln!("warning: {w}");
    }
}

/// Print one JSON object on stdout.
pub fn print_json(v: &Value) -> Result<(), CliError> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}
