//! `trustgp predict`: predictions of a saved model as CSV.

use std::io::Write;

use serde_json::json;
use trustgp::data::read_inputs;
use trustgp::estimators::{check_predictions, file, format_number};

use super::{print_json, CliError};
use crate::args::PredictArgs;

/// Run the subcommand.
pub fn run(a: &PredictArgs) -> Result<(), CliError> {
    if let Some(classifier) = trustgp::estimators::load_classifier(&a.model)? {
        return super::classify::predict(a, &classifier);
    }
    let model = file::load(&a.model)?;
    let x = read_inputs(&a.data, &model.inputs)?;
    let preds = model.predict(x.as_ref(), a.latent)?;
    check_predictions(&preds)?;
    let mut text = String::new();
    let header: Vec<String> = preds
        .iter()
        .flat_map(|p| [format!("mean_{}", p.target), format!("std_{}", p.target)])
        .collect();
    text.push_str(&header.join(","));
    text.push('\n');
    for i in 0..x.nrows() {
        let row: Vec<String> = preds
            .iter()
            .flat_map(|p| [format_number(p.mean[i]), format_number(p.std[i])])
            .collect();
        text.push_str(&row.join(","));
        text.push('\n');
    }
    match &a.out {
        Some(path) => {
            std::fs::write(path, &text).map_err(|e| format!("{}: {e}", path.display()))?;
            print_json(&json!({
                "rows": x.nrows(),
                "columns": header,
                "latent": a.latent,
                "out": path.display().to_string(),
            }))
        }
        None => {
            std::io::stdout().write_all(text.as_bytes())?;
            Ok(())
        }
    }
}
