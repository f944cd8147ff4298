//! Input checks shared by the models: every model rejects empty, mismatched or non-finite
//! training data with the same messages.

use faer::MatRef;

use super::ModelError;

/// Training inputs (n×d) and targets: at least one row and column, as many targets as rows,
/// every value finite.
pub(crate) fn check_training_data(x: MatRef<'_, f64>, y: &[f64]) -> Result<(), ModelError> {
    if x.nrows() == 0 || x.ncols() == 0 {
        return Err(ModelError::Invalid(format!(
            "training inputs must have at least one row and one column, got {}×{}",
            x.nrows(),
            x.ncols()
        )));
    }
    if x.nrows() != y.len() {
        return Err(ModelError::Invalid(format!(
            "{} input rows but {} targets",
            x.nrows(),
            y.len()
        )));
    }
    check_matrix("training input", x, x.ncols())?;
    if let Some(i) = y.iter().position(|v| !v.is_finite()) {
        return Err(ModelError::Invalid(format!(
            "target of training row {i} is {} (expected a finite number)",
            y[i]
        )));
    }
    Ok(())
}

/// A matrix with at least one row, `d` columns and finite entries; `what` names one row's kind
/// in the message ("training input", "inducing input", …).
pub(crate) fn check_matrix(what: &str, a: MatRef<'_, f64>, d: usize) -> Result<(), ModelError> {
    if a.nrows() == 0 || a.ncols() != d {
        return Err(ModelError::Invalid(format!(
            "{what}s must form a matrix with at least one row and {d} columns, got {}×{}",
            a.nrows(),
            a.ncols()
        )));
    }
    check_finite(what, a)
}

/// Test inputs: any number of rows (an empty batch is fine), `d` columns, finite entries.
pub(crate) fn check_test_inputs(x: MatRef<'_, f64>, d: usize) -> Result<(), ModelError> {
    if x.ncols() != d {
        return Err(ModelError::Invalid(format!(
            "test inputs have {} columns but the model has {d} inputs",
            x.ncols()
        )));
    }
    check_finite("test input", x)
}

/// Every entry of `a` finite; `what` names one row's kind in the message.
fn check_finite(what: &str, a: MatRef<'_, f64>) -> Result<(), ModelError> {
    let d = a.ncols();
    for c in 0..d {
        for r in 0..a.nrows() {
            if !a[(r, c)].is_finite() {
                return Err(ModelError::Invalid(format!(
                    "{what} row {r}, column {c} is {} (expected a finite number)",
                    a[(r, c)]
                )));
            }
        }
    }
    Ok(())
}
