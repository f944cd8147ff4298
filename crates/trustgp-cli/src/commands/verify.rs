//! `trustgp verify`: certified bounds of a saved model's prediction over an ℓ∞ box around each
//! data point, by branch and bound (`trustgp::verify`).
//!
//! Per point: `lower` ≤ the quantity everywhere in the box ≤ `upper` (sound, outward-rounded);
//! `min_found`/`max_found` are the quantity at the concrete inputs `argmin_input`/
//! `argmax_input`; `gap` is how far a bound can be from those; `certified` answers the decision
//! question — for regression "the quantity moves at most `--delta` from its value at the
//! point" (`null` without `--delta`).

use std::time::Duration;

use serde_json::{json, Map, Value};
use trustgp::data::read_inputs;
use trustgp::estimators::ClassifierModel;
use trustgp::estimators::{file, load_classifier, Classifier, Regressor};
use trustgp::verify::{
    attribution_with, binary_certified, classifier_bracket, classifier_decision,
    verify_classifier_box, verify_regressor_box, BinaryLink, BnbOptions, Quantity, Region,
    Verified,
};

use super::{print_json, CliError};
use crate::args::VerifyArgs;

/// Run the subcommand.
pub fn run(a: &VerifyArgs) -> Result<(), CliError> {
    let options = bnb_options(a)?;
    if let Some(d) = a.delta {
        if !(d.is_finite() && d >= 0.0) {
            return Err(format!("--delta must be a finite number ≥ 0, got {d}").into());
        }
    }
    if !(a.radius.is_finite() && a.radius >= 0.0) {
        return Err(format!("--radius must be a finite number ≥ 0, got {}", a.radius).into());
    }
    if let Some(clf) = load_classifier(&a.model)? {
        return run_classifier(a, &clf, &options);
    }
    let model = file::load(&a.model)?;
    run_regression(a, &model, &options)
}

/// The branch-and-bound settings from the flags.
fn bnb_options(a: &VerifyArgs) -> Result<BnbOptions, CliError> {
    if !(a.tolerance.is_finite() && a.tolerance >= 0.0) {
        return Err(format!(
            "--tolerance must be a finite number ≥ 0, got {}",
            a.tolerance
        )
        .into());
    }
    let time_limit = match a.time_limit {
        Some(t) if !(t.is_finite() && t > 0.0) => {
            return Err(
                format!("--time-limit must be a positive number of seconds, got {t}").into(),
            )
        }
        Some(t) => Some(Duration::from_secs_f64(t)),
        None => None,
    };
    Ok(BnbOptions {
        tolerance: a.tolerance,
        max_iterations: a.max_iterations,
        time_limit,
        ..BnbOptions::default()
    })
}

fn run_regression(a: &VerifyArgs, model: &Regressor, options: &BnbOptions) -> Result<(), CliError> {
    let quantity = match a.quantity.as_deref().unwrap_or("mean") {
        "mean" => Quantity::Mean,
        "variance" => Quantity::Variance,
        "probability" => {
            return Err(
                "--quantity probability needs a classifier (fit --model gpc); this is a \
                        regression model: use mean or variance"
                    .into(),
            )
        }
        q => {
            return Err(
                format!("--quantity must be mean, variance or probability, got `{q}`").into(),
            )
        }
    };
    if a.class.is_some() {
        return Err(
            "--class applies to classifiers; this is a regression model (use --output)".into(),
        );
    }
    let output = match &a.output {
        None => 0,
        Some(t) => model.targets.iter().position(|n| n == t).ok_or_else(|| {
            format!(
                "--output `{t}` is not a target of the model (targets: {})",
                model.targets.join(", ")
            )
        })?,
    };
    let free = feature_indices(a.features.as_deref(), &model.inputs)?;
    let points = each_point(a, &model.inputs, &free, |xr, data_box| {
        let xm = trustgp::Mat::from_fn(1, xr.len(), |_, j| xr[j]);
        let pred = model.predict(xm.as_ref(), true)?;
        let value = match quantity {
            Quantity::Variance => pred[output].std[0].powi(2),
            _ => pred[output].mean[0],
        };
        let v = verify_regressor_box(model, output, quantity, data_box, options)?;
        let certified = a.delta.map(|d| (value - v.lower).max(v.upper - value) <= d);
        let mut p = point_json(&v, &model.inputs);
        p.insert("value".into(), json!(value));
        p.insert("certified".into(), json!(certified));
        if a.attribution {
            let att = attribution_with(xr, a.radius, &free, |b| {
                verify_regressor_box(model, output, quantity, b, options)
            })?;
            p.insert("attribution".into(), attribution_json(&att, &model.inputs));
        }
        Ok(p)
    })?;
    let out = json!({
        "points": points,
        "quantity": a.quantity.as_deref().unwrap_or("mean"),
        "output": model.targets[output],
        "radius": a.radius,
        "features": free.iter().map(|&j| model.inputs[j].clone()).collect::<Vec<_>>(),
        "tolerance": a.tolerance,
        "delta": a.delta,
    });
    write_out(a, &out)
}

fn write_out(a: &VerifyArgs, out: &Value) -> Result<(), CliError> {
    if let Some(path) = &a.out {
        std::fs::write(path, serde_json::to_string_pretty(out)?)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    print_json(out)
}

/// Runs `verify_point(x, box)` for every selected data row (all, or `--row`), with the row
/// index added to each result.
fn each_point(
    a: &VerifyArgs,
    inputs: &[String],
    free: &[usize],
    mut verify_point: impl FnMut(&[f64], &Region) -> Result<Map<String, Value>, CliError>,
) -> Result<Vec<Value>, CliError> {
    let x = read_inputs(&a.data, inputs)?;
    let rows: Vec<usize> = match a.row {
        Some(k) if k >= x.nrows() => {
            return Err(format!(
                "--row {k} is out of range: the data has {} rows (0-based)",
                x.nrows()
            )
            .into())
        }
        Some(k) => vec![k],
        None => (0..x.nrows()).collect(),
    };
    let mut points = Vec::with_capacity(rows.len());
    for &r in &rows {
        let xr: Vec<f64> = (0..x.ncols()).map(|j| x[(r, j)]).collect();
        if let Some(j) = xr.iter().position(|v| !v.is_finite()) {
            return Err(format!(
                "row {r}, column `{}`: {} is not a finite number",
                inputs[j], xr[j]
            )
            .into());
        }
        let data_box = Region::ball(&xr, a.radius, Some(free))?;
        let mut p = verify_point(&xr, &data_box)?;
        p.insert("row".into(), json!(r));
        points.push(Value::Object(p));
    }
    Ok(points)
}

fn attribution_json(att: &[trustgp::verify::Attribution], inputs: &[String]) -> Value {
    Value::Object(
        att.iter()
            .map(|t| (inputs[t.feature].clone(), json!(t.delta)))
            .collect(),
    )
}

/// A classifier: `--quantity probability` (default) of the class `--class` (default: the
/// second of the sorted classes), or that class's latent `mean`/`variance`; `certified` = the
/// decision at the point cannot flip (probability only; `null` otherwise). For a multi-class
/// model the decision is the spec's Eq. 7 over all classes (reported under `decision`: the
/// predicted class, its probability's lower bound, the others' upper bounds — `null` for those
/// not needed once the answer was decided), and `probability_bracket` is the certified value
/// of the class probability at the point.
fn run_classifier(a: &VerifyArgs, clf: &Classifier, options: &BnbOptions) -> Result<(), CliError> {
    let name = a.quantity.as_deref().unwrap_or("probability");
    let quantity = match name {
        // The link is the model's: `verify_classifier_box` substitutes it.
        "probability" => Quantity::Probability(BinaryLink::Probit),
        "mean" => Quantity::Mean,
        "variance" => Quantity::Variance,
        q => {
            return Err(
                format!("--quantity must be probability, mean or variance, got `{q}`").into(),
            )
        }
    };
    if a.output.is_some() {
        return Err(
            "--output applies to regression models; this is a classifier (use --class)".into(),
        );
    }
    if a.delta.is_some() {
        return Err("--delta applies to regression models; a classifier is certified when its decision cannot flip".into());
    }
    let class = match &a.class {
        None => 1.min(clf.classes.len() - 1),
        Some(c) => clf.classes.iter().position(|k| k == c).ok_or_else(|| {
            format!(
                "--class `{c}` is not a class of the model (classes: {})",
                clf.classes.join(", ")
            )
        })?,
    };
    let free = feature_indices(a.features.as_deref(), &clf.inputs)?;
    let points = each_point(a, &clf.inputs, &free, |xr, data_box| {
        let xm = trustgp::Mat::from_fn(1, xr.len(), |_, j| xr[j]);
        let proba = clf.predict_proba(xm.as_ref())?;
        let v = verify_classifier_box(clf, class, quantity, data_box, options)?;
        let mut p = point_json(&v, &clf.inputs);
        let p_star = proba[(0, class)];
        p.insert("probability".into(), json!(p_star));
        let multiclass = matches!(clf.model, ClassifierModel::Multiclass(_));
        if multiclass {
            // `probability` is predict's Monte Carlo estimate; the bounds use the certified
            // bracket of the same integral (the searches' values are its midpoints).
            let br = classifier_bracket(clf, xr)?;
            p.insert(
                "probability_bracket".into(),
                json!([br[class].0, br[class].1]),
            );
        }
        let certified = match quantity {
            Quantity::Probability(_) if multiclass => {
                // Spec Eq. 7: the predicted class's lower bound above every other's upper one.
                let d = classifier_decision(clf, xr, data_box, options)?;
                let others: Map<String, Value> = d
                    .others_upper
                    .iter()
                    .enumerate()
                    .filter(|(c, _)| *c != d.predicted)
                    .map(|(c, u)| (clf.classes[c].clone(), json!(u.is_finite().then_some(*u))))
                    .collect();
                p.insert(
                    "decision".into(),
                    json!({
                        "predicted": clf.classes[d.predicted],
                        "lower": d.lower,
                        "others_upper": others,
                    }),
                );
                Some(d.certified)
            }
            Quantity::Probability(_) => Some(binary_certified(p_star, &v)),
            _ => None,
        };
        p.insert("certified".into(), json!(certified));
        if a.attribution {
            let att = attribution_with(xr, a.radius, &free, |b| {
                verify_classifier_box(clf, class, quantity, b, options)
            })?;
            p.insert("attribution".into(), attribution_json(&att, &clf.inputs));
        }
        Ok(p)
    })?;
    let out = json!({
        "points": points,
        "quantity": name,
        "class": clf.classes[class],
        "radius": a.radius,
        "features": free.iter().map(|&j| clf.inputs[j].clone()).collect::<Vec<_>>(),
        "tolerance": a.tolerance,
    });
    write_out(a, &out)
}

/// Indices of the named features among the model's inputs (all when none are named).
fn feature_indices(names: Option<&[String]>, inputs: &[String]) -> Result<Vec<usize>, CliError> {
    let Some(ns) = names else {
        return Ok((0..inputs.len()).collect());
    };
    let mut out: Vec<usize> = Vec::with_capacity(ns.len());
    for n in ns {
        let j = inputs.iter().position(|i| i == n).ok_or_else(|| {
            format!(
                "--features: `{n}` is not an input of the model (inputs: {})",
                inputs.join(", ")
            )
        })?;
        if out.contains(&j) {
            return Err(format!("--features: `{n}` is named twice").into());
        }
        out.push(j);
    }
    Ok(out)
}

/// The JSON of one point's result (without `certified`, which depends on the model type).
fn point_json(v: &Verified, inputs: &[String]) -> Map<String, Value> {
    let named = |x: &[f64]| -> Value {
        Value::Object(
            inputs
                .iter()
                .cloned()
                .zip(x.iter().map(|v| json!(v)))
                .collect(),
        )
    };
    let mut m = Map::new();
    m.insert("lower".into(), json!(v.lower));
    m.insert("upper".into(), json!(v.upper));
    m.insert("min_found".into(), json!(v.min_found));
    m.insert("max_found".into(), json!(v.max_found));
    m.insert("argmin_input".into(), named(&v.argmin));
    m.insert("argmax_input".into(), named(&v.argmax));
    m.insert("gap".into(), json!(v.gap));
    m.insert("iterations".into(), json!(v.iterations));
    m.insert("seconds".into(), json!(v.seconds));
    m.insert("exit".into(), json!([v.exit_min.name(), v.exit_max.name()]));
    m
}
