//! The checks every binary classifier makes of its training data.

use faer::MatRef;

use crate::models::ModelError;

/// Inputs with at least one row, all finite, and one label `±1` per row.
pub(super) fn check_binary(x: MatRef<'_, f64>, y: &[f64]) -> Result<(), ModelError> {
    let bad = |m: String| Err(ModelError::Invalid(m));
    let n = x.nrows();
    if n == 0 {
        return bad("no training rows".into());
    }
    if y.len() != n {
        return bad(format!("y has {} labels but x has {n} rows", y.len()));
    }
    if let Some(j) = y.iter().position(|&v| v != 1.0 && v != -1.0) {
        return bad(format!("y[{j}] = {} must be a label −1 or +1", y[j]));
    }
    for j in 0..n {
        if let Some(c) = (0..x.ncols()).find(|&c| !x[(j, c)].is_finite()) {
            return bad(format!("x[{j}, {c}] = {} is not finite", x[(j, c)]));
        }
    }
    Ok(())
}
