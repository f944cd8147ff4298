//! The multi-start scheme of the safe-learning fits (`safe-transfer.md` §6): one L-BFGS run
//! from the warm start (the previous optimum) and one from each of `restarts` perturbations
//! of the initial values, keeping the best.
//!
//! The perturbation is the authors' (GPflow) one: every unconstrained value (log of a positive
//! parameter, or a free coregionalisation weight) is multiplied by its own U(0.5, 1.5) factor.
//! A value of exactly 0 (the log of a unit variance) therefore stays put, as it nearly does
//! under GPflow's softplus. The fit driver's own restarts (`fit::restarts`: ±2 log-units
//! around the start) are a different, wider scheme, so they are not used here.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

use crate::linalg::Parallelism;
use crate::models::ModelError;

/// The start points of one fit: `warm` first, then `restarts` copies of `init` with every
/// entry multiplied by an independent U(0.5, 1.5) draw (seeded by `seed`), clamped to
/// `bounds`.
pub(crate) fn start_points(
    warm: &[f64],
    init: &[f64],
    bounds: &[(f64, f64)],
    restarts: usize,
    seed: u64,
) -> Vec<Vec<f64>> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut starts = vec![warm.to_vec()];
    for _ in 0..restarts {
        starts.push(
            init.iter()
                .zip(bounds)
                .map(|(v, (lo, hi))| (v * rng.random_range(0.5..1.5)).clamp(*lo, *hi))
                .collect(),
        );
    }
    starts
}

/// Runs `fit` (one optimiser run from a start: its objective and what it fitted) from every
/// start and returns the fit with the highest objective, the earliest start on ties. Starts
/// whose fit fails are skipped; if all fail, the first failure is returned. The starts run in
/// parallel only when the factorisations are sequential (rayon is never nested inside faer's
/// parallel calls); the choice does not depend on the schedule.
pub(crate) fn best_start<T: Send>(
    starts: &[Vec<f64>],
    par: Parallelism,
    fit: impl Fn(&[f64]) -> Result<(f64, T), ModelError> + Sync,
) -> Result<T, ModelError> {
    let run = |s: &Vec<f64>| fit(s);
    let results: Vec<Result<(f64, T), ModelError>> =
        if starts.len() > 1 && par == Parallelism::Sequential {
            starts.par_iter().map(run).collect()
        } else {
            starts.iter().map(run).collect()
        };
    let mut best: Option<(f64, T)> = None;
    let mut first_error = None;
    for r in results {
        match r {
            // A NaN objective never wins (`>` is false), and the earliest start wins ties.
            Ok((value, item)) => {
                if best.as_ref().is_none_or(|(b, _)| value > *b) {
                    best = Some((value, item));
                }
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match (best, first_error) {
        (Some((_, item)), _) => Ok(item),
        (None, Some(e)) => Err(ModelError::Invalid(format!(
            "every optimiser start failed; the first: {e}"
        ))),
        (None, None) => Err(ModelError::Invalid("no optimiser start was given".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restarts_scale_the_initial_values_within_half_and_one_and_a_half_reproducibly() {
        let warm = [0.3, -1.0, 2.0];
        let init = [-1.6, 0.8, -4.6];
        let bounds = [(-10.0, 10.0), (-10.0, 10.0), (-5.0, 10.0)];
        let starts = start_points(&warm, &init, &bounds, 50, 7);
        assert_eq!(starts.len(), 51);
        assert_eq!(starts[0], warm);
        let mut low = [false; 3];
        let mut high = [false; 3];
        for s in &starts[1..] {
            for j in 0..3 {
                let u = s[j] / init[j];
                // The third entry may be clamped at its lower bound −5 (u = 5/4.6).
                let clamped = j == 2 && s[j] == -5.0;
                assert!(clamped || (0.5..1.5).contains(&u), "{s:?}");
                low[j] |= u < 0.6;
                high[j] |= u > 1.4 || clamped;
            }
        }
        // Fifty draws cover the range (the chance of missing a tenth of it is 0.8⁵⁰).
        assert!(low.iter().chain(&high).all(|b| *b), "{low:?} {high:?}");
        assert_eq!(starts, start_points(&warm, &init, &bounds, 50, 7));
        assert_ne!(starts, start_points(&warm, &init, &bounds, 50, 8));
    }

    #[test]
    fn the_best_start_wins_earliest_on_ties_and_failures_are_skipped() {
        // (objective, index) pairs: starts 1 and 2 tie, start 3 fails.
        let starts: Vec<Vec<f64>> = [1.0, 3.0, 3.0, -1.0, 2.0]
            .iter()
            .enumerate()
            .map(|(i, v)| vec![*v, i as f64])
            .collect();
        for par in [Parallelism::Sequential, Parallelism::Parallel] {
            let fit = |s: &[f64]| -> Result<(f64, usize), ModelError> {
                if s[0] < 0.0 {
                    return Err(ModelError::Invalid("negative".into()));
                }
                Ok((s[0], s[1] as usize))
            };
            assert_eq!(best_start(&starts, par, fit).unwrap(), 1);
            let all_fail = |_: &[f64]| -> Result<(f64, usize), ModelError> {
                Err(ModelError::Invalid("nope".into()))
            };
            let e = best_start(&starts, par, all_fail).unwrap_err().to_string();
            assert!(
                e.contains("every optimiser start failed") && e.contains("nope"),
                "{e}"
            );
        }
    }
}
