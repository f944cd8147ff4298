//! The units the safe models work in (`safe-transfer.md` §6, data handling): inputs scaled to
//! the unit box of a box shared by every task, outputs standardised per task and per output
//! column, and thresholds mapped by the same affine map as their column.

use faer::{Mat, MatRef};

use super::error::{invalid, SafeError};
use super::{Constraint, TaskData};
use crate::data::Standardizer;

/// Checks a box: at least one input, each `(lo, hi)` finite with `lo < hi`.
///
/// # Errors
/// [`SafeError::Invalid`] naming the first bad input.
pub fn check_bounds(bounds: &[(f64, f64)]) -> Result<(), SafeError> {
    if bounds.is_empty() {
        return invalid("bounds must give at least one input's (lo, hi)");
    }
    for (c, &(lo, hi)) in bounds.iter().enumerate() {
        if !(lo.is_finite() && hi.is_finite() && lo < hi) {
            return invalid(format!(
                "bounds of input {c} must be finite with lo < hi, got ({lo}, {hi})"
            ));
        }
    }
    Ok(())
}

/// The affine map of a box `[lo, hi]` onto the unit box `[0, 1]^d`.
#[derive(Clone, Debug, PartialEq)]
pub struct UnitBox {
    lo: Vec<f64>,
    width: Vec<f64>,
}

impl UnitBox {
    /// The map of the box `bounds` (one `(lo, hi)` per input).
    ///
    /// # Errors
    /// [`SafeError::Invalid`] for no inputs, or a bound that is not finite or has `lo ≥ hi`.
    pub fn new(bounds: &[(f64, f64)]) -> Result<UnitBox, SafeError> {
        check_bounds(bounds)?;
        Ok(UnitBox {
            lo: bounds.iter().map(|b| b.0).collect(),
            width: bounds.iter().map(|b| b.1 - b.0).collect(),
        })
    }

    /// The number of inputs.
    pub fn dims(&self) -> usize {
        self.lo.len()
    }

    /// `(x − lo)/(hi − lo)` per column of `x`, checked: `what` names `x` in the error.
    ///
    /// # Errors
    /// [`SafeError::Invalid`] if `x` does not have one column per input or holds a value that
    /// is not finite.
    pub fn to_unit(&self, x: MatRef<'_, f64>, what: &str) -> Result<Mat<f64>, SafeError> {
        if x.ncols() != self.dims() {
            return invalid(format!(
                "{what} must have {} input columns (one per bound), got {}",
                self.dims(),
                x.ncols()
            ));
        }
        for i in 0..x.nrows() {
            for c in 0..x.ncols() {
                if !x[(i, c)].is_finite() {
                    return invalid(format!(
                        "{what} must be finite: row {i}, column {c} is {}",
                        x[(i, c)]
                    ));
                }
            }
        }
        Ok(Mat::from_fn(x.nrows(), x.ncols(), |i, c| {
            (x[(i, c)] - self.lo[c]) / self.width[c]
        }))
    }

    /// A unit-box point in the box's own units.
    pub fn from_unit(&self, u: &[f64]) -> Vec<f64> {
        u.iter()
            .zip(self.lo.iter().zip(&self.width))
            .map(|(&u, (&lo, &w))| lo + u * w)
            .collect()
    }
}

/// Per-column output statistics of a task (mean and population std, std 1 for a constant
/// column), fitted on the task's own observations; every value must be finite.
///
/// # Errors
/// [`SafeError::Invalid`] for no rows or a value that is not finite (`what` names the task).
pub fn output_scaling(task: &TaskData, what: &str) -> Result<Standardizer, SafeError> {
    if task.n() == 0 {
        return invalid(format!("{what} has no observations"));
    }
    for i in 0..task.outputs.nrows() {
        for j in 0..task.outputs.ncols() {
            if !task.outputs[(i, j)].is_finite() {
                return invalid(format!(
                    "{what} outputs must be finite: row {i}, column {j} is {}",
                    task.outputs[(i, j)]
                ));
            }
        }
    }
    Ok(Standardizer::fit(task.x.as_ref(), task.outputs.as_ref())?.0)
}

/// `constraint` with its thresholds mapped to the standardised units of `scaling`:
/// `T' = (T − m)/s` (the std `s > 0`, so the direction of each bound is kept).
///
/// # Panics
/// If the constraint's column is not a column of `scaling`.
pub fn standardise_constraint(constraint: &Constraint, scaling: &Standardizer) -> Constraint {
    let (m, s) = (
        scaling.y_mean[constraint.output],
        scaling.y_std[constraint.output],
    );
    Constraint {
        output: constraint.output,
        lower: constraint.lower.map(|t| (t - m) / s),
        upper: constraint.upper.map(|u| (u - m) / s),
    }
}
