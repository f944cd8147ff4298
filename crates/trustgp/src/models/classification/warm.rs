//! Warm starts of an inner iteration (a Laplace mode search, EP's sweeps) across the
//! evaluations of a hyperparameter fit, without giving up reproducibility.
//!
//! The fit driver runs its starts in parallel only when each evaluation is sequential (small
//! problems, where an inner iteration from scratch is cheap) and one after another otherwise.
//! A warm start shared between the evaluations is deterministic only in the second case, so
//! it is used only then: the same seed gives the same numbers whatever the scheduling.

use std::sync::Mutex;

use crate::linalg::Parallelism;

/// The state the last evaluation ended in, handed to the next one when that is reproducible.
pub(super) struct Warm {
    state: Option<Mutex<Option<Vec<f64>>>>,
}

impl Warm {
    /// A warm-start cell for a fit whose evaluations run with `par`.
    pub(super) fn new(par: Parallelism) -> Self {
        Warm {
            state: (par == Parallelism::Parallel).then(|| Mutex::new(None)),
        }
    }

    /// [`Warm::new`] with `start` as the state the first evaluation starts from (when the
    /// cell is used at all).
    pub(super) fn starting_from(par: Parallelism, start: Vec<f64>) -> Self {
        let warm = Warm::new(par);
        warm.set(&start);
        warm
    }

    /// The state to start from, if any.
    pub(super) fn get(&self) -> Option<Vec<f64>> {
        let cell = self.state.as_ref()?;
        cell.lock().map_or(None, |g| g.clone())
    }

    /// Remembers the state an evaluation ended in.
    pub(super) fn set(&self, v: &[f64]) {
        if let Some(cell) = &self.state {
            if let Ok(mut g) = cell.lock() {
                *g = Some(v.to_vec());
            }
        }
    }
}
