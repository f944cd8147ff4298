//! `trustgp fit`: fit a model to a CSV and save it.

use std::fs::OpenOptions;
use std::path::Path;

use serde_json::Value;
use trustgp::estimators::file;

use super::{
    checked_config, dataset, fit_with_progress, options, print_json, summary_json, CliError,
};
use crate::args::FitArgs;

/// Fail now, not after the fit, if the model file cannot be written: open it for appending
/// (which changes nothing in an existing file) and remove it again if this created it.
fn check_writable(path: &Path) -> Result<(), CliError> {
    let existed = path.exists();
    OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| {
            format!(
                "--out {}: cannot write the model file there: {e}",
                path.display()
            )
        })?;
    if !existed {
        std::fs::remove_file(path).map_err(|e| format!("--out {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Run the subcommand.
pub fn run(a: &FitArgs) -> Result<(), CliError> {
    if a.model.model == "gpc" {
        check_writable(&a.out)?;
        return super::classify::fit(a);
    }
    super::classify::reject_inference(&a.model)?;
    let cfg = options(&a.model).check()?;
    check_writable(&a.out)?;
    let data = dataset(&a.model)?;
    let advice = checked_config(&a.model, &cfg, &data)?;
    let model = fit_with_progress(&data, &cfg, "rows")?;
    let mut summary = summary_json(&model, data.n(), advice)?;
    file::save(&model, &a.out)?;
    if let Value::Object(m) = &mut summary {
        m.insert("standardize".into(), cfg.standardize.into());
        m.insert("out".into(), a.out.display().to_string().into());
    }
    print_json(&summary)
}
