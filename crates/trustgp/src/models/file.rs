//! Versioned JSON model files.
//!
//! A model file holds everything prediction needs — names, the standardiser, and for each
//! output the kernel expression (printed exactly, so it parses back bit for bit), the noise, the
//! mean and the (standardised) training data. Loading refits nothing: it rebuilds the posterior
//! at the stored hyperparameters, which reproduces the saved model's predictions exactly.

use std::path::Path;

use faer::Mat;
use serde::{Deserialize, Serialize};

use super::exact::ExactGp;
use super::hyper::GpHyper;
use super::regressor::{OutputGp, Regressor};
use super::ModelError;
use crate::data::Standardizer;
use crate::kernels::Kernel;
use crate::means::Mean;

/// The `format` field of every trustgp model file.
pub const FORMAT: &str = "trustgp-model";
/// The current model-file version.
pub const VERSION: u32 = 1;

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
    /// Log marginal likelihood at save time (a check on load).
    pub lml: f64,
}

/// The on-disk form of a [`Regressor`].
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ModelRecord {
    /// Always [`FORMAT`].
    pub format: String,
    /// File version, [`VERSION`] when written by this build.
    pub version: u32,
    /// Model name (`gp`).
    pub model: String,
    /// Input column names.
    pub inputs: Vec<String>,
    /// The standardiser.
    pub standardizer: Standardizer,
    /// One record per output.
    pub outputs: Vec<OutputRecord>,
}

impl ModelRecord {
    /// The record of a fitted regressor.
    pub fn from_regressor(r: &Regressor) -> ModelRecord {
        ModelRecord {
            format: FORMAT.into(),
            version: VERSION,
            model: "gp".into(),
            inputs: r.inputs.clone(),
            standardizer: r.standardizer.clone(),
            outputs: r
                .outputs
                .iter()
                .map(|o| {
                    let x = o.gp.posterior().x();
                    OutputRecord {
                        target: o.target.clone(),
                        kernel: o.gp.hyper().kernel.to_expr(),
                        noise: o.gp.hyper().noise,
                        extra_diag: o.gp.extra_diag(),
                        mean: o.gp.hyper().mean.clone(),
                        x_train: (0..x.nrows())
                            .map(|i| (0..x.ncols()).map(|j| x[(i, j)]).collect())
                            .collect(),
                        y_train: o.gp.y(),
                        lml: o.gp.lml(),
                    }
                })
                .collect(),
        }
    }

    /// Rebuild the regressor, validating every field.
    pub fn into_regressor(self) -> Result<Regressor, ModelError> {
        let invalid = |m: String| Err(ModelError::Invalid(m));
        if self.format != FORMAT {
            return invalid(format!("format is '{}', expected '{FORMAT}'", self.format));
        }
        if self.version != VERSION {
            return invalid(format!(
                "model file version {} is not supported (this build reads version {VERSION})",
                self.version
            ));
        }
        if self.model != "gp" {
            return invalid(format!(
                "model '{}' is not supported by this build",
                self.model
            ));
        }
        let d = self.inputs.len();
        if d == 0 || self.outputs.is_empty() {
            return invalid("a model needs at least one input and one output".into());
        }
        check_standardizer(&self.standardizer, d, self.outputs.len())?;
        let mut outputs = Vec::with_capacity(self.outputs.len());
        for o in self.outputs {
            let n = o.y_train.len();
            if n == 0 || o.x_train.len() != n {
                return invalid(format!(
                    "output '{}': {} training inputs but {n} targets",
                    o.target,
                    o.x_train.len()
                ));
            }
            if let Some(i) = o.x_train.iter().position(|r| r.len() != d) {
                return invalid(format!(
                    "output '{}': training row {i} has {} values, expected {d}",
                    o.target,
                    o.x_train[i].len()
                ));
            }
            let x = Mat::from_fn(n, d, |i, j| o.x_train[i][j]);
            if let Some((i, j)) = (0..n)
                .flat_map(|i| (0..d).map(move |j| (i, j)))
                .find(|&(i, j)| !x[(i, j)].is_finite())
            {
                return invalid(format!(
                    "output '{}': training input row {i}, column {j} is not finite",
                    o.target
                ));
            }
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
            let hyper = GpHyper {
                kernel,
                mean: o.mean,
                noise: o.noise,
            };
            let gp = ExactGp::at(hyper, x.as_ref(), &o.y_train, o.extra_diag)?;
            outputs.push(OutputGp {
                target: o.target,
                gp,
                missing_rows: Vec::new(),
            });
        }
        Ok(Regressor {
            inputs: self.inputs,
            standardizer: self.standardizer,
            outputs,
            fit_seconds: 0.0,
            warnings: Vec::new(),
        })
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

/// Write a regressor to `path` as JSON.
pub fn save(r: &Regressor, path: &Path) -> Result<(), ModelFileError> {
    let text = serde_json::to_string_pretty(&ModelRecord::from_regressor(r)).map_err(|e| {
        ModelFileError::Format {
            path: path.display().to_string(),
            message: e.to_string(),
        }
    })?;
    std::fs::write(path, text).map_err(|source| ModelFileError::Io {
        path: path.display().to_string(),
        source,
    })
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

/// Read a regressor from the text of a model file (`source` names it in errors).
pub fn load_str(text: &str, source: &str) -> Result<Regressor, ModelFileError> {
    let record: ModelRecord = serde_json::from_str(text).map_err(|e| ModelFileError::Format {
        path: source.to_string(),
        message: e.to_string(),
    })?;
    record.into_regressor().map_err(|e| ModelFileError::Model {
        path: source.to_string(),
        source: Box::new(e),
    })
}
