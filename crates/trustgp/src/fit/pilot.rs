//! The pilot fit: on many rows, fit a seeded subset first and start the full fit from its
//! optimum.
//!
//! An evaluation of an exact GP's or a Laplace classifier's evidence costs `O(n³)`, and most of
//! an L-BFGS run's evaluations are spent far from the optimum, finding the scale of the
//! hyperparameters. A subset of `m` rows has nearly the same optimum (length-scales and noise
//! are properties of the function, not of `n`) at `(m/n)³` of the cost per evaluation, so the
//! full fit, started there, needs only the last few steps. It still converges on every row
//! with the same rule, so its optimum is the full objective's (a test checks that the piloted
//! and unpiloted fits agree). Restarts are spent on the pilot, where they are cheap; a pilot
//! that fails (a subset with one class, say) is skipped, never an error.

use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::SeedableRng;

use super::{FitOptions, FitReport};

/// Why the pilot seed differs from the restarts' seed: the two draws must not be correlated.
const PILOT_STREAM: u64 = 0x9e37_79b9_7f4a_7c15;

/// The pilot's rows (ascending) for `n` rows under `opts`, or `None` when no pilot is wanted
/// (`opts.pilot_rows` is 0, or `n ≤ 2 · opts.pilot_rows`, or no optimisation is asked for).
pub fn pilot_rows(n: usize, opts: &FitOptions) -> Option<Vec<usize>> {
    let m = opts.pilot_rows;
    if !opts.optimize || m == 0 || n <= 2 * m {
        return None;
    }
    let mut rng = StdRng::seed_from_u64(opts.seed ^ PILOT_STREAM);
    let mut rows = rand::seq::index::sample(&mut rng, n, m).into_vec();
    rows.sort_unstable();
    Some(rows)
}

/// The rows `rows` of `x`.
pub fn select_rows(x: MatRef<'_, f64>, rows: &[usize]) -> Mat<f64> {
    Mat::from_fn(rows.len(), x.ncols(), |i, j| x[(rows[i], j)])
}

/// The entries `rows` of `y`.
pub fn select(y: &[f64], rows: &[usize]) -> Vec<f64> {
    rows.iter().map(|&i| y[i]).collect()
}

/// The options of the pilot fit itself (all restarts, no pilot of its own).
pub fn pilot_options(opts: &FitOptions) -> FitOptions {
    FitOptions {
        pilot_rows: 0,
        ..opts.clone()
    }
}

/// The options of the full fit after a pilot (one start, from the pilot's optimum).
pub fn after_pilot(opts: &FitOptions) -> FitOptions {
    FitOptions {
        restarts: 0,
        pilot_rows: 0,
        ..opts.clone()
    }
}

/// Says in the full fit's reports that it started from a pilot on `m` of `n` rows, and what
/// the pilot cost.
pub fn mark_piloted(reports: &mut [FitReport], pilot: &[FitReport], m: usize, n: usize) {
    let evaluations: usize = pilot.iter().map(|r| r.evaluations).sum();
    let seconds: f64 = pilot.iter().map(|r| r.seconds).sum();
    for r in reports {
        r.message = format!(
            "started at the optimum of a pilot fit on {m} of {n} rows ({} start(s), \
             {evaluations} evaluations, {seconds:.3} s): {}",
            pilot.len(),
            r.message
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pilot_rows_are_seeded_distinct_sorted_and_only_for_large_fits() {
        let opts = FitOptions::default();
        assert_eq!(pilot_rows(2 * opts.pilot_rows, &opts), None);
        let rows = pilot_rows(2000, &opts).unwrap();
        assert_eq!(rows.len(), opts.pilot_rows);
        assert!(rows.windows(2).all(|w| w[0] < w[1]) && *rows.last().unwrap() < 2000);
        assert_eq!(pilot_rows(2000, &opts), Some(rows.clone()));
        let other = FitOptions {
            seed: 1,
            ..opts.clone()
        };
        assert_ne!(pilot_rows(2000, &other), Some(rows));
        for off in [
            FitOptions {
                pilot_rows: 0,
                ..opts.clone()
            },
            FitOptions {
                optimize: false,
                ..opts.clone()
            },
        ] {
            assert_eq!(pilot_rows(100_000, &off), None);
        }
    }
}
