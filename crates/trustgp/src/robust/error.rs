//! Errors of the robust estimators, and the input checks that raise them.

use faer::MatRef;

use super::McdOptions;

/// Why [`fast_mcd`](super::fast_mcd) rejected its input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McdError {
    /// The input has no rows.
    #[error("MCD needs at least one observation, but the input has no rows")]
    Empty,
    /// The input has rows but no columns.
    #[error("MCD needs at least one column, but the input has {rows} rows and no columns")]
    NoColumns {
        /// Number of rows.
        rows: usize,
    },
    /// A value is NaN or infinite (indices are 0-based).
    #[error("MCD input has a non-finite value {value} at row {row}, column {col} (0-based)")]
    NonFinite {
        /// Row of the value.
        row: usize,
        /// Column of the value.
        col: usize,
        /// The value.
        value: f64,
    },
    /// The support fraction is not in (0, 1].
    #[error("MCD support fraction must be in (0, 1], got {0}")]
    SupportFraction(f64),
    /// `n_trials` or `n_best` is zero.
    #[error("MCD needs n_trials ≥ 1 and n_best ≥ 1, got n_trials = {n_trials}, n_best = {n_best}")]
    Trials {
        /// The requested number of random starts.
        n_trials: usize,
        /// The requested number of refined candidates.
        n_best: usize,
    },
}

/// Check the input of [`fast_mcd`](super::fast_mcd) in the order its errors are documented;
/// non-finite values are reported at the first offending row (then column).
pub(crate) fn check_input(z: MatRef<'_, f64>, opts: &McdOptions) -> Result<(), McdError> {
    let (n, t) = (z.nrows(), z.ncols());
    if n == 0 {
        return Err(McdError::Empty);
    }
    if t == 0 {
        return Err(McdError::NoColumns { rows: n });
    }
    let fraction = opts.support_fraction;
    if fraction.is_nan() || fraction <= 0.0 || fraction > 1.0 {
        return Err(McdError::SupportFraction(fraction));
    }
    if opts.n_trials == 0 || opts.n_best == 0 {
        return Err(McdError::Trials {
            n_trials: opts.n_trials,
            n_best: opts.n_best,
        });
    }
    for row in 0..n {
        for col in 0..t {
            let value = z[(row, col)];
            if !value.is_finite() {
                return Err(McdError::NonFinite { row, col, value });
            }
        }
    }
    Ok(())
}
