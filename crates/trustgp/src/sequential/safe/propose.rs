//! Pool-based safe proposals (`safe-transfer.md` §3.1): every candidate of a finite pool is
//! checked against the safe set, and the acquisition is maximised over the safe ones only. The
//! pool is processed in chunks, so memory stays `O(chunk × N)` for any pool size.

use faer::MatRef;
use serde::{Deserialize, Serialize};

use super::acquisition::{AcquisitionOptions, PreparedAcquisition};
use super::error::{invalid, SafeError};
use super::safe_set::SafeSet;
use super::FunctionModel;
use crate::posterior::Marginals;

/// Default number of pool rows predicted at once.
pub const DEFAULT_CHUNK: usize = 4096;

/// Settings of [`propose_from_pool`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProposeOptions {
    /// The acquisition.
    pub acquisition: AcquisitionOptions,
    /// Pool rows predicted at once (at least 1). Default [`DEFAULT_CHUNK`].
    pub chunk_size: usize,
}

impl Default for ProposeOptions {
    fn default() -> Self {
        ProposeOptions {
            acquisition: AcquisitionOptions::default(),
            chunk_size: DEFAULT_CHUNK,
        }
    }
}

/// The safe candidate that maximises the acquisition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Proposal {
    /// Its row in the pool.
    pub index: usize,
    /// Its input (the pool's row).
    pub x: Vec<f64>,
    /// The acquisition there.
    pub acquisition: f64,
    /// The model's probability that each constraint holds there, in constraint order.
    pub safety_probability: Vec<f64>,
    /// How many pool candidates are in the safe set.
    pub safe_set_size: usize,
}

/// The pool as the models see it: which candidates are safe, and the best of them.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolEvaluation {
    /// The acquisition at each candidate, `None` for the unsafe ones.
    pub values: Vec<Option<f64>>,
    /// The safe candidate with the largest acquisition (ties: the lowest row), `None` when the
    /// safe set is empty.
    pub best: Option<Proposal>,
}

impl PoolEvaluation {
    /// Whether each candidate is in the safe set.
    pub fn safe_mask(&self) -> Vec<bool> {
        self.values.iter().map(Option::is_some).collect()
    }
}

/// Checks that `models` can serve `safe_set` and `pool`: at least one model, every
/// constraint's column modelled, a non-empty finite pool with `d` columns.
pub(crate) fn check_inputs(
    models: &[&dyn FunctionModel],
    safe_set: &SafeSet,
    pool: MatRef<'_, f64>,
    what: &str,
) -> Result<(), SafeError> {
    if models.is_empty() {
        return invalid("safe proposals need one model per output column, got no models");
    }
    for (i, c) in safe_set.constraints().iter().enumerate() {
        if c.output >= models.len() {
            return invalid(format!(
                "constraint {i} is on output column {}, but only {} models were given (one per \
                 output column)",
                c.output,
                models.len()
            ));
        }
    }
    if pool.nrows() == 0 {
        return invalid(format!("the {what} has no candidates"));
    }
    for i in 0..pool.nrows() {
        for j in 0..pool.ncols() {
            let v = pool[(i, j)];
            if !v.is_finite() {
                return invalid(format!(
                    "the {what} must be finite: row {i}, column {j} is {v}"
                ));
            }
        }
    }
    Ok(())
}

/// The marginals of every model at the rows of `x`, checked for length.
pub(crate) fn predict_all(
    models: &[&dyn FunctionModel],
    x: MatRef<'_, f64>,
) -> Result<Vec<Marginals>, SafeError> {
    models
        .iter()
        .enumerate()
        .map(|(j, m)| {
            let p = m.predict(x).map_err(SafeError::model(j))?;
            if p.mean.len() != x.nrows() || p.var.len() != x.nrows() {
                return invalid(format!(
                    "the model of output column {j} returned {} means and {} variances for {} \
                     inputs",
                    p.mean.len(),
                    p.var.len(),
                    x.nrows()
                ));
            }
            Ok(p)
        })
        .collect()
}

/// The safe set and the acquisition on every row of `pool` (inputs already checked), chunk by
/// chunk.
///
/// # Errors
/// A model's failure, or an acquisition that is not finite at a safe candidate.
pub(crate) fn evaluate_pool_unchecked(
    models: &[&dyn FunctionModel],
    safe_set: &SafeSet,
    acquisition: &PreparedAcquisition,
    pool: MatRef<'_, f64>,
    chunk_size: usize,
) -> Result<PoolEvaluation, SafeError> {
    let noise: Vec<f64> = models.iter().map(|m| m.noise_variance()).collect();
    let mut values = Vec::with_capacity(pool.nrows());
    let mut best: Option<Proposal> = None;
    let mut safe_set_size = 0;
    for start in (0..pool.nrows()).step_by(chunk_size) {
        let rows = chunk_size.min(pool.nrows() - start);
        let chunk = pool.subrows(start, rows);
        let marginals = predict_all(models, chunk)?;
        for i in 0..rows {
            if !safe_set.is_safe(&marginals, &noise, i) {
                values.push(None);
                continue;
            }
            let a = acquisition.value(&marginals, &noise, i);
            if !a.is_finite() {
                return invalid(format!(
                    "the acquisition is not finite ({a}) at safe candidate row {}",
                    start + i
                ));
            }
            safe_set_size += 1;
            values.push(Some(a));
            // Strictly larger: on ties the lowest row wins.
            if best.as_ref().is_none_or(|b| a > b.acquisition) {
                best = Some(Proposal {
                    index: start + i,
                    x: (0..pool.ncols()).map(|c| pool[(start + i, c)]).collect(),
                    acquisition: a,
                    // From the same marginals that made the candidate safe.
                    safety_probability: safe_set.probabilities(&marginals, &noise, i),
                    safe_set_size: 0,
                });
            }
        }
    }
    if let Some(b) = best.as_mut() {
        b.safe_set_size = safe_set_size;
    }
    Ok(PoolEvaluation { values, best })
}

/// The safe set of `pool` and its best candidate under the acquisition of `options`.
/// `models[j]` is the model of output column `j` (the target's first; a single model when the
/// target is also the safety function), conditioned on the target inputs `target_x`.
///
/// # Errors
/// [`SafeError::Invalid`] for no models, a constraint on an unmodelled column, an empty or
/// non-finite pool, a zero chunk size, bad acquisition options, or a non-finite acquisition;
/// [`SafeError::Model`] when a model fails.
pub fn evaluate_pool(
    models: &[&dyn FunctionModel],
    safe_set: &SafeSet,
    pool: MatRef<'_, f64>,
    target_x: MatRef<'_, f64>,
    options: &ProposeOptions,
) -> Result<PoolEvaluation, SafeError> {
    check_inputs(models, safe_set, pool, "pool")?;
    if options.chunk_size == 0 {
        return invalid("chunk_size must be at least 1");
    }
    let acquisition = PreparedAcquisition::new(&options.acquisition, models, target_x)?;
    evaluate_pool_unchecked(models, safe_set, &acquisition, pool, options.chunk_size)
}

/// The pool candidate to query next: the maximiser of the acquisition over the safe set (ties:
/// the lowest pool row). Arguments as for [`evaluate_pool`].
///
/// # Errors
/// [`SafeError::EmptySafeSet`] when no candidate is safe (nothing is proposed); otherwise as
/// for [`evaluate_pool`].
pub fn propose_from_pool(
    models: &[&dyn FunctionModel],
    safe_set: &SafeSet,
    pool: MatRef<'_, f64>,
    target_x: MatRef<'_, f64>,
    options: &ProposeOptions,
) -> Result<Proposal, SafeError> {
    evaluate_pool(models, safe_set, pool, target_x, options)?
        .best
        .ok_or(SafeError::EmptySafeSet)
}
