//! `trustgp suggest`: the next point to evaluate, as JSON (and optionally CSV).

use std::path::Path;
use std::time::Instant;

use serde_json::{json, Map, Value};
use trustgp::data::{read_csv, Dataset};
use trustgp::estimators::{finite, format_number};
use trustgp::sequential::suggest::{parse_bounds, suggest, SuggestAcquisition, SuggestOptions};

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

/// Run the subcommand.
pub fn run(a: &SuggestArgs) -> Result<(), CliError> {
    let start = Instant::now();
    let bounds = parse_bounds(&a.bounds)?;
    let minimize = match a.direction.as_str() {
        "maximize" => false,
        "minimize" => true,
        other => {
            return Err(
                format!("unknown --direction '{other}' (expected maximize or minimize)").into(),
            )
        }
    };
    let options = SuggestOptions {
        acquisition: SuggestAcquisition::parse(&a.acquisition)?,
        minimize,
        seed: a.seed,
    };
    let names: Vec<String> = bounds.iter().map(|b| b.name.clone()).collect();
    let data = match (&a.data, &a.target) {
        (Some(path), Some(target)) => evaluated(path, target, &names)?,
        _ => None,
    };
    let s = suggest(&bounds, data.as_ref(), &options)?;
    let mut point = Map::new();
    for (name, &v) in names.iter().zip(&s.x) {
        point.insert(name.clone(), json!(v));
    }
    let acquisition = match s.acquisition_value {
        Some(v) => {
            finite(v, || "the acquisition value".into())?;
            json!({"name": options.acquisition.name(), "value": v})
        }
        None => json!({"name": "sobol", "value": Value::Null}),
    };
    let model = match (&s.model, &data) {
        (Some(m), Some(d)) => summary_json(m, d.n(), None)?,
        _ => Value::Null,
    };
    if let Some(path) = &a.out {
        let row: Vec<String> = s.x.iter().map(|&v| format_number(v)).collect();
        let text = format!("{}\n{}\n", names.join(","), row.join(","));
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    print_json(&json!({
        "points": [point],
        "acquisition": acquisition,
        "model": model,
        "seconds": start.elapsed().as_secs_f64(),
    }))
}
