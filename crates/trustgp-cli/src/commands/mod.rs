//! One module per subcommand, plus what `fit` and `evaluate` share.

pub mod demo;
pub mod evaluate;
pub mod fit;
pub mod predict;

use serde_json::{json, Value};
use trustgp::data::{read_csv, Dataset};
use trustgp::models::exact::FitOptions;
use trustgp::models::multi_output::MultiOutputModel;
use trustgp::models::regressor::{Fitted, ModelKind, Regressor, RegressorConfig, SingleOutput};

use crate::args::ModelArgs;

/// Every command's error: printed as one line by `main`, which then exits non-zero.
pub type CliError = Box<dyn std::error::Error>;

/// Read the data set named by the arguments.
pub fn dataset(a: &ModelArgs) -> Result<Dataset, CliError> {
    Ok(read_csv(&a.data, &a.target, a.inputs.as_deref())?)
}

/// The regressor configuration the arguments ask for.
pub fn config(a: &ModelArgs) -> Result<RegressorConfig, CliError> {
    let Some(model) = ModelKind::parse(&a.model) else {
        return Err(format!(
            "--model {}: unknown model (available: {})",
            a.model,
            ModelKind::NAMES.join(", ")
        )
        .into());
    };
    let robust = matches!(model, ModelKind::Rcgp | ModelKind::MoRcgp);
    let multi = matches!(model, ModelKind::Mogp | ModelKind::MoRcgp);
    if !robust && !a.epsilon.is_empty() {
        return Err(format!(
            "--epsilon applies to the robust models (rcgp, mo-rcgp), not {}",
            a.model
        )
        .into());
    }
    if !multi && (a.shared_noise || a.rank.is_some()) {
        return Err(format!(
            "--shared-noise and --rank apply to the multi-output models (mogp, mo-rcgp), not {}",
            a.model
        )
        .into());
    }
    let naive_weight = match a.weight.as_str() {
        "morcgp" => false,
        "rcgp" => true,
        other => {
            return Err(format!("--weight {other}: expected morcgp or rcgp").into());
        }
    };
    if naive_weight && model != ModelKind::MoRcgp {
        return Err("--weight applies to mo-rcgp only".into());
    }
    if multi && a.mean != "zero" {
        return Err(format!(
            "--mean {}: the multi-output models use each output's training mean as prior mean",
            a.mean
        )
        .into());
    }
    Ok(RegressorConfig {
        model,
        kernel: a.kernel.clone(),
        noise: a.noise,
        mean: a.mean.clone(),
        standardize: !a.no_standardize,
        epsilon: a.epsilon.clone(),
        naive_weight,
        shared_noise: a.shared_noise,
        rank: a.rank,
        fit: FitOptions {
            optimize: !a.no_optimize,
            restarts: a.restarts,
            seed: a.seed,
            ..FitOptions::default()
        },
    })
}

/// How many of a robust model's training entries have a normalised weight below one half, i.e.
/// whose effective noise is more than four times the model's noise variance.
fn downweighted(w: &[f64]) -> usize {
    w.iter().filter(|&&v| v < 0.5).count()
}

/// The fit summary shared by `fit` and `evaluate`: per-output hyperparameters and objective.
pub fn fit_summary(r: &Regressor) -> Value {
    let mut out = json!({
        "model": r.model_name(),
        "outputs": r.targets,
        "fit_seconds": r.fit_seconds,
        "warnings": r.warnings,
    });
    let fields = match &r.fitted {
        Fitted::PerTarget(outputs) => {
            let per_output: Vec<Value> = outputs
                .iter()
                .map(|o| {
                    let (name, value) = o.gp.objective();
                    let mut v = json!({
                        "target": o.target,
                        "objective": {"name": name, "value": value},
                        "kernel": o.gp.kernel().to_expr(),
                        "noise": o.gp.noise(),
                        "mean": o.gp.mean(),
                        "jitter": o.gp.jitter(),
                        "n_train": o.gp.x().nrows(),
                        "missing_target_rows": o.missing_rows,
                        "starts": o.gp.starts(),
                    });
                    match &o.gp {
                        SingleOutput::Gp(g) => v["lml"] = g.lml().into(),
                        SingleOutput::Rcgp(g, eps) => {
                            v["epsilon"] = (*eps).into();
                            v["soft_threshold"] = g.weights().thresholds[0].into();
                            v["downweighted"] = downweighted(&g.weights().imq.w_hat).into();
                        }
                    }
                    v
                })
                .collect();
            let (name, _) = outputs[0].gp.objective();
            let total: f64 = outputs.iter().map(|o| o.gp.objective().1).sum();
            let mut f = json!({
                "objective": {"name": name, "value": total},
                "kernel": outputs[0].gp.kernel().to_expr(),
                "noise": outputs[0].gp.noise(),
                "jitter": outputs.iter().map(|o| o.gp.jitter()).fold(0.0, f64::max),
                "per_output": per_output,
            });
            if name == "log_marginal_likelihood" {
                f["lml"] = total.into();
            }
            f
        }
        Fitted::Joint(model, epsilon) => {
            let (name, value) = model.objective();
            let terms: Vec<Value> = model
                .covariance()
                .terms()
                .iter()
                .map(|t| {
                    let b = t.coregion.b();
                    let rows: Vec<Vec<f64>> = (0..b.nrows())
                        .map(|i| (0..b.ncols()).map(|j| b[(i, j)]).collect())
                        .collect();
                    json!({"kernel": t.kernel.to_expr(), "coregionalization": rows})
                })
                .collect();
            let mut f = json!({
                "objective": {"name": name, "value": value},
                "kernel": terms.iter().map(|t| t["kernel"].as_str().unwrap_or_default().to_string()).collect::<Vec<_>>().join("; "),
                "noise": model.noise(),
                "terms": terms,
            });
            match &**model {
                MultiOutputModel::Mogp(g) => {
                    f["lml"] = g.lml().into();
                    f["starts"] = serde_json::to_value(g.starts()).unwrap_or_default();
                }
                MultiOutputModel::Robust(g) => {
                    f["epsilon"] = epsilon.clone().into();
                    f["soft_thresholds"] = g.weights().thresholds.clone().into();
                    f["downweighted"] = downweighted(&g.weights().imq.w_hat).into();
                    f["starts"] = serde_json::to_value(g.starts()).unwrap_or_default();
                }
            }
            f
        }
    };
    if let (Value::Object(o), Value::Object(f)) = (&mut out, fields) {
        o.extend(f);
    }
    out
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
