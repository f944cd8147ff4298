//! Checking and stacking the source tasks' data (`safe-transfer.md` §2.10: data ordered as
//! task 1, …, task P, then the target).

use faer::{Mat, MatRef};

use crate::models::checks::check_training_data;
use crate::models::ModelError;
use crate::sequential::safe::SourceTask;

/// Checks that there is at least one source task, that each has at least one row, finite
/// values and one target per row, and that all have the same number of input columns, which
/// is returned.
pub(crate) fn check_sources(sources: &[SourceTask]) -> Result<usize, ModelError> {
    let Some(first) = sources.first() else {
        return Err(ModelError::Invalid(
            "no source task was given (expected at least one)".into(),
        ));
    };
    let d = first.x.ncols();
    for (p, s) in sources.iter().enumerate() {
        check_training_data(s.x.as_ref(), &s.y)
            .map_err(|e| ModelError::Invalid(format!("source task {p}: {e}")))?;
        if s.x.ncols() != d {
            return Err(ModelError::Invalid(format!(
                "source task {p} has {} input columns but source task 0 has {d}",
                s.x.ncols()
            )));
        }
    }
    Ok(d)
}

/// Checks target inputs and values for a model of `d` input columns.
pub(crate) fn check_target(x: MatRef<'_, f64>, y: &[f64], d: usize) -> Result<(), ModelError> {
    check_training_data(x, y).map_err(|e| ModelError::Invalid(format!("target task: {e}")))?;
    if x.ncols() != d {
        return Err(ModelError::Invalid(format!(
            "target inputs have {} columns but the model has {d} inputs",
            x.ncols()
        )));
    }
    Ok(())
}

/// Checks test inputs (any number of rows, `d` finite columns).
pub(crate) fn check_test_inputs(x: MatRef<'_, f64>, d: usize) -> Result<(), ModelError> {
    if x.ncols() != d {
        return Err(ModelError::Invalid(format!(
            "test inputs have {} columns but the model has {d} inputs",
            x.ncols()
        )));
    }
    for c in 0..d {
        for r in 0..x.nrows() {
            if !x[(r, c)].is_finite() {
                return Err(ModelError::Invalid(format!(
                    "test input row {r}, column {c} is {} (expected a finite number)",
                    x[(r, c)]
                )));
            }
        }
    }
    Ok(())
}

/// The rows of `blocks` one under the other; with `task_column`, followed by a last column
/// holding each row's block index (the task-indexed form of
/// [`MultiOutputKernel`](crate::kernels::MultiOutputKernel)). All blocks have `d` columns.
pub(crate) fn stack_rows(blocks: &[MatRef<'_, f64>], d: usize, task_column: bool) -> Mat<f64> {
    let n: usize = blocks.iter().map(|b| b.nrows()).sum();
    let mut out = Mat::zeros(n, d + usize::from(task_column));
    let mut row = 0;
    for (t, b) in blocks.iter().enumerate() {
        for i in 0..b.nrows() {
            for j in 0..d {
                out[(row, j)] = b[(i, j)];
            }
            if task_column {
                out[(row, d)] = t as f64;
            }
            row += 1;
        }
    }
    out
}
