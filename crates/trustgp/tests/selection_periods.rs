//! VBKS's data-driven PER periods (docs/decisions.md): the kernels start where the training
//! series' periodogram peaks, and this is what lets VBKS find a cycle whose period is far
//! from the spec's initial 1 (standardised units).

use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use trustgp::kernels::Kernel;
use trustgp::selection::{
    initial_periods, periodogram_peaks, BeliefConfig, KernelSpace, PeriodInit, Structure, Vbks,
    VbksConfig, DEFAULT_PERIOD_ALPHA,
};
use trustgp::Mat;

/// The periods of a kernel's PER factors, in the order of its expression.
fn periods(k: &Kernel) -> Vec<f64> {
    match k {
        Kernel::Base(b) => b.period().into_iter().collect(),
        Kernel::Sum(t) => t.iter().flat_map(periods).collect(),
        Kernel::Product(f, _) => f.iter().flat_map(periods).collect(),
    }
}

#[test]
fn per_factors_take_the_given_periods_in_expression_order_then_one() {
    let s = Structure::parse("per * se + per + per").unwrap();
    assert_eq!(s.period_count(), 3);
    assert_eq!(Structure::parse("se * lin").unwrap().period_count(), 0);
    // Canonical order: the product first, then the two lone PERs.
    assert_eq!(s.to_string(), "se * per + per + per");
    let k = s.instantiate_with_periods(1, &[0.3, 0.05]).unwrap();
    assert_eq!(periods(&k), vec![0.3, 0.05, 1.0]);
    // No periods given: the spec's initial values, exactly as `instantiate`.
    assert_eq!(
        s.instantiate_with_periods(1, &[]).unwrap(),
        s.instantiate(1).unwrap()
    );
    assert_eq!(periods(&s.instantiate(2).unwrap()), vec![1.0; 3]);
    assert!(s.instantiate_with_periods(1, &[-1.0]).is_err());
    assert!(s.instantiate_with_periods(0, &[0.3]).is_err());
}

#[test]
fn initial_periods_read_one_input_column_only() {
    let n = 200;
    let x = Mat::from_fn(n, 1, |i, _| i as f64 / 10.0);
    let y: Vec<f64> = (0..n)
        .map(|i| (2.0 * std::f64::consts::PI * i as f64 / 10.0 / 1.7).sin())
        .collect();
    let alpha = DEFAULT_PERIOD_ALPHA;
    let found = initial_periods(PeriodInit::Data, x.as_ref(), &y, 1, alpha);
    let p = found.periods();
    assert!((p[0] / 1.7 - 1.0).abs() < 0.01, "{p:?}");
    let search = found.search.unwrap();
    assert!(search.peaks[0].p_value < 1e-10, "{search:?}");
    let unit = initial_periods(PeriodInit::Unit, x.as_ref(), &y, 1, alpha);
    assert!(unit.periods().is_empty() && unit.search.is_none());
    let x2 = Mat::from_fn(n, 2, |i, j| (i + j) as f64);
    let several = initial_periods(PeriodInit::Data, x2.as_ref(), &y, 1, alpha);
    assert!(several.periods().is_empty() && several.search.is_none());
    // No PER factor in the space: nothing is computed.
    assert!(initial_periods(PeriodInit::Data, x.as_ref(), &y, 0, alpha)
        .search
        .is_none());
}

/// A trend plus a cycle of period 0.15 in standardised inputs (23 cycles over the data).
fn short_cycle(n: usize, period: f64) -> (Mat<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(8);
    let half = 3f64.sqrt();
    let x = Mat::from_fn(n, 1, |i, _| -half + 2.0 * half * i as f64 / (n - 1) as f64);
    let raw: Vec<f64> = (0..n)
        .map(|i| {
            let t = x[(i, 0)];
            let e: f64 = StandardNormal.sample(&mut rng);
            0.4 * t + (2.0 * std::f64::consts::PI * t / period).sin() + 0.1 * e
        })
        .collect();
    let mean = raw.iter().sum::<f64>() / n as f64;
    let sd = (raw.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
    (x, raw.iter().map(|v| (v - mean) / sd).collect())
}

#[test]
fn data_driven_periods_find_a_short_cycle_the_spec_init_misses() {
    let truth = 0.15;
    let (x, y) = short_cycle(400, truth);
    let space = KernelSpace::parse("se; lin; se + lin; per; se + per; per + lin").unwrap();
    let run = |init: PeriodInit| {
        let config = VbksConfig {
            inducing: 40,
            batch_size: 64,
            iterations: 300,
            checkpoints: 3,
            belief: BeliefConfig {
                cold_steps: 300,
                warm_steps: 100,
                ..BeliefConfig::default()
            },
            top: 3,
            period_init: init,
            seed: 5,
            ..VbksConfig::default()
        };
        Vbks::fit(x.as_ref(), &y, &space, &config, &mut |_| {}).unwrap()
    };
    // The posterior mass on kernels whose fitted PER periods include one within 2 % of the
    // truth.
    let found = |r: &Vbks| -> f64 {
        (0..space.len())
            .filter(|&i| {
                let k = r.models()[i].as_ref().unwrap().kernel();
                periods(k).iter().any(|p| (p / truth - 1.0).abs() < 0.02)
            })
            .map(|i| r.probabilities()[i])
            .sum()
    };
    let unit = run(PeriodInit::Unit);
    let data = run(PeriodInit::Data);
    let best = |r: &Vbks| r.local_elbos()[r.top().0[0]];
    assert!(found(&unit) < 0.5, "spec init: mass {}", found(&unit));
    assert!(found(&data) > 0.9, "data init: mass {}", found(&data));
    let lead = data.top().0[0];
    assert!(space.kernels()[lead].period_count() > 0);
    // The data-driven start reaches a far better local ELBO than any kernel of the spec's.
    assert!(
        best(&data) > best(&unit) + 50.0,
        "{} vs {}",
        best(&data),
        best(&unit)
    );
    // Seeded: the same run twice is bit-identical.
    assert_eq!(run(PeriodInit::Data).local_elbos(), data.local_elbos());
}

/// `n` regular rows of `f(t) + noise·ε` at t = 0, 1, …
fn noisy(n: usize, f: impl Fn(f64) -> f64, noise: f64, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let x: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let y = x
        .iter()
        .map(|&t| {
            let e: f64 = StandardNormal.sample(&mut rng);
            f(t) + noise * e
        })
        .collect();
    (x, y)
}

#[test]
fn series_without_a_cycle_offer_no_period() {
    let alpha = DEFAULT_PERIOD_ALPHA;
    // White noise: the strongest peak is looked at and rejected.
    let (x, y) = noisy(500, |_| 0.0, 1.0, 21);
    let s = periodogram_peaks(&x, &y, 2, alpha);
    assert!(s.peaks.is_empty(), "{s:?}");
    assert!(s.rejected.unwrap().p_value >= alpha, "{s:?}");
    assert_eq!(s.significant_ordinates, 0);
    // A pure linear trend: nothing is left after detrending.
    let (x, y) = noisy(500, |t| 3.0 - 0.02 * t, 0.0, 0);
    let s = periodogram_peaks(&x, &y, 2, alpha);
    assert!(s.peaks.is_empty() && s.rejected.is_none(), "{s:?}");
    // A linear trend with white noise: the noise is white after detrending.
    let (x, y) = noisy(800, |t| 3.0 - 0.02 * t, 0.5, 22);
    let s = periodogram_peaks(&x, &y, 2, alpha);
    assert!(s.peaks.is_empty(), "{s:?}");
    // VBKS then starts every PER factor at the spec's 1 (standardised units).
    let xs = Mat::from_fn(x.len(), 1, |i, _| (x[i] - 399.5) / 231.0);
    let ys: Vec<f64> = y.iter().map(|v| (v - 3.0 + 0.02 * 399.5) / 2.7).collect();
    let run = Vbks::fit(
        xs.as_ref(),
        &ys,
        &KernelSpace::parse("per; per + lin").unwrap(),
        &VbksConfig {
            inducing: 10,
            iterations: 2,
            checkpoints: 1,
            ..VbksConfig::default()
        },
        &mut |_| {},
    )
    .unwrap();
    let init = run.initial_periods();
    assert_eq!(init.init, PeriodInit::Data);
    assert!(init.search.as_ref().unwrap().peaks.is_empty());
    assert!(init.periods().is_empty());
}

#[test]
fn a_noisy_short_cycle_is_significant_and_found() {
    // Standardised inputs, a trend plus a cycle of period 0.15 under noise.
    let truth = 0.15;
    let (x, y) = short_cycle(400, truth);
    let col: Vec<f64> = (0..x.nrows()).map(|i| x[(i, 0)]).collect();
    let s = periodogram_peaks(&col, &y, 2, DEFAULT_PERIOD_ALPHA);
    assert!(!s.peaks.is_empty(), "{s:?}");
    let p = s.peaks[0];
    assert!((p.period / truth - 1.0).abs() < 0.02, "{s:?}");
    assert!(p.p_value < 1e-10, "{s:?}");
    // The second factor's start is the next distinct peak, taken with its p-value because
    // the first is significant; the search keeps no rejected peak then.
    assert_eq!(s.peaks.len(), 2, "{s:?}");
    assert!((s.peaks[1].period / truth - 1.0).abs() > 0.02, "{s:?}");
    assert!(s.peaks[1].p_value.is_finite() && s.peaks[1].p_value <= 1.0);
    assert!(s.rejected.is_none(), "{s:?}");
    // Buried in noise ten times its amplitude, the cycle is no longer significant.
    let mut rng = StdRng::seed_from_u64(3);
    let weak: Vec<f64> = col
        .iter()
        .map(|&t| {
            let e: f64 = StandardNormal.sample(&mut rng);
            0.1 * (2.0 * std::f64::consts::PI * t / truth).sin() + e
        })
        .collect();
    assert!(periodogram_peaks(&col, &weak, 2, DEFAULT_PERIOD_ALPHA)
        .peaks
        .is_empty());
}

#[test]
fn white_noise_is_flagged_at_the_level_asked() {
    // Over many seeded white-noise series the sequential test's first step rejects at rate
    // α (its null holds exactly but for the detrending); a period is only ever proposed when
    // the test rejected.
    let reps = 3000;
    for alpha in [0.01, 0.05] {
        let mut flagged = 0;
        for seed in 0..reps {
            let (x, y) = noisy(150, |_| 0.0, 1.0, 1000 + seed);
            let s = periodogram_peaks(&x, &y, 2, alpha);
            flagged += usize::from(s.significant_ordinates > 0);
            assert!(s.peaks.is_empty() || s.significant_ordinates > 0);
        }
        let expected = alpha * reps as f64;
        // Four binomial standard deviations.
        let tol = 4.0 * (expected * (1.0 - alpha)).sqrt();
        assert!(
            (flagged as f64 - expected).abs() < tol,
            "alpha {alpha}: {flagged} of {reps}, expected {expected} ± {tol}"
        );
    }
}
