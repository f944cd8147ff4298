//! The acquisitions on a fitted exact GP: against Monte Carlo from its posterior, and their
//! input gradients against central finite differences.

use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::super::normal::cdf;
use super::super::{
    best_posterior_mean, best_posterior_mean_row, Acquisition, Analytic, Improvement,
    ImprovementKind, MarginalUtility, UpperConfidenceBound,
};
use crate::fit::FitOptions;
use crate::kernels::Kernel;
use crate::means::Mean;
use crate::models::exact::ExactGp;
use crate::models::hyper::GpHyper;
use crate::posterior::Posterior;

/// Monte Carlo samples per candidate.
const SAMPLES: usize = 100_000;
/// How many standard errors a Monte Carlo estimate may be off.
const STANDARD_ERRORS: f64 = 5.0;

fn uniform(rows: usize, cols: usize, lo: f64, hi: f64, seed: u64) -> Mat<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    Mat::from_fn(rows, cols, |_, _| rng.random_range(lo..hi))
}

/// The training inputs of [`fitted_gp`].
pub(super) fn training_inputs() -> Mat<f64> {
    uniform(15, 2, -2.0, 2.0, 11)
}

/// An exact GP fitted (hyperparameters optimised) to a noisy smooth function on `[-2, 2]²`.
pub(super) fn fitted_gp() -> ExactGp {
    let x = training_inputs();
    let e = uniform(15, 1, -0.05, 0.05, 12);
    let y: Vec<f64> = (0..15)
        .map(|i| (1.5 * x[(i, 0)]).sin() * x[(i, 1)] + 0.3 * x[(i, 0)] + e[(i, 0)])
        .collect();
    let init = GpHyper {
        kernel: Kernel::parse("const(var=1.0) * se(ls=[1.0, 1.0])").unwrap(),
        mean: Mean::Constant { c: 0.0 },
        noise: 0.01,
    };
    ExactGp::fit(x.as_ref(), &y, init, &FitOptions::default()).unwrap()
}

/// Candidates inside the data, at its edge and outside it (large posterior variance).
fn candidates() -> Mat<f64> {
    Mat::from_fn(5, 2, |i, c| {
        [
            [0.3, -0.4],
            [1.1, 1.6],
            [-1.7, 0.9],
            [2.6, -2.4],
            [-0.9, -1.3],
        ][i][c]
    })
}

/// Every acquisition over `incumbent`, with its name.
fn acquisitions(gp: &ExactGp, incumbent: f64) -> Vec<(String, Box<dyn Acquisition + '_>)> {
    let mut all: Vec<(String, Box<dyn Acquisition + '_>)> = [
        ImprovementKind::Expected,
        ImprovementKind::LogExpected,
        ImprovementKind::Probability,
        ImprovementKind::LogProbability,
    ]
    .into_iter()
    .map(|kind| {
        let acq = Analytic::new(gp, Improvement::new(kind, incumbent).unwrap());
        (
            format!("{kind:?}"),
            Box::new(acq) as Box<dyn Acquisition + '_>,
        )
    })
    .collect();
    let ucb = Analytic::new(gp, UpperConfidenceBound::new(2.5).unwrap());
    all.push(("UCB".into(), Box::new(ucb)));
    all
}

/// Sample mean of `values` and its standard error.
fn mean_and_standard_error(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

#[test]
fn incumbent_is_the_best_posterior_mean_at_the_training_inputs() {
    let gp = fitted_gp();
    let x = training_inputs();
    let predicted = gp.predict(x.as_ref(), true).unwrap();
    let best = predicted
        .mean
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(best_posterior_mean(&gp, x.as_ref()).unwrap(), best);
    // The row: the first whose predicted mean is the maximum.
    let row = predicted.mean.iter().position(|&m| m == best).unwrap();
    assert_eq!(
        best_posterior_mean_row(&gp, x.as_ref()).unwrap(),
        (row, best)
    );
    let none = Mat::<f64>::zeros(0, 2);
    for e in [
        best_posterior_mean(&gp, none.as_ref()).unwrap_err(),
        best_posterior_mean_row(&gp, none.as_ref()).unwrap_err(),
    ] {
        assert!(
            e.to_string().contains("at least one evaluated input"),
            "{e}"
        );
    }
}

#[test]
fn acquisitions_match_monte_carlo_from_the_posterior() {
    let gp = fitted_gp();
    let xs = candidates();
    let m = gp.marginals(xs.as_ref()).unwrap();
    let samples = gp.sample_seeded(xs.as_ref(), SAMPLES, 2023).unwrap();
    let beta = 2.5;
    let ucb = Analytic::new(&gp, UpperConfidenceBound::new(beta).unwrap())
        .values(xs.as_ref())
        .unwrap();
    // One incumbent per candidate, at a standardised distance z where the improvement is
    // neither certain nor negligible, so that each comparison can fail.
    for (a, z) in [-1.2, 0.4, -0.3, 0.9, -2.0].into_iter().enumerate() {
        let incumbent = m.mean[a] - z * m.var[a].sqrt();
        let row = xs.subrows(a, 1);
        let value = |kind| {
            Analytic::new(&gp, Improvement::new(kind, incumbent).unwrap())
                .values(row)
                .unwrap()[0]
        };
        let f: Vec<f64> = (0..SAMPLES).map(|j| samples[(a, j)]).collect();
        let improvement: Vec<f64> = f.iter().map(|v| (v - incumbent).max(0.0)).collect();
        let (ei_mc, ei_se) = mean_and_standard_error(&improvement);
        let ei = value(ImprovementKind::Expected);
        let log_ei = value(ImprovementKind::LogExpected);
        for (name, got) in [("EI", ei), ("exp(LogEI)", log_ei.exp())] {
            assert!(
                (got - ei_mc).abs() <= STANDARD_ERRORS * ei_se,
                "{name} at candidate {a}: {got}, Monte Carlo {ei_mc} ± {ei_se}"
            );
        }
        let above: Vec<f64> = f
            .iter()
            .map(|&v| f64::from(u8::from(v > incumbent)))
            .collect();
        let (pi_mc, pi_se) = mean_and_standard_error(&above);
        let pi = value(ImprovementKind::Probability);
        let log_pi = value(ImprovementKind::LogProbability);
        for (name, got) in [("PI", pi), ("exp(log PI)", log_pi.exp())] {
            assert!(
                (got - pi_mc).abs() <= STANDARD_ERRORS * pi_se,
                "{name} at candidate {a}: {got}, Monte Carlo {pi_mc} ± {pi_se}"
            );
        }
        // UCB is the Φ(√β) quantile: that fraction of the samples lies below it.
        let below: Vec<f64> = f
            .iter()
            .map(|&v| f64::from(u8::from(v <= ucb[a])))
            .collect();
        let (q_mc, q_se) = mean_and_standard_error(&below);
        let q = cdf(beta.sqrt());
        assert!(
            (q - q_mc).abs() <= STANDARD_ERRORS * q_se,
            "UCB at candidate {a}: {q_mc} ± {q_se} of the samples below it, want {q}"
        );
    }
}

/// Central differences of each acquisition's value against its gradient, every candidate and
/// input column.
fn check_input_gradients(gp: &ExactGp, incumbent: f64, only_logs: bool) {
    let xs = candidates();
    let step = 1e-5;
    for (name, acq) in acquisitions(gp, incumbent) {
        if only_logs && !name.starts_with("Log") {
            continue;
        }
        let g = acq.gradients(xs.as_ref()).unwrap();
        assert_eq!(
            g.value,
            acq.values(xs.as_ref()).unwrap(),
            "{name}: values differ"
        );
        for a in 0..xs.nrows() {
            for c in 0..xs.ncols() {
                let at = |h: f64| {
                    let mut row = xs.subrows(a, 1).to_owned();
                    row[(0, c)] += h;
                    acq.values(row.as_ref()).unwrap()[0]
                };
                let fd = (at(step) - at(-step)) / (2.0 * step);
                let got = g.gradient[(a, c)];
                assert!(
                    (got - fd).abs() <= 1e-6 * fd.abs().max(1e-3),
                    "{name}: ∂/∂x[{a}, {c}] = {got:e}, central difference {fd:e}"
                );
            }
        }
    }
}

#[test]
fn input_gradients_match_central_differences() {
    let gp = fitted_gp();
    let incumbent = best_posterior_mean(&gp, training_inputs().as_ref()).unwrap();
    check_input_gradients(&gp, incumbent, false);
}

#[test]
fn log_input_gradients_match_central_differences_far_below_the_incumbent() {
    // An incumbent far above the posterior puts the candidates at z ≪ −1 (EI underflows
    // there), on the erfcx and asymptotic branches of ln h.
    let gp = fitted_gp();
    let xs = candidates();
    let m = gp.marginals(xs.as_ref()).unwrap();
    let incumbent = best_posterior_mean(&gp, training_inputs().as_ref()).unwrap() + 20.0;
    let z: Vec<f64> = (0..xs.nrows())
        .map(|a| (m.mean[a] - incumbent) / m.var[a].sqrt())
        .collect();
    assert!(z.iter().any(|&z| z < -100.0), "z = {z:?}");
    assert!(z.iter().any(|&z| (-100.0..-1.0).contains(&z)), "z = {z:?}");
    check_input_gradients(&gp, incumbent, true);
}

#[test]
fn analytic_acquisition_exposes_its_utility() {
    let gp = fitted_gp();
    let acq = Analytic::new(
        &gp,
        Improvement::new(ImprovementKind::LogExpected, 0.5).unwrap(),
    );
    assert_eq!(acq.utility().kind(), ImprovementKind::LogExpected);
    assert_eq!(acq.utility().incumbent(), 0.5);
    let x = candidates();
    let m = gp.marginals(x.as_ref()).unwrap();
    assert_eq!(
        acq.values(x.as_ref()).unwrap()[0],
        acq.utility().utility(m.mean[0], m.var[0].sqrt()).value
    );
}
