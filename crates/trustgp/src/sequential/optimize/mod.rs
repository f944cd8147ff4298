//! The candidate that maximises an [`Acquisition`] over a box (one candidate, `q = 1`).
//!
//! [`maximize`] evaluates the acquisition, batched, at `raw_samples` points of a seeded
//! Owen-scrambled Sobol design, starts the bound-constrained L-BFGS of [`minimize_lbfgsb`] from
//! the best `restarts` of them (on the negated acquisition, with its analytic input gradient),
//! and returns the best point found. Inputs listed in [`MaximizeOptions::fixed`] keep their
//! given value throughout; only the others are searched. Everything is deterministic for a
//! given seed.
//!
//! [`maximize_batch`] picks `q` candidates by sequential greedy conditioning, each with
//! [`maximize`], next to pending points.

mod batch;
mod raw;
#[cfg(test)]
mod tests;

use faer::Mat;

pub use self::batch::{maximize_batch, MaximizedBatch};
pub(crate) use self::raw::sobol_points;
pub use self::raw::{MAX_FREE_INPUTS, MAX_RAW_SAMPLES};
use super::acquisition::Acquisition;
use crate::models::ModelError;
use crate::optim::{minimize_lbfgsb, LbfgsOptions, StopReason};

/// Settings for [`maximize`].
#[derive(Debug, Clone, PartialEq)]
pub struct MaximizeOptions {
    /// How many Sobol points the acquisition is evaluated at to choose the starts (at least 1,
    /// at most [`MAX_RAW_SAMPLES`]). Default 512.
    pub raw_samples: usize,
    /// How many of the best raw samples L-BFGS starts from (at least 1; at most `raw_samples`
    /// are used). Default 10.
    pub restarts: usize,
    /// Seed of the Sobol scrambling: the same seed gives the same result. Default 0.
    pub seed: u32,
    /// Inputs held at a value, as `(column, value)`: each column at most once, the value
    /// inside that column's bounds. Default: none.
    pub fixed: Vec<(usize, f64)>,
    /// Settings of each L-BFGS run. Default: [`LbfgsOptions::default`] with `grad_tol = 1e-9`
    /// and `f_rel_tol = 4ε`, so that runs stop at a stationary point, not at a slow step:
    /// acquisition evaluations are cheap next to the objective they choose inputs for.
    pub lbfgs: LbfgsOptions,
}

impl Default for MaximizeOptions {
    fn default() -> Self {
        MaximizeOptions {
            raw_samples: 512,
            restarts: 10,
            seed: 0,
            fixed: Vec::new(),
            lbfgs: LbfgsOptions {
                grad_tol: 1e-9,
                f_rel_tol: 4.0 * f64::EPSILON,
                ..LbfgsOptions::default()
            },
        }
    }
}

/// One L-BFGS run of [`maximize`].
#[derive(Debug, Clone, PartialEq)]
pub struct RestartReport {
    /// The raw sample it started from.
    pub start: Vec<f64>,
    /// The acquisition there.
    pub start_value: f64,
    /// The point it returned.
    pub x: Vec<f64>,
    /// The acquisition there (never below `start_value`).
    pub value: f64,
    /// Acquisition evaluations it used.
    pub n_evals: usize,
    /// Why it stopped.
    pub reason: StopReason,
}

/// The result of [`maximize`].
#[derive(Debug, Clone, PartialEq)]
pub struct MaximizedAcquisition {
    /// The best point found (inside the bounds, fixed inputs at their values).
    pub x: Vec<f64>,
    /// The acquisition at `x`.
    pub value: f64,
    /// The best acquisition value among the raw samples.
    pub best_raw_value: f64,
    /// The L-BFGS runs, best start first.
    pub restarts: Vec<RestartReport>,
}

/// The free columns (those not fixed) and the point with every fixed column at its value (the
/// free ones at their lower bound), after checking `bounds` and `options`.
fn validate(
    bounds: &[(f64, f64)],
    options: &MaximizeOptions,
) -> Result<(Vec<usize>, Vec<f64>), ModelError> {
    let invalid = |msg: String| Err(ModelError::Invalid(msg));
    if bounds.is_empty() {
        return invalid("bounds must give at least one input's (lo, hi)".into());
    }
    for (c, &(lo, hi)) in bounds.iter().enumerate() {
        if !(lo.is_finite() && hi.is_finite() && lo < hi) {
            return invalid(format!(
                "bounds of input {c} must be finite with lo < hi, got ({lo}, {hi})"
            ));
        }
    }
    if options.raw_samples == 0 {
        return invalid("raw_samples must be at least 1".into());
    }
    if options.restarts == 0 {
        return invalid("restarts must be at least 1".into());
    }
    let mut base: Vec<f64> = bounds.iter().map(|b| b.0).collect();
    let mut is_fixed = vec![false; bounds.len()];
    for &(c, value) in &options.fixed {
        let Some(&(lo, hi)) = bounds.get(c) else {
            return invalid(format!(
                "fixed input {c} does not exist: the bounds give {} inputs",
                bounds.len()
            ));
        };
        if is_fixed[c] {
            return invalid(format!("input {c} is fixed more than once"));
        }
        // Written so that NaN fails the check.
        if !(lo <= value && value <= hi) {
            return invalid(format!(
                "fixed input {c} must lie in its bounds [{lo}, {hi}], got {value}"
            ));
        }
        is_fixed[c] = true;
        base[c] = value;
    }
    let free = (0..bounds.len()).filter(|&c| !is_fixed[c]).collect();
    Ok((free, base))
}

/// The indices of the `k` largest finite values, largest first (ties: lower index first).
fn best_indices(values: &[f64], k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..values.len())
        .filter(|&i| values[i].is_finite())
        .collect();
    // A stable sort keeps ties in index order, so the choice is deterministic.
    order.sort_by(|&a, &b| values[b].total_cmp(&values[a]));
    order.truncate(k);
    order
}

/// The point of the box `bounds` that maximises `acquisition`, searched as the module
/// documentation describes; `bounds[c]` is `(lo, hi)` of input column `c`.
///
/// # Errors
/// [`ModelError::Invalid`] for no bounds, a bound that is not finite or has `lo ≥ hi`, zero
/// `raw_samples` or `restarts`, too many raw samples or free inputs for the Sobol sequence, a
/// fixed input that does not exist, is repeated or lies outside its bounds, or an acquisition
/// that is not finite at any raw sample; the acquisition's own error for inputs it rejects
/// (as the wrong number of columns); [`ModelError::Optim`] if an L-BFGS run cannot start.
pub fn maximize(
    acquisition: &dyn Acquisition,
    bounds: &[(f64, f64)],
    options: &MaximizeOptions,
) -> Result<MaximizedAcquisition, ModelError> {
    let (free, base) = validate(bounds, options)?;
    let raw = raw::sobol_points(options.raw_samples, &free, bounds, &base, options.seed)?;
    let raw_values = acquisition.values(raw.as_ref())?;
    let starts = best_indices(&raw_values, options.restarts);
    let Some(&first) = starts.first() else {
        return Err(ModelError::Invalid(format!(
            "the acquisition is not finite at any of the {} raw samples",
            options.raw_samples
        )));
    };
    let free_bounds: Vec<(f64, f64)> = free.iter().map(|&c| bounds[c]).collect();
    // The full input for the free values `z`, in a reused 1-row matrix.
    let place = |z: &[f64], x: &mut Mat<f64>| {
        for (&c, &zc) in free.iter().zip(z) {
            x[(0, c)] = zc;
        }
    };
    let mut restarts = Vec::with_capacity(starts.len());
    for &i in &starts {
        let start: Vec<f64> = (0..bounds.len()).map(|c| raw[(i, c)]).collect();
        let z0: Vec<f64> = free.iter().map(|&c| start[c]).collect();
        let mut x = Mat::from_fn(1, bounds.len(), |_, c| base[c]);
        // Maximising the acquisition is minimising its negative.
        let negated = |z: &[f64]| -> Result<(f64, Vec<f64>), ModelError> {
            place(z, &mut x);
            let g = acquisition.gradients(x.as_ref())?;
            Ok((
                -g.value[0],
                free.iter().map(|&c| -g.gradient[(0, c)]).collect(),
            ))
        };
        let run = minimize_lbfgsb(negated, &z0, &free_bounds, &options.lbfgs)?;
        let mut point = base.clone();
        for (&c, &zc) in free.iter().zip(&run.x) {
            point[c] = zc;
        }
        restarts.push(RestartReport {
            start,
            start_value: raw_values[i],
            x: point,
            value: -run.f,
            n_evals: run.n_evals,
            reason: run.reason,
        });
    }
    // Of equally good runs the first (from the better start) wins, so ties resolve the same way
    // every time.
    let best = restarts
        .iter()
        .fold(&restarts[0], |b, r| if r.value > b.value { r } else { b });
    Ok(MaximizedAcquisition {
        x: best.x.clone(),
        value: best.value,
        best_raw_value: raw_values[first],
        restarts,
    })
}
