//! Raw samples: a seeded, Owen-scrambled Sobol design spread over the free inputs of a box.

use faer::Mat;

use crate::models::ModelError;

/// The most raw samples the Sobol sequence of `sobol_burley` supports.
pub const MAX_RAW_SAMPLES: usize = 1 << 16;

/// The most free inputs the Sobol sequence of `sobol_burley` supports.
pub const MAX_FREE_INPUTS: usize = sobol_burley::NUM_DIMENSIONS as usize;

/// `n` points of the box `bounds`, one per row: the free inputs (`free[k]` is the column of
/// Sobol dimension `k`) from the Owen-scrambled Sobol sequence with `seed`, every other column
/// at its entry in `base`.
///
/// # Errors
/// [`ModelError::Invalid`] if `n` exceeds [`MAX_RAW_SAMPLES`] or `free` has more than
/// [`MAX_FREE_INPUTS`] entries (the sequence's limits).
pub(crate) fn sobol_points(
    n: usize,
    free: &[usize],
    bounds: &[(f64, f64)],
    base: &[f64],
    seed: u32,
) -> Result<Mat<f64>, ModelError> {
    if n > MAX_RAW_SAMPLES {
        return Err(ModelError::Invalid(format!(
            "raw_samples must be at most {MAX_RAW_SAMPLES} (the Sobol sequence's length), got {n}"
        )));
    }
    if free.len() > MAX_FREE_INPUTS {
        return Err(ModelError::Invalid(format!(
            "at most {MAX_FREE_INPUTS} inputs can be optimised (the Sobol sequence's dimension), \
             got {}",
            free.len()
        )));
    }
    let mut points = Mat::from_fn(n, base.len(), |_, c| base[c]);
    for (dim, &c) in free.iter().enumerate() {
        let (lo, hi) = bounds[c];
        for i in 0..n {
            // Both casts are exact: i < 2^16 and dim < NUM_DIMENSIONS were checked above.
            let u = f64::from(sobol_burley::sample(i as u32, dim as u32, seed));
            // u ∈ [0, 1), so the point lies in [lo, hi); `min` guards the rounding of lo + u·w.
            points[(i, c)] = (lo + u * (hi - lo)).min(hi);
        }
    }
    Ok(points)
}
