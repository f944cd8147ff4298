//! Dense linear algebra on faer: Cholesky with recorded jitter escalation, solves,
//! log-determinants and inverses, the two-step (block) factorisation with a fixed leading
//! block, and the allocator setting that lets repeated evaluations reuse their matrices' memory.

mod allocator;
mod block_cholesky;
mod cholesky;
mod fresh;
mod gram;
mod parallelism;
mod reduce;
mod symmetric;

pub use allocator::reuse_freed_memory;

pub use block_cholesky::{BlockCholesky, SchurBasis};
pub use cholesky::{Cholesky, JITTER_CAP, JITTER_START};
pub(crate) use fresh::{par_from_columns, par_zeros};
pub(crate) use gram::lower_gram_in_place;
pub use parallelism::{parallelism_for, Parallelism};
pub(crate) use reduce::sum_pairs;
pub(crate) use symmetric::copy_transposed;
pub use symmetric::mirror_lower;

/// Errors of the linear-algebra layer.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum LinalgError {
    /// The matrix holds a NaN or infinite entry, so no factorisation is meaningful.
    #[error("{what} has a non-finite entry at ({row}, {col}): {value}")]
    NonFinite {
        /// What matrix this is (e.g. "kernel matrix").
        what: String,
        /// Row of the offending entry.
        row: usize,
        /// Column of the offending entry.
        col: usize,
        /// The offending value.
        value: f64,
    },
    /// Even the largest jitter did not make the matrix positive definite.
    #[error(
        "{what} ({n}×{n}) is not positive definite even with jitter {jitter:.3e} \
         (the cap, {cap:.0e} × mean diagonal); check the inputs for duplicates at zero noise \
         or hyperparameters far out of range"
    )]
    NotPositiveDefinite {
        /// What matrix this is.
        what: String,
        /// Its dimension.
        n: usize,
        /// The last jitter tried (absolute).
        jitter: f64,
        /// The relative cap.
        cap: f64,
    },
    /// The matrix is not square or is empty.
    #[error("{what} must be a non-empty square matrix, got {rows}×{cols}")]
    Shape {
        /// What matrix this is.
        what: String,
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
    },
}
