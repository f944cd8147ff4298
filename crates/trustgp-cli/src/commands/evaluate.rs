//! `trustgp evaluate`: fit on the training rows, report test metrics in original units.

use serde_json::{json, Value};
use trustgp::data::{
    contaminate, metrics, random_split, read_split_file, ContaminationSpec, Protocol, Split,
};

use trustgp::estimators::{check_predictions, finite};

use super::{
    checked_config, dataset, fit_with_progress, options, print_json, summary_json, CliError,
};
use crate::args::EvaluateArgs;

/// The test fraction when neither it nor a split file is given.
pub(super) const DEFAULT_TEST_FRACTION: f64 = 0.2;

/// Run the subcommand.
pub fn run(a: &EvaluateArgs) -> Result<(), CliError> {
    if a.model.model == "gpc" {
        return super::classify::evaluate(a);
    }
    super::classify::reject_inference(&a.model)?;
    let cfg = options(&a.model).check()?;
    let mut data = dataset(&a.model)?;
    let split: Split = match (&a.split_file, a.split) {
        (Some(path), Some(k)) => read_split_file(path, k, data.n())?,
        _ => random_split(
            data.n(),
            a.test_fraction.unwrap_or(DEFAULT_TEST_FRACTION),
            a.model.seed,
        )?,
    };
    let contamination = match &a.contaminate {
        Some(text) => {
            let spec = ContaminationSpec::parse(text)?;
            let protocol = Protocol::parse(&a.contaminate_protocol)?;
            let report = contaminate(&mut data, &split.train, &spec, protocol, a.model.seed)?;
            eprintln!(
                "contaminated {} training row(s) of '{}' ({} protocol); test rows are clean",
                report.rows.len(),
                data.target_names[report.column],
                protocol.name()
            );
            Some(json!({
                "spec": spec.to_string(),
                "protocol": protocol.name(),
                "target": data.target_names[report.column],
                "rows": report.rows,
                "inputs_changed": report.inputs_changed,
            }))
        }
        None => None,
    };
    let train = data.select_rows(&split.train);
    let test = data.select_rows(&split.test);
    let advice = checked_config(&a.model, &cfg, &train)?;
    let model = fit_with_progress(&train, &cfg, "training rows")?;
    let summary = summary_json(&model, train.n(), advice)?;
    let preds = model.predict(test.x.as_ref(), false)?;
    check_predictions(&preds)?;
    let mut per_output = Vec::new();
    let (mut rmse, mut mae, mut nlpd) = (0.0, 0.0, 0.0);
    for (t, p) in preds.iter().enumerate() {
        let y: Vec<f64> = (0..test.n()).map(|i| test.y[(i, t)]).collect();
        let values = [
            ("rmse", metrics::rmse(&y, &p.mean)?),
            ("mae", metrics::mae(&y, &p.mean)?),
            ("nlpd", metrics::nlpd_mean(&y, &p.mean, &p.std)?),
            ("nlpd_sum", metrics::nlpd_sum(&y, &p.mean, &p.std)?),
        ];
        for (name, v) in values {
            finite(v, || format!("the test {name} of '{}'", p.target))?;
        }
        rmse += values[0].1;
        mae += values[1].1;
        nlpd += values[2].1;
        per_output.push(json!({
            "target": p.target,
            "rmse": values[0].1,
            "mae": values[1].1,
            "nlpd": values[2].1,
            "nlpd_sum": values[3].1,
        }));
    }
    let k = preds.len() as f64;
    let mut out = json!({
        "rmse": rmse / k,
        "mae": mae / k,
        "nlpd": nlpd / k,
        "n_train": train.n(),
        "n_test": test.n(),
        "fit_seconds": model.fit_seconds,
        "metrics_per_output": per_output,
        "contamination": contamination,
    });
    if let (Value::Object(o), Value::Object(f)) = (&mut out, summary) {
        for (key, v) in f {
            o.entry(key).or_insert(v);
        }
    }
    print_json(&out)
}
