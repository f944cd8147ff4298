//! [`Classifier`]: GP classification behind the same front end as regression — options checked
//! once, inputs standardised (labels never), class labels as text, predictions as class
//! probabilities in the order of the sorted classes, a summary and a model file.
//!
//! Classes are the distinct labels of the training rows, sorted numerically when every label
//! reads as a number and lexicographically otherwise. Two classes give a binary model (the
//! first class is `y = −1`, the second `y = +1`): binary Laplace (probit or logit) or binary
//! EP (probit). More classes need the softmax model ([`ClassifierModel`] is an enum so that it
//! is one more arm).

use std::time::Instant;

use faer::{Mat, MatRef};
use serde_json::{json, Value};

use super::defaults::DEFAULT_KERNEL;
use super::kind::ModelKind;
use super::options::OptionsError;
use crate::data::{DataError, Standardizer};
use crate::fit::FitOptions;
use crate::kernels::Kernel;
use crate::likelihoods::Link;
use crate::means::Mean;
use crate::models::classification::{BinaryEp, BinaryLaplace, EpSettings};
use crate::models::ModelError;
use crate::posterior::{LinearGaussian, LinearGaussianForm};

/// Errors of classification through the front end.
#[derive(Debug, thiserror::Error)]
pub enum ClassifierError {
    /// An option that cannot be used.
    #[error(transparent)]
    Options(#[from] OptionsError),
    /// A data problem.
    #[error(transparent)]
    Data(#[from] DataError),
    /// Labels or inputs that do not make a classification problem (the message says why).
    #[error("{0}")]
    Labels(String),
    /// Fitting or prediction failed.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A model file that cannot be read back.
    #[error("{0}")]
    File(String),
}

/// How the latent posterior is approximated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inference {
    /// Laplace (probit or logit).
    Laplace,
    /// Expectation propagation (probit only).
    Ep,
}

impl Inference {
    /// The name (`laplace`, `ep`).
    pub fn name(self) -> &'static str {
        match self {
            Inference::Laplace => "laplace",
            Inference::Ep => "ep",
        }
    }
}

/// A classifier's options as the user gave them (`None`: the default).
#[derive(Clone, Debug, Default)]
pub struct ClassifierOptions {
    /// Kernel expression (default: [`DEFAULT_KERNEL`]).
    pub kernel: Option<String>,
    /// `logit` (default, as scikit-learn) or `probit`.
    pub likelihood: Option<String>,
    /// `laplace` (default) or `ep` (needs the probit).
    pub inference: Option<String>,
    /// Random optimiser restarts in addition to the initial start.
    pub restarts: usize,
    /// Seed of the restarts.
    pub seed: u64,
    /// Optimise the hyperparameters.
    pub optimize: bool,
    /// Standardise the inputs.
    pub standardize: bool,
}

/// Checked options with the defaults filled in.
#[derive(Clone, Debug)]
pub struct ClassifierConfig {
    /// The initial kernel.
    pub kernel: Kernel,
    /// The link.
    pub link: Link,
    /// The inference.
    pub inference: Inference,
    /// Hyperparameter fit.
    pub fit: FitOptions,
    /// EP's settings.
    pub ep: EpSettings,
    /// Standardise the inputs.
    pub standardize: bool,
}

impl ClassifierOptions {
    /// Validates every option once.
    ///
    /// # Errors
    /// An unknown likelihood or inference, EP with the logit, a kernel that does not parse, or
    /// too many restarts.
    pub fn check(&self) -> Result<ClassifierConfig, OptionsError> {
        let bad = |option: String, message: String| OptionsError { option, message };
        let link = match self.likelihood.as_deref() {
            None | Some("logit") => Link::Logit,
            Some("probit") => Link::Probit,
            Some(other) => {
                return Err(bad(
                    format!("--likelihood {}", super::shorten(other)),
                    "gpc takes logit or probit".into(),
                ))
            }
        };
        let inference = match self.inference.as_deref() {
            None | Some("laplace") => Inference::Laplace,
            Some("ep") => Inference::Ep,
            Some(other) => {
                return Err(bad(
                    format!("--inference {}", super::shorten(other)),
                    "gpc takes laplace or ep".into(),
                ))
            }
        };
        if inference == Inference::Ep && link != Link::Probit {
            return Err(bad(
                "--inference ep".into(),
                "EP needs the probit likelihood (its site moments are closed-form only for \
                 the probit): add --likelihood probit, or use --inference laplace"
                    .into(),
            ));
        }
        let text = self.kernel.as_deref().unwrap_or(DEFAULT_KERNEL);
        let kernel = Kernel::parse(text)
            .map_err(|e| bad(format!("--kernel {}", super::shorten(text)), e.to_string()))?;
        if self.restarts > super::MAX_RESTARTS {
            return Err(bad(
                format!("--restarts {}", self.restarts),
                format!("at most {}", super::MAX_RESTARTS),
            ));
        }
        Ok(ClassifierConfig {
            kernel,
            link,
            inference,
            fit: FitOptions {
                optimize: self.optimize,
                restarts: self.restarts,
                seed: self.seed,
                ..FitOptions::default()
            },
            ep: EpSettings::default(),
            standardize: self.standardize,
        })
    }
}

/// A fitted binary model.
#[derive(Clone, Debug)]
pub enum BinaryModel {
    /// Binary Laplace.
    Laplace(BinaryLaplace),
    /// Binary EP.
    Ep(BinaryEp),
}

impl BinaryModel {
    /// `P(y = +1)` (the second class) at standardised inputs.
    ///
    /// # Errors
    /// If `xs` has the wrong width or non-finite entries.
    pub fn predict_proba(&self, xs: MatRef<'_, f64>) -> Result<Vec<f64>, ModelError> {
        match self {
            BinaryModel::Laplace(m) => m.predict_proba(xs),
            BinaryModel::Ep(m) => m.predict_proba(xs),
        }
    }

    /// The approximate log marginal likelihood.
    pub fn lml(&self) -> f64 {
        match self {
            BinaryModel::Laplace(m) => m.lml(),
            BinaryModel::Ep(m) => m.lml(),
        }
    }

    /// The fitted kernel.
    pub fn kernel(&self) -> &Kernel {
        match self {
            BinaryModel::Laplace(m) => m.kernel(),
            BinaryModel::Ep(m) => m.kernel(),
        }
    }

    /// The latent posterior in linear-Gaussian form (support = standardised training inputs):
    /// what verification bounds.
    pub fn linear_gaussian(&self) -> LinearGaussian<'_, Kernel, Mean> {
        match self {
            BinaryModel::Laplace(m) => m.linear_gaussian(),
            BinaryModel::Ep(m) => m.linear_gaussian(),
        }
    }
}

/// The fitted model of a [`Classifier`]: binary now; the softmax model is the next arm.
#[derive(Clone, Debug)]
pub enum ClassifierModel {
    /// Two classes.
    Binary(BinaryModel),
}

/// A fitted GP classifier with its classes and the units of its inputs.
#[derive(Clone, Debug)]
pub struct Classifier {
    /// The sorted classes; probabilities come in this order.
    pub classes: Vec<String>,
    /// Input column names.
    pub inputs: Vec<String>,
    /// The label column's name.
    pub target: String,
    /// Input standardisation of the training rows (identity with standardisation off); its
    /// target part is unused.
    pub standardizer: Standardizer,
    /// The fitted model.
    pub model: ClassifierModel,
    /// The checked options it was fitted with.
    pub config: ClassifierConfig,
    /// Wall-clock seconds of the fit.
    pub fit_seconds: f64,
    /// Warnings for the user (constant input columns).
    pub warnings: Vec<String>,
    /// The training labels as the binary model sees them (`±1`), for the model file.
    pub(super) y_train: Vec<f64>,
}

/// The distinct labels, sorted numerically if all read as numbers, else lexicographically.
pub fn sorted_classes(labels: &[String]) -> Vec<String> {
    let mut classes: Vec<String> = labels.to_vec();
    classes.sort();
    classes.dedup();
    let numbers: Option<Vec<f64>> = classes.iter().map(|c| c.parse::<f64>().ok()).collect();
    if let Some(values) = numbers {
        let mut pairs: Vec<(f64, String)> = values.into_iter().zip(classes).collect();
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
        classes = pairs.into_iter().map(|p| p.1).collect();
    }
    classes
}

/// Quotes a CSV field when it needs it (a comma, quote or line break).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl Classifier {
    /// Fits to inputs `x` (in the data's units, columns named `inputs`) and one label per row.
    ///
    /// # Errors
    /// Fewer than two classes; more than two (the softmax model is not in this build); a
    /// kernel that does not fit the inputs; a failed fit.
    pub fn fit(
        x: MatRef<'_, f64>,
        labels: &[String],
        inputs: &[String],
        target: &str,
        config: &ClassifierConfig,
    ) -> Result<Classifier, ClassifierError> {
        let clock = Instant::now();
        if labels.len() != x.nrows() {
            return Err(ClassifierError::Labels(format!(
                "{} labels for {} rows of inputs",
                labels.len(),
                x.nrows()
            )));
        }
        let classes = sorted_classes(labels);
        match classes.len() {
            0 => return Err(ClassifierError::Labels("no training rows".into())),
            1 => {
                return Err(ClassifierError::Labels(format!(
                    "the target column '{target}' has only one class ('{}'); classification \
                     needs at least two",
                    classes[0]
                )))
            }
            2 => {}
            k => {
                let shown: Vec<&str> = classes.iter().take(6).map(String::as_str).collect();
                return Err(ClassifierError::Labels(format!(
                    "the target column '{target}' has {k} classes ({}{}): multi-class \
                     classification needs the softmax model, coming from branch gpcx",
                    shown.join(", "),
                    if k > 6 { ", …" } else { "" }
                )));
            }
        }
        let (standardizer, warnings) = if config.standardize {
            let ones = Mat::from_fn(x.nrows(), 1, |_, _| 1.0);
            let (st, constant) = Standardizer::fit(x, ones.as_ref())?;
            let constant = crate::data::ConstantColumns {
                inputs: constant.inputs,
                targets: Vec::new(),
            };
            (st, constant.warnings(inputs, &[]))
        } else {
            (Standardizer::identity(x.ncols(), 1), Vec::new())
        };
        let xs = standardizer.transform_x(x);
        config
            .kernel
            .validate(x.ncols())
            .map_err(|e| ClassifierError::Model(e.into()))?;
        let y: Vec<f64> = labels
            .iter()
            .map(|l| if *l == classes[1] { 1.0 } else { -1.0 })
            .collect();
        let binary = match config.inference {
            Inference::Laplace => BinaryModel::Laplace(BinaryLaplace::fit(
                xs.as_ref(),
                &y,
                config.kernel.clone(),
                config.link,
                &config.fit,
            )?),
            Inference::Ep => BinaryModel::Ep(BinaryEp::fit(
                xs.as_ref(),
                &y,
                config.kernel.clone(),
                &config.ep,
                &config.fit,
            )?),
        };
        Ok(Classifier {
            classes,
            inputs: inputs.to_vec(),
            target: target.to_string(),
            standardizer,
            model: ClassifierModel::Binary(binary),
            config: config.clone(),
            fit_seconds: clock.elapsed().as_secs_f64(),
            warnings,
            y_train: y,
        })
    }

    /// The model kind.
    pub fn kind(&self) -> ModelKind {
        ModelKind::Gpc
    }

    /// Class probabilities at inputs in the data's units: one row per input, one column per
    /// class in the order of [`Classifier::classes`].
    ///
    /// # Errors
    /// If `x` has the wrong width or non-finite entries.
    pub fn predict_proba(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>, ClassifierError> {
        if x.ncols() != self.inputs.len() {
            return Err(ClassifierError::Labels(format!(
                "the inputs have {} columns, the model was fitted on {} ({})",
                x.ncols(),
                self.inputs.len(),
                self.inputs.join(", ")
            )));
        }
        let xs = self.standardizer.transform_x(x);
        match &self.model {
            ClassifierModel::Binary(m) => {
                let p = m.predict_proba(xs.as_ref())?;
                Ok(Mat::from_fn(p.len(), 2, |i, c| {
                    if c == 1 {
                        p[i]
                    } else {
                        1.0 - p[i]
                    }
                }))
            }
        }
    }

    /// The most probable class of each row of `proba` (the first on a tie).
    pub fn labels_of(&self, proba: MatRef<'_, f64>) -> Vec<String> {
        (0..proba.nrows())
            .map(|i| {
                let best =
                    (0..proba.ncols())
                        .fold(0, |b, c| if proba[(i, c)] > proba[(i, b)] { c } else { b });
                self.classes[best].clone()
            })
            .collect()
    }

    /// The approximate log marginal likelihood of the fitted model.
    pub fn lml(&self) -> f64 {
        match &self.model {
            ClassifierModel::Binary(m) => m.lml(),
        }
    }

    /// The fitted kernel expression (of the standardised inputs).
    pub fn kernel_expression(&self) -> String {
        match &self.model {
            ClassifierModel::Binary(m) => m.kernel().to_expr(),
        }
    }

    /// The fit summary: `model`, `n`, `d`, `outputs`, `classes`, `objective`, `lml`, `kernel`,
    /// `likelihood`, `inference`, `fit_seconds`, `warnings` (finite numbers only).
    pub fn summary(&self, n: usize) -> Value {
        json!({
            "model": ModelKind::Gpc.name(),
            "n": n,
            "d": self.inputs.len(),
            "outputs": [self.target],
            "classes": self.classes,
            "objective": {"name": "lml", "value": self.lml()},
            "lml": self.lml(),
            "kernel": self.kernel_expression(),
            "likelihood": self.config.link.name(),
            "inference": self.config.inference.name(),
            "fit_seconds": self.fit_seconds,
            "warnings": self.warnings,
        })
    }
}

/// Accuracy, log loss and Brier score of class probabilities `proba` (columns in the order of
/// `classes`) against true labels. The log loss is the mean `−ln p(true class)` with `p`
/// clipped to `[1e-15, 1]`, as scikit-learn's; the Brier score is the mean over rows of
/// `Σ_c (p_c − 1[c = y])²`, halved for two classes so that it equals scikit-learn's binary
/// `brier_score_loss` of the second class.
///
/// # Errors
/// A label that is not one of `classes` (a test class absent from the training rows).
pub fn classification_metrics(
    classes: &[String],
    proba: MatRef<'_, f64>,
    labels: &[String],
) -> Result<(f64, f64, f64), ClassifierError> {
    let n = labels.len();
    let (mut correct, mut loss, mut brier) = (0usize, 0.0, 0.0);
    for (i, l) in labels.iter().enumerate() {
        let Some(k) = classes.iter().position(|c| c == l) else {
            return Err(ClassifierError::Labels(format!(
                "test row {i} has label '{l}', which is not a class of the training rows ({})",
                classes.join(", ")
            )));
        };
        let best =
            (0..proba.ncols()).fold(0, |b, c| if proba[(i, c)] > proba[(i, b)] { c } else { b });
        correct += usize::from(best == k);
        loss -= proba[(i, k)].clamp(1e-15, 1.0).ln();
        brier += (0..proba.ncols())
            .map(|c| (proba[(i, c)] - f64::from(u8::from(c == k))).powi(2))
            .sum::<f64>();
    }
    let half = if classes.len() == 2 { 0.5 } else { 1.0 };
    let n = n.max(1) as f64;
    Ok((correct as f64 / n, loss / n, half * brier / n))
}
