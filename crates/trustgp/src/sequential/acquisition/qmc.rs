//! Quasi-random standard normal base samples for Monte Carlo acquisitions.
//!
//! The rows are the points of the Owen-scrambled Sobol sequence of `sobol_burley` (seeded),
//! each coordinate mapped through the normal quantile [`quantile`]. `sobol_burley` returns
//! multiples of `2⁻²³` in `[0, 1)`; shifting them by half a cell, `2⁻²⁴`, keeps them off 0 (where
//! the quantile is infinite) and makes the set symmetric about ½. Like BoTorch's
//! `SobolQMCNormalSampler`, this integrates smooth expectations with an error that falls faster
//! than the `1/√N` of pseudo-random samples.

use faer::Mat;

use super::normal::quantile;
use crate::models::ModelError;

/// The most base samples (points of the Sobol sequence).
pub const MAX_BASE_SAMPLES: usize = 1 << 16;
/// The most dimensions (joint points) a base sample can have.
pub const MAX_BASE_DIMENSIONS: usize = sobol_burley::NUM_DIMENSIONS as usize;

/// Half a cell of `sobol_burley`'s 23-bit output.
const HALF_CELL: f64 = 1.0 / (1u32 << 24) as f64;

/// `samples` quasi-random standard normal vectors of length `dims`, one per row, from the
/// Sobol sequence scrambled with `seed`: the same arguments give the same matrix.
///
/// # Errors
/// [`ModelError::Invalid`] if `samples` is 0 or above [`MAX_BASE_SAMPLES`], or `dims` is above
/// [`MAX_BASE_DIMENSIONS`].
pub fn sobol_normal(samples: usize, dims: usize, seed: u32) -> Result<Mat<f64>, ModelError> {
    if samples == 0 || samples > MAX_BASE_SAMPLES {
        return Err(ModelError::Invalid(format!(
            "Monte Carlo samples must be between 1 and {MAX_BASE_SAMPLES} (the Sobol \
             sequence's length), got {samples}"
        )));
    }
    if dims > MAX_BASE_DIMENSIONS {
        return Err(ModelError::Invalid(format!(
            "at most {MAX_BASE_DIMENSIONS} points (pending and batch together) can be sampled \
             jointly (the Sobol sequence's dimension), got {dims}"
        )));
    }
    // Both casts are exact: samples ≤ 2^16 and dims ≤ NUM_DIMENSIONS were checked above.
    Ok(Mat::from_fn(samples, dims, |i, j| {
        quantile(f64::from(sobol_burley::sample(i as u32, j as u32, seed)) + HALF_CELL)
    }))
}
