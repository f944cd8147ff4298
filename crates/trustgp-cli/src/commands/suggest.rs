//! `trustgp suggest`: the next points to evaluate, as JSON (and optionally CSV), through the
//! library's ask/tell [`BayesOpt`] run.
//!
//! Without `--state`, every call is a fresh run told every row of `--data`. With `--state`,
//! the run is read from the file (created when absent, with the settings of the flags), the
//! rows of `--data` it has not seen yet are told as one batch (so TuRBO's region moves), and
//! the file is rewritten. The rows the state has seen must be the first rows of `--data`,
//! unchanged, and the flags must repeat the settings the state was created with.

use std::path::Path;
use std::time::Instant;

use serde_json::{json, Map, Value};
use trustgp::data::{read_csv, DataError, Dataset};
use trustgp::estimators::{finite, format_number};
use trustgp::sequential::bayes_opt::{BayesOpt, BoSettings, ExpertPrior, Method, Proposal};

use super::bo::robust_centre;
use trustgp::sequential::suggest::{parse_bounds, SuggestAcquisition};

use super::{print_json, summary_json, CliError};
use crate::args::SuggestArgs;

/// The evaluated rows of `path`, or `None` for a file with a header and no rows.
fn evaluated(path: &Path, target: &str, inputs: &[String]) -> Result<Option<Dataset>, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if text.lines().filter(|l| !l.trim().is_empty()).count() <= 1 {
        return Ok(None);
    }
    Ok(Some(read_csv(path, &[target.to_string()], Some(inputs))?))
}

/// The points and values of `data` (rows without a target value are refused).
fn rows(data: &Dataset, path: &Path) -> Result<(Vec<Vec<f64>>, Vec<f64>), CliError> {
    if let Some(i) = (0..data.n()).find(|&i| data.y[(i, 0)].is_nan()) {
        return Err(format!("{}: row {} has no target value", path.display(), i + 1).into());
    }
    let x = (0..data.n())
        .map(|i| (0..data.d()).map(|c| data.x[(i, c)]).collect())
        .collect();
    Ok((x, (0..data.n()).map(|i| data.y[(i, 0)]).collect()))
}

/// The settings of the flags.
fn settings(a: &SuggestArgs) -> Result<BoSettings, CliError> {
    let mut s = BoSettings::new(parse_bounds(&a.bounds)?);
    s.minimize = match a.direction.as_str() {
        "maximize" => false,
        "minimize" => true,
        other => {
            return Err(
                format!("unknown --direction '{other}' (expected maximize or minimize)").into(),
            )
        }
    };
    s.acquisition = SuggestAcquisition::parse(&a.acquisition)?;
    s.method = Method::parse(&a.method)?;
    if s.method.uses_trust_region() && a.state.is_none() {
        return Err(
            "--method turbo, eulbo-turbo and dpp-turbo keep their trust region between calls in \
                    --state; give --state FILE"
                .into(),
        );
    }
    if let Some(t) = &a.target {
        s.target.clone_from(t);
    }
    s.model.clone_from(&a.model);
    s.robust_centre = robust_centre(a.robust_centre.as_deref(), &a.model)?;
    s.expert_mean = match expert_column(a)? {
        Some(_) => ExpertPrior::Corrections,
        None => ExpertPrior::parse(&a.expert_mean)?,
    };
    s.n_init = a.init;
    s.seed = a.seed;
    s.check()?;
    Ok(s)
}

/// The column of `--expert-mean corrections:COLUMN`, if given (it needs `--data`).
fn expert_column(a: &SuggestArgs) -> Result<Option<&str>, CliError> {
    match a.expert_mean.split_once(':') {
        Some(("corrections", column)) if a.data.is_some() && !column.is_empty() => Ok(Some(column)),
        Some(("corrections", _)) => Err(
            "--expert-mean corrections:COLUMN reads the corrections from a column of --data".into(),
        ),
        _ if a.expert_mean == "corrections" => Err(
            "--expert-mean corrections needs the column of --data that holds them: \
             corrections:COLUMN"
                .into(),
        ),
        _ => Ok(None),
    }
}

/// Tells `run` the expert's corrections: the rows of `path` with a value in `column` (the
/// corrections replace any the state kept).
fn tell_corrections(
    run: &mut BayesOpt,
    path: &Path,
    column: &str,
    inputs: &[String],
) -> Result<(), CliError> {
    run.clear_corrections();
    if run.y().is_empty() {
        return Ok(());
    }
    let data = match read_csv(path, &[column.to_string()], Some(inputs)) {
        Ok(data) => data,
        // An empty column: no outlier flagged (yet).
        Err(DataError::NoObservedTarget { .. }) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    for i in (0..data.n()).filter(|&i| !data.y[(i, 0)].is_nan()) {
        run.correct(i, data.y[(i, 0)])
            .map_err(|e| format!("{}, column '{column}', row {}: {e}", path.display(), i + 1))?;
    }
    Ok(())
}

/// The run stored at `path`, whose settings must be `wanted`.
fn resume(path: &Path, wanted: &BoSettings) -> Result<BayesOpt, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let run = BayesOpt::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let s = run.settings();
    let differ: Vec<&str> = [
        ("--bounds", s.bounds != wanted.bounds),
        ("--target", s.target != wanted.target),
        ("--direction", s.minimize != wanted.minimize),
        ("--model", s.model != wanted.model),
        ("--acquisition", s.acquisition != wanted.acquisition),
        ("--method", s.method != wanted.method),
        ("--robust-centre", s.robust_centre != wanted.robust_centre),
        ("--expert-mean", s.expert_mean != wanted.expert_mean),
        ("--init", s.n_init != wanted.n_init),
        ("--seed", s.seed != wanted.seed),
    ]
    .into_iter()
    .filter_map(|(flag, d)| d.then_some(flag))
    .collect();
    if !differ.is_empty() {
        return Err(format!(
            "{}: the state was created with other {}; repeat its flags or start a new state file",
            path.display(),
            differ.join(", ")
        )
        .into());
    }
    Ok(run)
}

/// Tells `run` the rows of `--data` it has not seen, after checking that those it has seen
/// are its first rows.
fn tell_new_rows(
    run: &mut BayesOpt,
    x: &[Vec<f64>],
    y: &[f64],
    data: Option<&Path>,
) -> Result<(), CliError> {
    let data = data.map_or("--data (not given)".into(), |p| p.display().to_string());
    let seen = run.x().len();
    if x.len() < seen {
        return Err(format!(
            "{data} has {} rows but the state has already seen {seen}: the state's rows must be \
             the first rows of --data",
            x.len()
        )
        .into());
    }
    if let Some(i) = (0..seen).find(|&i| run.x()[i] != x[i] || run.y()[i] != y[i]) {
        return Err(format!(
            "{data}: row {} differs from the state's observation {}: the state's rows must be \
             the first rows of --data, unchanged",
            i + 1,
            i + 1
        )
        .into());
    }
    if x.len() > seen {
        run.tell(&x[seen..], &y[seen..]).map_err(|e| {
            format!(
                "{data} rows {}–{} (point 1 is row {}): {e}",
                seen + 1,
                x.len(),
                seen + 1
            )
        })?;
    }
    Ok(())
}

/// The proposal's JSON object (without the timing).
fn report(run: &BayesOpt, p: &Proposal) -> Result<Map<String, Value>, CliError> {
    let names: Vec<&str> = run
        .settings()
        .bounds
        .iter()
        .map(|b| b.name.as_str())
        .collect();
    let points: Vec<Value> = p
        .points
        .iter()
        .map(|x| {
            Value::Object(
                names
                    .iter()
                    .map(|n| n.to_string())
                    .zip(x.iter().map(|v| json!(v)))
                    .collect(),
            )
        })
        .collect();
    // Design points come from the Sobol sequence; Thompson sampling has no value.
    let acquisition = match (&p.model, p.acquisition_value) {
        (None, _) => json!({"name": "sobol", "value": Value::Null}),
        (Some(_), Some(v)) => {
            finite(v, || "the acquisition value".into())?;
            json!({"name": run.settings().acquisition.name(), "value": v})
        }
        (Some(_), None) => json!({"name": run.settings().acquisition.name(), "value": Value::Null}),
    };
    let model = match &p.model {
        Some(m) => summary_json(m, run.x().len(), None)?,
        None => Value::Null,
    };
    let mut out = Map::new();
    out.insert("points".into(), Value::Array(points));
    out.insert("acquisition".into(), acquisition);
    out.insert("model".into(), model);
    if let Some(region) = run.trust_region() {
        let (lower, upper) = p.region.clone().unzip();
        out.insert(
            "trust_region".into(),
            json!({"length": region.length(), "lower": lower, "upper": upper}),
        );
    }
    Ok(out)
}

/// Run the subcommand.
pub fn run(a: &SuggestArgs) -> Result<(), CliError> {
    if super::safe_suggest::wanted(a) {
        return super::safe_suggest::run(a);
    }
    let start = Instant::now();
    let settings = settings(a)?;
    let names: Vec<String> = settings.bounds.iter().map(|b| b.name.clone()).collect();
    let mut run = match &a.state {
        Some(path) if path.exists() => resume(path, &settings)?,
        _ => BayesOpt::new(settings)?,
    };
    let (x, y) = match (&a.data, &a.target) {
        (Some(path), Some(target)) => match evaluated(path, target, &names)? {
            Some(data) => rows(&data, path)?,
            None => (Vec::new(), Vec::new()),
        },
        _ => (Vec::new(), Vec::new()),
    };
    tell_new_rows(&mut run, &x, &y, a.data.as_deref())?;
    if let (Some(column), Some(path)) = (expert_column(a)?, &a.data) {
        tell_corrections(&mut run, path, column, &names)?;
    }
    let proposal = run.ask(a.batch)?;
    let mut out = report(&run, &proposal)?;
    if let Some(path) = &a.out {
        let mut text = format!("{}\n", names.join(","));
        for x in &proposal.points {
            let row: Vec<String> = x.iter().map(|&v| format_number(v)).collect();
            text.push_str(&row.join(","));
            text.push('\n');
        }
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if let Some(path) = &a.state {
        std::fs::write(path, run.to_json()?).map_err(|e| format!("{}: {e}", path.display()))?;
        out.insert("state".into(), json!(path.display().to_string()));
    }
    out.insert("seconds".into(), json!(start.elapsed().as_secs_f64()));
    print_json(&Value::Object(out))
}
