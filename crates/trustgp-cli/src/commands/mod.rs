//! One module per subcommand, plus what `fit` and `evaluate` share.

pub mod demo;
pub mod evaluate;
pub mod fit;
pub mod predict;

use serde_json::{json, Value};
use trustgp::data::{read_csv, Dataset};
use trustgp::fit::FitOptions;
use trustgp::fit::Optimizer;
use trustgp::models::approximate::{ApproxModel, ApproxOptions};
use trustgp::models::computation_aware::{ActionKind, Actions};
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
    let robust = model.is_robust();
    let multi = matches!(model, ModelKind::Mogp | ModelKind::MoRcgp);
    if !robust && !a.epsilon.is_empty() {
        return Err(format!(
            "--epsilon applies to the robust models (rcgp, mo-rcgp, rcsvgp, rcagp), not {}",
            a.model
        )
        .into());
    }
    let approx = approx_options(a, model)?;
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
    if let Some(m) = a.mean.as_deref().filter(|m| multi && *m != "zero") {
        return Err(format!(
            "--mean {m}: the multi-output models use each output's training mean as prior mean"
        )
        .into());
    }
    let mean = a.mean.clone().unwrap_or_else(|| {
        if model.approximate().is_some() {
            "constant".into()
        } else {
            "zero".into()
        }
    });
    Ok(RegressorConfig {
        model,
        kernel: a.kernel.clone(),
        noise: a.noise,
        mean,
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
        approx,
    })
}

/// The approximate models' settings, refusing flags that the chosen model does not use.
fn approx_options(a: &ModelArgs, model: ModelKind) -> Result<ApproxOptions, CliError> {
    let uses = |flag: &str, models: &[ModelKind]| -> Result<(), CliError> {
        if models.contains(&model) {
            Ok(())
        } else {
            let names: Vec<&str> = models.iter().map(|m| m.name()).collect();
            Err(format!(
                "{flag} applies to {}, not {}",
                names.join(", "),
                model.name()
            )
            .into())
        }
    };
    let (sparse, ca) = (
        [ModelKind::Sgpr, ModelKind::Svgp, ModelKind::Rcsvgp],
        [ModelKind::Cagp, ModelKind::Rcagp],
    );
    let approximate = [sparse.as_slice(), ca.as_slice()].concat();
    if a.inducing.is_some() {
        uses("--inducing", &sparse)?;
    }
    if a.actions.is_some() {
        uses("--actions", &ca)?;
    }
    let action_kind = match a.action_kind.as_deref() {
        None => ActionKind::Blocks,
        Some(kind) => {
            uses("--action-kind", &ca)?;
            match kind {
                "blocks" => ActionKind::Blocks,
                "inducing" => ActionKind::Inducing,
                other => {
                    return Err(
                        format!("--action-kind {other}: expected blocks or inducing").into(),
                    )
                }
            }
        }
    };
    if a.batch_size.is_some() {
        uses("--batch-size", &[ModelKind::Svgp])?;
    }
    if a.free_noise {
        uses("--free-noise", &[ModelKind::Rcsvgp, ModelKind::Rcagp])?;
    }
    let student_t = match a.likelihood.as_str() {
        "gaussian" => false,
        "student-t" => {
            uses("--likelihood student-t", &[ModelKind::Svgp])?;
            true
        }
        other => {
            return Err(format!("--likelihood {other}: expected gaussian or student-t").into())
        }
    };
    if a.optimizer.is_some() || a.iterations.is_some() || a.lr.is_some() {
        uses("--optimizer/--iterations/--lr", &approximate)?;
    }
    if let Some(m) = a.inducing.filter(|&m| m == 0) {
        return Err(format!("--inducing {m}: need at least one inducing point").into());
    }
    if let Some(i) = a.actions.filter(|&i| i == 0) {
        return Err(format!("--actions {i}: need at least one action").into());
    }
    if let Some(b) = a.batch_size.filter(|&b| b == 0) {
        return Err(format!("--batch-size {b}: need at least one row per batch").into());
    }
    let lr = a.lr.unwrap_or(0.01);
    if !(lr.is_finite() && lr > 0.0) {
        return Err(format!("--lr {lr}: expected a positive learning rate").into());
    }
    let optimizer = match (a.optimizer.as_deref(), a.iterations) {
        (None, None) if a.lr.is_none() => None,
        (Some("lbfgs"), it) => {
            if a.lr.is_some() {
                return Err("--lr applies to --optimizer adam".into());
            }
            Some(Optimizer::lbfgs(it.unwrap_or(500)))
        }
        (Some("adam"), it) => Some(Optimizer::adam_early_stopping(
            it.unwrap_or(2000),
            lr,
            50,
            1e-5,
        )),
        (None, it) if model == ModelKind::Svgp => Some(Optimizer::adam_early_stopping(
            it.unwrap_or(2000),
            lr,
            50,
            1e-5,
        )),
        (None, it) => {
            if a.lr.is_some() {
                return Err("--lr applies to --optimizer adam".into());
            }
            Some(Optimizer::lbfgs(it.unwrap_or(500)))
        }
        (Some(other), _) => {
            return Err(format!("--optimizer {other}: expected lbfgs or adam").into())
        }
    };
    Ok(ApproxOptions {
        inducing: a.inducing,
        actions: a.actions,
        action_kind,
        student_t,
        optimizer,
        batch_size: a.batch_size,
        free_noise: a.free_noise,
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
                        "n_train": o.gp.x().map(|x| x.nrows()),
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
                        SingleOutput::Approx(g, eps) => {
                            approx_summary(g, *eps, &mut v);
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

/// The approximate model's own fields in the fit summary: sizes, training report, and for the
/// robust ones ε and the count of down-weighted rows.
fn approx_summary(g: &ApproxModel, eps: f64, v: &mut Value) {
    match g {
        ApproxModel::Sparse(s) => v["inducing"] = s.inducing().nrows().into(),
        ApproxModel::Svgp(s, _) => {
            v["inducing"] = s.inducing().nrows().into();
            v["likelihood"] = s.likelihood().0.name().into();
        }
        ApproxModel::Ca(c) => {
            v["actions"] = c.action_count().into();
            v["action_kind"] = match c.actions() {
                Actions::Blocks(_) => "blocks",
                Actions::Inducing(_) => "inducing",
            }
            .into();
        }
    }
    if let Some(r) = g.report() {
        v["training"] = json!({"iterations": r.iterations, "evaluations": r.evaluations,
                               "converged": r.converged, "message": r.message});
    }
    let w = g.weights();
    if !w.is_empty() {
        v["epsilon"] = eps.into();
        v["downweighted"] = downweighted(&w).into();
    }
}

/// Fits with a spinner on stderr that shows the approximate models' evaluations as they come.
pub fn fit_with_progress(
    data: &Dataset,
    cfg: &RegressorConfig,
    rows: &str,
) -> Result<Regressor, CliError> {
    let what = format!("fitting {} to {} {rows}", cfg.model.name(), data.n());
    let pb = crate::progress::spinner(&what);
    let model = Regressor::fit_observed(data, cfg, &mut |t, i, f| {
        pb.set_message(format!(
            "{what}: target {}, evaluation {i}, objective {f:.4}",
            t + 1
        ))
    });
    pb.finish_and_clear();
    Ok(model?)
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
