//! A batch of `q` candidates by sequential greedy conditioning, as BoTorch's
//! `optimize_acqf(..., sequential=True)` builds one.
//!
//! Point `j` maximises (with [`maximize`]: Sobol raw samples, multi-start L-BFGS-B, fixed
//! inputs) an acquisition of one candidate next to the pending points and the picks
//! `1 … j − 1`, which stay fixed: for qEI/qLogEI (a batch improvement with `q = 1`) this is the
//! joint improvement of `{pending, earlier picks, x}`, the gradient flowing only into `x`. The
//! earlier picks enter the joint posterior as points without observations (BoTorch's
//! `X_pending`): the next pick is worth something only where it improves on all of them, which
//! spreads the batch out. [`BatchImprovement`](crate::sequential::acquisition::BatchImprovement)
//! with `q = 1` is the acquisition to build for qEI/qLogEI.

#[cfg(test)]
mod tests;

use faer::{Mat, MatRef};

use super::{maximize, MaximizeOptions, MaximizedAcquisition};
use crate::models::ModelError;
use crate::sequential::acquisition::Acquisition;

/// The result of [`maximize_batch`].
#[derive(Debug, Clone, PartialEq)]
pub struct MaximizedBatch {
    /// The batch, one point per row, in the order picked.
    pub points: Mat<f64>,
    /// Each pick's [`maximize`] result (its acquisition given the earlier picks).
    pub steps: Vec<MaximizedAcquisition>,
}

/// `q` points of the box `bounds` by sequential greedy conditioning (see the module
/// documentation): `acquisition(fixed)` builds the one-candidate acquisition next to the fixed
/// rows `fixed` (the rows of `pending`, then the picks so far), and each pick maximises it
/// with `options`. For qLogEI over a posterior `gp` and incumbent `best`:
///
/// ```text
/// maximize_batch(q, pending, &bounds, &options, |fixed| {
///     BatchImprovement::new(&gp, BatchImprovementKind::log_expected(), best, fixed, 1, &mc)
/// })
/// ```
///
/// # Errors
/// [`ModelError::Invalid`] if `q` is 0 or `pending` does not have one column per bound; the
/// errors of `acquisition` and of [`maximize`].
pub fn maximize_batch<A: Acquisition>(
    q: usize,
    pending: MatRef<'_, f64>,
    bounds: &[(f64, f64)],
    options: &MaximizeOptions,
    mut acquisition: impl FnMut(MatRef<'_, f64>) -> Result<A, ModelError>,
) -> Result<MaximizedBatch, ModelError> {
    if q == 0 {
        return Err(ModelError::Invalid(
            "a batch needs at least one point (q ≥ 1), got q = 0".into(),
        ));
    }
    let d = bounds.len();
    if pending.ncols() != d {
        return Err(ModelError::Invalid(format!(
            "the pending points have {} columns but the bounds give {d} inputs",
            pending.ncols()
        )));
    }
    let p = pending.nrows();
    let mut fixed = Mat::from_fn(p, d, |i, c| pending[(i, c)]);
    let mut steps = Vec::with_capacity(q);
    for _ in 0..q {
        let step = maximize(&acquisition(fixed.as_ref())?, bounds, options)?;
        let rows = fixed.nrows();
        fixed.resize_with(rows + 1, d, |_, c| step.x[c]);
        steps.push(step);
    }
    Ok(MaximizedBatch {
        points: fixed.subrows(p, q).to_owned(),
        steps,
    })
}
