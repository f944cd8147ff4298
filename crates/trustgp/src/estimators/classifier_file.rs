//! Model files of [`Classifier`]s: one JSON object tagged `"format": "trustgp-classifier"`
//! holding the classes, the input standardisation, the kernel (expression and exact
//! parameters), the inference settings and the standardised training rows with their `±1`
//! labels (class indices for more than two classes), the inducing inputs of sparse EP and
//! the Monte Carlo settings of the multi-class model. Loading refits the latent posterior at the stored hyperparameters (no
//! optimisation: the same factorisations, so the same predictions) and checks that it gives
//! the stored log marginal likelihood.

use std::path::Path;

use faer::Mat;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::classifier::{
    class_kernels, sparse_ep_options, BinaryModel, Classifier, ClassifierConfig, ClassifierError,
    ClassifierModel, Inference, MC_SAMPLES,
};
use crate::data::Standardizer;
use crate::fit::FitOptions;
use crate::kernels::{Covariance, Kernel};
use crate::likelihoods::Link;
use crate::models::classification::multiclass::MulticlassLaplace;
use crate::models::classification::sparse::{SparseEp, SparsePrior, INDUCING_JITTER};
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
    /// Binary Laplace: the `â` its mode search started from besides `f = 0`
    /// ([`BinaryLaplace::mode_start`]), so that loading repeats the fit's computation exactly
    /// (absent: from `f = 0` alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    laplace_start: Option<Vec<f64>>,
    /// Sparse EP: `fic`, `dtc` or `var` (absent: dense).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sparse: Option<String>,
    /// Sparse EP: the standardised inducing inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    inducing_inputs: Option<Vec<Vec<f64>>>,
    /// Multi-class: one kernel per class (`kernel_params` then holds them class after class).
    #[serde(default)]
    per_class_kernels: bool,
    /// Multi-class: Monte Carlo draws of the class probabilities.
    #[serde(default = "default_mc_samples")]
    mc_samples: usize,
    /// Multi-class: their seed.
    #[serde(default)]
    mc_seed: u64,
}

fn default_mc_samples() -> usize {
    MC_SAMPLES
}

fn rows(x: faer::MatRef<'_, f64>) -> Vec<Vec<f64>> {
    (0..x.nrows())
        .map(|i| (0..x.ncols()).map(|c| x[(i, c)]).collect())
        .collect()
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
    let (x, expr, params) = match &model.model {
        ClassifierModel::Binary(BinaryModel::Laplace(m)) => {
            (m.x(), m.kernel().to_expr(), m.kernel().params())
        }
        ClassifierModel::Binary(BinaryModel::Ep(m)) => {
            (m.x(), m.kernel().to_expr(), m.kernel().params())
        }
        ClassifierModel::Binary(BinaryModel::SparseEp(m)) => {
            (m.x(), m.kernel().to_expr(), m.kernel().params())
        }
        // Per-class kernels share the expression (they start as copies of one kernel).
        ClassifierModel::Multiclass(m) => (m.x(), m.kernels().kernel(0).to_expr(), {
            m.kernels().params()
        }),
    };
    let sparse = match &model.model {
        ClassifierModel::Binary(BinaryModel::SparseEp(m)) => Some(m),
        _ => None,
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
        kernel: expr,
        kernel_params: params,
        ep: EpRecord {
            damping: ep.damping,
            tol: ep.tol,
            max_sweeps: ep.max_sweeps,
        },
        lml: model.lml(),
        fit_seconds: model.fit_seconds,
        x_train: rows(x),
        y_train: model.y_train.clone(),
        laplace_start: match &model.model {
            ClassifierModel::Binary(BinaryModel::Laplace(m)) => m.mode_start().map(<[f64]>::to_vec),
            _ => None,
        },
        sparse: sparse.map(|m| m.prior().name().to_string()),
        inducing_inputs: sparse.map(|m| rows(m.inducing())),
        per_class_kernels: model.config.per_class_kernels,
        mc_samples: model.config.mc_samples,
        mc_seed: model.config.mc_seed,
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
    let k = r.classes.len();
    if k < 2 {
        return Err(fail(format!("{k} classes, expected at least 2")));
    }
    if k > 2 && (r.inference != "laplace" || r.sparse.is_some()) {
        return Err(fail(format!(
            "{k} classes need dense multi-class Laplace, not {} inference{}",
            r.inference,
            if r.sparse.is_some() {
                " with a sparse prior"
            } else {
                ""
            }
        )));
    }
    if r.mc_samples == 0 {
        return Err(fail("mc_samples must be at least 1".into()));
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
    let kernel = Kernel::parse(&r.kernel).map_err(|e| fail(format!("kernel: {e}")))?;
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
    let sparse = match r.sparse.as_deref() {
        None => None,
        Some(name) => {
            let prior = match name {
                "fic" => SparsePrior::Fic,
                "dtc" => SparsePrior::Dtc,
                "var" => SparsePrior::Var,
                other => return Err(fail(format!("sparse '{other}', expected fic, dtc or var"))),
            };
            let z = r.inducing_inputs.as_ref().ok_or_else(|| {
                fail("a sparse model needs inducing_inputs (one row per inducing input)".into())
            })?;
            if z.is_empty() || z.iter().any(|row| row.len() != d) {
                return Err(fail(format!(
                    "inducing_inputs must be at least one row of {d} numbers"
                )));
            }
            Some((prior, Mat::from_fn(z.len(), d, |a, c| z[a][c])))
        }
    };
    let model = if k > 2 {
        let labels: Vec<usize> = r
            .y_train
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let ok = v >= 0.0 && v.fract() == 0.0 && (v as usize) < k;
                ok.then_some(v as usize).ok_or_else(|| {
                    fail(format!(
                        "y_train[{i}] is {v}, expected a class index 0..{k}"
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        let mut kernels = class_kernels(&kernel, r.per_class_kernels, k);
        kernels
            .set_params(&r.kernel_params)
            .map_err(|e| fail(format!("kernel_params: {e}")))?;
        ClassifierModel::Multiclass(MulticlassLaplace::at(x.as_ref(), &labels, k, kernels)?)
    } else {
        let mut kernel = kernel;
        kernel
            .set_params(&r.kernel_params)
            .map_err(|e| fail(format!("kernel_params: {e}")))?;
        ClassifierModel::Binary(match (inference, &sparse) {
            (Inference::Laplace, None) => {
                let start = r.laplace_start.as_deref();
                if let Some(a) = start.filter(|a| a.len() != r.y_train.len()) {
                    return Err(fail(format!(
                        "laplace_start has {} entries but y_train has {}",
                        a.len(),
                        r.y_train.len()
                    )));
                }
                BinaryModel::Laplace(BinaryLaplace::at_from(
                    x.as_ref(),
                    &r.y_train,
                    kernel,
                    r.likelihood,
                    start,
                )?)
            }
            (Inference::Ep, None) => {
                BinaryModel::Ep(BinaryEp::at(x.as_ref(), &r.y_train, kernel, &ep)?)
            }
            (Inference::Ep, Some((prior, z))) => {
                let labels: Vec<usize> = r.y_train.iter().map(|&v| usize::from(v > 0.0)).collect();
                BinaryModel::SparseEp(SparseEp::at(
                    *prior,
                    x.as_ref(),
                    &labels,
                    kernel,
                    z.as_ref(),
                    INDUCING_JITTER,
                    &sparse_ep_options(&ep),
                )?)
            }
            (Inference::Laplace, Some(_)) => {
                return Err(fail("a sparse prior needs inference ep".into()))
            }
        })
    };
    let (lml, kernel) = match &model {
        ClassifierModel::Binary(b) => (b.lml(), b.kernel().clone()),
        ClassifierModel::Multiclass(m) => (m.lml(), m.kernels().kernel(0).clone()),
    };
    if (lml - r.lml).abs() > 1e-8 * (1.0 + r.lml.abs()) {
        return Err(fail(format!(
            "the stored model has lml {} but its data and hyperparameters give {lml}",
            r.lml
        )));
    }
    Ok(Some(Classifier {
        classes: r.classes,
        inputs: r.inputs,
        target: r.target,
        standardizer: r.standardizer,
        model,
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
            sparse: sparse.as_ref().map(|(p, z)| (*p, z.nrows())),
            per_class_kernels: r.per_class_kernels,
            mc_samples: r.mc_samples,
            mc_seed: r.mc_seed,
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

    /// A fitted binary Laplace model stores where its mode search started; a file without it
    /// (an older one) loads to the same model up to the mode search's tolerance, and one with
    /// a start of the wrong length is an error naming the field.
    #[test]
    fn laplace_files_with_and_without_the_mode_start() {
        let (x, labels) = data();
        let names = ["a".to_string(), "b".to_string()];
        let cfg = ClassifierOptions {
            optimize: true,
            ..ClassifierOptions::default()
        }
        .check()
        .unwrap();
        let model = Classifier::fit(x.as_ref(), &labels, &names, "t", &cfg).unwrap();
        let text = classifier_to_str(&model).unwrap();
        let mut json: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["laplace_start"].as_array().map(Vec::len), Some(40));
        json["laplace_start"] = serde_json::json!([0.0, 1.0]);
        let e = classifier_from_str(&json.to_string(), "s").unwrap_err();
        assert!(e.to_string().contains("laplace_start has 2 entries"), "{e}");
        json.as_object_mut().unwrap().remove("laplace_start");
        let back = classifier_from_str(&json.to_string(), "s")
            .unwrap()
            .unwrap();
        assert!((back.lml() - model.lml()).abs() < 1e-10 * model.lml().abs());
        let (p, q) = (
            model.predict_proba(x.as_ref()).unwrap(),
            back.predict_proba(x.as_ref()).unwrap(),
        );
        for i in 0..40 {
            assert!((p[(i, 1)] - q[(i, 1)]).abs() < 1e-9, "row {i}");
        }
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

    /// Multi-class (shared and per-class kernels) and sparse EP (each prior) saved and loaded
    /// predict exactly the same probabilities as the fitted model; multi-class rows sum to 1.
    #[test]
    fn multiclass_and_sparse_model_files_round_trip() {
        let (x, _) = data();
        let names = ["a".to_string(), "b".to_string()];
        let three: Vec<String> = (0..40)
            .map(|i| ["p", "q", "r"][((x[(i, 0)] / 40.0) as usize).min(2)].to_string())
            .collect();
        let (_, two) = data();
        let dir = std::env::temp_dir().join(format!("trustgp-gpc-mc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cases: [(&[String], ClassifierOptions); 4] = [
            (&three, ClassifierOptions::default()),
            (
                &three,
                ClassifierOptions {
                    per_class_kernels: true,
                    ..ClassifierOptions::default()
                },
            ),
            (
                &two,
                ClassifierOptions {
                    sparse: Some("fic".into()),
                    inducing: Some(12),
                    ..ClassifierOptions::default()
                },
            ),
            (
                &two,
                ClassifierOptions {
                    sparse: Some("var".into()),
                    inducing: Some(12),
                    ..ClassifierOptions::default()
                },
            ),
        ];
        for (k, (labels, opts)) in cases.into_iter().enumerate() {
            let sparse = opts.sparse.is_some();
            let cfg = ClassifierOptions {
                likelihood: sparse.then(|| "probit".into()),
                inference: sparse.then(|| "ep".into()),
                optimize: true,
                standardize: true,
                seed: 5,
                ..opts
            }
            .check()
            .unwrap();
            let model = Classifier::fit(x.as_ref(), labels, &names, "t", &cfg).unwrap();
            let path = dir.join(format!("{k}.json"));
            save_classifier(&model, &path).unwrap();
            let back = load_classifier(&path).unwrap().unwrap();
            assert_eq!(back.lml(), model.lml());
            assert_eq!(back.kernel_expression(), model.kernel_expression());
            let p = model.predict_proba(x.as_ref()).unwrap();
            assert_eq!(p, back.predict_proba(x.as_ref()).unwrap());
            for i in 0..p.nrows() {
                let total: f64 = (0..p.ncols()).map(|c| p[(i, c)]).sum();
                assert!((total - 1.0).abs() < 1e-12);
            }
            let (acc, _, _) = classification_metrics(&model.classes, p.as_ref(), labels).unwrap();
            assert!(acc > 0.8, "case {k}: {acc}");
            match (&model.model, sparse) {
                (ClassifierModel::Binary(BinaryModel::SparseEp(m)), true) => {
                    assert_eq!(m.inducing().nrows(), 12);
                    assert_eq!(m.prior().name(), cfg.sparse.unwrap().0.name());
                }
                (ClassifierModel::Multiclass(m), false) => assert_eq!(m.classes(), 3),
                _ => panic!("case {k}: wrong model"),
            }
        }
    }

    /// The inducing rows are distinct training rows in their order, the same for the same seed,
    /// and all rows when `m ≥ n`.
    #[test]
    fn inducing_rows_are_a_seeded_subset() {
        use crate::estimators::classifier::inducing_rows;
        let x = Mat::from_fn(30, 2, |i, c| (i * 2 + c) as f64);
        let z = inducing_rows(x.as_ref(), 8, 1);
        assert_eq!(z, inducing_rows(x.as_ref(), 8, 1));
        assert_ne!(z, inducing_rows(x.as_ref(), 8, 2));
        let rows: Vec<usize> = (0..8).map(|a| (z[(a, 0)] / 2.0) as usize).collect();
        assert!(rows.windows(2).all(|w| w[0] < w[1]));
        for (a, &i) in rows.iter().enumerate() {
            assert_eq!(z[(a, 1)], x[(i, 1)]);
        }
        assert_eq!(inducing_rows(x.as_ref(), 40, 1), x);
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
