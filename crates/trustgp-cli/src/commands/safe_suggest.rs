//! `trustgp suggest --constraint …`: the next safe point of a safe active learning or safe BO
//! loop the user drives, through the library's [`safe_suggest`]. The evaluated rows of
//! `--data` hold the inputs (the names in `--bounds`), the target and every constrained
//! column; each `--source` file holds a related task's rows with the same columns.

use std::path::Path;
use std::time::Instant;

use serde_json::{json, Map, Value};
use trustgp::data::{read_csv, read_inputs};
use trustgp::estimators::format_number;
use trustgp::sequential::safe::acquisition::SafeAcquisition;
use trustgp::sequential::safe::safe_set::alpha_from_beta;
use trustgp::sequential::safe::{
    join_bounds, safe_suggest, AcquisitionOptions, BoundSpec, SafeSetOptions, SafeSuggestOptions,
    TaskData, TransferMethod,
};
use trustgp::sequential::suggest::{parse_bounds, DEFAULT_UCB_BETA};

use super::{print_json, CliError};
use crate::args::SuggestArgs;

/// Whether the flags ask for safe learning rather than plain BO.
pub fn wanted(a: &SuggestArgs) -> bool {
    !a.constraint.is_empty()
        || a.pool.is_some()
        || !a.source.is_empty()
        || a.transfer.is_some()
        || a.acquisition == "entropy"
}

/// The rows of `path`: the inputs `names` and the output columns `columns`, every cell
/// observed.
fn task(path: &Path, names: &[String], columns: &[String]) -> Result<TaskData, CliError> {
    let data = read_csv(path, columns, Some(names))?;
    for i in 0..data.n() {
        for (j, c) in columns.iter().enumerate() {
            if data.y[(i, j)].is_nan() {
                return Err(format!(
                    "{}: row {}, column '{c}' is empty (safe learning needs every output of \
                     every evaluated row)",
                    path.display(),
                    i + 1
                )
                .into());
            }
        }
    }
    Ok(TaskData {
        x: data.x,
        outputs: data.y,
    })
}

/// The flags that only plain BO has, refused here with the reason.
fn refuse_bo_flags(a: &SuggestArgs) -> Result<(), CliError> {
    let refuse = |what: &str| -> Result<(), CliError> {
        Err(format!("{what} is not available with safe learning (--constraint)").into())
    };
    if a.constraint.is_empty() {
        return Err(
            "--pool, --source, --transfer and --acquisition entropy are for safe \
                    learning: give at least one --constraint \"COLUMN<=VALUE\" (or >=)"
                .into(),
        );
    }
    if a.batch != 1 {
        return refuse("--batch above 1");
    }
    if a.state.is_some() {
        return refuse("--state");
    }
    if a.method != "standard" {
        return refuse("--method");
    }
    if a.model != "gp" {
        return refuse("--model (the safe models are chosen by --transfer)");
    }
    Ok(())
}

/// Run the safe path of `suggest`.
pub fn run(a: &SuggestArgs) -> Result<(), CliError> {
    let start = Instant::now();
    refuse_bo_flags(a)?;
    let bounds = parse_bounds(&a.bounds)?;
    let names: Vec<String> = bounds.iter().map(|b| b.name.clone()).collect();
    let (Some(data), Some(target)) = (&a.data, &a.target) else {
        return Err(
            "safe learning starts from evaluated rows known to be safe: give --data \
                    and --target"
                .into(),
        );
    };
    let specs: Vec<BoundSpec> = a
        .constraint
        .iter()
        .map(|c| BoundSpec::parse(c))
        .collect::<Result<_, _>>()?;
    // The target first, then each constrained column once.
    let mut columns = vec![target.clone()];
    for s in &specs {
        if !columns.contains(&s.column) {
            columns.push(s.column.clone());
        }
    }
    let constraints = join_bounds(&specs, &columns)?;
    let acquisition = match a.acquisition.as_str() {
        "entropy" => SafeAcquisition::EntropySum,
        "logei" => SafeAcquisition::LogEi,
        "ucb" => SafeAcquisition::Ucb {
            beta: DEFAULT_UCB_BETA,
        },
        other => {
            return Err(format!(
                "--acquisition {other} is not available with --constraint (expected entropy \
                 for safe active learning, or logei or ucb for safe optimisation)"
            )
            .into())
        }
    };
    let minimize = match a.direction.as_str() {
        "maximize" => false,
        "minimize" => true,
        other => {
            return Err(
                format!("unknown --direction '{other}' (expected maximize or minimize)").into(),
            )
        }
    };
    let transfer = match (&a.transfer, a.source.is_empty()) {
        (Some(t), _) => TransferMethod::parse(t).ok_or_else(|| {
            format!(
                "unknown --transfer '{t}' (expected none, efficient-hgp, hgp, lmc or \
                 source-prior)"
            )
        })?,
        (None, true) => TransferMethod::None,
        (None, false) => TransferMethod::EfficientHgp,
    };
    let target_rows = task(data, &names, &columns)?;
    let sources: Vec<TaskData> = a
        .source
        .iter()
        .map(|p| task(p, &names, &columns))
        .collect::<Result<_, _>>()?;
    let pool = a
        .pool
        .as_ref()
        .map(|p| read_inputs(p, &names))
        .transpose()?;
    let options = SafeSuggestOptions {
        transfer,
        safe_set: SafeSetOptions {
            beta: a.beta,
            ..SafeSetOptions::default()
        },
        acquisition: AcquisitionOptions {
            kind: acquisition,
            minimize,
            ..AcquisitionOptions::default()
        },
        seed: a.seed,
    };
    let box_bounds: Vec<(f64, f64)> = bounds.iter().map(|b| (b.lo, b.hi)).collect();
    let s = safe_suggest(
        &box_bounds,
        &target_rows,
        &sources,
        &constraints,
        pool.as_ref().map(|p| p.as_ref()),
        &options,
    )?;

    let point: Map<String, Value> = names
        .iter()
        .cloned()
        .zip(s.x.iter().map(|v| json!(v)))
        .collect();
    let joint: f64 = s.safety_probability.iter().product();
    let mut out = Map::new();
    out.insert("points".into(), json!([point]));
    out.insert(
        "acquisition".into(),
        json!({"name": a.acquisition, "value": s.acquisition}),
    );
    out.insert(
        "model".into(),
        json!({
            "transfer": transfer.name(),
            "outputs": columns,
            "sources": sources.len(),
            "n": target_rows.n(),
            "fit_seconds": s.fit_seconds,
        }),
    );
    out.insert(
        "safe_set".into(),
        json!({
            "size": s.safe_set_size,
            "candidates": s.candidates,
            "fraction": s.safe_set_size as f64 / s.candidates.max(1) as f64,
            "from": if pool.is_some() { "pool" } else { "box (Sobol design)" },
            "beta": a.beta,
            "alpha": alpha_from_beta(a.beta)?,
            "constraints": a.constraint,
            "probability": [s.safety_probability],
            "joint_probability": [joint],
            "pool_row": s.pool_row.map(|r| r + 1),
        }),
    );
    if let Some(path) = &a.out {
        let row: Vec<String> = s.x.iter().map(|&v| format_number(v)).collect();
        let text = format!("{}\n{}\n", names.join(","), row.join(","));
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    out.insert("seconds".into(), json!(start.elapsed().as_secs_f64()));
    print_json(&Value::Object(out))
}
