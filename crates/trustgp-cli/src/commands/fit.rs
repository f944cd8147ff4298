//! `trustgp fit`: fit a model to a CSV and save it.

use serde_json::Value;
use trustgp::models::file;
use trustgp::models::regressor::Regressor;

use super::{config, dataset, fit_summary, print_json, report_warnings, CliError};
use crate::args::FitArgs;
use crate::progress::spinner;

/// Run the subcommand.
pub fn run(a: &FitArgs) -> Result<(), CliError> {
    let data = dataset(&a.model)?;
    let cfg = config(&a.model)?;
    let pb = spinner(&format!(
        "fitting {} to {} rows",
        cfg.model.name(),
        data.n()
    ));
    let model = Regressor::fit(&data, &cfg);
    pb.finish_and_clear();
    let model = model?;
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
