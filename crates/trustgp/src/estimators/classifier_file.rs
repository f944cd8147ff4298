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
    let text = classifier_to_str(model)
        .map_err(|e| ClassifierError::File(format!("{}: {e}", path.display())))?;
    std::fs::write(path, text)
        .map_err(|e| ClassifierError::File(format!("{}: cannot write: {e}", path.display())))
}

/// The text of `model`'s model file (what [`save_classifier`] writes; the Python package
/// pickles through it).
///
/// # Errors
/// If the record cannot be serialised.
pub fn classifier_to_str(model: &Classifier) -> Result<String, ClassifierError> {
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
    serde_json::to_string(&record).map_err(|e| ClassifierError::File(e.to_string()))
}

/// Reads a classifier's model file; `Ok(None)` if `path` holds JSON that is not one (a
/// regression model file, for [`super::file::load`]).
///
/// # Errors
/// An unreadable file, text that is not JSON, or a classifier file with missing or
/// inconsistent fields (each message names the file and the field).
pub fn load_classifier(path: &Path) -> Result<Option<Classifier>, ClassifierError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| ClassifierError::File(format!("model file {name}: cannot read: {e}")))?;
    classifier_from_str(&text, &name)
}

/// The classifier whose model file text is `text` (errors name it `name`); `Ok(None)` if
/// `text` is JSON but not a classifier's model file.
///
/// # Errors
/// As for [`load_classifier`].
pub fn classifier_from_str(text: &str, name: &str) -> Result<Option<Classifier>, ClassifierError> {
    let fail = |m: String| ClassifierError::File(format!("model file {name}: {m}"));
    let value: Value = serde_json::from_str(text).map_err(|e| fail(format!("not JSON: {e}")))?;
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
        return Err(fail(format!(
            "the standardizer must have {d} input columns"
        )));
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
        Inference::Laplace => BinaryModel::Laplace(BinaryLaplace::at(
            x.as_ref(),
            &r.y_train,
            kernel.clone(),
            r.likelihood,
        )?),
        Inference::Ep => {
            BinaryModel::Ep(BinaryEp::at(x.as_ref(), &r.y_train, kernel.clone(), &ep)?)
        }
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

#[cfg(test)]
mod tests {
    use faer::Mat;

    use super::*;
    use crate::estimators::classifier::{classification_metrics, sorted_classes};
    use crate::estimators::ClassifierOptions;

    fn data() -> (Mat<f64>, Vec<String>) {
        let x = Mat::from_fn(40, 2, |i, c| ((i * (c + 3)) % 11) as f64 * 10.0 + c as f64);
        let labels = (0..40)
            .map(|i| {
                if (x[(i, 0)] - 50.0) + 0.3 * x[(i, 1)] > 0.0 {
                    "yes"
                } else {
                    "no"
                }
            })
            .map(String::from)
            .collect();
        (x, labels)
    }

    /// Saved and loaded, both inferences predict exactly the same probabilities.
    #[test]
    fn model_files_round_trip() {
        let (x, labels) = data();
        let names = ["a".to_string(), "b".to_string()];
        let dir = std::env::temp_dir().join(format!("trustgp-gpc-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (likelihood, inference) in [("logit", "laplace"), ("probit", "ep")] {
            let cfg = ClassifierOptions {
                likelihood: Some(likelihood.into()),
                inference: Some(inference.into()),
                optimize: true,
                standardize: true,
                ..ClassifierOptions::default()
            }
            .check()
            .unwrap();
            let model = Classifier::fit(x.as_ref(), &labels, &names, "t", &cfg).unwrap();
            assert_eq!(model.classes, ["no", "yes"]);
            let path = dir.join(format!("{inference}.json"));
            save_classifier(&model, &path).unwrap();
            let back = load_classifier(&path).unwrap().unwrap();
            assert_eq!(back.lml(), model.lml());
            // The file's text is the string form's.
            let text = classifier_to_str(&model).unwrap();
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
            let again = classifier_from_str(&text, "text").unwrap().unwrap();
            assert_eq!(
                again.predict_proba(x.as_ref()).unwrap(),
                model.predict_proba(x.as_ref()).unwrap()
            );
            let (p, q) = (
                model.predict_proba(x.as_ref()).unwrap(),
                back.predict_proba(x.as_ref()).unwrap(),
            );
            assert_eq!(p, q);
            let predicted = model.labels_of(p.as_ref());
            let (acc, _, _) = classification_metrics(&model.classes, p.as_ref(), &labels).unwrap();
            let agree = predicted
                .iter()
                .zip(&labels)
                .filter(|(a, b)| a == b)
                .count();
            assert_eq!(acc, agree as f64 / 40.0);
            assert!(acc > 0.8, "{acc}");
        }
        // A regression model file is not a classifier's.
        let other = dir.join("other.json");
        std::fs::write(&other, "{\"version\": 2}").unwrap();
        assert!(load_classifier(&other).unwrap().is_none());
        assert!(classifier_from_str("{\"version\": 2}", "s")
            .unwrap()
            .is_none());
        let e = classifier_from_str("nope", "s").unwrap_err().to_string();
        assert!(e.contains("model file s: not JSON"), "{e}");
    }

    #[test]
    fn classes_sort_numerically_or_lexicographically() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            sorted_classes(&s(&["10", "9", "9", "-1.5"])),
            s(&["-1.5", "9", "10"])
        );
        assert_eq!(
            sorted_classes(&s(&["b", "10", "a", "9"])),
            s(&["10", "9", "a", "b"])
        );
    }

    /// Accuracy, log loss and Brier score against hand computations.
    #[test]
    fn metrics_match_hand_computations() {
        let classes = ["n".to_string(), "y".to_string()];
        let p = Mat::from_fn(3, 2, |i, c| {
            let p1 = [0.9, 0.2, 0.6][i];
            if c == 1 {
                p1
            } else {
                1.0 - p1
            }
        });
        let truth = ["y", "y", "n"].map(String::from);
        let (acc, ll, brier) = classification_metrics(&classes, p.as_ref(), &truth).unwrap();
        assert!((acc - 1.0 / 3.0).abs() < 1e-15);
        let want = -(0.9f64.ln() + 0.2f64.ln() + 0.4f64.ln()) / 3.0;
        assert!((ll - want).abs() < 1e-15);
        // scikit-learn's binary Brier score of the second class.
        let want = (0.1f64.powi(2) + 0.8f64.powi(2) + 0.6f64.powi(2)) / 3.0;
        assert!((brier - want).abs() < 1e-15);
        let bad = ["y", "maybe", "n"].map(String::from);
        assert!(classification_metrics(&classes, p.as_ref(), &bad).is_err());
    }
}
