//! The next point to evaluate (`q = 1`) from a box and the rows evaluated so far: the ask step
//! of a loop the user drives from their own experiment.
//!
//! A thin use of [`BayesOpt`]: a fresh run told every evaluated row, asked for one point. With
//! no rows, the point is the first of the run's seeded Owen-scrambled Sobol design. With rows,
//! the default exact GP is fitted through [`Regressor`] (standardised data), the box is mapped
//! into the model's standardised input units, the acquisition is maximised there and the point
//! is mapped back. Minimisation maximises `−y`: the targets are negated before the fit.

use serde::{Deserialize, Serialize};

use super::bayes_opt::{BayesOpt, BoSettings};
use crate::data::Dataset;
use crate::estimators::Regressor;
use crate::models::ModelError;

/// UCB's exploration weight `β` (the bound is `μ + √β σ`, in standardised target units).
pub const DEFAULT_UCB_BETA: f64 = 4.0;

/// One input's name and box `[lo, hi]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bound {
    /// The input column's name.
    pub name: String,
    /// Lower end.
    pub lo: f64,
    /// Upper end (greater than `lo`).
    pub hi: f64,
}

/// Parses `"x1=0:1,x2=-5:10"`: comma-separated `name=lo:hi`, finite ends with `lo < hi`,
/// distinct names.
///
/// # Errors
/// [`ModelError::Invalid`] naming the offending entry and what was expected.
pub fn parse_bounds(text: &str) -> Result<Vec<Bound>, ModelError> {
    let invalid = |msg: String| Err(ModelError::Invalid(format!("--bounds: {msg}")));
    let mut bounds: Vec<Bound> = Vec::new();
    for entry in text.split(',') {
        let entry = entry.trim();
        let Some((name, range)) = entry.split_once('=') else {
            return invalid(format!("entry '{entry}' is not of the form name=lo:hi"));
        };
        let name = name.trim();
        let Some((lo, hi)) = range.split_once(':') else {
            return invalid(format!("entry '{entry}' has no ':' between lo and hi"));
        };
        if name.is_empty() {
            return invalid(format!("entry '{entry}' has an empty name"));
        }
        let number = |s: &str| -> Result<f64, ModelError> {
            match s.trim().parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(v),
                _ => Err(ModelError::Invalid(format!(
                    "--bounds: entry '{entry}': '{}' is not a finite number",
                    s.trim()
                ))),
            }
        };
        let (lo, hi) = (number(lo)?, number(hi)?);
        if lo >= hi {
            return invalid(format!("entry '{entry}' needs lo < hi, got {lo} ≥ {hi}"));
        }
        if bounds.iter().any(|b| b.name == name) {
            return invalid(format!("input '{name}' is given more than once"));
        }
        bounds.push(Bound {
            name: name.to_string(),
            lo,
            hi,
        });
    }
    Ok(bounds)
}

/// The acquisition that chooses the next points ([`suggest`], [`BayesOpt`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SuggestAcquisition {
    /// Log expected improvement over the best posterior mean (the default).
    LogEi,
    /// Expected improvement over the best posterior mean.
    Ei,
    /// Probability of improvement over the best posterior mean.
    Pi,
    /// Upper confidence bound with `β =` [`DEFAULT_UCB_BETA`].
    Ucb,
    /// Monte Carlo log expected improvement of a batch (qLogEI), points picked by sequential
    /// greedy conditioning.
    QLogEi,
    /// Thompson sampling: the argmax of exact joint posterior samples on candidates around the
    /// incumbent, one sample per point.
    Ts,
}

impl SuggestAcquisition {
    /// Parses `logei`, `ei`, `pi`, `ucb`, `qlogei` or `ts`.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] for any other name, listing the accepted ones.
    pub fn parse(name: &str) -> Result<Self, ModelError> {
        match name {
            "logei" => Ok(Self::LogEi),
            "ei" => Ok(Self::Ei),
            "pi" => Ok(Self::Pi),
            "ucb" => Ok(Self::Ucb),
            "qlogei" => Ok(Self::QLogEi),
            "ts" => Ok(Self::Ts),
            other => Err(ModelError::Invalid(format!(
                "unknown acquisition '{other}' (expected logei, ei, pi, ucb, qlogei or ts)"
            ))),
        }
    }

    /// The name [`parse`](Self::parse) accepts.
    pub fn name(self) -> &'static str {
        match self {
            Self::LogEi => "logei",
            Self::Ei => "ei",
            Self::Pi => "pi",
            Self::Ucb => "ucb",
            Self::QLogEi => "qlogei",
            Self::Ts => "ts",
        }
    }
}

/// Settings of [`suggest`].
#[derive(Clone, Debug, PartialEq)]
pub struct SuggestOptions {
    /// Which acquisition. Default LogEI.
    pub acquisition: SuggestAcquisition,
    /// Minimise the target instead of maximising it. Default false.
    pub minimize: bool,
    /// Seed of the Sobol design and of the acquisition's raw samples. Default 0.
    pub seed: u32,
}

impl Default for SuggestOptions {
    fn default() -> Self {
        SuggestOptions {
            acquisition: SuggestAcquisition::LogEi,
            minimize: false,
            seed: 0,
        }
    }
}

/// The result of [`suggest`].
#[derive(Clone, Debug)]
pub struct Suggestion {
    /// The point, one value per bound, inside the box.
    pub x: Vec<f64>,
    /// The acquisition's value there (in the model's standardised units); `None` for a point
    /// of the initial design.
    pub acquisition_value: Option<f64>,
    /// The fitted model (on the negated targets when minimising); `None` without rows.
    pub model: Option<Regressor>,
}

/// The next point of the box `bounds` to evaluate, given the evaluated rows of `data` (whose
/// inputs must be the bounds' names in order and whose one target must be observed on every
/// row); `None` or no rows gives a point of the seeded initial design.
///
/// # Errors
/// [`ModelError::Invalid`] for no bounds, a bound with non-finite ends or `lo ≥ hi`, data whose
/// inputs differ from the bounds' names, more than one target, a missing target value or a row
/// outside the box; otherwise the errors of [`BayesOpt::tell`] and [`BayesOpt::ask`].
pub fn suggest(
    bounds: &[Bound],
    data: Option<&Dataset>,
    options: &SuggestOptions,
) -> Result<Suggestion, ModelError> {
    let invalid = |msg: String| Err(ModelError::Invalid(msg));
    let mut settings = BoSettings::new(bounds.to_vec());
    settings.minimize = options.minimize;
    settings.acquisition = options.acquisition;
    settings.seed = options.seed;
    // Any evaluated row is worth fitting to: the caller chose its initial points.
    settings.n_init = 1;
    if let Some(data) = data.filter(|d| d.n() > 0) {
        let names: Vec<&str> = bounds.iter().map(|b| b.name.as_str()).collect();
        if data.input_names != names {
            return invalid(format!(
                "the data's inputs {:?} must be the bounds' names {names:?}",
                data.input_names
            ));
        }
        if data.n_targets() != 1 {
            return invalid(format!(
                "suggest needs exactly one target, got {}",
                data.n_targets()
            ));
        }
        if let Some(i) = (0..data.n()).find(|&i| data.y[(i, 0)].is_nan()) {
            return invalid(format!("row {} has no target value", i + 1));
        }
        settings.target = data.target_names[0].clone();
    }
    let mut run = BayesOpt::new(settings)?;
    if let Some(data) = data.filter(|d| d.n() > 0) {
        let x: Vec<Vec<f64>> = (0..data.n())
            .map(|i| (0..data.d()).map(|c| data.x[(i, c)]).collect())
            .collect();
        let y: Vec<f64> = (0..data.n()).map(|i| data.y[(i, 0)]).collect();
        run.tell(&x, &y)?;
    }
    let proposal = run.ask(1)?;
    Ok(Suggestion {
        x: proposal.points.into_iter().next().unwrap_or_default(),
        acquisition_value: proposal.acquisition_value,
        model: proposal.model,
    })
}

#[cfg(test)]
mod tests;
