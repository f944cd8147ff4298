//! Replaying the last hyperparameter refit of a stored run of [`run_benchmark`](super::run_benchmark) on its final
//! data, alone, for Table 4's training time (`safe-transfer.md` §5.3) measured like for like:
//! every method's model is rebuilt by the same factory as in the run, brought to the state of
//! the run's refit before the last (a refit on the data it had then), and its last refit is
//! timed on one thread, one fit at a time.
//!
//! The data are the run's own: its initial points and, in order, the candidates it queried
//! (so no acquisition is recomputed), mapped into model units as [`run_benchmark`](super::run_benchmark) maps them,
//! and each refit takes the seed the run gave it. What cannot be replayed exactly is the
//! previous optimum a refit also starts from (the run's came from the chain of all its refits,
//! the replay's from the one refit before), so the objective reached may differ slightly.

use faer::Mat;

use super::error::{invalid, SafeError};
use super::run::{build_models, fit_seed, source_map, target_map};
use super::scaling::UnitBox;
use super::{ModelFactory, SafeBenchmark, TargetScaling};
use crate::optim::evaluations_on_this_thread;

/// The refits of a run that made `queries` queries with a refit every `refit_every` queries
/// (before queries 0, k, 2k, … and after the last query when `k` divides their number), as
/// numbers of queries seen: `(the refit before the last, the last)`; the first is `None` when
/// the last refit is the first (fewer queries than `refit_every`).
///
/// # Errors
/// `refit_every` is 0.
pub fn last_refits(
    queries: usize,
    refit_every: usize,
) -> Result<(Option<usize>, usize), SafeError> {
    if refit_every == 0 {
        return invalid("refit_every must be at least 1");
    }
    let last = queries / refit_every * refit_every;
    Ok((last.checked_sub(refit_every), last))
}

/// The replayed last refit of a run: the sizes it saw and what it cost, over every output's
/// model (the target `f`, then each safety output).
#[derive(Clone, Debug, PartialEq)]
pub struct LastRefit {
    /// Source observations (all source tasks together; 0 without sources).
    pub n_source: usize,
    /// Target observations at the last refit (initial points and queries).
    pub n_target: usize,
    /// Input dimensions.
    pub d: usize,
    /// Output models refitted (each timed alone, the times summed as Table 4 does).
    pub outputs: usize,
    /// Seconds of the last refit, summed over the outputs ([`FunctionModel::fit_seconds`](super::FunctionModel::fit_seconds)).
    pub seconds: f64,
    /// Log marginal likelihood reached, summed over the outputs (`None` when a model reports
    /// none, e.g. one with frozen hyperparameters).
    pub log_evidence: Option<f64>,
    /// Objective evaluations of the last refit, summed over the outputs and their starts.
    pub evaluations: u64,
    /// CPU seconds of the thread that ran the last refits (each update: the fit and the
    /// factorisation after it), summed over the outputs: unlike `seconds` they do not grow
    /// when other processes share the cores. `None` where the system does not report them
    /// (`/proc/thread-self/schedstat`, Linux). The kernel updates them at scheduler ticks and
    /// switches, so they resolve a few milliseconds.
    pub cpu_seconds: Option<f64>,
}

/// CPU time of the calling thread in seconds (the first field of Linux's
/// `/proc/thread-self/schedstat`, in nanoseconds); `None` elsewhere.
pub fn thread_cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 * 1e-9)
}

/// Replays the last refit of a run of `bench` that queried the candidates `queries` (indices
/// into `bench.candidates`, in query order) with a refit every `refit_every` queries, its
/// models built by `make_model` (as for [`run_benchmark`](super::run_benchmark)) with the target mapped by
/// `scaling`; `seed` is the run's. Runs on a private one-thread pool, so that the restarts of
/// a fit run one after another and its seconds are those of one core.
///
/// # Errors
/// [`SafeError::Invalid`] for a query index outside the candidates or on a candidate with a
/// non-finite output, or `refit_every` 0; [`SafeError::Model`] when a model cannot be built or
/// fitted.
pub fn replay_last_refit(
    bench: &SafeBenchmark,
    queries: &[usize],
    refit_every: usize,
    scaling: TargetScaling,
    make_model: &ModelFactory<'_>,
    seed: u64,
) -> Result<LastRefit, SafeError> {
    let (previous, last) = last_refits(queries.len(), refit_every)?;
    let n_outputs = bench.initial.outputs.ncols();
    for (q, &i) in queries.iter().enumerate() {
        if i >= bench.candidates.n() {
            return invalid(format!(
                "query {q}: candidate index {i}, expected below {} (the candidates)",
                bench.candidates.n()
            ));
        }
        if let Some(j) = (0..n_outputs).find(|&j| !bench.candidates.outputs[(i, j)].is_finite()) {
            return invalid(format!(
                "query {q}: candidate {i} has a non-finite output in column {j} (a run never \
                 queries one)"
            ));
        }
    }
    let unit = UnitBox::new(&bench.bounds)?;
    let d = unit.dims();
    let map = target_map(bench, scaling, d, n_outputs)?;
    let xi = unit.to_unit(bench.initial.x.as_ref(), "initial target inputs")?;
    let xc = unit.to_unit(bench.candidates.x.as_ref(), "candidate inputs")?;
    let n0 = xi.nrows();
    let row = |i: usize| {
        if i < n0 {
            (&xi, i)
        } else {
            (&xc, queries[i - n0])
        }
    };
    let x = Mat::from_fn(n0 + last, d, |i, c| {
        let (m, r) = row(i);
        m[(r, c)]
    });
    let y = map.transform_y(
        Mat::from_fn(n0 + last, n_outputs, |i, j| {
            if i < n0 {
                bench.initial.outputs[(i, j)]
            } else {
                bench.candidates.outputs[(queries[i - n0], j)]
            }
        })
        .as_ref(),
    );
    let column = |j: usize, n: usize| (0..n).map(|i| y[(i, j)]).collect::<Vec<f64>>();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| SafeError::Invalid(format!("cannot start the one-thread pool: {e}")))?;
    // Built outside the pool: the factory need not be shareable across threads.
    let mut models = build_models(
        bench,
        &unit,
        n_outputs,
        source_map(scaling, &map),
        make_model,
    )?;
    pool.install(move || {
        let mut out = LastRefit {
            n_source: bench.sources.iter().map(|s| s.n()).sum(),
            n_target: n0 + last,
            d,
            outputs: n_outputs,
            seconds: 0.0,
            log_evidence: Some(0.0),
            evaluations: 0,
            cpu_seconds: Some(0.0),
        };
        for (j, model) in models.iter_mut().enumerate() {
            if let Some(k) = previous {
                let n = n0 + k;
                model
                    .update(x.subrows(0, n), &column(j, n), true, fit_seed(seed, k, j))
                    .map_err(SafeError::model(j))?;
            }
            let n = n0 + last;
            let before = evaluations_on_this_thread();
            let cpu = thread_cpu_seconds();
            model
                .update(
                    x.subrows(0, n),
                    &column(j, n),
                    true,
                    fit_seed(seed, last, j),
                )
                .map_err(SafeError::model(j))?;
            out.evaluations += evaluations_on_this_thread() - before;
            let spent = cpu.zip(thread_cpu_seconds()).map(|(a, b)| b - a);
            out.cpu_seconds = out.cpu_seconds.zip(spent).map(|(a, b)| a + b);
            out.seconds += model.fit_seconds();
            out.log_evidence = out
                .log_evidence
                .zip(model.log_evidence())
                .map(|(a, b)| a + b);
        }
        Ok(out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_refits_follow_the_run_schedule() {
        // Every query: refits after 0, 1, …, 50 queries; the last two are 49 and 50.
        assert_eq!(last_refits(50, 1).unwrap(), (Some(49), 50));
        // Every 10 of 95: refits at 0, 10, …, 90.
        assert_eq!(last_refits(95, 10).unwrap(), (Some(80), 90));
        // Every 50 of 150 (GEngine): 0, 50, 100, 150.
        assert_eq!(last_refits(150, 50).unwrap(), (Some(100), 150));
        // Fewer queries than the interval: the first refit is the last.
        assert_eq!(last_refits(7, 10).unwrap(), (None, 0));
        assert_eq!(last_refits(0, 1).unwrap(), (None, 0));
        assert!(last_refits(5, 0).is_err());
    }
}
