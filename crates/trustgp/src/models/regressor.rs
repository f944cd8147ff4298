//! A regression model as a user sees it: named inputs and targets in original units, the
//! standardiser, and one fitted GP per target.
//!
//! The GPs themselves work on standardised data (by default); this layer converts on the way
//! in and out, so predictions are always in the units of the CSV.

use std::time::Instant;

use faer::{Mat, MatRef};

use super::exact::{ExactGp, FitOptions, StartReport};
use super::hyper::GpHyper;
use super::ModelError;
use crate::data::{Dataset, Standardizer};
use crate::kernels::Kernel;
use crate::means::Mean;

/// The kernel used when the user names none: a learnable scale times an ARD squared
/// exponential whose lengthscales start from the data.
pub const DEFAULT_KERNEL: &str = "const * se";
/// The initial noise variance (in standardised units) when the user gives none.
pub const DEFAULT_NOISE: f64 = 0.1;

/// What to fit.
#[derive(Clone, Debug)]
pub struct RegressorConfig {
    /// Kernel expression (see [`Kernel::parse`]); `None` = [`DEFAULT_KERNEL`].
    pub kernel: Option<String>,
    /// Initial (or, without optimisation, fixed) noise variance in the GP's units.
    pub noise: Option<f64>,
    /// Prior mean: `zero`, `constant` or `linear`.
    pub mean: String,
    /// Z-score inputs and targets with the training statistics.
    pub standardize: bool,
    /// Optimiser settings and restarts.
    pub fit: FitOptions,
}

impl Default for RegressorConfig {
    fn default() -> Self {
        RegressorConfig {
            kernel: None,
            noise: None,
            mean: "zero".into(),
            standardize: true,
            fit: FitOptions::default(),
        }
    }
}

/// One output's fitted GP and the training rows it used.
#[derive(Clone, Debug)]
pub struct OutputGp {
    /// Target column name.
    pub target: String,
    /// The fitted GP (on standardised data when standardisation is on).
    pub gp: ExactGp,
    /// Rows of the training data whose target was missing and which this output therefore
    /// did not use (0-based data rows).
    pub missing_rows: Vec<usize>,
}

/// Predictions of one output in original units.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputPrediction {
    /// Target column name.
    pub target: String,
    /// Predictive mean.
    pub mean: Vec<f64>,
    /// Predictive standard deviation (of a new noisy observation unless latent was asked for).
    pub std: Vec<f64>,
}

/// A fitted regression model: standardiser plus one GP per target.
#[derive(Clone, Debug)]
pub struct Regressor {
    /// Input column names, in model order.
    pub inputs: Vec<String>,
    /// The standardiser (identity if standardisation was off).
    pub standardizer: Standardizer,
    /// One GP per target.
    pub outputs: Vec<OutputGp>,
    /// Wall-clock seconds the fit took.
    pub fit_seconds: f64,
    /// Things the user should know about the fit (e.g. constant columns left unscaled).
    pub warnings: Vec<String>,
}

impl Regressor {
    /// Fit one GP per target column of `data`.
    pub fn fit(data: &Dataset, cfg: &RegressorConfig) -> Result<Regressor, ModelError> {
        let start = Instant::now();
        let (standardizer, mut warnings) = if cfg.standardize {
            let (st, constant) = Standardizer::fit(data.x.as_ref(), data.y.as_ref())?;
            (st, constant.warnings(&data.input_names, &data.target_names))
        } else {
            (
                Standardizer::identity(data.d(), data.n_targets()),
                Vec::new(),
            )
        };
        let xs = standardizer.transform_x(data.x.as_ref());
        let ys = standardizer.transform_y(data.y.as_ref());
        let kernel = Kernel::parse(cfg.kernel.as_deref().unwrap_or(DEFAULT_KERNEL))?;
        let noise = cfg.noise.unwrap_or(DEFAULT_NOISE);
        if !(noise.is_finite() && noise > 0.0) {
            return Err(ModelError::Invalid(format!(
                "noise must be a positive variance, got {noise}"
            )));
        }
        let mut outputs = Vec::with_capacity(data.n_targets());
        for (t, name) in data.target_names.iter().enumerate() {
            let (rows, missing_rows): (Vec<usize>, Vec<usize>) =
                (0..data.n()).partition(|&i| ys[(i, t)].is_finite());
            if rows.is_empty() {
                return Err(ModelError::Invalid(format!(
                    "target '{name}' has no observed values"
                )));
            }
            let x = Mat::from_fn(rows.len(), data.d(), |i, j| xs[(rows[i], j)]);
            let y: Vec<f64> = rows.iter().map(|&i| ys[(i, t)]).collect();
            let mut mean = Mean::by_name(&cfg.mean, data.d())?;
            if let Mean::Constant { c } = &mut mean {
                *c = y.iter().sum::<f64>() / y.len() as f64;
            }
            let init = GpHyper {
                kernel: kernel.clone(),
                mean,
                noise,
            };
            let gp = ExactGp::fit(x.as_ref(), &y, init, &cfg.fit)?;
            if !missing_rows.is_empty() {
                warnings.push(format!(
                    "target '{name}': {} row(s) with an empty cell were left out of its fit \
                     (0-based data rows {missing_rows:?})",
                    missing_rows.len()
                ));
            }
            outputs.push(OutputGp {
                target: name.clone(),
                gp,
                missing_rows,
            });
        }
        Ok(Regressor {
            inputs: data.input_names.clone(),
            standardizer,
            outputs,
            fit_seconds: start.elapsed().as_secs_f64(),
            warnings,
        })
    }

    /// Predict every output at raw (original-unit) inputs `x`, whose columns are in the order
    /// of [`Regressor::inputs`].
    pub fn predict(
        &self,
        x: MatRef<'_, f64>,
        latent: bool,
    ) -> Result<Vec<OutputPrediction>, ModelError> {
        if x.ncols() != self.inputs.len() {
            return Err(ModelError::Invalid(format!(
                "expected {} input columns ({}), got {}",
                self.inputs.len(),
                self.inputs.join(", "),
                x.ncols()
            )));
        }
        let xs = self.standardizer.transform_x(x);
        self.outputs
            .iter()
            .enumerate()
            .map(|(t, out)| {
                let m = out.gp.predict(xs.as_ref(), latent)?;
                Ok(OutputPrediction {
                    target: out.target.clone(),
                    mean: m
                        .mean
                        .iter()
                        .map(|&v| self.standardizer.inverse_y_mean(t, v))
                        .collect(),
                    std: m
                        .var
                        .iter()
                        .map(|&v| self.standardizer.inverse_y_std(t, v.sqrt()))
                        .collect(),
                })
            })
            .collect()
    }

    /// Optimiser reports of every output's starts.
    pub fn starts(&self) -> Vec<&[StartReport]> {
        self.outputs.iter().map(|o| o.gp.starts()).collect()
    }
}
