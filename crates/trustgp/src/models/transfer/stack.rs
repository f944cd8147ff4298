//! Checking and stacking the tasks' data (`safe-transfer.md` §2.10: data ordered as task 1, …,
//! task P, then the target). Task-indexed inputs carry the task in a last column: source `s`
//! (in the given order) is task `s`, the target is task `P`. Every check builds on the shared
//! model checks ([`crate::models::checks`]), prefixed with the task it is about.

use faer::{Mat, MatRef};

use crate::models::checks::check_training_data;
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

    /// The sources followed by the target data `(x, y)` as task `P`: task-indexed inputs,
    /// values and the task (noise group) of every row.
    pub fn with_target(&self, x: MatRef<'_, f64>, y: &[f64]) -> (Mat<f64>, Vec<f64>, Vec<usize>) {
        let x_all: Mat<f64> = faer::concat![[self.x.as_ref()], [tagged(x, self.p).as_ref()]];
        let y_all = self.y.iter().chain(y).copied().collect();
        let group = (self.group.iter().copied())
            .chain(std::iter::repeat_n(self.p, y.len()))
            .collect();
        (x_all, y_all, group)
    }
}

/// Checks every source task (at least one row and column, one finite value per row, finite
/// inputs) and that all have the same number of input columns, which is returned (`None`
/// without sources).
pub(crate) fn check_sources(sources: &[SourceTask]) -> Result<Option<usize>, ModelError> {
    let d = sources.first().map(|s| s.x.ncols());
    for (p, s) in sources.iter().enumerate() {
        check_training_data(s.x.as_ref(), &s.y)
            .map_err(|e| ModelError::Invalid(format!("source task {p}: {e}")))?;
        if Some(s.x.ncols()) != d {
            return Err(ModelError::Invalid(format!(
                "source task {p} has {} input columns but source task 0 has {}",
                s.x.ncols(),
                d.unwrap_or(0)
            )));
        }
    }
    Ok(d)
}

/// The number of input columns of `sources`, which must hold at least one task.
pub(crate) fn required_width(sources: &StackedSources) -> Result<usize, ModelError> {
    sources.d.ok_or_else(|| {
        ModelError::Invalid("no source task was given (expected at least one)".into())
    })
}

/// Checks every source task ([`check_sources`]) and stacks them in order.
pub(crate) fn stack_sources(sources: &[SourceTask]) -> Result<StackedSources, ModelError> {
    let d = check_sources(sources)?;
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

/// The error of a model asked before its first [`FunctionModel::update`](crate::sequential::safe::FunctionModel::update).
pub(crate) fn not_updated() -> ModelError {
    ModelError::Invalid("the model has no target data yet: call update first".into())
}

/// Checks target observations for a model of `d` input columns: at least one row, matching
/// lengths, finite values.
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
