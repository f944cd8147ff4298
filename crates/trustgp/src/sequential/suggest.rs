//! The next point to evaluate (`q = 1`) from a box and the rows evaluated so far: the ask step
//! of a loop the user drives from their own experiment.
//!
//! With no rows, the point comes from a seeded Owen-scrambled Sobol design of the box. With
//! rows, the default exact GP is fitted through [`Regressor`] (standardised data), the box is
//! mapped into the model's standardised input units, the acquisition is maximised there by
//! [`maximize`] and the point is mapped back. Minimisation maximises `−y`: the targets are
//! negated before the fit.

use faer::Mat;

use super::acquisition::{
    best_posterior_mean, Analytic, Improvement, ImprovementKind, UpperConfidenceBound,
};
use super::optimize::{maximize, MaximizeOptions};
use crate::data::Dataset;
use crate::estimators::regressor::{Fitted, SingleOutput};
use crate::estimators::{Regressor, RegressorConfig};
use crate::models::ModelError;

/// UCB's exploration weight `β` (the bound is `μ + √β σ`, in standardised target units).
pub const DEFAULT_UCB_BETA: f64 = 4.0;

/// One input's name and box `[lo, hi]`.
#[derive(Clone, Debug, PartialEq)]
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

/// The acquisition maximised by [`suggest`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SuggestAcquisition {
    /// Log expected improvement over the best posterior mean (the default).
    LogEi,
    /// Expected improvement over the best posterior mean.
    Ei,
    /// Probability of improvement over the best posterior mean.
    Pi,
    /// Upper confidence bound with `β =` [`DEFAULT_UCB_BETA`].
    Ucb,
}

impl SuggestAcquisition {
    /// Parses `logei`, `ei`, `pi` or `ucb`.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] for any other name, listing the accepted ones.
    pub fn parse(name: &str) -> Result<Self, ModelError> {
        match name {
            "logei" => Ok(Self::LogEi),
            "ei" => Ok(Self::Ei),
            "pi" => Ok(Self::Pi),
            "ucb" => Ok(Self::Ucb),
            other => Err(ModelError::Invalid(format!(
                "unknown acquisition '{other}' (expected logei, ei, pi or ucb)"
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
/// inputs differ from the bounds' names, more than one target or a missing target value;
/// otherwise the errors of the fit and of [`maximize`].
pub fn suggest(
    bounds: &[Bound],
    data: Option<&Dataset>,
    options: &SuggestOptions,
) -> Result<Suggestion, ModelError> {
    let invalid = |msg: String| Err(ModelError::Invalid(msg));
    if bounds.is_empty() {
        return invalid("suggest needs at least one bound".into());
    }
    if let Some(b) = bounds
        .iter()
        .find(|b| !(b.lo.is_finite() && b.hi.is_finite() && b.lo < b.hi))
    {
        return invalid(format!(
            "bound of '{}' must be finite with lo < hi, got [{}, {}]",
            b.name, b.lo, b.hi
        ));
    }
    let Some(data) = data.filter(|d| d.n() > 0) else {
        return Ok(Suggestion {
            x: initial_point(bounds, options.seed),
            acquisition_value: None,
            model: None,
        });
    };
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
    let sign = if options.minimize { -1.0 } else { 1.0 };
    let signed = Dataset {
        input_names: data.input_names.clone(),
        target_names: data.target_names.clone(),
        x: data.x.clone(),
        y: Mat::from_fn(data.n(), 1, |i, _| sign * data.y[(i, 0)]),
    };
    let model = Regressor::fit(&signed, &RegressorConfig::default())?;
    let Fitted::PerTarget(outputs) = &model.fitted else {
        return invalid("the default model is not a per-target model".into());
    };
    let SingleOutput::Gp(gp) = &outputs[0].gp else {
        return invalid("the default model is not an exact GP".into());
    };
    let st = &model.standardizer;
    let to_unit = |c: usize, v: f64| (v - st.x_mean[c]) / st.x_std[c];
    let unit_bounds: Vec<(f64, f64)> = bounds
        .iter()
        .enumerate()
        .map(|(c, b)| (to_unit(c, b.lo), to_unit(c, b.hi)))
        .collect();
    let xs = st.transform_x(data.x.as_ref());
    let maximize_options = MaximizeOptions {
        seed: options.seed,
        ..MaximizeOptions::default()
    };
    let best = match options.acquisition {
        SuggestAcquisition::Ucb => {
            let acq = Analytic::new(gp, UpperConfidenceBound::new(DEFAULT_UCB_BETA)?);
            maximize(&acq, &unit_bounds, &maximize_options)?
        }
        kind => {
            let kind = match kind {
                SuggestAcquisition::Ei => ImprovementKind::Expected,
                SuggestAcquisition::Pi => ImprovementKind::Probability,
                _ => ImprovementKind::LogExpected,
            };
            let incumbent = best_posterior_mean(gp, xs.as_ref())?;
            let acq = Analytic::new(gp, Improvement::new(kind, incumbent)?);
            maximize(&acq, &unit_bounds, &maximize_options)?
        }
    };
    // Back to the data's units; the clamp guards the rounding of the round trip.
    let x = bounds
        .iter()
        .enumerate()
        .map(|(c, b)| (st.x_mean[c] + st.x_std[c] * best.x[c]).clamp(b.lo, b.hi))
        .collect();
    Ok(Suggestion {
        x,
        acquisition_value: Some(best.value),
        model: Some(model),
    })
}

/// The first point of the Owen-scrambled Sobol sequence with `seed`, scaled into the box.
fn initial_point(bounds: &[Bound], seed: u32) -> Vec<f64> {
    bounds
        .iter()
        .enumerate()
        .map(|(dim, b)| {
            // Dimensions beyond the sequence's reuse it cyclically with a shifted seed, so that
            // any number of inputs gets a point.
            let d = dim as u32 % sobol_burley::NUM_DIMENSIONS;
            let s = seed.wrapping_add(dim as u32 / sobol_burley::NUM_DIMENSIONS);
            let u = f64::from(sobol_burley::sample(0, d, s));
            (b.lo + u * (b.hi - b.lo)).min(b.hi)
        })
        .collect()
}

#[cfg(test)]
mod tests;
