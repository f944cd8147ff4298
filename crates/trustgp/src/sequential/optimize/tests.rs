//! [`maximize`] on an acquisition with known maxima and on a fitted exact GP, and the raw
//! Sobol design.

use std::f64::consts::PI;

use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::{maximize, raw, MaximizeOptions};
use crate::fit::FitOptions;
use crate::kernels::Kernel;
use crate::means::Mean;
use crate::models::exact::ExactGp;
use crate::models::hyper::GpHyper;
use crate::models::ModelError;
use crate::sequential::acquisition::{
    Acquisition, AcquisitionGradients, Analytic, UpperConfidenceBound,
};

/// Frequency of the ripples of [`Ripples`].
const FREQUENCY: f64 = 6.0 * PI;

/// `Σ_c h(x_c − t_c)` with `h(u) = cos(6πu) − 4u²`: multimodal (about three local maxima per
/// input on the unit interval), and `h ≤ 1` with equality only at `u = 0`, so its maximum over
/// a box that contains `t` is exactly at `t`, with value the number of inputs.
struct Ripples {
    target: Vec<f64>,
}

impl Ripples {
    fn h(u: f64) -> f64 {
        (FREQUENCY * u).cos() - 4.0 * u * u
    }

    fn dh(u: f64) -> f64 {
        -FREQUENCY * (FREQUENCY * u).sin() - 8.0 * u
    }

    fn check(&self, xs: MatRef<'_, f64>) -> Result<(), ModelError> {
        if xs.ncols() == self.target.len() {
            Ok(())
        } else {
            Err(ModelError::Invalid(format!(
                "candidates need {} columns, got {}",
                self.target.len(),
                xs.ncols()
            )))
        }
    }
}

impl Acquisition for Ripples {
    fn values(&self, xs: MatRef<'_, f64>) -> Result<Vec<f64>, ModelError> {
        self.check(xs)?;
        Ok((0..xs.nrows())
            .map(|a| {
                let u = |c: usize| xs[(a, c)] - self.target[c];
                (0..xs.ncols()).map(|c| Self::h(u(c))).sum()
            })
            .collect())
    }

    fn gradients(&self, xs: MatRef<'_, f64>) -> Result<AcquisitionGradients, ModelError> {
        let value = self.values(xs)?;
        let gradient = Mat::from_fn(xs.nrows(), xs.ncols(), |a, c| {
            Self::dh(xs[(a, c)] - self.target[c])
        });
        Ok(AcquisitionGradients { value, gradient })
    }
}

const UNIT_CUBE: [(f64, f64); 3] = [(0.0, 1.0); 3];

fn ripples(target: [f64; 3]) -> Ripples {
    Ripples {
        target: target.to_vec(),
    }
}

/// The acquisition at one point.
fn value_at(acquisition: &dyn Acquisition, x: &[f64]) -> f64 {
    let xs = Mat::from_fn(1, x.len(), |_, c| x[c]);
    acquisition.values(xs.as_ref()).unwrap()[0]
}

/// Asserts that `x` is within 1e-5 of `target` in the `columns`.
fn assert_near(x: &[f64], target: &[f64], columns: &[usize]) {
    for &c in columns {
        assert!(
            (x[c] - target[c]).abs() < 1e-5,
            "input {c}: {x:?} vs {target:?}"
        );
    }
}

#[test]
fn ripples_gradient_matches_central_differences() {
    let acq = ripples([0.2, 0.55, 0.8]);
    let x = [0.37, 0.91, 0.05];
    let g = acq
        .gradients(Mat::from_fn(1, 3, |_, c| x[c]).as_ref())
        .unwrap();
    let step = 1e-6;
    for c in 0..3 {
        let shifted = |s: f64| {
            let mut y = x;
            y[c] += s;
            value_at(&acq, &y)
        };
        let fd = (shifted(step) - shifted(-step)) / (2.0 * step);
        assert!((g.gradient[(0, c)] - fd).abs() < 1e-7, "input {c}");
    }
}

#[test]
fn finds_the_global_maximum_of_a_multimodal_acquisition() {
    let target = [0.2, 0.55, 0.8];
    let acq = ripples(target);
    let found = maximize(&acq, &UNIT_CUBE, &MaximizeOptions::default()).unwrap();
    assert_near(&found.x, &target, &[0, 1, 2]);
    assert!((found.value - 3.0).abs() < 1e-8, "{}", found.value);
    // The reported value is the acquisition's at the reported point.
    assert_eq!(found.value, value_at(&acq, &found.x));
    assert_eq!(found.restarts.len(), 10);
    // The starts are the best raw samples, best first, and no run ends below its start.
    assert_eq!(found.restarts[0].start_value, found.best_raw_value);
    for pair in found.restarts.windows(2) {
        assert!(pair[0].start_value >= pair[1].start_value);
    }
    for r in &found.restarts {
        assert_eq!(r.start_value, value_at(&acq, &r.start));
        assert!(r.value >= r.start_value);
        assert!(found.value >= r.value);
    }
}

#[test]
fn a_maximiser_on_a_bound_is_found_exactly_on_it() {
    // On x₀ ∈ [0.7, 1], h(x₀ − 1.01) has its minimum at x₀ ≈ 0.843 (u = −1/6) and rises to
    // both ends: to h(−0.01) ≈ 0.982 at the upper bound (its peak u = 0 lies just outside the
    // box), the maximum, and to ≈ 0.52 at the lower one.
    let target = [1.01, 0.55, 0.8];
    let acq = ripples(target);
    let bounds = [(0.7, 1.0), (0.0, 1.0), (0.0, 1.0)];
    for seed in 0..16 {
        let options = MaximizeOptions {
            seed,
            ..MaximizeOptions::default()
        };
        let found = maximize(&acq, &bounds, &options).unwrap();
        assert_eq!(found.x[0], 1.0, "seed {seed}");
        // The runs that end at the lower mode end exactly on the lower bound.
        for r in &found.restarts {
            assert!(r.x[0] == 1.0 || r.x[0] == 0.7, "{r:?}");
        }
        assert_near(&found.x, &target, &[1, 2]);
        assert!((found.value - (Ripples::h(-0.01) + 2.0)).abs() < 1e-8);
    }
}

#[test]
fn fixed_inputs_keep_their_values() {
    let target = [0.2, 0.55, 0.8];
    let acq = ripples(target);
    let options = MaximizeOptions {
        fixed: vec![(1, 0.4)],
        ..MaximizeOptions::default()
    };
    let found = maximize(&acq, &UNIT_CUBE, &options).unwrap();
    assert_eq!(found.x[1], 0.4);
    for r in &found.restarts {
        assert_eq!(r.start[1], 0.4);
        assert_eq!(r.x[1], 0.4);
    }
    // The inputs are separable, so the free ones still go to their targets.
    assert_near(&found.x, &target, &[0, 2]);
    assert!((found.value - (Ripples::h(0.4 - 0.55) + 2.0)).abs() < 1e-8);
}

#[test]
fn fixing_every_input_returns_the_fixed_point() {
    let acq = ripples([0.2, 0.55, 0.8]);
    let options = MaximizeOptions {
        fixed: vec![(0, 0.1), (2, 0.3), (1, 0.7)],
        ..MaximizeOptions::default()
    };
    let found = maximize(&acq, &UNIT_CUBE, &options).unwrap();
    assert_eq!(found.x, vec![0.1, 0.7, 0.3]);
    assert_eq!(found.value, value_at(&acq, &[0.1, 0.7, 0.3]));
}

#[test]
fn the_seed_decides_the_starts_but_not_the_optimum() {
    let acq = ripples([0.2, 0.55, 0.8]);
    let run = |seed| {
        let options = MaximizeOptions {
            seed,
            ..MaximizeOptions::default()
        };
        maximize(&acq, &UNIT_CUBE, &options).unwrap()
    };
    let a = run(0);
    assert_eq!(a, run(0));
    for seed in 1..16 {
        let other = run(seed);
        assert_ne!(a.restarts[0].start, other.restarts[0].start);
        for c in 0..3 {
            assert!((a.x[c] - other.x[c]).abs() < 1e-5, "seed {seed}");
        }
        assert!((a.value - other.value).abs() < 1e-8, "seed {seed}");
    }
}

#[test]
fn invalid_bounds_and_options_are_rejected() {
    let acq = ripples([0.2, 0.55, 0.8]);
    let error =
        |bounds: &[(f64, f64)], options: MaximizeOptions| match maximize(&acq, bounds, &options) {
            Err(ModelError::Invalid(msg)) => msg,
            other => panic!("expected an invalid-input error, got {other:?}"),
        };
    let default = MaximizeOptions::default;
    let with_cube = |bad: (f64, f64)| [(0.0, 1.0), bad, (0.0, 1.0)];
    for bad in [
        (1.0, 1.0),
        (1.0, 0.0),
        (f64::NAN, 1.0),
        (0.0, f64::INFINITY),
    ] {
        let msg = error(&with_cube(bad), default());
        assert!(msg.contains("bounds of input 1"), "{msg}");
    }
    assert!(error(&[], default()).contains("at least one input"));
    let zero_samples = MaximizeOptions {
        raw_samples: 0,
        ..default()
    };
    assert!(error(&UNIT_CUBE, zero_samples).contains("raw_samples"));
    let too_many = MaximizeOptions {
        raw_samples: raw::MAX_RAW_SAMPLES + 1,
        ..default()
    };
    assert!(error(&UNIT_CUBE, too_many).contains("raw_samples must be at most"));
    let zero_restarts = MaximizeOptions {
        restarts: 0,
        ..default()
    };
    assert!(error(&UNIT_CUBE, zero_restarts).contains("restarts"));
    let fixed = |fixed: Vec<(usize, f64)>| MaximizeOptions { fixed, ..default() };
    assert!(error(&UNIT_CUBE, fixed(vec![(3, 0.5)])).contains("does not exist"));
    assert!(error(&UNIT_CUBE, fixed(vec![(0, 0.5), (0, 0.6)])).contains("more than once"));
    assert!(error(&UNIT_CUBE, fixed(vec![(2, 1.5)])).contains("[0, 1], got 1.5"));
    assert!(error(&UNIT_CUBE, fixed(vec![(2, f64::NAN)])).contains("got NaN"));
    // A box of the wrong dimension: the acquisition's own error comes back.
    let msg = error(&[(0.0, 1.0); 2], default());
    assert!(msg.contains("need 3 columns, got 2"), "{msg}");
}

#[test]
fn an_acquisition_that_is_nowhere_finite_is_an_error() {
    struct Nowhere;
    impl Acquisition for Nowhere {
        fn values(&self, xs: MatRef<'_, f64>) -> Result<Vec<f64>, ModelError> {
            Ok(vec![f64::NAN; xs.nrows()])
        }
        fn gradients(&self, xs: MatRef<'_, f64>) -> Result<AcquisitionGradients, ModelError> {
            Ok(AcquisitionGradients {
                value: self.values(xs)?,
                gradient: Mat::zeros(xs.nrows(), xs.ncols()),
            })
        }
    }
    match maximize(&Nowhere, &UNIT_CUBE, &MaximizeOptions::default()) {
        Err(ModelError::Invalid(msg)) => assert!(msg.contains("not finite at any of the 512")),
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn raw_samples_are_stratified_in_every_input_and_pair() {
    // The first 2^m points of an Owen-scrambled Sobol sequence form a (0, m, 2)-net in its
    // first two dimensions: every 16 × 16 cell of the square holds exactly one of 256 points,
    // and every one of 256 intervals of each dimension exactly one.
    let bounds = [(-2.0, 6.0), (5.0, 5.5), (1.0, 3.0), (0.0, 1.0)];
    let base = [0.0, 0.0, 2.5, 0.0];
    let free = [1, 3, 0];
    let points = raw::sobol_points(256, &free, &bounds, &base, 3).unwrap();
    let cell = |i: usize, c: usize, n: f64| {
        let (lo, hi) = bounds[c];
        ((points[(i, c)] - lo) / (hi - lo) * n) as usize
    };
    for &c in &free {
        let mut hits = [0; 256];
        for i in 0..256 {
            assert!(bounds[c].0 <= points[(i, c)] && points[(i, c)] < bounds[c].1);
            hits[cell(i, c, 256.0)] += 1;
        }
        assert!(hits.iter().all(|&h| h == 1), "input {c}");
    }
    let mut square = [[0; 16]; 16];
    for i in 0..256 {
        square[cell(i, 1, 16.0)][cell(i, 3, 16.0)] += 1;
        assert_eq!(points[(i, 2)], 2.5);
    }
    assert!(square.iter().flatten().all(|&h| h == 1));
    let too_many_inputs: Vec<usize> = (0..=raw::MAX_FREE_INPUTS).collect();
    let wide_bounds = vec![(0.0, 1.0); too_many_inputs.len()];
    let wide_base = vec![0.0; too_many_inputs.len()];
    assert!(raw::sobol_points(4, &too_many_inputs, &wide_bounds, &wide_base, 0).is_err());
}

/// An exact GP fitted to a smooth function of two inputs on `[-1, 3] × [0, 2]`.
pub(super) fn fitted_gp() -> ExactGp {
    let mut rng = StdRng::seed_from_u64(5);
    let x: Mat<f64> = Mat::from_fn(12, 2, |_, c| {
        if c == 0 {
            rng.random_range(-1.0..3.0)
        } else {
            rng.random_range(0.0..2.0)
        }
    });
    let y: Vec<f64> = (0..12)
        .map(|i| (2.0 * x[(i, 0)]).cos() + x[(i, 0)] * x[(i, 1)] / 3.0)
        .collect();
    let init = GpHyper {
        kernel: Kernel::parse("const(var=1.0) * se(ls=[1.0, 1.0])").unwrap(),
        mean: Mean::Constant { c: 0.0 },
        noise: 0.01,
    };
    ExactGp::fit(x.as_ref(), &y, init, &FitOptions::default()).unwrap()
}

#[test]
fn ucb_on_a_fitted_gp_beats_brute_force() {
    let gp = fitted_gp();
    let ucb = Analytic::new(&gp, UpperConfidenceBound::new(2.0).unwrap());
    let bounds = [(-1.0, 3.0), (0.0, 2.0)];
    let found = maximize(&ucb, &bounds, &MaximizeOptions::default()).unwrap();
    assert_eq!(found.value, value_at(&ucb, &found.x));
    let mut rng = StdRng::seed_from_u64(99);
    let brute = Mat::from_fn(20_000, 2, |_, c| rng.random_range(bounds[c].0..bounds[c].1));
    let best = ucb
        .values(brute.as_ref())
        .unwrap()
        .into_iter()
        .fold(f64::NEG_INFINITY, f64::max);
    assert!(found.value >= best - 1e-9, "{} < {best}", found.value);
}
