//! The replay of a run's last refit (`replay.rs`) sees the run's own data, sizes and seeds.

use std::sync::{Arc, Mutex};

use faer::Mat;

use super::model::{FixedGp, UpdateLog};
use super::run::gp1d;
use crate::models::transfer::{SingleTaskGp, TransferFitOptions};
use crate::models::ModelError;
use crate::sequential::safe::replay::replay_last_refit;
use crate::sequential::safe::run::fit_seed;
use crate::sequential::safe::{
    function_model_with, run_benchmark, FunctionModel, SafeError, SafeRunOptions, SalFit,
    SourceTask, TargetScaling, TransferMethod,
};

type Factory = dyn Fn(usize, Vec<SourceTask>) -> Result<Box<dyn FunctionModel>, ModelError>;

/// A factory of logging fixed GPs and the logs of the models it built.
fn logging() -> (Box<Factory>, Arc<Mutex<Vec<UpdateLog>>>) {
    let logs: Arc<Mutex<Vec<UpdateLog>>> = Arc::default();
    let l2 = logs.clone();
    let factory =
        move |_: usize, _: Vec<SourceTask>| -> Result<Box<dyn FunctionModel>, ModelError> {
            let m = FixedGp::new(0.1, 1.0, 0.05);
            l2.lock().unwrap().push(m.log.clone());
            Ok(Box::new(m))
        };
    (Box::new(factory), logs)
}

#[test]
fn the_replay_refits_at_the_runs_last_two_refits_with_its_seeds() {
    let bench = gp1d(true, 4);
    let options = SafeRunOptions {
        n_query: Some(7),
        refit_every: Some(3),
        target_scaling: TargetScaling::Identity,
        ..SafeRunOptions::default()
    };
    let (factory, run_logs) = logging();
    let run = run_benchmark(&bench, &*factory, &options, 11, None).unwrap();
    let queries: Vec<usize> = run.queries.iter().map(|q| q.index).collect();
    assert_eq!(queries.len(), 7);
    let (factory, replay_logs) = logging();
    let r = replay_last_refit(&bench, &queries, 3, TargetScaling::Identity, &*factory, 11).unwrap();
    // Refits after 0, 3, 6 queries: the last two saw 6 + 3 and 6 + 6 rows.
    assert_eq!((r.n_target, r.d, r.outputs, r.n_source), (12, 1, 2, 150));
    let run_logs = run_logs.lock().unwrap();
    let replay_logs = replay_logs.lock().unwrap();
    assert_eq!(replay_logs.len(), 2);
    for (run_log, replay_log) in run_logs.iter().zip(replay_logs.iter()) {
        let run_log = run_log.lock().unwrap();
        let refits: Vec<(usize, bool, u64)> = run_log.iter().filter(|u| u.1).copied().collect();
        assert_eq!(refits.len(), 3);
        assert_eq!(*replay_log.lock().unwrap(), refits[1..].to_vec());
    }
    // A fixed model reports no fit and no evidence; nothing was optimised.
    assert_eq!((r.seconds, r.log_evidence, r.evaluations), (0.0, None, 0));
    assert!(r.cpu_seconds.is_none_or(|c| c >= 0.0));
}

#[test]
fn the_replayed_fit_is_the_fit_on_the_runs_data_rebuilt_by_hand() {
    // SAL on (f, q) of a 5-query run refitted every 2 queries: the replay refits after 2 and
    // 4 queries; the same fits on the data rebuilt from the run's records (queried inputs
    // mapped to the unit interval, outputs as stored) reach the same evidence.
    let bench = gp1d(true, 5);
    // SAL's factory drops the source data, as the experiments' runs do.
    let sal = |_: usize, _: Vec<SourceTask>| {
        function_model_with(TransferMethod::None, Vec::new(), None, SalFit::Simulator)
    };
    let options = SafeRunOptions {
        n_query: Some(5),
        refit_every: Some(2),
        target_scaling: TargetScaling::Identity,
        ..SafeRunOptions::default()
    };
    let run = run_benchmark(&bench, &sal, &options, 3, None).unwrap();
    let queries: Vec<usize> = run.queries.iter().map(|q| q.index).collect();
    let r = replay_last_refit(&bench, &queries, 2, TargetScaling::Identity, &sal, 3).unwrap();
    assert_eq!(r.n_target, 6 + 4);
    let (lo, hi) = bench.bounds[0];
    let n0 = bench.initial.n();
    let xs: Vec<f64> = (0..n0)
        .map(|i| bench.initial.x[(i, 0)])
        .chain(run.queries.iter().map(|q| q.x[0]))
        .map(|x| (x - lo) / (hi - lo))
        .collect();
    let mut evidence = 0.0;
    for j in 0..2 {
        let ys: Vec<f64> = (0..n0)
            .map(|i| bench.initial.outputs[(i, j)])
            .chain(queries.iter().map(|&c| bench.candidates.outputs[(c, j)]))
            .collect();
        let mut gp = SingleTaskGp::new(TransferFitOptions::single_task());
        for k in [2, 4] {
            let x = Mat::from_fn(n0 + k, 1, |i, _| xs[i]);
            gp.update(x.as_ref(), &ys[..n0 + k], true, fit_seed(3, k, j))
                .unwrap();
        }
        evidence += gp.log_evidence().unwrap();
    }
    let replayed = r.log_evidence.unwrap();
    assert!(
        (replayed - evidence).abs() <= 1e-9 * evidence.abs().max(1.0),
        "{replayed} vs {evidence}"
    );
    assert!(r.evaluations > 0 && r.seconds > 0.0);
    // The kernel updates a running thread's CPU time lazily (at ticks and switches), so a
    // sub-millisecond fit may read 0; never negative.
    if let Some(cpu) = r.cpu_seconds {
        assert!(cpu >= 0.0, "{cpu}");
    }
}

#[test]
fn bad_queries_are_clear_errors() {
    let bench = gp1d(true, 6);
    let (factory, _) = logging();
    let n = bench.candidates.n();
    let err =
        replay_last_refit(&bench, &[0, n], 1, TargetScaling::Identity, &*factory, 0).unwrap_err();
    assert!(
        matches!(&err, SafeError::Invalid(m) if m.contains("query 1") && m.contains(&n.to_string())),
        "{err}"
    );
    let mut nan = bench.clone();
    nan.candidates.outputs[(2, 1)] = f64::NAN;
    let err = replay_last_refit(&nan, &[2], 1, TargetScaling::Identity, &*factory, 0).unwrap_err();
    assert!(err.to_string().contains("column 1"), "{err}");
    let err =
        replay_last_refit(&bench, &[0], 0, TargetScaling::Identity, &*factory, 0).unwrap_err();
    assert!(err.to_string().contains("refit_every"), "{err}");
}
