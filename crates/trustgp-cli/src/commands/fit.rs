//! `trustgp fit`: fit a model to a CSV and save it.

use serde_json::Value;
use trustgp::models::file;

use super::{
    config, dataset, fit_summary, fit_with_progress, print_json, report_warnings, CliError,
};
use crate::args::FitArgs;

/// Run the subcommand.
pub fn run(a: &FitArgs) -> Result<(), CliError> {
    let data = dataset(&a.model)?;
    let cfg = config(&a.model)?;
    let model = fit_with_progress(&data, &cfg, "rows")?;
    report_warnings(&model);
    file::save(&model, &a.out)?;
    let mut summary = fit_summary(&model);
    if let Value::Object(m) = &mut summary {
        m.insert("n".into(), data.n().into());
        m.insert("d".into(), data.d().into());
        m.insert("standardize".into(), (!a.model.no_standardize).into());
        m.insert("out".into(), a.out.display().to_string().into());
    }
    print_json(&summary)
}
