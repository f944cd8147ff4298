use std::sync::{Arc, Mutex};

use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

use super::model::{FixedGp, UpdateLog};
use crate::models::ModelError;
use crate::sequential::safe::{
    run_benchmark, Constraint, FunctionModel, SafeBenchmark, SafeError, SafeRun, SafeRunOptions,
    SafetyGrid, SalFit, SourceTask, StopReason, TargetScaling, TaskData,
};

/// The safety function of the paper's Fig. 2 (two safe regions about 0.7 apart).
fn q(x: f64) -> f64 {
    (10.0 * x.powi(3) - 5.0 * x - 10.0).sin() + x * x / 3.0 - 0.5
}

fn f(x: f64) -> f64 {
    (3.0 * x).cos() + x
}

/// Outputs at `x`: `[f, q]` or `[q]` (f = q), plus noise of sd `noise`.
fn outputs(xs: &[f64], two: bool, noise: f64, rng: &mut StdRng) -> Mat<f64> {
    let cols = if two { 2 } else { 1 };
    Mat::from_fn(xs.len(), cols, |i, j| {
        let e: f64 = rng.sample(StandardNormal);
        let v = if two && j == 0 { f(xs[i]) } else { q(xs[i]) };
        v + noise * e
    })
}

fn task(xs: &[f64], y: Mat<f64>) -> TaskData {
    TaskData {
        x: Mat::from_fn(xs.len(), 1, |i, _| xs[i]),
        outputs: y,
    }
}

/// A GP1D-like benchmark on [−1, 0.9]: safe where q ≥ 0, initial data in the left region.
pub(super) fn gp1d(two: bool, seed: u64) -> SafeBenchmark {
    let mut rng = StdRng::seed_from_u64(seed);
    let (lo, hi) = (-1.0, 0.9);
    let cand: Vec<f64> = (0..300).map(|_| rng.random_range(lo..hi)).collect();
    let init: Vec<f64> = (0..6).map(|_| rng.random_range(-0.84..-0.72)).collect();
    let src: Vec<f64> = (0..150).map(|_| rng.random_range(lo..hi)).collect();
    let mut test = Vec::new();
    while test.len() < 200 {
        let x = rng.random_range(lo..hi);
        if q(x) >= 0.0 {
            test.push(x);
        }
    }
    let grid_x: Vec<f64> = (0..100).map(|i| lo + (hi - lo) * i as f64 / 99.0).collect();
    let candidates = task(&cand, outputs(&cand, two, 0.1, &mut rng));
    let initial = task(&init, outputs(&init, two, 0.1, &mut rng));
    let sources = vec![task(&src, outputs(&src, two, 0.1, &mut rng))];
    let test = task(&test, outputs(&test, two, 0.0, &mut rng));
    SafeBenchmark {
        name: "gp1d-test".into(),
        bounds: vec![(lo, hi)],
        constraints: vec![Constraint {
            output: usize::from(two),
            lower: Some(0.0),
            upper: None,
        }],
        sources,
        initial,
        candidate_safe: cand.iter().map(|&x| q(x) >= 0.0).collect(),
        candidates,
        pool_size: None,
        test,
        grid: Some(SafetyGrid {
            shape: vec![100],
            points: Mat::from_fn(100, 1, |i, _| grid_x[i]),
            safe: grid_x.iter().map(|&x| q(x) >= 0.0).collect(),
        }),
        n_query: 25,
        refit_every: 1,
        sal_fit: SalFit::Simulator,
    }
}

type Factory = dyn Fn(usize, Vec<SourceTask>) -> Result<Box<dyn FunctionModel>, ModelError>;

fn sal() -> Box<Factory> {
    Box::new(|_, _| Ok(Box::new(FixedGp::new(0.1, 1.0, 0.05)) as Box<dyn FunctionModel>))
}

fn run(bench: &SafeBenchmark, factory: &Factory, options: &SafeRunOptions, seed: u64) -> SafeRun {
    run_benchmark(bench, factory, options, seed, None).unwrap()
}

#[test]
fn run_records_are_consistent() {
    let bench = gp1d(true, 1);
    let calls = Arc::new(Mutex::new(Vec::new()));
    let c2 = calls.clone();
    let progress = move |done: usize, total: usize| c2.lock().unwrap().push((done, total));
    let options = SafeRunOptions {
        target_scaling: TargetScaling::Sources,
        ..SafeRunOptions::default()
    };
    let r = run_benchmark(&bench, &*sal(), &options, 7, Some(&progress)).unwrap();
    assert_eq!(r.stop, StopReason::Completed);
    assert_eq!(r.queries.len(), 25);
    assert_eq!(
        *calls.lock().unwrap(),
        (1..=25).map(|k| (k, 25)).collect::<Vec<_>>()
    );
    // Each candidate at most once; its record matches the benchmark.
    let mut seen = std::collections::HashSet::new();
    let alpha = crate::sequential::safe::safe_set::alpha_from_beta(4.0).unwrap();
    for q in &r.queries {
        assert!(seen.insert(q.index), "candidate {} queried twice", q.index);
        assert!((q.x[0] - bench.candidates.x[(q.index, 0)]).abs() < 1e-12);
        assert_eq!(q.safe, bench.candidate_safe[q.index]);
        assert_eq!(q.safety_probability.len(), 1);
        assert!(q.safety_probability[0] >= 1.0 - alpha - 1e-12);
        assert_eq!(q.fit_seconds, 0.0);
    }
    // A report per query; the pool shrinks by exactly one per query.
    assert_eq!(r.metrics.len(), 26);
    for (k, m) in r.metrics.iter().enumerate() {
        assert_eq!(m.queries, k);
        assert_eq!(m.pool_size, 300 - k);
        let unsafe_so_far = r.queries[..k].iter().filter(|q| !q.safe).count();
        assert_eq!(m.unsafe_query_ratio, unsafe_so_far as f64 / 25.0);
        assert!(m.tp_area + m.fp_area <= 1.0 && m.rmse.is_finite());
        assert_eq!(
            m.safe_set_size as f64,
            ((m.tp_area + m.fp_area) * m.pool_size as f64).round()
        );
    }
    let safe = r.queries.iter().filter(|q| q.safe).count();
    assert_eq!(r.safe_query_ratio, Some(safe as f64 / 25.0));
    assert_eq!(r.regions_explored, Some(1));
    // The initial data certify part of the seed region.
    assert!(r.metrics[0].tp_area > 0.02);
    assert_eq!(r.training_seconds, vec![0.0, 0.0]);
    // JSON round trip.
    let json = serde_json::to_string(&r).unwrap();
    let back: SafeRun = serde_json::from_str(&json).unwrap();
    assert_eq!(back, r);
}

fn without_time(mut r: SafeRun) -> String {
    r.seconds = 0.0;
    serde_json::to_string(&r).unwrap()
}

#[test]
fn seeded_runs_are_bit_identical_and_subsets_are_fresh() {
    let mut bench = gp1d(true, 2);
    bench.pool_size = Some(60);
    let options = SafeRunOptions {
        n_query: Some(12),
        ..SafeRunOptions::default()
    };
    let a = run(&bench, &*sal(), &options, 5);
    let b = run(&bench, &*sal(), &options, 5);
    assert_eq!(without_time(a.clone()), without_time(b));
    assert!(a.metrics.iter().all(|m| m.pool_size == 60));
    let mut seen = std::collections::HashSet::new();
    assert!(a.queries.iter().all(|q| seen.insert(q.index)));
    let c = run(&bench, &*sal(), &options, 6);
    assert_ne!(
        a.queries.iter().map(|q| q.index).collect::<Vec<_>>(),
        c.queries.iter().map(|q| q.index).collect::<Vec<_>>()
    );
}

#[test]
fn refits_follow_the_schedule_and_reports_the_refits() {
    let bench = gp1d(true, 3);
    let logs: Arc<Mutex<Vec<UpdateLog>>> = Arc::default();
    let l2 = logs.clone();
    let factory =
        move |_: usize, _: Vec<SourceTask>| -> Result<Box<dyn FunctionModel>, ModelError> {
            let m = FixedGp::new(0.1, 1.0, 0.05);
            l2.lock().unwrap().push(m.log.clone());
            Ok(Box::new(m))
        };
    let options = SafeRunOptions {
        n_query: Some(7),
        refit_every: Some(3),
        ..SafeRunOptions::default()
    };
    let r = run(&bench, &factory, &options, 9);
    let logs = logs.lock().unwrap();
    assert_eq!(logs.len(), 2, "one model per output column");
    let mut seeds = std::collections::HashSet::new();
    for log in logs.iter() {
        let log = log.lock().unwrap();
        assert_eq!(log.len(), 8);
        for (k, &(rows, refit, seed)) in log.iter().enumerate() {
            assert_eq!(rows, 6 + k);
            assert_eq!(refit, k % 3 == 0);
            assert!(seeds.insert(seed), "seed reused");
        }
    }
    assert_eq!(
        r.metrics.iter().map(|m| m.queries).collect::<Vec<_>>(),
        vec![0, 3, 6, 7]
    );
}

#[test]
fn empty_safe_set_stops_without_a_query() {
    let mut bench = gp1d(false, 4);
    bench.constraints[0].lower = Some(50.0);
    let r = run(&bench, &*sal(), &SafeRunOptions::default(), 1);
    assert_eq!(r.stop, StopReason::EmptySafeSet);
    assert!(r.queries.is_empty());
    assert_eq!(r.metrics.len(), 1);
    assert_eq!(r.metrics[0].safe_set_size, 0);
    assert_eq!(r.safe_query_ratio, None);
    assert_eq!(r.regions_explored, Some(1));
}

/// `bench` with outputs `a y + b` (thresholds alike) and inputs `c x + e`.
fn rescaled(bench: &SafeBenchmark, a: f64, b: f64, c: f64, e: f64) -> SafeBenchmark {
    let y = |t: &TaskData, shift: f64| TaskData {
        x: Mat::from_fn(t.x.nrows(), t.x.ncols(), |i, j| c * t.x[(i, j)] + e),
        outputs: Mat::from_fn(t.outputs.nrows(), t.outputs.ncols(), |i, j| {
            a * t.outputs[(i, j)] + shift
        }),
    };
    let mut out = bench.clone();
    out.bounds = bench
        .bounds
        .iter()
        .map(|&(lo, hi)| (c * lo + e, c * hi + e))
        .collect();
    out.candidates = y(&bench.candidates, b);
    out.initial = y(&bench.initial, b);
    out.test = y(&bench.test, b);
    out.sources = bench.sources.iter().map(|s| y(s, b)).collect();
    for con in &mut out.constraints {
        con.lower = con.lower.map(|t| a * t + b);
        con.upper = con.upper.map(|t| a * t + b);
    }
    if let Some(g) = &mut out.grid {
        g.points = Mat::from_fn(g.points.nrows(), g.points.ncols(), |i, j| {
            c * g.points[(i, j)] + e
        });
    }
    out
}

#[test]
fn units_do_not_matter() {
    let bench = gp1d(true, 5);
    for target_scaling in [TargetScaling::InitialData, TargetScaling::Sources] {
        let options = SafeRunOptions {
            n_query: Some(10),
            target_scaling,
            ..SafeRunOptions::default()
        };
        let r = run(&bench, &*sal(), &options, 3);
        // Inputs scaled by a power of two map to the same unit box bit for bit, so entropies
        // (which depend on the inputs only) tie exactly as before; outputs move by any affine map.
        let s = run(&rescaled(&bench, 7.0, 3.0, 4.0, 0.0), &*sal(), &options, 3);
        let idx = |r: &SafeRun| r.queries.iter().map(|q| q.index).collect::<Vec<_>>();
        assert_eq!(idx(&r), idx(&s));
        for (m, n) in r.metrics.iter().zip(&s.metrics) {
            assert!(
                (n.rmse - 7.0 * m.rmse).abs() < 1e-9 * n.rmse,
                "{} vs {}",
                n.rmse,
                m.rmse
            );
            assert_eq!((m.tp_area, m.fp_area), (n.tp_area, n.fp_area));
        }
        for (q, p) in r.queries.iter().zip(&s.queries) {
            assert!((p.x[0] - 4.0 * q.x[0]).abs() < 1e-12);
        }
        assert_eq!(r.regions_explored, s.regions_explored);
    }
}

#[test]
fn source_data_reach_the_second_safe_region_and_sal_does_not() {
    // A model pooling the source data (mapped to the target's units, as a perfectly informed
    // transfer would) with the target's: far from the target data it is confident too.
    let bench = gp1d(false, 6);
    let pooled =
        move |_: usize, sources: Vec<SourceTask>| -> Result<Box<dyn FunctionModel>, ModelError> {
            Ok(Box::new(FixedGp::pooled(0.1, 1.0, 0.05, sources)))
        };
    // The target in the sources' units, so that the pooled data share them (and T' ≈ 0.4, not
    // the ≈ −5 of the clustered initial data).
    let options = SafeRunOptions {
        target_scaling: TargetScaling::Sources,
        ..SafeRunOptions::default()
    };
    let transfer = run(&bench, &pooled, &options, 1);
    let single = run(&bench, &*sal(), &options, 1);
    assert_eq!(single.regions_explored, Some(1), "SAL left the seed region");
    assert_eq!(
        transfer.regions_explored,
        Some(2),
        "transfer did not reach the second region"
    );
    // In the paper's terms: larger TP area at the end.
    assert!(transfer.metrics.last().unwrap().tp_area > single.metrics.last().unwrap().tp_area);
}

#[test]
fn nan_candidates_are_never_offered() {
    let mut bench = gp1d(true, 7);
    bench.candidates.outputs[(17, 1)] = f64::NAN;
    let r = run(
        &bench,
        &*sal(),
        &SafeRunOptions {
            n_query: Some(5),
            ..SafeRunOptions::default()
        },
        1,
    );
    assert_eq!(r.excluded_candidates, vec![17]);
    assert_eq!(r.metrics[0].pool_size, 299);
    assert!(r.queries.iter().all(|q| q.index != 17));
}

#[test]
fn bad_benchmarks_and_options_are_clear_errors() {
    let good = gp1d(true, 8);
    let check = |bench: &SafeBenchmark, options: &SafeRunOptions, factory: &Factory, want: &str| {
        let e = run_benchmark(bench, factory, options, 0, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{e} should contain {want}");
    };
    let o = SafeRunOptions::default();
    check(
        &good,
        &SafeRunOptions {
            refit_every: Some(0),
            ..o.clone()
        },
        &*sal(),
        "refit_every",
    );
    check(
        &good,
        &SafeRunOptions {
            report_every: Some(0),
            ..o.clone()
        },
        &*sal(),
        "report_every",
    );
    check(
        &good,
        &SafeRunOptions {
            chunk_size: 0,
            ..o.clone()
        },
        &*sal(),
        "chunk_size",
    );
    let mut b = good.clone();
    b.candidate_safe.pop();
    check(&b, &o, &*sal(), "candidate_safe has 299 flags for 300");
    let mut b = good.clone();
    b.constraints[0].output = 3;
    check(&b, &o, &*sal(), "output column 3");
    let mut b = good.clone();
    b.pool_size = Some(0);
    check(&b, &o, &*sal(), "pool_size");
    let mut b = good.clone();
    b.bounds = vec![(1.0, -1.0)];
    check(&b, &o, &*sal(), "lo < hi");
    let mut b = good.clone();
    b.sources[0].outputs = Mat::zeros(150, 1);
    check(&b, &o, &*sal(), "source task 0");
    let mut b = good.clone();
    b.initial.x[(2, 0)] = f64::INFINITY;
    check(&b, &o, &*sal(), "row 2, column 0");
    let mut b = good.clone();
    b.sources.clear();
    check(
        &b,
        &SafeRunOptions {
            target_scaling: TargetScaling::Sources,
            ..o.clone()
        },
        &*sal(),
        "needs source data",
    );
    let failing = |j: usize, _: Vec<SourceTask>| -> Result<Box<dyn FunctionModel>, ModelError> {
        Err(ModelError::Invalid(format!("no model {j}")))
    };
    let e = run_benchmark(&good, &failing, &o, 0, None).unwrap_err();
    assert!(matches!(e, SafeError::Model { output: 0, .. }), "{e}");
}
