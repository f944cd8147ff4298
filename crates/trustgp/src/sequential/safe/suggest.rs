//! The next point of a safe-learning loop that the user drives (`trustgp suggest
//! --constraint …`): fit one model per function to the evaluated target rows (and the source
//! tasks' rows, with transfer), and propose the safe point with the largest acquisition, from a
//! pool of candidates or anywhere in the box.
//!
//! Units. Inputs are scaled to the unit box of the bounds. Every task's outputs share one
//! affine map per column, so that a transfer model sees source and target in the same units (the
//! hierarchical GP models the target as the source plus a residual). An unconstrained column is
//! centred on its observed mean. A constrained column is centred on its threshold — the one
//! nearer the observed mean when it has two — so the models' zero prior mean sits on the safety
//! boundary: far from every observation the posterior reverts to the boundary, and no point is
//! ever certified safe by the prior alone (the case that Cor. 4.3 of `safe-transfer.md` §2.11
//! excludes). Centring on the mean instead would let a unit-variance prior certify the whole
//! unexplored box whenever the threshold lies more than √β prior standard deviations below the
//! data (`docs/decisions.md`).

use std::time::Instant;

use faer::{Mat, MatRef};

use super::continuous::{propose_continuous, ContinuousOptions};
use super::error::{invalid, SafeError};
use super::factory::function_model;
use super::propose::{propose_from_pool, ProposeOptions};
use super::safe_set::{SafeSet, SafeSetOptions};
use super::scaling::{standardise_constraint, UnitBox};
use super::{AcquisitionOptions, Constraint, FunctionModel, SourceTask, TaskData, TransferMethod};
use crate::data::Standardizer;

/// Settings of [`safe_suggest`].
#[derive(Clone, Debug, PartialEq)]
pub struct SafeSuggestOptions {
    /// How the models use the source tasks. Default [`TransferMethod::None`].
    pub transfer: TransferMethod,
    /// The safe set's rule (β, noisy form, two-sided rule).
    pub safe_set: SafeSetOptions,
    /// The acquisition (summed entropy for safe active learning; LogEI or UCB for safe BO).
    pub acquisition: AcquisitionOptions,
    /// Seed of the fits and of the continuous search's design.
    pub seed: u32,
}

impl Default for SafeSuggestOptions {
    fn default() -> Self {
        SafeSuggestOptions {
            transfer: TransferMethod::None,
            safe_set: SafeSetOptions::default(),
            acquisition: AcquisitionOptions::default(),
            seed: 0,
        }
    }
}

/// The result of [`safe_suggest`].
#[derive(Clone, Debug, PartialEq)]
pub struct SafeSuggestion {
    /// The point, in the bounds' units.
    pub x: Vec<f64>,
    /// Its row in the pool (none without a pool).
    pub pool_row: Option<usize>,
    /// The acquisition there.
    pub acquisition: f64,
    /// The models' probability that each constraint holds there, in constraint order.
    pub safety_probability: Vec<f64>,
    /// Candidates in the safe set: pool rows, or the search's design points without a pool.
    pub safe_set_size: usize,
    /// Candidates checked: unevaluated pool rows, or the search's design points.
    pub candidates: usize,
    /// Seconds spent fitting the models.
    pub fit_seconds: f64,
}

/// The affine map of one output column: `(v − centre) / scale`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ColumnMap {
    /// Subtracted first.
    pub centre: f64,
    /// Then divided by (positive).
    pub scale: f64,
}

/// The maps of the output columns (see the module doc): the scale is the standard deviation
/// of the column over every task's rows (1 when it does not vary); the centre is the
/// constraint's threshold for a constrained column, else the column's mean.
pub fn column_maps(
    target: &TaskData,
    sources: &[TaskData],
    constraints: &[Constraint],
) -> Vec<ColumnMap> {
    (0..target.outputs.ncols())
        .map(|j| {
            let values: Vec<f64> = std::iter::once(target)
                .chain(sources)
                .flat_map(|t| t.output(j))
                .collect();
            let n = values.len() as f64;
            let mean = values.iter().sum::<f64>() / n;
            let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
            let scale = if sd > 1e-12 * mean.abs().max(1.0) {
                sd
            } else {
                1.0
            };
            let thresholds: Vec<f64> = constraints
                .iter()
                .filter(|c| c.output == j)
                .flat_map(|c| c.lower.into_iter().chain(c.upper))
                .collect();
            let centre = thresholds
                .into_iter()
                .min_by(|a, b| (a - mean).abs().total_cmp(&(b - mean).abs()))
                .unwrap_or(mean);
            ColumnMap { centre, scale }
        })
        .collect()
}

/// Checks that a task's inputs have the bounds' width and that every output is finite.
fn check_task(task: &TaskData, d: usize, columns: usize, what: &str) -> Result<(), SafeError> {
    if task.x.ncols() != d
        || task.outputs.ncols() != columns
        || task.x.nrows() != task.outputs.nrows()
    {
        return invalid(format!(
            "{what}: expected {d} input and {columns} output columns with one row each, got \
             {}×{} inputs and {}×{} outputs",
            task.x.nrows(),
            task.x.ncols(),
            task.outputs.nrows(),
            task.outputs.ncols()
        ));
    }
    for i in 0..task.outputs.nrows() {
        for j in 0..columns {
            if !task.outputs[(i, j)].is_finite() {
                return invalid(format!(
                    "{what}: row {}, output column {j} is {} (expected a finite number)",
                    i + 1,
                    task.outputs[(i, j)]
                ));
            }
        }
    }
    Ok(())
}

/// The safe point to evaluate next in the box `bounds`, given the evaluated `target` rows (at
/// least one, all with every output observed), the source tasks' rows (same columns; none
/// without transfer), the constraints on output columns and, optionally, a pool of candidate
/// inputs (rows equal to an evaluated target input are skipped).
///
/// # Errors
/// [`SafeError::EmptySafeSet`] when no candidate is certified safe (never an unsafe point);
/// [`SafeError::Invalid`] for no target rows, no constraint, inconsistent shapes or values;
/// [`SafeError::Model`] when a model cannot be built or fitted.
pub fn safe_suggest(
    bounds: &[(f64, f64)],
    target: &TaskData,
    sources: &[TaskData],
    constraints: &[Constraint],
    pool: Option<MatRef<'_, f64>>,
    options: &SafeSuggestOptions,
) -> Result<SafeSuggestion, SafeError> {
    let unit = UnitBox::new(bounds)?;
    let (d, columns) = (bounds.len(), target.outputs.ncols());
    if target.n() == 0 {
        return invalid(
            "safe suggestions need at least one evaluated target row known to be safe (the \
             initial data of safe learning)",
        );
    }
    if constraints.is_empty() {
        return invalid("safe suggestions need at least one constraint");
    }
    check_task(target, d, columns, "target data")?;
    for (s, task) in sources.iter().enumerate() {
        check_task(task, d, columns, &format!("source task {}", s + 1))?;
    }
    // Checked in the caller's units first, so that errors quote the given thresholds.
    SafeSet::new(constraints.to_vec(), columns, &options.safe_set)?;
    let maps = column_maps(target, sources, constraints);
    let scaled = |task: &TaskData, j: usize| -> Vec<f64> {
        task.output(j)
            .into_iter()
            .map(|v| (v - maps[j].centre) / maps[j].scale)
            .collect()
    };
    let target_x = unit.to_unit(target.x.as_ref(), "target inputs")?;
    let source_x: Vec<Mat<f64>> = sources
        .iter()
        .enumerate()
        .map(|(s, t)| unit.to_unit(t.x.as_ref(), &format!("source task {} inputs", s + 1)))
        .collect::<Result<_, _>>()?;

    let start = Instant::now();
    let mut models: Vec<Box<dyn FunctionModel>> = Vec::with_capacity(columns);
    for j in 0..columns {
        let tasks = sources
            .iter()
            .zip(&source_x)
            .map(|(t, x)| SourceTask {
                x: x.clone(),
                y: scaled(t, j),
            })
            .collect();
        let model_error = |source| SafeError::Model { output: j, source };
        let mut model = function_model(options.transfer, tasks).map_err(model_error)?;
        model
            .update(
                target_x.as_ref(),
                &scaled(target, j),
                true,
                u64::from(options.seed),
            )
            .map_err(model_error)?;
        models.push(model);
    }
    let fit_seconds = start.elapsed().as_secs_f64();
    let map = Standardizer {
        x_mean: vec![0.0; d],
        x_std: vec![1.0; d],
        y_mean: maps.iter().map(|m| m.centre).collect(),
        y_std: maps.iter().map(|m| m.scale).collect(),
    };
    let unit_constraints: Vec<Constraint> = constraints
        .iter()
        .map(|c| standardise_constraint(c, &map))
        .collect();
    let safe_set = SafeSet::new(unit_constraints, columns, &options.safe_set)?;
    let refs: Vec<&dyn FunctionModel> = models.iter().map(|m| m.as_ref()).collect();

    match pool {
        Some(pool) => {
            let pool_unit = unit.to_unit(pool, "pool")?;
            // Rows already evaluated are not candidates.
            let fresh: Vec<usize> = (0..pool.nrows())
                .filter(|&i| {
                    !(0..target.n()).any(|t| (0..d).all(|c| target.x[(t, c)] == pool[(i, c)]))
                })
                .collect();
            if fresh.is_empty() {
                return invalid("every pool row has been evaluated already");
            }
            let candidates = Mat::from_fn(fresh.len(), d, |i, c| pool_unit[(fresh[i], c)]);
            let propose = ProposeOptions {
                acquisition: options.acquisition.clone(),
                ..ProposeOptions::default()
            };
            let p = propose_from_pool(
                &refs,
                &safe_set,
                candidates.as_ref(),
                target_x.as_ref(),
                &propose,
            )?;
            let row = fresh[p.index];
            Ok(SafeSuggestion {
                x: (0..d).map(|c| pool[(row, c)]).collect(),
                pool_row: Some(row),
                acquisition: p.acquisition,
                safety_probability: p.safety_probability,
                safe_set_size: p.safe_set_size,
                candidates: fresh.len(),
                fit_seconds,
            })
        }
        None => {
            let search = ContinuousOptions {
                acquisition: options.acquisition.clone(),
                seed: options.seed,
                ..ContinuousOptions::default()
            };
            let unit_bounds = vec![(0.0, 1.0); d];
            let p = propose_continuous(&refs, &safe_set, &unit_bounds, target_x.as_ref(), &search)?;
            Ok(SafeSuggestion {
                x: unit.from_unit(&p.x),
                pool_row: None,
                acquisition: p.acquisition,
                safety_probability: p.safety_probability,
                safe_set_size: p.safe_raw_samples,
                candidates: search.raw_samples,
                fit_seconds,
            })
        }
    }
}

/// One bound of a constraint as written on the command line: `"temp<=1.0"` or
/// `"temp>=-1.5"` (spaces allowed; `=<`/`=>` are refused as likely typos).
#[derive(Clone, Debug, PartialEq)]
pub struct BoundSpec {
    /// The column the bound is on.
    pub column: String,
    /// `Some(T)` for `column >= T`.
    pub lower: Option<f64>,
    /// `Some(U)` for `column <= U`.
    pub upper: Option<f64>,
}

impl BoundSpec {
    /// Parses `name<=value` or `name>=value`.
    ///
    /// # Errors
    /// [`SafeError::Invalid`] naming the text and what was expected.
    pub fn parse(text: &str) -> Result<BoundSpec, SafeError> {
        let (column, value, upper) = if let Some((c, v)) = text.split_once("<=") {
            (c, v, true)
        } else if let Some((c, v)) = text.split_once(">=") {
            (c, v, false)
        } else {
            return invalid(format!(
                "constraint '{text}' is not of the form COLUMN<=VALUE or COLUMN>=VALUE"
            ));
        };
        let column = column.trim();
        if column.is_empty() {
            return invalid(format!("constraint '{text}' names no column"));
        }
        let value: f64 = match value.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => v,
            _ => {
                return invalid(format!(
                    "constraint '{text}': '{}' is not a finite number",
                    value.trim()
                ))
            }
        };
        Ok(BoundSpec {
            column: column.to_string(),
            lower: (!upper).then_some(value),
            upper: upper.then_some(value),
        })
    }
}

/// The constraints of `specs` on the output columns `columns` (one [`Constraint`] per column,
/// joining a lower and an upper bound on the same column into a two-sided constraint).
///
/// # Errors
/// [`SafeError::Invalid`] for a column not in `columns`, two lower (or two upper) bounds on
/// one column, or a lower bound not below the upper one.
pub fn join_bounds(specs: &[BoundSpec], columns: &[String]) -> Result<Vec<Constraint>, SafeError> {
    let mut out: Vec<Constraint> = Vec::new();
    for s in specs {
        let Some(output) = columns.iter().position(|c| *c == s.column) else {
            return invalid(format!(
                "constraint on '{}': no such output column (expected one of {})",
                s.column,
                columns.join(", ")
            ));
        };
        match out.iter_mut().find(|c| c.output == output) {
            None => out.push(Constraint {
                output,
                lower: s.lower,
                upper: s.upper,
            }),
            Some(c) => {
                if (s.lower.is_some() && c.lower.is_some())
                    || (s.upper.is_some() && c.upper.is_some())
                {
                    return invalid(format!(
                        "column '{}' has two bounds of the same direction; give one lower (>=) \
                         and at most one upper (<=)",
                        s.column
                    ));
                }
                c.lower = c.lower.or(s.lower);
                c.upper = c.upper.or(s.upper);
            }
        }
    }
    if let Some(c) = out
        .iter()
        .find(|c| matches!((c.lower, c.upper), (Some(l), Some(u)) if l >= u))
    {
        return invalid(format!(
            "column '{}': the lower bound {} must be below the upper bound {}",
            columns[c.output],
            c.lower.unwrap_or_default(),
            c.upper.unwrap_or_default()
        ));
    }
    Ok(out)
}
