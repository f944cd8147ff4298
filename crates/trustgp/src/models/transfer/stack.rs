//! Checking and stacking the tasks' data as task-indexed inputs (source `s` is task `s`, the
//! target is task `P`).

use faer::{Mat, MatRef};

use crate::models::ModelError;
use crate::sequential::safe::SourceTask;

/// The source tasks stacked: task-indexed inputs, targets and the task of every row.
#[derive(Clone, Debug)]
pub(crate) struct StackedSources {
    /// Number of input columns (`None` without sources: set by the first target data).
    pub d: Option<usize>,
    /// Number of source tasks `P`.
    pub p: usize,
    /// Task-indexed inputs (`N_s × (d + 1)`).
    pub x: Mat<f64>,
    /// Observed values.
    pub y: Vec<f64>,
    /// The task of every row.
    pub group: Vec<usize>,
}

impl StackedSources {
    /// Fixes the number of input columns to the target's when there are no sources (so that
    /// the empty source block stacks with the target rows); a no-op otherwise.
    pub fn settle_width(&mut self, d: usize) {
        if self.d.is_none() {
            self.d = Some(d);
            self.x = Mat::zeros(0, d + 1);
        }
    }
}

/// Checks every source task (at least one row, matching lengths and widths, finite values) and
/// stacks them in order.
pub(crate) fn stack_sources(sources: &[SourceTask]) -> Result<StackedSources, ModelError> {
    let bad = |m: String| Err(ModelError::Invalid(m));
    let d = sources.first().map(|s| s.x.ncols());
    for (s, task) in sources.iter().enumerate() {
        let (n, dc) = (task.x.nrows(), task.x.ncols());
        if n == 0 {
            return bad(format!("source task {s} has no observations"));
        }
        if Some(dc) != d || dc == 0 {
            return bad(format!(
                "source task {s} has {dc} input columns, source task 0 has {} (expected the \
                 same, at least one)",
                d.unwrap_or(0)
            ));
        }
        if task.y.len() != n {
            return bad(format!(
                "source task {s} has {n} input rows but {} values",
                task.y.len()
            ));
        }
        check_finite_inputs(task.x.as_ref(), &format!("source task {s}"))?;
        if let Some(i) = task.y.iter().position(|v| !v.is_finite()) {
            return bad(format!(
                "source task {s}, row {i}: value {} (expected a finite number)",
                task.y[i]
            ));
        }
    }
    let n_s: usize = sources.iter().map(|s| s.y.len()).sum();
    let width = d.unwrap_or(0) + 1;
    let mut x = Mat::<f64>::zeros(n_s, width);
    let (mut y, mut group) = (Vec::with_capacity(n_s), Vec::with_capacity(n_s));
    let mut row = 0;
    for (s, task) in sources.iter().enumerate() {
        let t = tagged(task.x.as_ref(), s);
        x.as_mut()
            .submatrix_mut(row, 0, t.nrows(), width)
            .copy_from(&t);
        row += t.nrows();
        y.extend_from_slice(&task.y);
        group.extend(std::iter::repeat_n(s, task.y.len()));
    }
    Ok(StackedSources {
        d,
        p: sources.len(),
        x,
        y,
        group,
    })
}

/// `x` with a task column of value `task` appended.
pub(crate) fn tagged(x: MatRef<'_, f64>, task: usize) -> Mat<f64> {
    let d = x.ncols();
    Mat::from_fn(x.nrows(), d + 1, |i, j| {
        if j < d {
            x[(i, j)]
        } else {
            task as f64
        }
    })
}

/// Checks target observations: at least one row, `d` columns (when known), matching lengths,
/// finite values.
pub(crate) fn check_target(
    x: MatRef<'_, f64>,
    y: &[f64],
    d: Option<usize>,
) -> Result<(), ModelError> {
    let bad = |m: String| Err(ModelError::Invalid(m));
    if x.nrows() == 0 {
        return bad("no target observations (expected at least one row)".into());
    }
    check_width(x, d, "target inputs")?;
    if y.len() != x.nrows() {
        return bad(format!(
            "{} target input rows but {} target values",
            x.nrows(),
            y.len()
        ));
    }
    check_finite_inputs(x, "target inputs")?;
    if let Some(i) = y.iter().position(|v| !v.is_finite()) {
        return bad(format!(
            "target value of row {i} is {} (expected a finite number)",
            y[i]
        ));
    }
    Ok(())
}

/// Checks test inputs against the training width.
pub(crate) fn check_test(x: MatRef<'_, f64>, d: usize) -> Result<(), ModelError> {
    check_width(x, Some(d), "test inputs")?;
    check_finite_inputs(x, "test inputs")
}

fn check_width(x: MatRef<'_, f64>, d: Option<usize>, what: &str) -> Result<(), ModelError> {
    match d {
        Some(d) if x.ncols() != d => Err(ModelError::Invalid(format!(
            "{what} have {} columns, the model's tasks have {d}",
            x.ncols()
        ))),
        None if x.ncols() == 0 => Err(ModelError::Invalid(format!(
            "{what} have no columns (expected at least one)"
        ))),
        _ => Ok(()),
    }
}

fn check_finite_inputs(x: MatRef<'_, f64>, what: &str) -> Result<(), ModelError> {
    for j in 0..x.ncols() {
        for i in 0..x.nrows() {
            if !x[(i, j)].is_finite() {
                return Err(ModelError::Invalid(format!(
                    "{what}, row {i}, column {j}: {} (expected a finite number)",
                    x[(i, j)]
                )));
            }
        }
    }
    Ok(())
}
