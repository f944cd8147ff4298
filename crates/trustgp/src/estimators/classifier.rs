//! [`Classifier`]: GP classification behind the same front end as regression — options checked
//! once, inputs standardised (labels never), class labels as text, predictions as class
//! probabilities in the order of the sorted classes, a summary and a model file.
//!
//! Classes are the distinct labels of the training rows, sorted numerically when every label
//! reads as a number and lexicographically otherwise. Two classes give a binary model (the
//! first class is `y = −1`, the second `y = +1`): binary Laplace (probit or logit), binary
//! EP (probit), or EP under a sparse prior (`--sparse fic|dtc|var`, probit). More classes give
//! the softmax model by multi-class Laplace ([`ClassifierModel::Multiclass`]), one kernel
//! shared by the classes or one per class; its class probabilities are Monte Carlo estimates
//! with [`MC_SAMPLES`] draws seeded by the fit's `--seed` ([`ClassifierConfig::mc_seed`]), so
//! the same model file always predicts the same numbers.
//!
//! Sparse EP's inducing inputs are a seeded random subset of `M` distinct training rows (after
//! standardisation; [`inducing_rows`]). VAR has no evidence gradient of its own (its evidence
//! is not stationary in the EP sites), so its hyperparameters are fitted under DTC, whose
//! sites and predictions VAR shares, and the model is then [`SparseEp::at`] under VAR.

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
use crate::models::classification::multiclass::{ClassKernels, MulticlassLaplace};
use crate::models::classification::sparse::{EpOptions, SparseEp, SparsePrior, INDUCING_JITTER};
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
    /// A sparse prior for EP: `fic`, `dtc` or `var` (default: none, the dense model).
    pub sparse: Option<String>,
    /// Inducing inputs of the sparse prior (needs `sparse`; default [`DEFAULT_INDUCING`]).
    pub inducing: Option<usize>,
    /// More than two classes: one kernel per class instead of one shared by all.
    pub per_class_kernels: bool,
}

/// The default number of inducing inputs of sparse EP (at most the training rows).
pub const DEFAULT_INDUCING: usize = 100;

/// Monte Carlo draws (antithetic pairs) of a multi-class model's class probabilities: the
/// standard error of each probability is below `0.5/√MC_SAMPLES ≈ 0.005`.
pub const MC_SAMPLES: usize = 10_000;

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
    /// Sparse EP: the prior and the number of inducing inputs (`None`: dense).
    pub sparse: Option<(SparsePrior, usize)>,
    /// Multi-class: one kernel per class.
    pub per_class_kernels: bool,
    /// Multi-class: Monte Carlo draws of the class probabilities ([`MC_SAMPLES`]).
    pub mc_samples: usize,
    /// Multi-class: the seed of the Monte Carlo class probabilities (the fit's seed), and of
    /// sparse EP's choice of inducing rows.
    pub mc_seed: u64,
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
        let sparse = match self.sparse.as_deref() {
            None => {
                if let Some(m) = self.inducing {
                    return Err(bad(
                        format!("--inducing {m}"),
                        "applies to gpc with --sparse fic|dtc|var".into(),
                    ));
                }
                None
            }
            Some(name) => {
                let prior = match name {
                    "fic" => SparsePrior::Fic,
                    "dtc" => SparsePrior::Dtc,
                    "var" => SparsePrior::Var,
                    other => {
                        return Err(bad(
                            format!("--sparse {}", super::shorten(other)),
                            "gpc takes fic, dtc or var".into(),
                        ))
                    }
                };
                if inference != Inference::Ep {
                    return Err(bad(
                        format!("--sparse {name}"),
                        "sparse classification is by EP: add --inference ep --likelihood probit"
                            .into(),
                    ));
                }
                let m = self.inducing.unwrap_or(DEFAULT_INDUCING);
                if m == 0 {
                    return Err(bad("--inducing 0".into(), "at least 1".into()));
                }
                Some((prior, m))
            }
        };
        if self.per_class_kernels && (inference != Inference::Laplace || sparse.is_some()) {
            return Err(bad(
                "--per-class-kernels".into(),
                "applies to multi-class Laplace (dense, --inference laplace)".into(),
            ));
        }
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
            sparse,
            per_class_kernels: self.per_class_kernels,
            mc_samples: MC_SAMPLES,
            mc_seed: self.seed,
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
    /// Binary EP (probit) under a sparse FIC, DTC or VAR prior; its form's support points are
    /// the inducing inputs.
    SparseEp(SparseEp),
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
            BinaryModel::SparseEp(m) => m.predict_proba(xs),
        }
    }

    /// The approximate log marginal likelihood.
    pub fn lml(&self) -> f64 {
        match self {
            BinaryModel::Laplace(m) => m.lml(),
            BinaryModel::Ep(m) => m.lml(),
            BinaryModel::SparseEp(m) => m.lml(),
        }
    }

    /// The fitted kernel.
    pub fn kernel(&self) -> &Kernel {
        match self {
            BinaryModel::Laplace(m) => m.kernel(),
            BinaryModel::Ep(m) => m.kernel(),
            BinaryModel::SparseEp(m) => m.kernel(),
        }
    }

    /// The latent posterior in linear-Gaussian form (support = standardised training inputs):
    /// what verification bounds.
    pub fn linear_gaussian(&self) -> LinearGaussian<'_, Kernel, Mean> {
        match self {
            BinaryModel::Laplace(m) => m.linear_gaussian(),
            BinaryModel::Ep(m) => m.linear_gaussian(),
            BinaryModel::SparseEp(m) => m.linear_gaussian(),
        }
    }
}

/// The fitted model of a [`Classifier`].
#[derive(Clone, Debug)]
pub enum ClassifierModel {
    /// Two classes.
    Binary(BinaryModel),
    /// More than two: softmax by multi-class Laplace (latent process `c` is class `c` of
    /// [`Classifier::classes`]).
    Multiclass(MulticlassLaplace),
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
    /// The training labels as the model sees them, for the model file: `±1` for two classes,
    /// the class index `0..C` for more.
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
    /// Fewer than two classes; more than two with EP (binary only); a kernel that does not fit
    /// the inputs; a failed fit.
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
            k if config.inference == Inference::Ep => {
                let shown: Vec<&str> = classes.iter().take(6).map(String::as_str).collect();
                return Err(ClassifierError::Labels(format!(
                    "the target column '{target}' has {k} classes ({}{}): EP is binary here; \
                     more than two classes take the softmax model by --inference laplace",
                    shown.join(", "),
                    if k > 6 { ", …" } else { "" }
                )));
            }
            _ => {}
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
        if classes.len() > 2 {
            let index: Vec<usize> = labels
                .iter()
                .map(|l| classes.iter().position(|c| c == l).unwrap_or(0))
                .collect();
            let kernels = class_kernels(&config.kernel, config.per_class_kernels, classes.len());
            let model =
                MulticlassLaplace::fit(xs.as_ref(), &index, classes.len(), kernels, &config.fit)?;
            return Ok(Classifier {
                y_train: index.iter().map(|&c| c as f64).collect(),
                classes,
                inputs: inputs.to_vec(),
                target: target.to_string(),
                standardizer,
                model: ClassifierModel::Multiclass(model),
                config: config.clone(),
                fit_seconds: clock.elapsed().as_secs_f64(),
                warnings,
            });
        }
        let y: Vec<f64> = labels
            .iter()
            .map(|l| if *l == classes[1] { 1.0 } else { -1.0 })
            .collect();
        let binary = match (config.inference, config.sparse) {
            (Inference::Ep, Some((prior, m))) => {
                let z = inducing_rows(xs.as_ref(), m, config.mc_seed);
                BinaryModel::SparseEp(fit_sparse_ep(xs.as_ref(), &y, prior, z.as_ref(), config)?)
            }
            (Inference::Laplace, _) => BinaryModel::Laplace(BinaryLaplace::fit(
                xs.as_ref(),
                &y,
                config.kernel.clone(),
                config.link,
                &config.fit,
            )?),
            (Inference::Ep, None) => BinaryModel::Ep(BinaryEp::fit(
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
            ClassifierModel::Multiclass(m) => {
                Ok(m.predict_proba(xs.as_ref(), self.config.mc_samples, self.config.mc_seed)?)
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
            ClassifierModel::Multiclass(m) => m.lml(),
        }
    }

    /// The fitted kernel expression (of the standardised inputs); per-class kernels are
    /// joined by `; ` in class order.
    pub fn kernel_expression(&self) -> String {
        match &self.model {
            ClassifierModel::Binary(m) => m.kernel().to_expr(),
            ClassifierModel::Multiclass(m) => match m.kernels() {
                ClassKernels::Shared(k) => k.to_expr(),
                ClassKernels::PerClass(ks) => {
                    let each: Vec<String> = ks.iter().map(Kernel::to_expr).collect();
                    each.join("; ")
                }
            },
        }
    }

    /// The fit summary: `model`, `n`, `d`, `outputs`, `classes`, `objective`, `lml`, `kernel`,
    /// `likelihood`, `inference`, `fit_seconds`, `warnings` (finite numbers only), and `sparse`
    /// with `inducing` for sparse EP, `per_class_kernels` with `mc_samples` and `mc_seed` for
    /// more than two classes.
    pub fn summary(&self, n: usize) -> Value {
        let mut out = json!({
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
        });
        if let Value::Object(o) = &mut out {
            match &self.model {
                ClassifierModel::Binary(BinaryModel::SparseEp(m)) => {
                    o.insert("sparse".into(), m.prior().name().into());
                    o.insert("inducing".into(), m.inducing().nrows().into());
                }
                ClassifierModel::Binary(_) => {}
                ClassifierModel::Multiclass(_) => {
                    o.insert("likelihood".into(), "softmax".into());
                    o.insert(
                        "per_class_kernels".into(),
                        self.config.per_class_kernels.into(),
                    );
                    o.insert("mc_samples".into(), self.config.mc_samples.into());
                    o.insert("mc_seed".into(), self.config.mc_seed.into());
                }
            }
        }
        out
    }
}

/// The kernels of a multi-class model: `kernel` shared, or one copy per class.
pub(super) fn class_kernels(kernel: &Kernel, per_class: bool, classes: usize) -> ClassKernels {
    if per_class {
        ClassKernels::PerClass(vec![kernel.clone(); classes])
    } else {
        ClassKernels::Shared(kernel.clone())
    }
}

/// `m` distinct rows of `x` (all of them if `m ≥ n`) drawn uniformly without replacement by a
/// generator seeded with `seed`, kept in their original order: sparse EP's inducing inputs.
pub fn inducing_rows(x: MatRef<'_, f64>, m: usize, seed: u64) -> Mat<f64> {
    use rand::seq::index::sample;
    use rand::SeedableRng;
    let n = x.nrows();
    let mut rows = if m >= n {
        (0..n).collect()
    } else {
        sample(&mut rand::rngs::StdRng::seed_from_u64(seed), n, m).into_vec()
    };
    rows.sort_unstable();
    Mat::from_fn(rows.len(), x.ncols(), |a, c| x[(rows[a], c)])
}

/// EP's settings in the sparse model's type.
pub(super) fn sparse_ep_options(ep: &EpSettings) -> EpOptions {
    EpOptions {
        max_sweeps: ep.max_sweeps,
        tol: ep.tol,
        damping: ep.damping,
    }
}

/// Sparse EP fitted to `±1` labels `y` at inducing inputs `z`; VAR's hyperparameters are
/// fitted under DTC (VAR has no evidence gradient; see the module docs).
fn fit_sparse_ep(
    xs: MatRef<'_, f64>,
    y: &[f64],
    prior: SparsePrior,
    z: MatRef<'_, f64>,
    config: &ClassifierConfig,
) -> Result<SparseEp, ModelError> {
    let labels: Vec<usize> = y.iter().map(|&v| usize::from(v > 0.0)).collect();
    let options = sparse_ep_options(&config.ep);
    let fit_prior = if prior == SparsePrior::Var {
        SparsePrior::Dtc
    } else {
        prior
    };
    let fitted = SparseEp::fit(
        fit_prior,
        xs,
        &labels,
        config.kernel.clone(),
        z,
        INDUCING_JITTER,
        &options,
        &config.fit,
    )?;
    if prior == fit_prior {
        return Ok(fitted);
    }
    SparseEp::at(
        prior,
        xs,
        &labels,
        fitted.kernel().clone(),
        z,
        INDUCING_JITTER,
        &options,
    )
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
