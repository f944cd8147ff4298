//! [`maximize_batch`] on an acquisition whose greedy batch is known, and with qEI/qLogEI on a
//! fitted exact GP.

use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::super::tests::fitted_gp;
use super::super::{maximize, MaximizeOptions};
use super::{maximize_batch, MaximizedBatch};
use crate::fit::FitOptions;
use crate::kernels::Kernel;
use crate::means::Mean;
use crate::models::exact::ExactGp;
use crate::models::hyper::GpHyper;
use crate::models::ModelError;
use crate::sequential::acquisition::{
    best_posterior_mean, Acquisition, AcquisitionGradients, BatchImprovement, BatchImprovementKind,
    MonteCarloOptions, DEFAULT_TAU_MAX,
};

/// Gaussian bumps of decreasing heights at `targets`, except those a fixed row already covers
/// (lies within `COVERED` of): the greedy batch picks the uncovered targets, highest first.
struct Coverage {
    targets: Vec<[f64; 2]>,
    heights: Vec<f64>,
}

const WIDTH: f64 = 0.05;
const COVERED: f64 = 1e-3;

impl Coverage {
    fn new(fixed: MatRef<'_, f64>) -> Self {
        let all = [[0.2, 0.7], [0.8, 0.3], [0.5, 0.5]];
        let (mut targets, mut heights) = (Vec::new(), Vec::new());
        for (k, t) in all.into_iter().enumerate() {
            let covered = (0..fixed.nrows())
                .any(|i| (fixed[(i, 0)] - t[0]).hypot(fixed[(i, 1)] - t[1]) < COVERED);
            if !covered {
                targets.push(t);
                heights.push(3.0 - k as f64);
            }
        }
        Coverage { targets, heights }
    }

    /// The value at row `a` and its gradient.
    fn at(&self, xs: MatRef<'_, f64>, a: usize) -> (f64, [f64; 2]) {
        let (mut v, mut g) = (0.0, [0.0; 2]);
        for (t, h) in self.targets.iter().zip(&self.heights) {
            let u = [xs[(a, 0)] - t[0], xs[(a, 1)] - t[1]];
            let b = h * (-(u[0] * u[0] + u[1] * u[1]) / (2.0 * WIDTH * WIDTH)).exp();
            v += b;
            for c in 0..2 {
                g[c] -= b * u[c] / (WIDTH * WIDTH);
            }
        }
        (v, g)
    }
}

impl Acquisition for Coverage {
    fn values(&self, xs: MatRef<'_, f64>) -> Result<Vec<f64>, ModelError> {
        Ok((0..xs.nrows()).map(|a| self.at(xs, a).0).collect())
    }
    fn gradients(&self, xs: MatRef<'_, f64>) -> Result<AcquisitionGradients, ModelError> {
        let (value, grads): (Vec<f64>, Vec<[f64; 2]>) =
            (0..xs.nrows()).map(|a| self.at(xs, a)).unzip();
        let gradient = Mat::from_fn(xs.nrows(), 2, |a, c| grads[a][c]);
        Ok(AcquisitionGradients { value, gradient })
    }
}

const UNIT_SQUARE: [(f64, f64); 2] = [(0.0, 1.0); 2];

#[test]
fn the_greedy_batch_of_a_coverage_acquisition_is_its_targets_in_order() {
    let none = Mat::<f64>::zeros(0, 2);
    let options = MaximizeOptions::default();
    let found = maximize_batch(3, none.as_ref(), &UNIT_SQUARE, &options, |fixed| {
        Ok(Coverage::new(fixed))
    })
    .unwrap();
    // The other bumps are 0.36 away (6 widths): they shift each maximum by far less than 1e-7.
    for (i, t) in [[0.2, 0.7], [0.8, 0.3], [0.5, 0.5]].iter().enumerate() {
        for c in 0..2 {
            assert!(
                (found.points[(i, c)] - t[c]).abs() < 1e-7,
                "pick {i}: {:?} vs {t:?}",
                found.points.row(i)
            );
        }
        assert_eq!(
            found.steps[i].x,
            found.points.row(i).iter().copied().collect::<Vec<_>>()
        );
    }
    // A pending point covering the first target: the batch starts at the second.
    let pending = Mat::from_fn(1, 2, |_, c| [0.2, 0.7][c]);
    let found = maximize_batch(1, pending.as_ref(), &UNIT_SQUARE, &options, |fixed| {
        Ok(Coverage::new(fixed))
    })
    .unwrap();
    assert!((found.points[(0, 0)] - 0.8).abs() < 1e-7);
    assert!((found.points[(0, 1)] - 0.3).abs() < 1e-7);
}

fn mc() -> MonteCarloOptions {
    MonteCarloOptions {
        samples: 256,
        seed: 3,
    }
}

const BOX: [(f64, f64); 2] = [(-1.0, 3.0), (0.0, 2.0)];

#[test]
fn a_batch_of_one_is_maximize() {
    let gp = fitted_gp();
    let none = Mat::<f64>::zeros(0, 2);
    let best = 0.5;
    let options = MaximizeOptions::default();
    let acq = BatchImprovement::new(
        &gp,
        BatchImprovementKind::Expected,
        best,
        none.as_ref(),
        1,
        &mc(),
    )
    .unwrap();
    let single = maximize(&acq, &BOX, &options).unwrap();
    let batch = maximize_batch(1, none.as_ref(), &BOX, &options, |fixed| {
        BatchImprovement::new(&gp, BatchImprovementKind::Expected, best, fixed, 1, &mc())
    })
    .unwrap();
    assert_eq!(batch.steps, vec![single.clone()]);
    assert_eq!(
        batch.points.row(0).iter().copied().collect::<Vec<_>>(),
        single.x
    );
}

/// The greedy batch of `kind` of four points on `gp` in `bounds`.
fn greedy(gp: &ExactGp, kind: BatchImprovementKind, bounds: &[(f64, f64)]) -> MaximizedBatch {
    let best = best_posterior_mean(gp, gp.posterior().x()).unwrap();
    let none = Mat::<f64>::zeros(0, 2);
    maximize_batch(
        4,
        none.as_ref(),
        bounds,
        &MaximizeOptions::default(),
        |fixed| BatchImprovement::new(gp, kind, best, fixed, 1, &mc()),
    )
    .unwrap()
}

/// An exact GP fitted to `cos(3x₀) cos(3x₁)` at 14 points of the unit square: several
/// comparable maxima, so that a batch has somewhere to spread.
fn bumpy_gp() -> ExactGp {
    let mut rng = StdRng::seed_from_u64(8);
    let x: Mat<f64> = Mat::from_fn(14, 2, |_, _| rng.random_range(0.0..1.0));
    let y: Vec<f64> = (0..14)
        .map(|i| (6.0 * x[(i, 0)]).cos() * (6.0 * x[(i, 1)]).cos())
        .collect();
    let init = GpHyper {
        kernel: Kernel::parse("const(var=1.0) * se(ls=[0.3, 0.3])").unwrap(),
        mean: Mean::Constant { c: 0.0 },
        noise: 0.01,
    };
    ExactGp::fit(x.as_ref(), &y, init, &FitOptions::default()).unwrap()
}

#[test]
fn q_ei_batches_are_distinct_deterministic_and_improve_on_repeats() {
    let gp = bumpy_gp();
    let found = greedy(&gp, BatchImprovementKind::Expected, &UNIT_SQUARE);
    assert_eq!(
        found,
        greedy(&gp, BatchImprovementKind::Expected, &UNIT_SQUARE)
    );
    let p = &found.points;
    for i in 0..4 {
        for j in 0..i {
            let dist = (p[(i, 0)] - p[(j, 0)]).hypot(p[(i, 1)] - p[(j, 1)]);
            assert!(dist > 1e-2, "picks {i} and {j} coincide: {dist}");
        }
    }
    // The joint qEI of the batch beats that of the first pick taken four times.
    let best = best_posterior_mean(&gp, gp.posterior().x()).unwrap();
    let none = Mat::<f64>::zeros(0, 2);
    let kind = BatchImprovementKind::Expected;
    let joint = BatchImprovement::new(&gp, kind, best, none.as_ref(), 4, &mc()).unwrap();
    let repeated = Mat::from_fn(4, 2, |_, c| p[(0, c)]);
    let (ours, theirs) = (
        joint.value(p.as_ref()).unwrap(),
        joint.value(repeated.as_ref()).unwrap(),
    );
    assert!(ours > theirs, "batch {ours} vs repeats {theirs}");
    // Each greedy step adds to the joint value: the steps' values increase.
    for w in found.steps.windows(2) {
        assert!(w[1].value > w[0].value);
    }
}

#[test]
fn q_log_ei_rewards_repeating_a_dominant_point_by_at_most_its_smooth_max_bias() {
    // Here one corner of the box dominates every sample, so the greedy qLogEI batch repeats
    // it: the smooth max over m tied values exceeds the max by τ_max ln m, a bonus larger
    // than any real gain, and a repeat shares its first occurrence's samples, so the bonus
    // is all it gains. qEI (above) has no such bonus.
    let gp = fitted_gp();
    let found = greedy(&gp, BatchImprovementKind::log_expected(), &BOX);
    assert_eq!(
        found,
        greedy(&gp, BatchImprovementKind::log_expected(), &BOX)
    );
    for (j, w) in found.steps.windows(2).enumerate() {
        assert_eq!(w[1].x, w[0].x);
        // Joint points j + 1 → j + 2, all tied: the bonus grows by τ ln((j + 2)/(j + 1)).
        let bonus = DEFAULT_TAU_MAX * ((j as f64 + 2.0) / (j as f64 + 1.0)).ln();
        let gain = w[1].value - w[0].value;
        assert!(
            (gain - bonus).abs() < 1e-9 * bonus,
            "step {j}: gain {gain} vs bias {bonus}"
        );
    }
}

#[test]
fn invalid_batches_are_errors() {
    let gp = fitted_gp();
    let options = MaximizeOptions::default();
    let build = |fixed: MatRef<'_, f64>| {
        BatchImprovement::new(&gp, BatchImprovementKind::Expected, 0.0, fixed, 1, &mc())
    };
    let none = Mat::<f64>::zeros(0, 2);
    assert!(maximize_batch(0, none.as_ref(), &BOX, &options, build).is_err());
    let wide = Mat::<f64>::zeros(1, 3);
    assert!(maximize_batch(1, wide.as_ref(), &BOX, &options, build).is_err());
}
