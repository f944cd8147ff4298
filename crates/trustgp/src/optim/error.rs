//! Errors reported before or instead of an optimisation result.

/// Why an optimiser could not run or could not produce a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OptimError {
    /// `x0` and `bounds` have different lengths.
    #[error("x0 has {x0} entries but {bounds} bounds were given")]
    DimensionMismatch {
        /// Length of `x0`.
        x0: usize,
        /// Length of `bounds`.
        bounds: usize,
    },
    /// A bound pair is NaN, has `lo > hi`, or admits no finite value (`lo = +∞` or `hi = −∞`).
    #[error("bounds[{index}] = ({lo}, {hi}) is not a valid interval")]
    InvalidBound {
        /// Index of the offending variable.
        index: usize,
        /// Its lower bound.
        lo: f64,
        /// Its upper bound.
        hi: f64,
    },
    /// A starting coordinate is NaN or infinite.
    #[error("x0[{index}] = {value} is not finite")]
    NonFiniteStart {
        /// Index of the offending coordinate.
        index: usize,
        /// Its value.
        value: f64,
    },
    /// An option is out of its valid range.
    #[error("invalid option: {0}")]
    InvalidOptions(String),
    /// The objective failed at the (projected) starting point, so there is nothing to improve on.
    #[error("the objective failed at the starting point: {0}")]
    StartFailed(String),
    /// The objective returned a gradient of the wrong length: a programming error in the caller,
    /// so it aborts the run rather than being treated as an infeasible point.
    #[error("the objective returned a gradient of length {got}, expected {expected}")]
    GradientLength {
        /// Number of variables.
        expected: usize,
        /// Length of the returned gradient.
        got: usize,
    },
}
