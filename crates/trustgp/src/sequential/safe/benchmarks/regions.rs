//! The rejection rules of the GP and Branin benchmarks (`safe-transfer.md` §5.2 step 8), on
//! the connected safe regions of a regular grid as the region metric labels them
//! ([`connected_components`]: face connectivity, regions numbered `0..count` in the order of
//! each region's first node in flat order).

use super::grid::Grid;
use super::BenchmarkError;
use crate::sequential::safe::metrics::{connected_components, Components};

/// The connected regions of the safe nodes of `grid` (`safe`: one flag per node, in flat
/// order); `benchmark` names the build in the error.
///
/// # Errors
/// [`BenchmarkError::BadOption`] (on `grid_per_dim`) if `safe` does not hold one flag per node.
pub fn grid_regions(
    benchmark: &str,
    grid: &Grid,
    safe: &[bool],
) -> Result<Components, BenchmarkError> {
    connected_components(&grid.shape(), safe).map_err(|e| BenchmarkError::BadOption {
        benchmark: benchmark.to_string(),
        option: "grid_per_dim",
        value: grid.per_dim().to_string(),
        expected: e.to_string(),
    })
}

/// Per target region (index = label): the fraction of all grid nodes that lie in it and are
/// safe for the source too.
pub fn shared_fractions(regions: &Components, source_safe: &[bool]) -> Vec<f64> {
    let n = regions.labels.len() as f64;
    let mut shared = vec![0usize; regions.count];
    for (&l, &s) in regions.labels.iter().zip(source_safe) {
        if let (Some(l), true) = (l, s) {
            shared[l] += 1;
        }
    }
    shared.into_iter().map(|c| c as f64 / n).collect()
}

/// The rejection rules (i)–(iii) of §5.2 step 8 as the authors' generators apply them: the
/// target (with safe regions `target`) has at least two disjoint safe regions, and at least
/// two of them each share at least `min_shared` of the space with the source's safe set (so
/// the regions a transfer method should reach share safe area with the source). Returns the
/// label of the region with the largest shared area (where the initial data go), or `None` if
/// the draw is rejected.
///
/// \[code\]: the GP generator uses `min_shared = 0.1`, the Branin generator 0.05.
pub fn accept_draw(target: &Components, source_safe: &[bool], min_shared: f64) -> Option<usize> {
    if target.count < 2 {
        return None;
    }
    let shared = shared_fractions(target, source_safe);
    if shared.iter().filter(|&&a| a >= min_shared).count() < 2 {
        return None;
    }
    // The first largest region, as numpy's argmax picks it.
    let (best, _) = shared
        .iter()
        .enumerate()
        .fold((0, f64::NEG_INFINITY), |(bi, bv), (i, &v)| {
            if v > bv {
                (i, v)
            } else {
                (bi, bv)
            }
        });
    Some(best)
}
