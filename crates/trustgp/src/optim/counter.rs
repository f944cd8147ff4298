//! A per-thread count of objective evaluations, for timing studies that report how many
//! evaluations a fit took next to its seconds (e.g. `experiments safe-table4`).
//!
//! Every optimiser of this module evaluates through one bookkeeping wrapper, which bumps the
//! count of the thread it runs on. The count is per thread (not process-wide) so that
//! concurrent fits on other threads never leak into a measurement: a caller that wants the
//! evaluations of one fit runs it on one thread (e.g. inside a one-thread rayon pool, so that
//! parallel restarts stay on it) and reads [`evaluations_on_this_thread`] before and after.

use std::cell::Cell;

thread_local! {
    static EVALUATIONS: Cell<u64> = const { Cell::new(0) };
}

/// Objective evaluations (failed ones included) made by the optimisers on the calling thread
/// since the thread started. Only differences of two readings on the same thread mean
/// anything.
pub fn evaluations_on_this_thread() -> u64 {
    EVALUATIONS.with(Cell::get)
}

/// Counts one evaluation on the calling thread.
pub(crate) fn count_evaluation() {
    EVALUATIONS.with(|c| c.set(c.get().wrapping_add(1)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::optim::{minimize_cg, minimize_lbfgsb, LbfgsOptions};

    #[test]
    fn the_count_grows_by_the_evaluations_the_optimisers_made() {
        // A shifted quadratic in 3-D: the closure counts its own calls independently.
        let calls = Cell::new(0u64);
        let f = |x: &[f64]| -> Result<(f64, Vec<f64>), String> {
            calls.set(calls.get() + 1);
            let g: Vec<f64> = x
                .iter()
                .enumerate()
                .map(|(i, v)| 2.0 * (v - i as f64))
                .collect();
            Ok((
                x.iter()
                    .enumerate()
                    .map(|(i, v)| (v - i as f64).powi(2))
                    .sum(),
                g,
            ))
        };
        let bounds = vec![(-10.0, 10.0); 3];
        let before = evaluations_on_this_thread();
        let r = minimize_lbfgsb(f, &[5.0, -3.0, 1.0], &bounds, &LbfgsOptions::default()).unwrap();
        let after = evaluations_on_this_thread();
        assert!(r.n_evals > 1);
        assert_eq!(after - before, calls.get());
        assert_eq!(after - before, r.n_evals as u64);
        // A second optimiser adds its own evaluations on top.
        calls.set(0);
        minimize_cg(f, &[1.0, 1.0, 1.0], 7).unwrap();
        assert!(calls.get() > 0);
        assert_eq!(evaluations_on_this_thread() - after, calls.get());
        // Another thread's evaluations are not counted here.
        let mid = evaluations_on_this_thread();
        std::thread::spawn(move || {
            let g = |x: &[f64]| -> Result<(f64, Vec<f64>), String> {
                Ok((x[0] * x[0], vec![2.0 * x[0]]))
            };
            minimize_lbfgsb(g, &[3.0], &[(-5.0, 5.0)], &LbfgsOptions::default()).unwrap();
            assert!(evaluations_on_this_thread() > 0);
        })
        .join()
        .unwrap();
        assert_eq!(evaluations_on_this_thread(), mid);
    }
}
