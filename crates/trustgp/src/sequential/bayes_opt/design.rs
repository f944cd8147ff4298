//! The space-filling initial design: points of one seeded Owen-scrambled Sobol sequence,
//! scaled into the box, addressed by their index so that a run continues the same sequence
//! across calls (and across a stored state) without repeating a point.

use super::super::suggest::Bound;

/// Point number `index` of the Owen-scrambled Sobol sequence seeded `seed`, scaled into the
/// box `bounds`.
pub fn design_point(bounds: &[Bound], index: u32, seed: u32) -> Vec<f64> {
    bounds
        .iter()
        .enumerate()
        .map(|(dim, b)| {
            // Dimensions beyond the sequence's reuse it cyclically with a shifted seed, so that
            // any number of inputs gets a point.
            let d = dim as u32 % sobol_burley::NUM_DIMENSIONS;
            let s = seed.wrapping_add(dim as u32 / sobol_burley::NUM_DIMENSIONS);
            let u = f64::from(sobol_burley::sample(index, d, s));
            (b.lo + u * (b.hi - b.lo)).min(b.hi)
        })
        .collect()
}
