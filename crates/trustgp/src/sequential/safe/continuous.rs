//! Safe proposals over a box (no pool): the acquisition is maximised over the safe part of
//! the box.
//!
//! A seeded Owen-scrambled Sobol design is checked like a pool; from the best safe design
//! points a compass search refines the point, moving one input at a time by `±h` (clamped to
//! the box) and accepting a move only when the new point is safe and strictly better, halving
//! `h` when no move is accepted. Every point the search can return was itself checked safe, so
//! the answer passes the safe-set check by construction; no penalty or projection is needed.
//! [`FunctionModel`] has no input gradients, hence a derivative-free search.

use faer::Mat;
use serde::{Deserialize, Serialize};

use super::acquisition::{AcquisitionOptions, PreparedAcquisition};
use super::error::{invalid, SafeError};
use super::propose::{check_inputs, evaluate_pool_unchecked, DEFAULT_CHUNK};
use super::safe_set::SafeSet;
use super::scaling::check_bounds;
use super::FunctionModel;
use crate::sequential::optimize::{sobol_points, MAX_RAW_SAMPLES};

/// Settings of [`propose_continuous`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContinuousOptions {
    /// The acquisition.
    pub acquisition: AcquisitionOptions,
    /// Sobol design points checked (1 to 65 536). Default 1024.
    pub raw_samples: usize,
    /// How many of the best safe design points the search starts from (at least 1).
    /// Default 5.
    pub restarts: usize,
    /// The first step, as a fraction of each input's range (in `(0, 1]`). Default 0.1.
    pub initial_step: f64,
    /// The search stops when the step falls below this fraction of each input's range (in
    /// `(0, initial_step]`). Default 1e-4.
    pub min_step: f64,
    /// The most search iterations per start (at least 1). Default 200.
    pub max_iterations: usize,
    /// Seed of the Sobol scrambling: the same seed gives the same proposal. Default 0.
    pub seed: u32,
}

impl Default for ContinuousOptions {
    fn default() -> Self {
        ContinuousOptions {
            acquisition: AcquisitionOptions::default(),
            raw_samples: 1024,
            restarts: 5,
            initial_step: 0.1,
            min_step: 1e-4,
            max_iterations: 200,
            seed: 0,
        }
    }
}

/// The safe point of the box that maximises the acquisition (as found by the search).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContinuousProposal {
    /// The point.
    pub x: Vec<f64>,
    /// The acquisition there.
    pub acquisition: f64,
    /// The model's probability that each constraint holds there, in constraint order.
    pub safety_probability: Vec<f64>,
    /// How many Sobol design points are in the safe set.
    pub safe_raw_samples: usize,
    /// The design point (row of the Sobol design) the winning search started from.
    pub start: usize,
}

/// A point the search has checked: safe, with its acquisition and safety probabilities.
struct Checked {
    x: Vec<f64>,
    value: f64,
    probability: Vec<f64>,
}

/// The safe point of the box `bounds` (`(lo, hi)` per input) that maximises the acquisition,
/// searched as the module documentation describes; `models` and `target_x` as for
/// [`propose_from_pool`](super::propose_from_pool).
///
/// # Errors
/// [`SafeError::EmptySafeSet`] when no design point is safe (nothing is proposed);
/// [`SafeError::Invalid`] for bad bounds or options; otherwise as for
/// [`evaluate_pool`](super::evaluate_pool).
pub fn propose_continuous(
    models: &[&dyn FunctionModel],
    safe_set: &SafeSet,
    bounds: &[(f64, f64)],
    target_x: faer::MatRef<'_, f64>,
    options: &ContinuousOptions,
) -> Result<ContinuousProposal, SafeError> {
    check_options(bounds, options)?;
    let d = bounds.len();
    let free: Vec<usize> = (0..d).collect();
    let lo: Vec<f64> = bounds.iter().map(|b| b.0).collect();
    let design = sobol_points(options.raw_samples, &free, bounds, &lo, options.seed)
        .map_err(|e| SafeError::Invalid(format!("continuous safe proposal: {e}")))?;
    check_inputs(models, safe_set, design.as_ref(), "Sobol design")?;
    let acquisition = PreparedAcquisition::new(&options.acquisition, models, target_x)?;
    let raw = evaluate_pool_unchecked(
        models,
        safe_set,
        &acquisition,
        design.as_ref(),
        DEFAULT_CHUNK,
    )?;
    let mut starts: Vec<usize> = (0..raw.values.len())
        .filter(|&i| raw.values[i].is_some())
        .collect();
    let safe_raw_samples = starts.len();
    // A stable sort: ties keep the lower design row first.
    starts.sort_by(|&a, &b| {
        raw.values[b]
            .unwrap_or(0.0)
            .total_cmp(&raw.values[a].unwrap_or(0.0))
    });
    starts.truncate(options.restarts);
    let mut winner: Option<(usize, Checked)> = None;
    for &s in &starts {
        let x0: Vec<f64> = (0..d).map(|c| design[(s, c)]).collect();
        // Re-checked alone, so that the point returned is judged exactly as the search's steps.
        let Some(start) = check_batch(models, safe_set, &acquisition, &[x0])?
            .into_iter()
            .next()
        else {
            continue;
        };
        let found = compass_search(models, safe_set, &acquisition, bounds, start, options)?;
        if winner.as_ref().is_none_or(|(_, w)| found.value > w.value) {
            winner = Some((s, found));
        }
    }
    let Some((start, best)) = winner else {
        return Err(SafeError::EmptySafeSet);
    };
    Ok(ContinuousProposal {
        x: best.x,
        acquisition: best.value,
        safety_probability: best.probability,
        safe_raw_samples,
        start,
    })
}

fn check_options(bounds: &[(f64, f64)], options: &ContinuousOptions) -> Result<(), SafeError> {
    check_bounds(bounds)?;
    if options.raw_samples == 0 || options.raw_samples > MAX_RAW_SAMPLES {
        return invalid(format!(
            "raw_samples must be between 1 and {MAX_RAW_SAMPLES}, got {}",
            options.raw_samples
        ));
    }
    if options.restarts == 0 {
        return invalid("restarts must be at least 1");
    }
    if options.max_iterations == 0 {
        return invalid("max_iterations must be at least 1");
    }
    if !(options.initial_step > 0.0 && options.initial_step <= 1.0) {
        return invalid(format!(
            "initial_step must lie in (0, 1] (a fraction of each input's range), got {}",
            options.initial_step
        ));
    }
    if !(options.min_step > 0.0 && options.min_step <= options.initial_step) {
        return invalid(format!(
            "min_step must lie in (0, initial_step = {}], got {}",
            options.initial_step, options.min_step
        ));
    }
    Ok(())
}

/// The safe points among `points`, checked together, in order.
fn check_batch(
    models: &[&dyn FunctionModel],
    safe_set: &SafeSet,
    acquisition: &PreparedAcquisition,
    points: &[Vec<f64>],
) -> Result<Vec<Checked>, SafeError> {
    let d = points[0].len();
    let x = Mat::from_fn(points.len(), d, |i, c| points[i][c]);
    let marginals = super::propose::predict_all(models, x.as_ref())?;
    let noise: Vec<f64> = models.iter().map(|m| m.noise_variance()).collect();
    let mut out = Vec::new();
    for (i, p) in points.iter().enumerate() {
        if safe_set.is_safe(&marginals, &noise, i) {
            let value = acquisition.value(&marginals, &noise, i);
            if value.is_finite() {
                out.push(Checked {
                    x: p.clone(),
                    value,
                    probability: safe_set.probabilities(&marginals, &noise, i),
                });
            }
        }
    }
    Ok(out)
}

/// Compass search from the safe point `start`, staying in the safe set (module notes).
fn compass_search(
    models: &[&dyn FunctionModel],
    safe_set: &SafeSet,
    acquisition: &PreparedAcquisition,
    bounds: &[(f64, f64)],
    start: Checked,
    options: &ContinuousOptions,
) -> Result<Checked, SafeError> {
    let mut current = start;
    let mut h = options.initial_step;
    for _ in 0..options.max_iterations {
        if h < options.min_step {
            break;
        }
        let mut moves = Vec::with_capacity(2 * bounds.len());
        for (c, &(lo, hi)) in bounds.iter().enumerate() {
            for sign in [1.0, -1.0] {
                let mut p = current.x.clone();
                p[c] = (p[c] + sign * h * (hi - lo)).clamp(lo, hi);
                if p[c] != current.x[c] {
                    moves.push(p);
                }
            }
        }
        let mut improved = false;
        if !moves.is_empty() {
            for cand in check_batch(models, safe_set, acquisition, &moves)? {
                // Strictly better: the first of equal moves wins, and the search cannot cycle.
                if cand.value > current.value {
                    current = cand;
                    improved = true;
                }
            }
        }
        if !improved {
            h *= 0.5;
        }
    }
    Ok(current)
}
