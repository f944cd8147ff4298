//! The model file, version 2: one tagged record per model kind (`"model": "rcgp"` selects which
//! fields follow), so that a record holds exactly the fields its model needs and nothing is
//! optional by accident. Version 1 files (one flat [`ModelRecord`] with optional `robust`,
//! `approx` and `joint` parts) are still read: both versions are translated to the same
//! [`ModelRecord`] before the one builder of [`ModelRecord::into_regressor`] checks and rebuilds
//! the model, so old and new files load by the same rules and predict the same numbers.

use serde::{Deserialize, Serialize};

use super::file::{
    JointRecord, ModelRecord, OutputRecord, TermRecord, VbksRecord, WeightsRecord, FORMAT,
};
use super::kind::ModelKind;
use crate::data::Standardizer;
use crate::means::Mean;
use crate::models::approximate::ApproxRecord;

/// The version of the files this build writes.
pub const VERSION: u32 = 2;

/// A version-2 model file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`].
    pub version: u32,
    /// Input column names.
    pub inputs: Vec<String>,
    /// The standardiser.
    pub standardizer: Standardizer,
    /// The model, tagged by its name.
    #[serde(flatten)]
    pub model: ModelBody,
}

/// The fitted model, one variant per model kind, tagged by `model`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "kebab-case")]
pub enum ModelBody {
    /// Exact GP per target.
    Gp {
        /// One record per target.
        outputs: Vec<Output<ExactParams>>,
    },
    /// RCGP per target.
    Rcgp {
        /// One record per target.
        outputs: Vec<Output<RobustParams>>,
    },
    /// Multi-output GP.
    Mogp(Joint),
    /// Multi-output RCGP.
    MoRcgp {
        /// The multi-output model.
        #[serde(flatten)]
        joint: Joint,
        /// The weights of its training entries.
        weights: WeightsRecord,
    },
    /// SGPR per target.
    Sgpr {
        /// One record per target.
        outputs: Vec<Output<SparseParams>>,
    },
    /// SVGP per target.
    Svgp {
        /// One record per target.
        outputs: Vec<Output<SvgpParams>>,
    },
    /// RCSVGP per target.
    Rcsvgp {
        /// One record per target.
        outputs: Vec<Output<SparseParams>>,
    },
    /// CaGP per target.
    Cagp {
        /// One record per target.
        outputs: Vec<Output<CaParams>>,
    },
    /// RCaGP per target.
    Rcagp {
        /// One record per target.
        outputs: Vec<Output<CaParams>>,
    },
    /// SGPR with relevance pursuit per target.
    Rrp {
        /// One record per target.
        outputs: Vec<Output<RrpParams>>,
    },
    /// Kernel selection (VBKS) per target: a model average of per-kernel SVGPs.
    Vbks {
        /// One record per target.
        outputs: Vec<Output<VbksRecord>>,
    },
}

/// What every per-target record holds, and the model's own parameters `P`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Output<P> {
    /// Target column name.
    pub target: String,
    /// Fitted kernel expression.
    pub kernel: String,
    /// Noise variance (model units).
    pub noise: f64,
    /// Prior mean.
    pub mean: Mean,
    /// Training objective at save time.
    pub objective: f64,
    /// The model's own parameters.
    #[serde(flatten)]
    pub params: P,
}

/// Training data as the model saw it (standardised), one row per observation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainingData {
    /// Inputs.
    pub x_train: Vec<Vec<f64>>,
    /// Targets.
    pub y_train: Vec<f64>,
}

/// An exact GP's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExactParams {
    /// Training data.
    #[serde(flatten)]
    pub data: TrainingData,
    /// Fixed value added to the training diagonal.
    pub extra_diag: f64,
}

/// An RCGP's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RobustParams {
    /// Training data.
    #[serde(flatten)]
    pub data: TrainingData,
    /// The weights of the training entries.
    pub weights: WeightsRecord,
}

/// An SGPR's or RCSVGP's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SparseParams {
    /// Training data.
    #[serde(flatten)]
    pub data: TrainingData,
    /// Inducing inputs, one row each.
    pub inducing: Vec<Vec<f64>>,
    /// Soft threshold of the IMQ weight.
    pub threshold: f64,
    /// IMQ learning rate β.
    pub beta: f64,
    /// RCSVGP: the outlier fraction it was fitted with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epsilon: Option<f64>,
}

/// The parameters of SGPR with relevance pursuit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RrpParams {
    /// Training data.
    #[serde(flatten)]
    pub data: TrainingData,
    /// Inducing inputs, one row each.
    pub inducing: Vec<Vec<f64>>,
    /// The extra noise variance ρ of every training row (0 outside the support).
    pub rho: Vec<f64>,
}

/// An SVGP's parameters (it keeps no training data).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SvgpParams {
    /// Inducing inputs, one row each.
    pub inducing: Vec<Vec<f64>>,
    /// Whitened variational mean.
    pub variational_mean: Vec<f64>,
    /// Lower Cholesky factor of the whitened variational covariance, row by row.
    pub variational_chol: Vec<Vec<f64>>,
    /// `gaussian` or `student-t`.
    pub likelihood: String,
    /// The likelihood's parameters.
    pub likelihood_params: Vec<f64>,
}

/// The actions of a computation-aware model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaActions {
    /// The entries θ_b of each block.
    Blocks(Vec<Vec<f64>>),
    /// Inducing inputs of dense actions k(X, Z).
    Inducing(Vec<Vec<f64>>),
}

/// A CaGP's or RCaGP's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaParams {
    /// Training data.
    #[serde(flatten)]
    pub data: TrainingData,
    /// The actions.
    pub actions: CaActions,
    /// Soft threshold of the IMQ weight.
    pub threshold: f64,
    /// IMQ learning rate β.
    pub beta: f64,
    /// RCaGP: the outlier fraction it was fitted with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epsilon: Option<f64>,
}

/// A multi-output model's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Joint {
    /// Target column names.
    pub targets: Vec<String>,
    /// The LMC terms.
    pub terms: Vec<TermRecord>,
    /// Noise variances: one shared, or one per output.
    pub noise: Vec<f64>,
    /// Prior mean of each output.
    pub task_means: Vec<f64>,
    /// Training entries: standardised inputs plus the output index.
    pub x_train: Vec<Vec<f64>>,
    /// Training values of the entries.
    pub y_train: Vec<f64>,
    /// Training objective at save time.
    pub objective: f64,
}

/// A missing part of a version-1 record that its model needs.
fn missing(model: &str, what: &str) -> String {
    format!("model '{model}' needs its {what}")
}

/// An SVGP's part `what` of a version-1 record, which must be present.
fn need<T>(v: Option<T>, what: &str) -> Result<T, String> {
    v.ok_or_else(|| missing("svgp", what))
}

/// The common fields of a version-1 output with the model's own parameters `params`.
fn output<P>(o: &OutputRecord, params: P) -> Output<P> {
    Output {
        target: o.target.clone(),
        kernel: o.kernel.clone(),
        noise: o.noise,
        mean: o.mean.clone(),
        objective: o.lml,
        params,
    }
}

impl<P> Output<P> {
    /// The version-1 output with this record's fields.
    fn legacy(
        self,
        data: Option<TrainingData>,
        robust: Option<WeightsRecord>,
        approx: Option<ApproxRecord>,
    ) -> OutputRecord {
        let data = data.unwrap_or(TrainingData {
            x_train: Vec::new(),
            y_train: Vec::new(),
        });
        OutputRecord {
            target: self.target,
            kernel: self.kernel,
            noise: self.noise,
            extra_diag: 0.0,
            mean: self.mean,
            x_train: data.x_train,
            y_train: data.y_train,
            lml: self.objective,
            robust,
            approx,
            vbks: None,
        }
    }
}

fn data(o: &OutputRecord) -> TrainingData {
    TrainingData {
        x_train: o.x_train.clone(),
        y_train: o.y_train.clone(),
    }
}

/// Only the robust models keep their outlier fraction (a Gaussian one was fitted with a
/// default it never used).
fn robust_epsilon(a: &ApproxRecord, robust: bool) -> Option<f64> {
    a.epsilon.filter(|_| robust)
}

fn sparse(o: &OutputRecord, robust: bool) -> Result<Output<SparseParams>, String> {
    let a = o
        .approx
        .as_ref()
        .ok_or_else(|| missing("sparse", "approx"))?;
    Ok(output(
        o,
        SparseParams {
            data: data(o),
            inducing: a
                .inducing
                .clone()
                .ok_or_else(|| missing("sparse", "inducing"))?,
            threshold: a.threshold.ok_or_else(|| missing("sparse", "threshold"))?,
            beta: a.beta.ok_or_else(|| missing("sparse", "beta"))?,
            epsilon: robust_epsilon(a, robust),
        },
    ))
}

fn rrp(o: &OutputRecord) -> Result<Output<RrpParams>, String> {
    let a = o.approx.as_ref().ok_or_else(|| missing("rrp", "approx"))?;
    Ok(output(
        o,
        RrpParams {
            data: data(o),
            inducing: a
                .inducing
                .clone()
                .ok_or_else(|| missing("rrp", "inducing"))?,
            rho: a.rho.clone().ok_or_else(|| missing("rrp", "rho"))?,
        },
    ))
}

fn svgp(o: &OutputRecord) -> Result<Output<SvgpParams>, String> {
    let a = o.approx.clone().ok_or_else(|| missing("svgp", "approx"))?;
    Ok(output(
        o,
        SvgpParams {
            inducing: need(a.inducing, "inducing")?,
            variational_mean: need(a.variational_mean, "variational_mean")?,
            variational_chol: need(a.variational_chol, "variational_chol")?,
            likelihood: need(a.likelihood, "likelihood")?,
            likelihood_params: need(a.likelihood_params, "likelihood_params")?,
        },
    ))
}

fn computation_aware(o: &OutputRecord, robust: bool) -> Result<Output<CaParams>, String> {
    let a = o
        .approx
        .clone()
        .ok_or_else(|| missing("computation-aware", "approx"))?;
    let epsilon = robust_epsilon(&a, robust);
    let actions = match (a.actions, a.inducing) {
        (Some(theta), None) => CaActions::Blocks(theta),
        (None, Some(z)) => CaActions::Inducing(z),
        _ => {
            return Err(missing(
                "computation-aware",
                "actions (or inducing), not both",
            ))
        }
    };
    Ok(output(
        o,
        CaParams {
            data: data(o),
            actions,
            threshold: a
                .threshold
                .ok_or_else(|| missing("computation-aware", "threshold"))?,
            beta: a.beta.ok_or_else(|| missing("computation-aware", "beta"))?,
            epsilon,
        },
    ))
}

fn joint(r: &ModelRecord, j: &JointRecord) -> Joint {
    Joint {
        targets: r.targets.clone(),
        terms: j.terms.clone(),
        noise: j.noise.clone(),
        task_means: j.task_means.clone(),
        x_train: j.x_train.clone(),
        y_train: j.y_train.clone(),
        objective: j.objective,
    }
}

/// A version-1 joint record and its targets.
fn legacy_joint(j: Joint, robust: Option<WeightsRecord>) -> (Vec<String>, JointRecord) {
    (
        j.targets,
        JointRecord {
            terms: j.terms,
            noise: j.noise,
            task_means: j.task_means,
            x_train: j.x_train,
            y_train: j.y_train,
            objective: j.objective,
            robust,
        },
    )
}

impl ModelFile {
    /// The version-2 form of a record built by [`ModelRecord::from_regressor`].
    ///
    /// # Errors
    /// A part the model needs is missing (cannot happen for a record of a fitted model).
    pub fn from_record(r: &ModelRecord) -> Result<ModelFile, String> {
        let outputs = &r.outputs;
        let Some(kind) = ModelKind::parse(&r.model) else {
            return Err(format!("unknown model '{}'", r.model));
        };
        let model = match kind {
            ModelKind::Gpc => {
                return Err("model 'gpc' is a classifier: its files are written by \
                            estimators::save_classifier"
                    .into())
            }
            ModelKind::Gp => ModelBody::Gp {
                outputs: outputs
                    .iter()
                    .map(|o| {
                        output(
                            o,
                            ExactParams {
                                data: data(o),
                                extra_diag: o.extra_diag,
                            },
                        )
                    })
                    .collect(),
            },
            ModelKind::Rcgp => ModelBody::Rcgp {
                outputs: outputs
                    .iter()
                    .map(|o| {
                        let weights = o.robust.clone().ok_or_else(|| missing("rcgp", "weights"))?;
                        Ok(output(
                            o,
                            RobustParams {
                                data: data(o),
                                weights,
                            },
                        ))
                    })
                    .collect::<Result<_, String>>()?,
            },
            ModelKind::Mogp | ModelKind::MoRcgp => {
                let j = r.joint.as_ref().ok_or_else(|| missing(&r.model, "joint"))?;
                match (kind, j.robust.clone()) {
                    (ModelKind::Mogp, _) => ModelBody::Mogp(joint(r, j)),
                    (_, Some(weights)) => ModelBody::MoRcgp {
                        joint: joint(r, j),
                        weights,
                    },
                    _ => return Err(missing("mo-rcgp", "weights")),
                }
            }
            ModelKind::Sgpr => ModelBody::Sgpr {
                outputs: outputs
                    .iter()
                    .map(|o| sparse(o, false))
                    .collect::<Result<_, _>>()?,
            },
            ModelKind::Rcsvgp => ModelBody::Rcsvgp {
                outputs: outputs
                    .iter()
                    .map(|o| sparse(o, true))
                    .collect::<Result<_, _>>()?,
            },
            ModelKind::Rrp => ModelBody::Rrp {
                outputs: outputs.iter().map(rrp).collect::<Result<_, _>>()?,
            },
            ModelKind::Svgp => ModelBody::Svgp {
                outputs: outputs.iter().map(svgp).collect::<Result<_, _>>()?,
            },
            ModelKind::Vbks => ModelBody::Vbks {
                outputs: outputs
                    .iter()
                    .map(|o| {
                        let v = o
                            .vbks
                            .clone()
                            .ok_or_else(|| missing("vbks", "model average"))?;
                        Ok(output(o, v))
                    })
                    .collect::<Result<_, String>>()?,
            },
            ModelKind::Cagp => ModelBody::Cagp {
                outputs: outputs
                    .iter()
                    .map(|o| computation_aware(o, false))
                    .collect::<Result<_, _>>()?,
            },
            ModelKind::Rcagp => ModelBody::Rcagp {
                outputs: outputs
                    .iter()
                    .map(|o| computation_aware(o, true))
                    .collect::<Result<_, _>>()?,
            },
        };
        Ok(ModelFile {
            format: FORMAT.into(),
            version: VERSION,
            inputs: r.inputs.clone(),
            standardizer: r.standardizer.clone(),
            model,
        })
    }

    /// The same model as a version-1 record, which [`ModelRecord::into_regressor`] checks and
    /// rebuilds.
    pub fn into_record(self) -> ModelRecord {
        let name = self.model.kind().name();
        let sparse = |o: Output<SparseParams>| {
            let p = o.params.clone();
            let approx = ApproxRecord {
                inducing: Some(p.inducing),
                threshold: Some(p.threshold),
                beta: Some(p.beta),
                epsilon: p.epsilon,
                ..ApproxRecord::default()
            };
            o.legacy(Some(p.data), None, Some(approx))
        };
        let ca = |o: Output<CaParams>| {
            let p = o.params.clone();
            let (actions, inducing) = match p.actions {
                CaActions::Blocks(theta) => (Some(theta), None),
                CaActions::Inducing(z) => (None, Some(z)),
            };
            let approx = ApproxRecord {
                actions,
                inducing,
                threshold: Some(p.threshold),
                beta: Some(p.beta),
                epsilon: p.epsilon,
                ..ApproxRecord::default()
            };
            o.legacy(Some(p.data), None, Some(approx))
        };
        let (outputs, targets, joint) = match self.model {
            ModelBody::Gp { outputs } => (
                outputs
                    .into_iter()
                    .map(|o| {
                        let p = o.params.clone();
                        OutputRecord {
                            extra_diag: p.extra_diag,
                            ..o.legacy(Some(p.data), None, None)
                        }
                    })
                    .collect(),
                Vec::new(),
                None,
            ),
            ModelBody::Rcgp { outputs } => (
                outputs
                    .into_iter()
                    .map(|o| {
                        let p = o.params.clone();
                        o.legacy(Some(p.data), Some(p.weights), None)
                    })
                    .collect(),
                Vec::new(),
                None,
            ),
            ModelBody::Mogp(j) => {
                let (targets, j) = legacy_joint(j, None);
                (Vec::new(), targets, Some(j))
            }
            ModelBody::MoRcgp { joint, weights } => {
                let (targets, j) = legacy_joint(joint, Some(weights));
                (Vec::new(), targets, Some(j))
            }
            ModelBody::Sgpr { outputs } | ModelBody::Rcsvgp { outputs } => {
                (outputs.into_iter().map(sparse).collect(), Vec::new(), None)
            }
            ModelBody::Rrp { outputs } => (
                outputs
                    .into_iter()
                    .map(|o| {
                        let p = o.params.clone();
                        let approx = ApproxRecord {
                            inducing: Some(p.inducing),
                            rho: Some(p.rho),
                            ..ApproxRecord::default()
                        };
                        o.legacy(Some(p.data), None, Some(approx))
                    })
                    .collect(),
                Vec::new(),
                None,
            ),
            ModelBody::Svgp { outputs } => (
                outputs
                    .into_iter()
                    .map(|o| {
                        let p = o.params.clone();
                        let approx = ApproxRecord {
                            inducing: Some(p.inducing),
                            variational_mean: Some(p.variational_mean),
                            variational_chol: Some(p.variational_chol),
                            likelihood: Some(p.likelihood),
                            likelihood_params: Some(p.likelihood_params),
                            ..ApproxRecord::default()
                        };
                        o.legacy(None, None, Some(approx))
                    })
                    .collect(),
                Vec::new(),
                None,
            ),
            ModelBody::Cagp { outputs } | ModelBody::Rcagp { outputs } => {
                (outputs.into_iter().map(ca).collect(), Vec::new(), None)
            }
            ModelBody::Vbks { outputs } => (
                outputs
                    .into_iter()
                    .map(|o| {
                        let p = o.params.clone();
                        OutputRecord {
                            vbks: Some(p),
                            ..o.legacy(None, None, None)
                        }
                    })
                    .collect(),
                Vec::new(),
                None,
            ),
        };
        ModelRecord {
            format: self.format,
            version: super::file::LEGACY_VERSION,
            model: name.into(),
            inputs: self.inputs,
            standardizer: self.standardizer,
            outputs,
            targets,
            joint,
        }
    }
}

impl ModelBody {
    /// The model's kind (its tag is the kind's name).
    pub fn kind(&self) -> ModelKind {
        match self {
            ModelBody::Gp { .. } => ModelKind::Gp,
            ModelBody::Rcgp { .. } => ModelKind::Rcgp,
            ModelBody::Mogp(_) => ModelKind::Mogp,
            ModelBody::MoRcgp { .. } => ModelKind::MoRcgp,
            ModelBody::Sgpr { .. } => ModelKind::Sgpr,
            ModelBody::Svgp { .. } => ModelKind::Svgp,
            ModelBody::Rcsvgp { .. } => ModelKind::Rcsvgp,
            ModelBody::Cagp { .. } => ModelKind::Cagp,
            ModelBody::Rcagp { .. } => ModelKind::Rcagp,
            ModelBody::Rrp { .. } => ModelKind::Rrp,
            ModelBody::Vbks { .. } => ModelKind::Vbks,
        }
    }
}
