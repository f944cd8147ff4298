//! `fit`, `predict` and `evaluate` of the classifier (`--model gpc`): labels as text, class
//! probabilities as `prob_<class>` columns and the most probable `label`.

use std::io::Write;

use serde_json::{json, Value};
use trustgp::data::{random_split, read_inputs, read_labelled_csv, read_split_file, LabelledData};
use trustgp::estimators::classifier::csv_field;
use trustgp::estimators::{
    classification_metrics, finite, format_number, save_classifier, Classifier, ClassifierOptions,
};

use super::{print_json, CliError};
use crate::args::{EvaluateArgs, FitArgs, ModelArgs, PredictArgs};
use crate::progress::Progress;

/// `--inference`, `--sparse` and `--per-class-kernels` are the classifier's; a regression
/// model refuses them (sparse regression is by `--model sgpr`, `svgp`, …).
pub fn reject_inference(a: &ModelArgs) -> Result<(), CliError> {
    let given = [
        a.inference.as_ref().map(|v| format!("--inference {v}")),
        a.sparse.as_ref().map(|v| format!("--sparse {v}")),
        a.per_class_kernels
            .then(|| "--per-class-kernels".to_string()),
    ];
    match given.into_iter().flatten().next() {
        Some(option) => Err(format!(
            "{option}: applies to gpc, not {} (sparse regression models are sgpr, svgp, …)",
            a.model
        )
        .into()),
        None => Ok(()),
    }
}

/// The classifier's options, refusing the regression models' options.
fn options(a: &ModelArgs) -> Result<ClassifierOptions, CliError> {
    let given = [
        ("--noise", a.noise.is_some()),
        ("--mean", a.mean.is_some()),
        ("--epsilon", !a.epsilon.is_empty()),
        ("--weight", a.weight.is_some()),
        ("--shared-noise", a.shared_noise),
        ("--rank", a.rank.is_some()),
        ("--actions", a.actions.is_some()),
        ("--action-kind", a.action_kind.is_some()),
        ("--optimizer", a.optimizer.is_some()),
        ("--iterations", a.iterations.is_some()),
        ("--lr", a.lr.is_some()),
        ("--batch-size", a.batch_size.is_some()),
        ("--free-noise", a.free_noise),
    ];
    if let Some((option, _)) = given.iter().find(|(_, on)| *on) {
        return Err(format!("{option}: does not apply to gpc (a classifier)").into());
    }
    if a.target.len() != 1 {
        return Err(format!(
            "--target {}: gpc takes one label column, got {}",
            a.target.join(","),
            a.target.len()
        )
        .into());
    }
    Ok(ClassifierOptions {
        kernel: a.kernel.clone(),
        likelihood: a.likelihood.clone(),
        inference: a.inference.clone(),
        restarts: a.restarts,
        seed: a.seed,
        optimize: !a.no_optimize,
        standardize: !a.no_standardize,
        sparse: a.sparse.clone(),
        inducing: a.inducing,
        per_class_kernels: a.per_class_kernels,
    })
}

fn read(a: &ModelArgs) -> Result<LabelledData, CliError> {
    Ok(read_labelled_csv(
        &a.data,
        &a.target[0],
        a.inputs.as_deref(),
    )?)
}

fn fit_with_progress(a: &ModelArgs, data: &LabelledData) -> Result<Classifier, CliError> {
    let cfg = options(a)?.check()?;
    let progress = Progress::start(&format!("fitting gpc to {} rows", data.labels.len()));
    let model = Classifier::fit(
        data.x.as_ref(),
        &data.labels,
        &data.input_names,
        &data.target_name,
        &cfg,
    );
    progress.finish();
    let model = model?;
    for w in &model.warnings {
        eprintln!("warning: {w}");
    }
    Ok(model)
}

/// The summary, refusing a non-finite number.
fn summary(model: &Classifier, n: usize) -> Result<Value, CliError> {
    finite(model.lml(), || "the log marginal likelihood".to_string())?;
    Ok(model.summary(n))
}

/// `trustgp fit --model gpc`.
pub fn fit(a: &FitArgs) -> Result<(), CliError> {
    options(&a.model)?.check()?;
    let data = read(&a.model)?;
    let model = fit_with_progress(&a.model, &data)?;
    let mut out = summary(&model, data.labels.len())?;
    save_classifier(&model, &a.out)?;
    if let Value::Object(m) = &mut out {
        m.insert("standardize".into(), (!a.model.no_standardize).into());
        m.insert("out".into(), a.out.display().to_string().into());
    }
    print_json(&out)
}

/// `trustgp predict` with a classifier's model file.
pub fn predict(a: &PredictArgs, model: &Classifier) -> Result<(), CliError> {
    if a.latent {
        return Err("--latent: applies to regression models, not gpc".into());
    }
    let x = read_inputs(&a.data, &model.inputs)?;
    let proba = model.predict_proba(x.as_ref())?;
    for i in 0..proba.nrows() {
        for c in 0..proba.ncols() {
            finite(proba[(i, c)], || {
                format!("the probability of class '{}' at row {i}", model.classes[c])
            })?;
        }
    }
    let labels = model.labels_of(proba.as_ref());
    let mut header: Vec<String> = model
        .classes
        .iter()
        .map(|c| csv_field(&format!("prob_{c}")))
        .collect();
    header.push("label".into());
    let mut text = header.join(",");
    text.push('\n');
    for (i, label) in labels.iter().enumerate() {
        let mut row: Vec<String> = (0..proba.ncols())
            .map(|c| format_number(proba[(i, c)]))
            .collect();
        row.push(csv_field(label));
        text.push_str(&row.join(","));
        text.push('\n');
    }
    match &a.out {
        Some(path) => {
            std::fs::write(path, &text).map_err(|e| format!("{}: {e}", path.display()))?;
            print_json(&json!({
                "rows": x.nrows(),
                "columns": header,
                "classes": model.classes,
                "out": path.display().to_string(),
            }))
        }
        None => {
            std::io::stdout().write_all(text.as_bytes())?;
            Ok(())
        }
    }
}

/// `trustgp evaluate --model gpc`: accuracy, log loss and Brier score on the test rows.
pub fn evaluate(a: &EvaluateArgs) -> Result<(), CliError> {
    options(&a.model)?.check()?;
    if a.contaminate.is_some() {
        return Err("--contaminate: applies to regression models, not gpc".into());
    }
    let data = read(&a.model)?;
    let n = data.labels.len();
    let split = match (&a.split_file, a.split) {
        (Some(path), Some(k)) => read_split_file(path, k, n)?,
        _ => random_split(
            n,
            a.test_fraction
                .unwrap_or(super::evaluate::DEFAULT_TEST_FRACTION),
            a.model.seed,
        )?,
    };
    let (train, test) = (
        data.select_rows(&split.train),
        data.select_rows(&split.test),
    );
    let model = fit_with_progress(&a.model, &train)?;
    let summary = summary(&model, split.train.len())?;
    let proba = model.predict_proba(test.x.as_ref())?;
    let (accuracy, log_loss, brier) =
        classification_metrics(&model.classes, proba.as_ref(), &test.labels)?;
    for (name, v) in [
        ("accuracy", accuracy),
        ("log loss", log_loss),
        ("brier", brier),
    ] {
        finite(v, || format!("the test {name}"))?;
    }
    let mut out = json!({
        "accuracy": accuracy,
        "log_loss": log_loss,
        "brier": brier,
        "n_train": split.train.len(),
        "n_test": split.test.len(),
        "fit_seconds": model.fit_seconds,
    });
    if let (Value::Object(o), Value::Object(f)) = (&mut out, summary) {
        for (key, v) in f {
            o.entry(key).or_insert(v);
        }
    }
    print_json(&out)
}
