//! Warm starts of an inner iteration (a Laplace mode search, EP's sweeps) across the
//! evaluations of a hyperparameter fit, without giving up reproducibility.
//!
//! The fit driver runs its starts in parallel only when there are several and each evaluation
//! is sequential (small problems, where an inner iteration from scratch is cheap), and one
//! after another otherwise. A warm start shared between the evaluations is deterministic only
//! when they run one after another, so it is used only then
//! ([`evaluations_in_sequence`]): the same seed gives the same numbers whatever the scheduling.

use std::sync::Mutex;

use crate::linalg::Parallelism;

/// Whether a fit with `restarts` restarts whose evaluations use `par` runs its evaluations one
/// after another (see [`maximize`](crate::fit::restarts::maximize)): with one start, or with
/// parallel linear algebra inside each evaluation.
pub(super) fn evaluations_in_sequence(par: Parallelism, restarts: usize) -> bool {
    restarts == 0 || par == Parallelism::Parallel
}

/// The state the last evaluation ended in, handed to the next one when that is reproducible.
pub(super) struct Warm<T = Vec<f64>> {
    state: Option<Mutex<Option<T>>>,
}

impl<T> Warm<T> {
    /// A warm-start cell, used only if the evaluations run `in_sequence` (see
    /// [`evaluations_in_sequence`]).
    pub(super) fn new(in_sequence: bool) -> Self {
        Warm {
            state: in_sequence.then(|| Mutex::new(None)),
        }
    }

    /// [`Warm::new`] with `start` as the state the first evaluation starts from (when the
    /// cell is used at all).
    pub(super) fn starting_from(in_sequence: bool, start: T) -> Self {
        let warm = Warm::new(in_sequence);
        warm.set(start);
        warm
    }

    /// The state to start from, if any, taken out of the cell (an evaluation that fails
    /// puts it back with [`Warm::set`]).
    pub(super) fn take(&self) -> Option<T> {
        let cell = self.state.as_ref()?;
        cell.lock().map_or(None, |mut g| g.take())
    }

    /// Remembers the state an evaluation ended in.
    pub(super) fn set(&self, v: T) {
        if let Some(cell) = &self.state {
            if let Ok(mut g) = cell.lock() {
                *g = Some(v);
            }
        }
    }
}

impl<T: Clone> Warm<T> {
    /// The state to start from, if any.
    pub(super) fn get(&self) -> Option<T> {
        let cell = self.state.as_ref()?;
        cell.lock().map_or(None, |g| g.clone())
    }
}
