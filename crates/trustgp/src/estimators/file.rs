//! Versioned JSON model files. This build writes version 2 (the tagged records of
//! [`super::record`]) and reads versions 1 and 2.
//!
//! A model file holds everything prediction needs — names, the standardiser, and for each
//! output the kernel expression (printed exactly, so it parses back bit for bit), the noise, the
//! mean and the (standardised) training data. Loading refits nothing: it rebuilds the posterior
//! at the stored hyperparameters, which reproduces the saved model's predictions exactly.

use std::path::Path;

use faer::Mat;
use serde::{Deserialize, Serialize};

use super::kind::ModelKind;
use super::record::{ModelFile, SvgpParams, VERSION};
use super::regressor::{Fitted, OutputGp, Regressor, SingleOutput};
use crate::data::Standardizer;
use crate::kernels::ProductVariance;
use crate::kernels::{Coregion, Kernel, LmcTerm, MultiOutputKernel};
use crate::means::{Mean, TaskMean};
use crate::models::approximate::{ApproxKind, ApproxModel, ApproxRecord};
use crate::models::exact::ExactGp;
use crate::models::hyper::GpHyper;
use crate::models::robust::mogp::MultiOutputGp;
use crate::models::robust::multi_output::MultiOutputModel;
use crate::models::robust::{RobustGp, RobustWeights};
use crate::models::svgp::{Svgp, SvgpLikelihood};
use crate::models::ModelError;
use crate::robust::ImqWeights;
use crate::selection::{
    Component, InitialPeriods, KernelProbability, Mixture, PeriodPeak, SelectedModel, Structure,
};

/// The `format` field of every trustgp model file.
pub const FORMAT: &str = "trustgp-model";
/// The version of the flat [`ModelRecord`] files (written before the tagged records of
/// [`super::record`], still read).
pub const LEGACY_VERSION: u32 = 1;

/// Errors reading or writing model files.
#[derive(Debug, thiserror::Error)]
pub enum ModelFileError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid JSON of the expected shape.
    #[error("{path}: not a valid trustgp model file: {message}")]
    Format {
        /// The file.
        path: String,
        /// What was wrong.
        message: String,
    },
    /// The file parsed but its content is inconsistent or cannot be rebuilt.
    #[error("{path}: {source}")]
    Model {
        /// The file.
        path: String,
        /// What was wrong.
        source: Box<ModelError>,
    },
}

/// One output of a model file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct OutputRecord {
    /// Target column name.
    pub target: String,
    /// Fitted kernel expression.
    pub kernel: String,
    /// Noise variance (GP units).
    pub noise: f64,
    /// Fixed value added to the training diagonal.
    pub extra_diag: f64,
    /// Prior mean.
    pub mean: Mean,
    /// Training inputs as the GP saw them (standardised), one row per observation.
    pub x_train: Vec<Vec<f64>>,
    /// Training targets as the GP saw them.
    pub y_train: Vec<f64>,
    /// Training objective at save time: the log marginal likelihood (gp) or the weighted
    /// LOO-CV objective (rcgp).
    pub lml: f64,
    /// The robust weights of an RCGP (absent for a GP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robust: Option<WeightsRecord>,
    /// The parameters of an approximate model (sgpr, svgp, rcsvgp, cagp, rcagp); an SVGP keeps
    /// no training data (`x_train`, `y_train` empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approx: Option<ApproxRecord>,
    /// A kernel selection's model average and kernel posterior (vbks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vbks: Option<VbksRecord>,
}

/// A VBKS output of a model file: the kernels of the model average, each with its SVGP, and
/// the kernel posterior.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct VbksRecord {
    /// The kernels of the model average, by decreasing weight.
    pub components: Vec<VbksComponentRecord>,
    /// The most probable kernels with their probabilities.
    pub posterior: Vec<KernelProbability>,
    /// How the PER factors' periods started (standardised units; absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period_init: Option<InitialPeriods>,
}

/// One kernel of a VBKS model average.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct VbksComponentRecord {
    /// The kernel's canonical structure.
    pub structure: String,
    /// Its index in the candidate space (0-based).
    pub index: usize,
    /// Its weight in the average.
    pub weight: f64,
    /// The fitted kernel expression (one variance per product factor).
    pub kernel: String,
    /// The kernel's SVGP.
    #[serde(flatten)]
    pub svgp: SvgpParams,
}

/// The weights of a robust model's training entries, which fix its posterior.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct WeightsRecord {
    /// Expected outlier fraction of each output.
    pub epsilon: Vec<f64>,
    /// Normalised weight ŵ of each entry.
    pub w_hat: Vec<f64>,
    /// Score correction g of each entry.
    pub g: Vec<f64>,
    /// Centre γ of each entry.
    pub centre: Vec<f64>,
    /// Soft threshold of each output.
    pub thresholds: Vec<f64>,
}

/// One LMC term of a multi-output model file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TermRecord {
    /// Kernel expression on the ordinary inputs.
    pub kernel: String,
    /// The factor A, row by row (T rows).
    pub a: Vec<Vec<f64>>,
    /// The diagonal κ, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kappa: Option<Vec<f64>>,
}

/// A multi-output model (MOGP or MO-RCGP) in a model file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct JointRecord {
    /// The LMC terms.
    pub terms: Vec<TermRecord>,
    /// Noise variances: one shared, or one per output.
    pub noise: Vec<f64>,
    /// Prior mean of each output.
    pub task_means: Vec<f64>,
    /// Training entries as the model saw them: standardised inputs plus the output index.
    pub x_train: Vec<Vec<f64>>,
    /// Training values of the entries.
    pub y_train: Vec<f64>,
    /// Training objective at save time.
    pub objective: f64,
    /// The robust weights (MO-RCGP only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robust: Option<WeightsRecord>,
}

/// The version-1 form of a [`Regressor`] (one flat record with optional parts): files written
/// before version 2 are read in this form, and version-2 files are translated to it, so that
/// [`ModelRecord::into_regressor`] is the one place that checks and rebuilds a model.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ModelRecord {
    /// Always [`FORMAT`].
    pub format: String,
    /// File version, [`LEGACY_VERSION`].
    pub version: u32,
    /// Model name (`gp`).
    pub model: String,
    /// Input column names.
    pub inputs: Vec<String>,
    /// The standardiser.
    pub standardizer: Standardizer,
    /// One record per output (per-target models).
    pub outputs: Vec<OutputRecord>,
    /// Target names (multi-output models; per-target models name them in `outputs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    /// The multi-output model, if this is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joint: Option<JointRecord>,
}

fn rows(m: faer::MatRef<'_, f64>) -> Vec<Vec<f64>> {
    (0..m.nrows())
        .map(|i| (0..m.ncols()).map(|j| m[(i, j)]).collect())
        .collect()
}

fn weights_record(w: &RobustWeights, epsilon: Vec<f64>) -> WeightsRecord {
    WeightsRecord {
        epsilon,
        w_hat: w.imq.w_hat.clone(),
        g: w.imq.g.clone(),
        centre: w.centre.clone(),
        thresholds: w.thresholds.clone(),
    }
}

/// Rebuild and check the weights of `n` entries over `t` outputs.
fn weights_from(r: WeightsRecord, n: usize, t: usize) -> Result<RobustWeights, ModelError> {
    let bad = |m: String| Err(ModelError::Invalid(m));
    if r.w_hat.len() != n || r.g.len() != n || r.centre.len() != n {
        return bad(format!(
            "robust weights: expected {n} entries of w_hat, g and centre"
        ));
    }
    if r.thresholds.len() != t || r.epsilon.len() != t {
        return bad(format!(
            "robust weights: expected {t} thresholds and epsilons"
        ));
    }
    if let Some(j) = r.g.iter().chain(&r.centre).position(|v| !v.is_finite()) {
        return bad(format!(
            "robust weights: value {j} of g/centre is not finite"
        ));
    }
    Ok(RobustWeights {
        imq: ImqWeights {
            w_hat: r.w_hat,
            g: r.g,
        },
        centre: r.centre,
        thresholds: r.thresholds,
        floored: Vec::new(),
    })
}

/// Check a list of rows: `n` rows of `d` finite values.
fn matrix_from(rows: &[Vec<f64>], d: usize, what: &str) -> Result<Mat<f64>, ModelError> {
    if let Some(i) = rows.iter().position(|r| r.len() != d) {
        return Err(ModelError::Invalid(format!(
            "{what}: row {i} has {} values, expected {d}",
            rows[i].len()
        )));
    }
    let m = Mat::from_fn(rows.len(), d, |i, j| rows[i][j]);
    if let Some((i, j)) = (0..m.nrows())
        .flat_map(|i| (0..d).map(move |j| (i, j)))
        .find(|&(i, j)| !m[(i, j)].is_finite())
    {
        return Err(ModelError::Invalid(format!(
            "{what}: row {i}, column {j} is not finite"
        )));
    }
    Ok(m)
}

impl ModelRecord {
    /// The record of a fitted regressor.
    pub fn from_regressor(r: &Regressor) -> ModelRecord {
        let (outputs, targets, joint) = match &r.fitted {
            Fitted::PerTarget(outputs) => (
                outputs.iter().map(output_record).collect(),
                Vec::new(),
                None,
            ),
            Fitted::Joint(model, epsilon) => (
                Vec::new(),
                r.targets.clone(),
                Some(joint_record(model, epsilon)),
            ),
        };
        ModelRecord {
            format: FORMAT.into(),
            version: LEGACY_VERSION,
            model: r.model_name().into(),
            inputs: r.inputs.clone(),
            standardizer: r.standardizer.clone(),
            outputs,
            targets,
            joint,
        }
    }

    /// Rebuild the regressor, validating every field.
    pub fn into_regressor(self) -> Result<Regressor, ModelError> {
        let invalid = |m: String| Err(ModelError::Invalid(m));
        if self.format != FORMAT {
            return invalid(format!("format is '{}', expected '{FORMAT}'", self.format));
        }
        if self.version != LEGACY_VERSION {
            return invalid(format!(
                "model file version {} is not supported (this build reads versions \
                 {LEGACY_VERSION} and {VERSION})",
                self.version
            ));
        }
        let Some(kind) = ModelKind::parse(&self.model) else {
            return invalid(format!(
                "model '{}' is not supported by this build (expected one of {})",
                self.model,
                ModelKind::NAMES.join(", ")
            ));
        };
        let d = self.inputs.len();
        let n_targets = if self.joint.is_some() {
            self.targets.len()
        } else {
            self.outputs.len()
        };
        check_standardizer(&self.standardizer, d, n_targets)?;
        let (fitted, targets) = match (kind, self.joint) {
            (k, None) if !matches!(k, ModelKind::Mogp | ModelKind::MoRcgp) => {
                if d == 0 || self.outputs.is_empty() {
                    return invalid("a model needs at least one input and one output".into());
                }
                let targets = self.outputs.iter().map(|o| o.target.clone()).collect();
                let outputs = self
                    .outputs
                    .into_iter()
                    .map(|o| output_from(o, d, kind))
                    .collect::<Result<Vec<_>, _>>()?;
                (Fitted::PerTarget(outputs), targets)
            }
            (ModelKind::Mogp | ModelKind::MoRcgp, Some(j)) => {
                if d == 0 || self.targets.is_empty() {
                    return invalid("a model needs at least one input and one output".into());
                }
                let t = self.targets.len();
                let (model, eps) = joint_from(j, d, t, kind)?;
                (Fitted::Joint(Box::new(model), eps), self.targets)
            }
            (_, _) => {
                return invalid(format!(
                    "model '{}' needs {} multi-output record",
                    self.model,
                    if matches!(kind, ModelKind::Mogp | ModelKind::MoRcgp) {
                        "a"
                    } else {
                        "no"
                    }
                ))
            }
        };
        Ok(Regressor {
            inputs: self.inputs,
            targets,
            standardizer: self.standardizer,
            fitted,
            fit_seconds: 0.0,
            warnings: Vec::new(),
        })
    }
}

fn output_record(o: &OutputGp) -> OutputRecord {
    let (_, objective) = o.gp.objective();
    let (y_train, extra_diag, robust, approx) = match &o.gp {
        SingleOutput::Gp(g) => (g.y(), g.extra_diag(), None, None),
        SingleOutput::Vbks(_) => (Vec::new(), 0.0, None, None),
        SingleOutput::Rcgp(g, eps) => (
            g.y().to_vec(),
            0.0,
            Some(weights_record(g.weights(), vec![*eps])),
            None,
        ),
        SingleOutput::Approx(g, eps) => (
            approx_targets(g),
            0.0,
            None,
            Some(ApproxRecord {
                epsilon: Some(*eps).filter(|e| e.is_finite()),
                ..ApproxRecord::of(g)
            }),
        ),
    };
    OutputRecord {
        target: o.target.clone(),
        kernel: o.gp.kernel().to_expr(),
        noise: o.gp.noise(),
        extra_diag,
        mean: o.gp.mean(),
        x_train: o.gp.x().map(rows).unwrap_or_default(),
        y_train,
        lml: objective,
        robust,
        approx,
        vbks: match &o.gp {
            SingleOutput::Vbks(v) => Some(vbks_record(v)),
            _ => None,
        },
    }
}

fn vbks_record(v: &SelectedModel) -> VbksRecord {
    VbksRecord {
        components: v
            .mixture
            .components()
            .iter()
            .map(|c| {
                let (m, l) = c.model.variational();
                let (lik, params) = c.model.likelihood();
                VbksComponentRecord {
                    structure: c.structure.to_string(),
                    index: c.index,
                    weight: c.weight,
                    kernel: c.model.kernel().to_expr(),
                    svgp: SvgpParams {
                        inducing: rows(c.model.inducing()),
                        variational_mean: m.to_vec(),
                        variational_chol: rows(l),
                        likelihood: lik.name().into(),
                        likelihood_params: params.to_vec(),
                    },
                }
            })
            .collect(),
        posterior: v.posterior.clone(),
        period_init: v.periods.clone(),
    }
}

/// Rebuilds a VBKS output: every kernel's SVGP at its stored parameters, and the average.
fn vbks_output_from(o: OutputRecord, d: usize) -> Result<OutputGp, ModelError> {
    let what = format!("output '{}'", o.target);
    let Some(record) = o.vbks else {
        return Err(ModelError::Invalid(format!(
            "{what}: the model average ('components') is missing"
        )));
    };
    let components = record
        .components
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let at = format!("{what}, kernel {} of the average", i + 1);
            let structure = Structure::parse(&c.structure)
                .map_err(|e| ModelError::Invalid(format!("{at}: {e}")))?;
            let kernel = Kernel::parse_with(&c.kernel, ProductVariance::EveryFactor)?;
            kernel.validate(d)?;
            if Structure::of_kernel(&kernel) != structure {
                return Err(ModelError::Invalid(format!(
                    "{at}: the kernel '{}' does not have the structure '{}'",
                    c.kernel, c.structure
                )));
            }
            let likelihood = SvgpLikelihood::from_name(&c.svgp.likelihood)
                .filter(|l| *l == SvgpLikelihood::Gaussian)
                .ok_or_else(|| {
                    ModelError::Invalid(format!(
                        "{at}: likelihood '{}' (vbks uses gaussian)",
                        c.svgp.likelihood
                    ))
                })?;
            let z = matrix_from(&c.svgp.inducing, d, &format!("{at}: inducing input"))?;
            let m = z.nrows();
            let l = matrix_from(
                &c.svgp.variational_chol,
                m,
                &format!("{at}: variational factor row"),
            )?;
            let model = Svgp::from_parts(
                kernel,
                Mean::Zero,
                c.svgp.likelihood_params,
                likelihood,
                z,
                c.svgp.variational_mean,
                l,
            )?;
            Ok(Component {
                structure,
                index: c.index,
                weight: c.weight,
                model,
            })
        })
        .collect::<Result<Vec<_>, ModelError>>()?;
    if let Some(p) = record
        .posterior
        .iter()
        .find(|p| !(p.probability.is_finite() && (0.0..=1.0).contains(&p.probability)))
    {
        return Err(ModelError::Invalid(format!(
            "{what}: the posterior probability of '{}' is {} (expected a number in [0, 1])",
            p.kernel, p.probability
        )));
    }
    if let Some(search) = record.period_init.as_ref().and_then(|p| p.search.as_ref()) {
        let valid = |p: &PeriodPeak| {
            p.period.is_finite() && p.period > 0.0 && (0.0..=1.0).contains(&p.p_value)
        };
        let mut peaks = search.peaks.iter().chain(&search.rejected);
        if let Some(p) = peaks.find(|p| !valid(p)) {
            return Err(ModelError::Invalid(format!(
                "{what}: initial period {} with p-value {} (expected a positive period and a \
                 p-value in [0, 1])",
                p.period, p.p_value
            )));
        }
    }
    let mixture = Mixture::new(components)?;
    Ok(OutputGp {
        target: o.target,
        gp: SingleOutput::Vbks(Box::new(SelectedModel {
            mixture,
            posterior: record.posterior,
            elbo: o.lml,
            periods: record.period_init,
        })),
        missing_rows: Vec::new(),
    })
}

/// The training targets an approximate model keeps (none for SVGP).
fn approx_targets(g: &ApproxModel) -> Vec<f64> {
    match g {
        ApproxModel::Sparse(s) => s.y().to_vec(),
        ApproxModel::Ca(c) => c.y().to_vec(),
        ApproxModel::Rrp(r) => r.y().to_vec(),
        ApproxModel::Svgp(..) => Vec::new(),
    }
}

/// Rebuilds an approximate model's output: the common fields are checked here, the model's
/// own by [`ApproxRecord::rebuild`].
fn approx_output_from(o: OutputRecord, d: usize, kind: ApproxKind) -> Result<OutputGp, ModelError> {
    let what = format!("output '{}'", o.target);
    let Some(record) = o.approx else {
        return Err(ModelError::Invalid(format!(
            "{what}: the approximate model's parameters ('approx') are missing"
        )));
    };
    if !(o.noise.is_finite() && o.noise > 0.0) {
        return Err(ModelError::Invalid(format!(
            "{what}: noise {} is not a positive variance",
            o.noise
        )));
    }
    let x = if kind == ApproxKind::Svgp {
        None
    } else {
        if o.y_train.is_empty() || o.x_train.len() != o.y_train.len() {
            return Err(ModelError::Invalid(format!(
                "{what}: {} training inputs but {} targets",
                o.x_train.len(),
                o.y_train.len()
            )));
        }
        if let Some(i) = o.y_train.iter().position(|v| !v.is_finite()) {
            return Err(ModelError::Invalid(format!(
                "{what}: training target {i} is not finite"
            )));
        }
        Some(matrix_from(
            &o.x_train,
            d,
            &format!("{what}: training input"),
        )?)
    };
    let kernel = Kernel::parse(&o.kernel)?;
    kernel.validate(d)?;
    if !kernel.is_initialized() {
        return Err(ModelError::Invalid(format!(
            "{what}: the kernel '{}' lacks fitted lengthscales",
            o.kernel
        )));
    }
    o.mean.check_inputs(d)?;
    let epsilon = record.epsilon.unwrap_or(f64::NAN);
    let model = record.rebuild(kind, d, x, o.y_train, kernel, o.mean, o.noise, o.lml)?;
    Ok(OutputGp {
        target: o.target,
        gp: SingleOutput::Approx(model, epsilon),
        missing_rows: Vec::new(),
    })
}

fn output_from(o: OutputRecord, d: usize, kind: ModelKind) -> Result<OutputGp, ModelError> {
    let invalid = |m: String| Err(ModelError::Invalid(m));
    if let Some(approx) = kind.approximate() {
        return approx_output_from(o, d, approx);
    }
    if kind == ModelKind::Vbks {
        return vbks_output_from(o, d);
    }
    let n = o.y_train.len();
    if n == 0 || o.x_train.len() != n {
        return invalid(format!(
            "output '{}': {} training inputs but {n} targets",
            o.target,
            o.x_train.len()
        ));
    }
    let x = matrix_from(
        &o.x_train,
        d,
        &format!("output '{}': training input", o.target),
    )?;
    if !(o.noise.is_finite() && o.noise > 0.0) {
        return invalid(format!(
            "output '{}': noise {} is not a positive variance",
            o.target, o.noise
        ));
    }
    if !(o.extra_diag.is_finite() && o.extra_diag >= 0.0) {
        return invalid(format!(
            "output '{}': extra_diag {} is invalid",
            o.target, o.extra_diag
        ));
    }
    let mut kernel = Kernel::parse(&o.kernel)?;
    kernel.initialize(x.as_ref())?;
    o.mean.check_inputs(d)?;
    let gp = match (kind, o.robust) {
        (ModelKind::Rcgp, Some(w)) => {
            let eps = w.epsilon.first().copied().unwrap_or(f64::NAN);
            let weights = weights_from(w, n, 1)?;
            let g = RobustGp::at(
                kernel,
                o.mean,
                x.as_ref(),
                &o.y_train,
                &vec![0; n],
                &[o.noise],
                weights,
            )?;
            SingleOutput::Rcgp(g, eps)
        }
        (ModelKind::Gp, None) => {
            let hyper = GpHyper {
                kernel,
                mean: o.mean,
                noise: o.noise,
            };
            SingleOutput::Gp(ExactGp::at(hyper, x.as_ref(), &o.y_train, o.extra_diag)?)
        }
        _ => {
            return invalid(format!(
                "output '{}': robust weights are required for rcgp and not allowed for gp",
                o.target
            ))
        }
    };
    Ok(OutputGp {
        target: o.target,
        gp,
        missing_rows: Vec::new(),
    })
}

fn joint_record(model: &MultiOutputModel, epsilon: &[f64]) -> JointRecord {
    let cov = model.covariance();
    let terms = cov
        .terms()
        .iter()
        .map(|t| TermRecord {
            kernel: t.kernel.to_expr(),
            a: rows(t.coregion.a()),
            kappa: t.coregion.kappa().map(<[f64]>::to_vec),
        })
        .collect();
    let (x, y, mean, robust) = match model {
        MultiOutputModel::Mogp(g) => (g.posterior().x(), g.y(), g.posterior().mean(), None),
        MultiOutputModel::Robust(g) => (
            g.posterior().x(),
            g.y(),
            g.posterior().mean(),
            Some(weights_record(g.weights(), epsilon.to_vec())),
        ),
    };
    JointRecord {
        terms,
        noise: model.noise().to_vec(),
        task_means: mean.0.clone(),
        x_train: rows(x),
        y_train: y.to_vec(),
        objective: model.objective().1,
        robust,
    }
}

fn joint_from(
    j: JointRecord,
    d: usize,
    t: usize,
    kind: ModelKind,
) -> Result<(MultiOutputModel, Vec<f64>), ModelError> {
    let invalid = |m: String| Err(ModelError::Invalid(m));
    let n = j.y_train.len();
    if n == 0 || j.x_train.len() != n {
        return invalid(format!(
            "joint: {} training entries but {n} values",
            j.x_train.len()
        ));
    }
    let x = matrix_from(&j.x_train, d + 1, "joint: training entry")?;
    if j.task_means.len() != t || j.task_means.iter().any(|v| !v.is_finite()) {
        return invalid(format!("joint: expected {t} finite task means"));
    }
    if !(j.noise.len() == 1 || j.noise.len() == t) {
        return invalid(format!(
            "joint: {} noise variances for {t} outputs",
            j.noise.len()
        ));
    }
    let terms = j
        .terms
        .into_iter()
        .map(|tr| {
            let a = matrix_from(&tr.a, tr.a.first().map_or(0, Vec::len), "joint: A")?;
            if a.nrows() != t {
                return Err(ModelError::Invalid(format!(
                    "joint: A has {} rows for {t} outputs",
                    a.nrows()
                )));
            }
            let mut kernel = Kernel::parse(&tr.kernel)?;
            kernel.fix_scale();
            kernel.initialize(x.as_ref().subcols(0, d))?;
            Ok(LmcTerm {
                kernel,
                coregion: Coregion::new(a, tr.kappa)?,
            })
        })
        .collect::<Result<Vec<_>, ModelError>>()?;
    let cov = MultiOutputKernel::new(terms)?;
    cov.validate_inputs(x.as_ref())?;
    let shared = j.noise.len() == 1;
    let group: Vec<usize> = (0..n)
        .map(|k| if shared { 0 } else { x[(k, d)] as usize })
        .collect();
    let mean = TaskMean(j.task_means);
    match (kind, j.robust) {
        (ModelKind::Mogp, None) => Ok((
            MultiOutputModel::Mogp(Box::new(MultiOutputGp::at(
                cov,
                mean,
                x.as_ref(),
                &j.y_train,
                &group,
                &j.noise,
            )?)),
            Vec::new(),
        )),
        (ModelKind::MoRcgp, Some(w)) => {
            let eps = w.epsilon.clone();
            let weights = weights_from(w, n, t)?;
            Ok((
                MultiOutputModel::Robust(Box::new(RobustGp::at(
                    cov,
                    mean,
                    x.as_ref(),
                    &j.y_train,
                    &group,
                    &j.noise,
                    weights,
                )?)),
                eps,
            ))
        }
        _ => invalid(
            "joint: robust weights are required for mo-rcgp and not allowed for mogp".into(),
        ),
    }
}

/// A standardiser read from a file must match the model's shape and hold finite statistics
/// with positive scales.
fn check_standardizer(s: &Standardizer, d: usize, t: usize) -> Result<(), ModelError> {
    let fields: [(&str, &Vec<f64>, usize, bool); 4] = [
        ("x_mean", &s.x_mean, d, false),
        ("x_std", &s.x_std, d, true),
        ("y_mean", &s.y_mean, t, false),
        ("y_std", &s.y_std, t, true),
    ];
    for (name, v, len, positive) in fields {
        if v.len() != len {
            return Err(ModelError::Invalid(format!(
                "standardizer.{name} has {} entries, expected {len}",
                v.len()
            )));
        }
        if let Some(i) = v
            .iter()
            .position(|x| !x.is_finite() || (positive && *x <= 0.0))
        {
            return Err(ModelError::Invalid(format!(
                "standardizer.{name}[{i}] = {} is invalid (expected a finite{} number)",
                v[i],
                if positive { ", positive" } else { "" }
            )));
        }
    }
    Ok(())
}

/// Write a regressor to `path` as JSON (the text of [`save_str`]).
pub fn save(r: &Regressor, path: &Path) -> Result<(), ModelFileError> {
    let text = save_str(r, &path.display().to_string())?;
    std::fs::write(path, text).map_err(|source| ModelFileError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// The text of a regressor's model file (what [`save`] writes and [`load_str`] reads back to
/// the same numbers); `source` names it in errors. A model whose standardiser is unusable (a
/// scale that overflowed, say) is refused rather than written as a file that cannot be loaded.
pub fn save_str(r: &Regressor, source: &str) -> Result<String, ModelFileError> {
    check_standardizer(&r.standardizer, r.inputs.len(), r.targets.len()).map_err(|e| {
        ModelFileError::Model {
            path: source.to_string(),
            source: Box::new(e),
        }
    })?;
    let format_error = |message: String| ModelFileError::Format {
        path: source.to_string(),
        message,
    };
    let file = ModelFile::from_record(&ModelRecord::from_regressor(r)).map_err(format_error)?;
    serde_json::to_string_pretty(&file).map_err(|e| format_error(e.to_string()))
}

/// Read a regressor from a JSON model file.
pub fn load(path: &Path) -> Result<Regressor, ModelFileError> {
    let p = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ModelFileError::Io {
        path: p.clone(),
        source,
    })?;
    load_str(&text, &p)
}

/// Read a regressor from the text of a model file of either version (`source` names it in
/// errors): version 2 ([`ModelFile`]) is translated to the version-1 record, and both are checked
/// and rebuilt by [`ModelRecord::into_regressor`].
pub fn load_str(text: &str, source: &str) -> Result<Regressor, ModelFileError> {
    let format_error = |e: serde_json::Error| ModelFileError::Format {
        path: source.to_string(),
        message: e.to_string(),
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(format_error)?;
    let version = value.get("version").and_then(serde_json::Value::as_u64);
    let record = match version {
        Some(v) if v == u64::from(VERSION) => serde_json::from_value::<ModelFile>(value)
            .map_err(format_error)?
            .into_record(),
        Some(v) if v != u64::from(LEGACY_VERSION) => {
            return Err(ModelFileError::Model {
                path: source.to_string(),
                source: Box::new(ModelError::Invalid(format!(
                    "model file version {v} is not supported (this build reads versions \
                     {LEGACY_VERSION} and {VERSION})"
                ))),
            })
        }
        _ => serde_json::from_value::<ModelRecord>(value).map_err(format_error)?,
    };
    record.into_regressor().map_err(|e| ModelFileError::Model {
        path: source.to_string(),
        source: Box::new(e),
    })
}
