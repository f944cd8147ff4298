//! Model files of [`Classifier`]s: one JSON object tagged `"format": "trustgp-classifier"`
//! holding the classes, the input standardisation, the kernel (expression and exact
//! parameters), the inference settings and the standardised training rows with their `±1`
//! labels. Loading refits the latent posterior at the stored hyperparameters (no
//! optimisation: the same factorisations, so the same predictions) and checks that it gives
//! the stored log marginal likelihood.

use std::path::Path;

use faer::Mat;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::classifier::{
    BinaryModel, Classifier, ClassifierConfig, ClassifierError, ClassifierModel, Inference,
};
use crate::data::Standardizer;
use crate::fit::FitOptions;
use crate::kernels::{Covariance, Kernel};
use crate::likelihoods::Link;
use crate::models::classification::{BinaryEp, BinaryLaplace, EpSettings};

/// The tag of a classifier's model file.
const FORMAT: &str = "trustgp-classifier";
/// The version written.
const VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct EpRecord {
    damping: f64,
    tol: f64,
    max_sweeps: usize,
}

#[derive(Serialize, Deserialize)]
struct Record {
    format: String,
    version: u32,
    model: String,
    classes: Vec<String>,
    inputs: Vec<String>,
    target: String,
    standardize: bool,
    standardizer: Standardizer,
    likelihood: Link,
    inference: String,
    kernel: String,
    kernel_params: Vec<f64>,
    ep: EpRecord,
    lml: f64,
    fit_seconds: f64,
    x_train: Vec<Vec<f64>>,
    y_train: Vec<f64>,
}

/// Writes `model` to `path`.
///
/// # Errors
/// If the file cannot be written.
pub fn save_classifier(model: &Classifier, path: &Path) -> Result<(), ClassifierError> {
    let ClassifierModel::Binary(binary) = &model.model;
    let (x, kernel) = match binary {
        BinaryModel::Laplace(m) => (m.x(), m.kernel()),
        BinaryModel::Ep(m) => (m.x(), m.kernel()),
    };
    let ep = &model.config.ep;
    let record = Record {
        format: FORMAT.into(),
        version: VERSION,
        model: "gpc".into(),
        classes: model.classes.clone(),
        inputs: model.inputs.clone(),
        target: model.target.clone(),
        standardize: model.config.standardize,
        standardizer: model.standardizer.clone(),
        likelihood: model.config.link,
        inference: model.config.inference.name().into(),
        kernel: kernel.to_expr(),
        kernel_params: kernel.params(),
        ep: EpRecord {
            damping: ep.damping,
            tol: ep.tol,
            max_sweeps: ep.max_sweeps,
        },
        lml: model.lml(),
        fit_seconds: model.fit_seconds,
        x_train: (0..x.nrows())
            .map(|i| (0..x.ncols()).map(|c| x[(i, c)]).collect())
            .collect(),
        y_train: model.y_train.clone(),
    };
    let text = serde_json::to_string(&record)
        .map_err(|e| ClassifierError::File(format!("{}: {e}", path.display())))?;
    std::fs::write(path, text)
        .map_err(|e| ClassifierError::File(format!("{}: cannot write: {e}", path.display())))
}

/// Reads a classifier's model file; `Ok(None)` if `path` holds JSON that is not one (a
/// regression model file, for [`super::file::load`]).
///
/// # Errors
/// An unreadable file, text that is not JSON, or a classifier file with missing or
/// inconsistent fields (each message names the file and the field).
pub fn load_classifier(path: &Path) -> Result<Option<Classifier>, ClassifierError> {
    let name = path.display().to_string();
    let fail = |m: String| ClassifierError::File(format!("model file {name}: {m}"));
    let text = std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read: {e}")))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| fail(format!("not JSON: {e}")))?;
    if value.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Ok(None);
    }
    let r: Record = serde_json::from_value(value).map_err(|e| fail(e.to_string()))?;
    if r.version != VERSION {
        return Err(fail(format!(
            "version {} (this build reads version {VERSION})",
            r.version
        )));
    }
    let n = r.y_train.len();
    let d = r.inputs.len();
    if r.classes.len() != 2 {
        return Err(fail(format!("{} classes, expected 2", r.classes.len())));
    }
    if r.x_train.len() != n || r.x_train.iter().any(|row| row.len() != d) {
        return Err(fail(format!(
            "x_train must have {n} rows of {d} numbers (one per label and input)"
        )));
    }
    if r.standardizer.x_mean.len() != d || r.standardizer.x_std.len() != d {
        return Err(fail(format!("the standardizer must have {d} input columns")));
    }
    let x = Mat::from_fn(n, d, |i, c| r.x_train[i][c]);
    let mut kernel = Kernel::parse(&r.kernel).map_err(|e| fail(format!("kernel: {e}")))?;
    kernel
        .set_params(&r.kernel_params)
        .map_err(|e| fail(format!("kernel_params: {e}")))?;
    let inference = match r.inference.as_str() {
        "laplace" => Inference::Laplace,
        "ep" => Inference::Ep,
        other => return Err(fail(format!("inference '{other}', expected laplace or ep"))),
    };
    let ep = EpSettings {
        damping: r.ep.damping,
        tol: r.ep.tol,
        max_sweeps: r.ep.max_sweeps,
    };
    let binary = match inference {
        Inference::Laplace => {
            BinaryModel::Laplace(BinaryLaplace::at(x.as_ref(), &r.y_train, kernel.clone(), r.likelihood)?)
        }
        Inference::Ep => BinaryModel::Ep(BinaryEp::at(x.as_ref(), &r.y_train, kernel.clone(), &ep)?),
    };
    if (binary.lml() - r.lml).abs() > 1e-8 * (1.0 + r.lml.abs()) {
        return Err(fail(format!(
            "the stored model has lml {} but its data and hyperparameters give {}",
            r.lml,
            binary.lml()
        )));
    }
    Ok(Some(Classifier {
        classes: r.classes,
        inputs: r.inputs,
        target: r.target,
        standardizer: r.standardizer,
        model: ClassifierModel::Binary(binary),
        config: ClassifierConfig {
            kernel,
            link: r.likelihood,
            inference,
            fit: FitOptions {
                optimize: false,
                ..FitOptions::default()
            },
            ep,
            standardize: r.standardize,
        },
        fit_seconds: r.fit_seconds,
        warnings: Vec::new(),
        y_train: r.y_train,
    }))
}
