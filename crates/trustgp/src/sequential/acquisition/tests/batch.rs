//! qEI and qLogEI on a fitted exact GP: against analytic EI (q = 1), against brute-force Monte
//! Carlo with independent pseudo-random samples, against their bounds and limits, and their
//! gradients against central finite differences.

use faer::{Mat, MatRef};

use super::super::normal::{cdf, pdf};
use super::super::{
    best_posterior_mean, Acquisition, BatchImprovement, BatchImprovementKind, Improvement,
    ImprovementKind, MarginalUtility, MonteCarloOptions, DEFAULT_TAU_MAX, DEFAULT_TAU_RELU,
};
use super::model::{fitted_gp, training_inputs};
use crate::posterior::Posterior;

/// How many standard errors a Monte Carlo estimate may be off.
const STANDARD_ERRORS: f64 = 5.0;
/// The most Sobol base samples.
const MANY: usize = 1 << 16;

fn options(samples: usize, seed: u32) -> MonteCarloOptions {
    MonteCarloOptions { samples, seed }
}

fn rows(points: &[[f64; 2]]) -> Mat<f64> {
    Mat::from_fn(points.len(), 2, |i, c| points[i][c])
}

/// A pending point near the data's best (sin(1.5 x₀) x₁ + 0.3 x₀ peaks at the corner (1, 2)).
fn pending() -> Mat<f64> {
    rows(&[[1.0, 1.8]])
}

/// A batch of three: near the best, and two outside the data, where the posterior is wide.
fn batch() -> Mat<f64> {
    rows(&[[1.2, 2.3], [2.6, -2.4], [-2.6, -2.5]])
}

#[test]
fn q_ei_of_one_point_is_analytic_ei() {
    let gp = fitted_gp();
    let none = Mat::<f64>::zeros(0, 2);
    let x = batch();
    for a in 0..x.nrows() {
        let row = x.subrows(a, 1);
        let m = gp.marginals(row).unwrap();
        let sd = m.var[0].sqrt();
        // Incumbents below and above the mean, so that every improvement is sizeable.
        for shift in [-0.5, 1.0] {
            let incumbent = m.mean[0] + shift * sd;
            let acq = BatchImprovement::new(
                &gp,
                BatchImprovementKind::Expected,
                incumbent,
                none.as_ref(),
                1,
                &options(MANY, 3),
            )
            .unwrap();
            let ei = Improvement::new(ImprovementKind::Expected, incumbent)
                .unwrap()
                .utility(m.mean[0], sd)
                .value;
            // Var[(f − f*)₊] = σ²[(z² + 1)Φ(z) + zφ(z)] − EI², for the standard error of an
            // average of independent samples (the Sobol set does better).
            let z = -shift;
            let second = sd * sd * ((z * z + 1.0) * cdf(z) + z * pdf(z));
            let se = ((second - ei * ei) / MANY as f64).sqrt();
            let got = acq.value(row).unwrap();
            assert!(
                (got - ei).abs() < STANDARD_ERRORS * se,
                "qEI {got} vs EI {ei} (se {se:.1e})"
            );
            // The scrambled Sobol set does far better on this 1-D expectation: observed
            // ~3e-6 relative (0.002 standard errors).
            assert!((got - ei).abs() < 3e-5 * ei, "qEI {got} vs EI {ei}");
        }
    }
}

#[test]
fn q_ei_matches_pseudo_random_monte_carlo() {
    let gp = fitted_gp();
    let best = best_posterior_mean(&gp, training_inputs().as_ref()).unwrap();
    let (p, x) = (pending(), batch());
    let acq = BatchImprovement::new(
        &gp,
        BatchImprovementKind::Expected,
        best,
        p.as_ref(),
        3,
        &options(MANY, 5),
    )
    .unwrap();
    let got = acq.value(x.as_ref()).unwrap();
    let all = rows(&[[1.0, 1.8], [1.2, 2.3], [2.6, -2.4], [-2.6, -2.5]]);
    let count = 100_000;
    let s = gp.sample_seeded(all.as_ref(), count, 17).unwrap();
    let utilities: Vec<f64> = (0..count)
        .map(|j| {
            (0..4)
                .map(|i| (s[(i, j)] - best).max(0.0))
                .fold(0.0, f64::max)
        })
        .collect();
    let mean = utilities.iter().sum::<f64>() / count as f64;
    let var = utilities.iter().map(|u| (u - mean).powi(2)).sum::<f64>() / count as f64;
    let se = (var / count as f64).sqrt();
    assert!(
        (got - mean).abs() < STANDARD_ERRORS * se,
        "qEI {got} vs brute force {mean} (se {se:.1e})"
    );
}

/// Central differences of `value` against `gradient` at `x`, relative tolerance `tol`.
fn check_gradient(acq: &BatchImprovement<'_>, x: MatRef<'_, f64>, tol: f64) {
    let (value, gradient) = acq.value_and_gradient(x).unwrap();
    assert_eq!(value, acq.value(x).unwrap());
    let step = 1e-6;
    for a in 0..x.nrows() {
        for c in 0..x.ncols() {
            let at = |h: f64| {
                let mut moved = x.to_owned();
                moved[(a, c)] += h;
                acq.value(moved.as_ref()).unwrap()
            };
            let fd = (at(step) - at(-step)) / (2.0 * step);
            let an = gradient[(a, c)];
            assert!(
                (fd - an).abs() <= tol * (an.abs() + 1e-3 * value.abs().max(1e-8)),
                "d/dx[{a},{c}]: {an} vs FD {fd}"
            );
        }
    }
}

#[test]
fn gradients_match_finite_differences() {
    let gp = fitted_gp();
    let best = best_posterior_mean(&gp, training_inputs().as_ref()).unwrap();
    let (p, x) = (pending(), batch());
    let none = Mat::<f64>::zeros(0, 2);
    for kind in [
        BatchImprovementKind::Expected,
        BatchImprovementKind::log_expected(),
        BatchImprovementKind::LogExpected {
            tau_max: 0.3,
            tau_relu: 0.05,
        },
    ] {
        for (pend, q) in [(p.as_ref(), 3), (none.as_ref(), 3), (p.as_ref(), 1)] {
            let acq = BatchImprovement::new(&gp, kind, best, pend, q, &options(256, 1)).unwrap();
            check_gradient(&acq, x.subrows(0, q), 1e-6);
        }
    }
}

#[test]
fn scoring_rows_is_scoring_batches_of_one() {
    let gp = fitted_gp();
    let best = best_posterior_mean(&gp, training_inputs().as_ref()).unwrap();
    let p = pending();
    let acq = BatchImprovement::new(
        &gp,
        BatchImprovementKind::log_expected(),
        best,
        p.as_ref(),
        1,
        &options(128, 2),
    )
    .unwrap();
    let x = batch();
    let g = acq.gradients(x.as_ref()).unwrap();
    assert_eq!(g.value, acq.values(x.as_ref()).unwrap());
    for a in 0..3 {
        let (v, grad) = acq.value_and_gradient(x.subrows(a, 1)).unwrap();
        assert_eq!(g.value[a], v);
        assert_eq!(g.gradient.row(a), grad.row(0));
    }
}

#[test]
fn q_log_ei_lies_within_its_smoothing_bounds_and_tends_to_log_q_ei() {
    let gp = fitted_gp();
    let best = best_posterior_mean(&gp, training_inputs().as_ref()).unwrap();
    let (p, x) = (pending(), batch());
    let build =
        |kind| BatchImprovement::new(&gp, kind, best, p.as_ref(), 3, &options(512, 9)).unwrap();
    let q_ei = build(BatchImprovementKind::Expected)
        .value(x.as_ref())
        .unwrap();
    assert!(q_ei > 0.0);
    // Four joint points: the pending one takes part in the max.
    let ln_m = 4f64.ln();
    for (tau_max, tau_relu) in [
        (DEFAULT_TAU_MAX, DEFAULT_TAU_RELU),
        (0.2, 0.01),
        (0.05, 1.0),
    ] {
        let got = build(BatchImprovementKind::LogExpected { tau_max, tau_relu })
            .value(x.as_ref())
            .unwrap();
        let upper = (q_ei + tau_relu * 2f64.ln()).ln() + tau_max * ln_m;
        assert!(
            q_ei.ln() <= got && got <= upper,
            "τ = ({tau_max}, {tau_relu}): log qEI {} ≤ qLogEI {got} ≤ {upper}",
            q_ei.ln()
        );
    }
    let limit = build(BatchImprovementKind::LogExpected {
        tau_max: 1e-9,
        tau_relu: 1e-12,
    })
    .value(x.as_ref())
    .unwrap();
    assert!((limit - q_ei.ln()).abs() < 1e-8, "{limit} vs {}", q_ei.ln());
}

#[test]
fn q_log_ei_stays_finite_where_q_ei_vanishes() {
    let gp = fitted_gp();
    // An incumbent far above anything the posterior allows: qEI is exactly 0.
    let none = Mat::<f64>::zeros(0, 2);
    let far = 1e3;
    let x = batch();
    let q_ei = BatchImprovement::new(
        &gp,
        BatchImprovementKind::Expected,
        far,
        none.as_ref(),
        3,
        &options(64, 0),
    )
    .unwrap();
    assert_eq!(q_ei.value(x.as_ref()).unwrap(), 0.0);
    let log = BatchImprovement::new(
        &gp,
        BatchImprovementKind::log_expected(),
        far,
        none.as_ref(),
        3,
        &options(64, 0),
    )
    .unwrap();
    let (v, g) = log.value_and_gradient(x.as_ref()).unwrap();
    assert!(v.is_finite() && v < -1e6, "{v}");
    assert!(g.col_iter().all(|c| c.iter().all(|d| d.is_finite())));
    assert!(g.col_iter().any(|c| c.iter().any(|&d| d != 0.0)));
    check_gradient(&log, x.as_ref(), 1e-6);
}

#[test]
fn the_same_seed_gives_the_same_acquisition() {
    let gp = fitted_gp();
    let (p, x) = (pending(), batch());
    let value = |seed| {
        BatchImprovement::new(
            &gp,
            BatchImprovementKind::log_expected(),
            0.5,
            p.as_ref(),
            3,
            &options(64, seed),
        )
        .unwrap()
        .value(x.as_ref())
        .unwrap()
    };
    assert_eq!(value(4), value(4));
    assert_ne!(value(4), value(5));
}

#[test]
fn invalid_settings_and_inputs_are_errors() {
    let gp = fitted_gp();
    let (p, x) = (pending(), batch());
    let new = |kind, incumbent, q, samples| {
        BatchImprovement::new(&gp, kind, incumbent, p.as_ref(), q, &options(samples, 0))
    };
    let expected = BatchImprovementKind::Expected;
    assert!(new(expected, f64::NAN, 1, 16).is_err());
    assert!(new(expected, 0.0, 0, 16).is_err());
    assert!(new(expected, 0.0, 1, 0).is_err());
    for (tau_max, tau_relu) in [(0.0, 1e-6), (1e-2, -1.0), (f64::INFINITY, 1e-6)] {
        let kind = BatchImprovementKind::LogExpected { tau_max, tau_relu };
        assert!(new(kind, 0.0, 1, 16).is_err());
    }
    let three = new(expected, 0.0, 3, 16).unwrap();
    assert!(three.value(x.subrows(0, 2)).is_err());
    assert!(three.values(x.as_ref()).is_err());
    let one = new(expected, 0.0, 1, 16).unwrap();
    assert!(one.value(Mat::<f64>::zeros(1, 3).as_ref()).is_err());
    let wide = Mat::<f64>::zeros(1, 3);
    let bad_pending = BatchImprovement::new(&gp, expected, 0.0, wide.as_ref(), 1, &options(16, 0));
    assert!(bad_pending.is_err());
}

#[test]
fn a_repeated_point_adds_nothing_to_q_ei() {
    let gp = fitted_gp();
    let best = best_posterior_mean(&gp, training_inputs().as_ref()).unwrap();
    let x = batch();
    let first = x.subrows(0, 1);
    let none = Mat::<f64>::zeros(0, 2);
    let build = |pending: MatRef<'_, f64>, q| {
        BatchImprovement::new(
            &gp,
            BatchImprovementKind::Expected,
            best,
            pending,
            q,
            &options(256, 0),
        )
        .unwrap()
    };
    let alone = build(none.as_ref(), 1).value(first).unwrap();
    assert!(alone > 0.0);
    // As a pending point and again as the candidate: the same samples, the same value.
    let same = |v: f64| (v - alone).abs() <= 1e-14 * alone;
    assert!(same(build(first, 1).value(first).unwrap()));
    let (v, g) = build(first, 1).value_and_gradient(first).unwrap();
    assert!(same(v));
    assert_eq!(g.row(0).iter().filter(|d| **d != 0.0).count(), 0);
    // Repeated inside a batch: the first copy carries the gradient of both.
    let twice = Mat::from_fn(2, 2, |_, c| first[(0, c)]);
    let (v, g) = build(none.as_ref(), 2)
        .value_and_gradient(twice.as_ref())
        .unwrap();
    assert!(same(v));
    let (_, g1) = build(none.as_ref(), 1).value_and_gradient(first).unwrap();
    for c in 0..2 {
        assert!((g[(0, c)] - g1[(0, c)]).abs() <= 1e-12 * g1[(0, c)].abs());
        assert_eq!(g[(1, c)], 0.0);
    }
}
