//! The BO-over-kernels baseline (VBKS spec §6.2, Malkomes et al. 2016): its evidences are the
//! VBKS candidates' local ELBOs, a full budget returns the exact argmax, on a small problem it
//! finds the best kernel within a smaller budget, it is seeded, and bad settings are errors.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, StandardNormal};
use trustgp::linalg::{Cholesky, Parallelism};
use trustgp::selection::{
    BeliefConfig, KernelBo, KernelBoConfig, KernelSpace, Structure, Vbks, VbksConfig, VbksMode,
};
use trustgp::Mat;

/// `n` standardised inputs on [−2, 2] and a draw of the GP with kernel `expr` (its initial
/// hyperparameters, period 0.7 for PER factors) plus noise 0.01, z-scored.
fn series_from(expr: &str, n: usize, seed: u64) -> (Mat<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut t: Vec<f64> = (0..n).map(|_| rng.random_range(-2.0..2.0)).collect();
    t.sort_by(f64::total_cmp);
    let x = Mat::from_fn(n, 1, |i, _| t[i]);
    let s = Structure::parse(expr).unwrap();
    let periods = vec![0.7; s.period_count()];
    let mut k = s.instantiate_with_periods(1, &periods).unwrap();
    k.initialize(x.as_ref()).unwrap();
    let mut cov = k.matrix(x.as_ref());
    for i in 0..n {
        cov[(i, i)] += 0.01;
    }
    let chol = Cholesky::factor(&cov, "test covariance", Parallelism::Sequential).unwrap();
    let z: Vec<f64> = (0..n).map(|_| StandardNormal.sample(&mut rng)).collect();
    let l = chol.l();
    let y: Vec<f64> = (0..n)
        .map(|i| (0..=i).map(|j| l[(i, j)] * z[j]).sum())
        .collect();
    let mean = y.iter().sum::<f64>() / n as f64;
    let sd = (y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
    (x, y.iter().map(|v| (v - mean) / sd).collect())
}

fn config() -> VbksConfig {
    VbksConfig {
        inducing: 20,
        batch_size: 64,
        iterations: 80,
        checkpoints: 1,
        belief: BeliefConfig {
            cold_steps: 200,
            warm_steps: 50,
            ..BeliefConfig::default()
        },
        seed: 5,
        ..VbksConfig::default()
    }
}

fn argmax(v: &[f64]) -> usize {
    (0..v.len()).fold(0, |b, i| if v[i] > v[b] { i } else { b })
}

#[test]
fn a_full_budget_evaluates_every_kernel_and_returns_the_exact_argmax() {
    let (x, y) = series_from("per * se + se", 160, 1);
    let space = KernelSpace::parse("se; lin; per * se + se; rq + lin").unwrap();
    let joint = Vbks::fit(x.as_ref(), &y, &space, &config(), &mut |_| {}).unwrap();
    let bo = KernelBoConfig {
        budget: 4,
        initial: 2,
        ..KernelBoConfig::default()
    };
    let run = KernelBo::fit(x.as_ref(), &y, &space, &config(), &bo, &mut |_| {}).unwrap();
    let mut seen: Vec<usize> = run.steps().iter().map(|s| s.kernel).collect();
    seen.sort_unstable();
    assert_eq!(seen, vec![0, 1, 2, 3]);
    // Each evidence is that kernel's L*_i of the VBKS run with the same seed (T3), bit for bit.
    for s in run.steps() {
        assert_eq!(s.evidence, joint.local_elbos()[s.kernel]);
    }
    assert_eq!(run.selected(), argmax(joint.local_elbos()));
    // The first two are the random design, the rest chosen by EI; `best` tracks the running max.
    assert!(run.steps()[..2].iter().all(|s| s.log_ei.is_none()));
    assert!(run.steps()[2..].iter().all(|s| s.log_ei.is_some()));
    let mut best = f64::NEG_INFINITY;
    for s in run.steps() {
        best = best.max(s.evidence);
        assert_eq!(joint.local_elbos()[s.best], best);
    }
    // It predicts with the selected kernel's own sparse GP.
    let xs = Mat::from_fn(4, 1, |i, _| -1.0 + 0.5 * i as f64);
    let p = run.model().unwrap().predict(xs.as_ref(), true).unwrap();
    let direct = joint.models()[run.selected()]
        .as_ref()
        .unwrap()
        .predict(xs.as_ref());
    assert_eq!(p.mean, direct.mean);
    // The distances are a symmetric matrix in [0, 1] with a zero diagonal.
    let d = run.distances();
    for a in 0..4 {
        assert_eq!(d[(a, a)], 0.0);
        for b in 0..4 {
            assert_eq!(d[(a, b)], d[(b, a)]);
            assert!((0.0..=1.0).contains(&d[(a, b)]));
        }
    }
}

#[test]
fn bo_finds_the_best_kernel_within_a_smaller_budget_and_is_seeded() {
    // Nine kernels: a smooth group (se, rq, se + lin), lin-only ones, and a periodic group
    // around the truth `per * se + se`; the truth has the best evidence.
    let (x, y) = series_from("per * se + se", 160, 2);
    let space = KernelSpace::parse(
        "se; lin; rq; lin * lin; se + lin; per * se + se; per * se; per + se; per * rq + se",
    )
    .unwrap();
    let vbks = VbksConfig {
        seed: 2,
        ..config()
    };
    let joint = Vbks::fit(x.as_ref(), &y, &space, &vbks, &mut |_| {}).unwrap();
    let best = argmax(joint.local_elbos());
    assert_eq!(best, 5);
    let bo = KernelBoConfig {
        budget: 4,
        initial: 2,
        ..KernelBoConfig::default()
    };
    let mut observed = Vec::new();
    let run = KernelBo::fit(x.as_ref(), &y, &space, &vbks, &bo, &mut |s| {
        observed.push(s.kernel)
    })
    .unwrap();
    assert_eq!(run.steps().len(), 4);
    assert_eq!(run.selected(), best, "steps: {:?}", run.steps());
    // The random design does not contain it: the first EI choice is the best kernel, the
    // nearest unevaluated neighbour of the best one evaluated.
    assert!(run.steps()[..2].iter().all(|s| s.kernel != best));
    assert_eq!(run.steps()[2].kernel, best);
    let again = KernelBo::fit(x.as_ref(), &y, &space, &vbks, &bo, &mut |_| {}).unwrap();
    let key = |r: &KernelBo| -> Vec<(usize, f64, Option<f64>)> {
        r.steps()
            .iter()
            .map(|s| (s.kernel, s.evidence, s.log_ei))
            .collect()
    };
    assert_eq!(key(&run), key(&again));
    assert_eq!(observed, key(&run).iter().map(|k| k.0).collect::<Vec<_>>());
    let xs = Mat::from_fn(3, 1, |i, _| 0.3 * i as f64);
    assert_eq!(
        run.model()
            .unwrap()
            .predict(xs.as_ref(), true)
            .unwrap()
            .mean,
        again
            .model()
            .unwrap()
            .predict(xs.as_ref(), true)
            .unwrap()
            .mean
    );
}

#[test]
fn bad_settings_are_clear_errors() {
    let (x, y) = series_from("se", 40, 3);
    let space = KernelSpace::parse("se; lin; per").unwrap();
    let err = |bo: KernelBoConfig, vbks: VbksConfig| {
        KernelBo::fit(x.as_ref(), &y, &space, &vbks, &bo, &mut |_| {})
            .unwrap_err()
            .to_string()
    };
    let base = KernelBoConfig {
        budget: 3,
        initial: 1,
        ..KernelBoConfig::default()
    };
    let e = err(
        KernelBoConfig {
            budget: 0,
            ..base.clone()
        },
        config(),
    );
    assert!(e.contains("budget") && e.contains("got 0"), "{e}");
    let e = err(
        KernelBoConfig {
            budget: 4,
            ..base.clone()
        },
        config(),
    );
    assert!(e.contains("budget") && e.contains("(3)"), "{e}");
    // The default budget (15) is more than this space holds.
    let e = err(KernelBoConfig::default(), config());
    assert!(e.contains("budget") && e.contains("got 15"), "{e}");
    let e = err(
        KernelBoConfig {
            initial: 0,
            ..base.clone()
        },
        config(),
    );
    assert!(e.contains("initial"), "{e}");
    let e = err(
        KernelBoConfig {
            initial: 4,
            ..base.clone()
        },
        config(),
    );
    assert!(e.contains("initial"), "{e}");
    let e = err(
        KernelBoConfig {
            draws: 0,
            ..base.clone()
        },
        config(),
    );
    assert!(e.contains("draw"), "{e}");
    let e = err(
        KernelBoConfig {
            subset: 0,
            ..base.clone()
        },
        config(),
    );
    assert!(e.contains("subset"), "{e}");
    let full = VbksConfig {
        mode: VbksMode::Full,
        ..config()
    };
    let e = err(base.clone(), full);
    assert!(e.contains("mode point"), "{e}");
    let many = VbksConfig {
        inducing: 500,
        ..config()
    };
    let e = err(base, many);
    assert!(e.contains("inducing"), "{e}");
}
