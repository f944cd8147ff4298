//! EULBO: the objective's gradient in the model parameters and the query point against central
//! finite differences (CaGP and RCaGP, block and inducing-point actions, both ELBO scales); the
//! loop's guarantees (never worse than the start, query in the box, deterministic); the
//! restore-on-failure path on a model that fails past a known parameter value.

use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

use super::objective::evaluate;
use super::{optimize, ElboScale, EulboModel, EulboOptions, Trainable};
use crate::kernels::Kernel;
use crate::models::computation_aware::{Actions, CaGp, JointEvaluation};
use crate::models::ModelError;
use crate::posterior::Marginals;
use crate::sequential::acquisition::SoftplusEi;

const ALL: Trainable = Trainable {
    mean: true,
    noise: true,
};

/// `n` rows in `[0, 1]²`: a smooth function, noise, and an outlier every seventh row.
fn data(n: usize, seed: u64) -> (Mat<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let x = Mat::<f64>::from_fn(n, 2, |_, _| rng.random_range(0.0..1.0));
    let y = (0..n)
        .map(|j| {
            let f = (4.0 * x[(j, 0)]).sin() - (x[(j, 1)] - 0.4).powi(2);
            let out = if j % 7 == 3 { 4.0 } else { 0.0 };
            f + 0.05 * rng.sample::<f64, _>(StandardNormal) + out
        })
        .collect();
    (x, y)
}

/// A CaGP (`robust`: RCaGP) on [`data`] with seeded block actions (`blocks`) or inducing-point
/// actions at seeded inputs.
fn model(n: usize, robust: bool, blocks: bool) -> CaGp {
    let (x, y) = data(n, 81);
    let mut rng = StdRng::seed_from_u64(82);
    let actions = if blocks {
        let i = 4;
        Actions::Blocks(
            (0..i)
                .map(|b| {
                    let k = n / i + usize::from(b < n % i);
                    (0..k)
                        .map(|_| rng.sample::<f64, _>(StandardNormal))
                        .collect()
                })
                .collect(),
        )
    } else {
        Actions::Inducing(Mat::from_fn(5, 2, |_, _| rng.random_range(0.0..1.0)))
    };
    let kernel = Kernel::parse("const(var=1.3) * matern52(ls=[0.4, 0.6])").unwrap();
    CaGp::from_parts(x, y, kernel, 0.1, 0.2, actions, 1.0, 1.0, robust).unwrap()
}

#[test]
fn objective_gradient_matches_finite_differences() {
    let utility = SoftplusEi::new(0.9).unwrap();
    let x = [0.35, 0.7];
    for (robust, blocks) in [(true, true), (false, true), (true, false), (false, false)] {
        let gp = model(17, robust, blocks);
        for weight in [1.0, 1.0 / 17.0] {
            let v = gp.parameters(true);
            let ev = evaluate(&gp, &v, ALL, weight, &x, &utility, true).unwrap();
            let at = |v: &[f64], x: &[f64]| {
                evaluate(&gp, v, ALL, weight, x, &utility, true)
                    .unwrap()
                    .objective
            };
            let h = 1e-5;
            let scale = ev.d_parameters.iter().fold(1.0f64, |m, g| m.max(g.abs()));
            for k in 0..v.len() {
                let (mut lo, mut hi) = (v.clone(), v.clone());
                lo[k] -= h;
                hi[k] += h;
                let fd = (at(&hi, &x) - at(&lo, &x)) / (2.0 * h);
                assert!(
                    (fd - ev.d_parameters[k]).abs() < 1e-8 * scale,
                    "robust {robust}, blocks {blocks}, weight {weight}, parameter {k}: \
                     analytic {} vs finite difference {fd}",
                    ev.d_parameters[k]
                );
            }
            for c in 0..2 {
                let (mut lo, mut hi) = (x, x);
                lo[c] -= h;
                hi[c] += h;
                let fd = (at(&v, &hi) - at(&v, &lo)) / (2.0 * h);
                assert!(
                    (fd - ev.d_x[c]).abs() < 1e-8 * ev.d_x[c].abs().max(1.0),
                    "robust {robust}, blocks {blocks}, input {c}: {} vs {fd}",
                    ev.d_x[c]
                );
            }
            // The parts: the scaled ELBO plus the utility at the model's predictive.
            let p = gp.predict(MatRef::from_row_major_slice(&x, 1, 2));
            let u = crate::sequential::acquisition::MarginalUtility::utility(
                &utility,
                p.mean[0],
                p.var[0].sqrt(),
            );
            assert!((ev.objective - (weight * gp.elbo() + u.value)).abs() < 1e-10);
        }
    }
}

#[test]
fn the_loop_improves_stays_in_the_box_and_is_deterministic() {
    let bounds = [(0.1, 0.6), (0.2, 0.9)];
    for (robust, blocks) in [(true, true), (false, true), (true, false)] {
        let gp = model(40, robust, blocks);
        for scale in [ElboScale::Sum, ElboScale::PerDatum] {
            let opts = EulboOptions {
                elbo_scale: scale,
                ..EulboOptions::default()
            };
            // A start outside the box is projected into it.
            let run = || optimize(&gp, &[0.55, 0.95], &bounds, 1.0, &opts).unwrap();
            let r = run();
            assert!(!r.failed && r.restores == 0);
            assert!(
                r.objective > r.start_objective,
                "robust {robust}, blocks {blocks}, {scale:?}: {} vs start {}",
                r.objective,
                r.start_objective
            );
            assert!(!r.trace.is_empty() && r.trace.len() <= opts.max_epochs);
            for (c, (lo, hi)) in bounds.iter().enumerate() {
                assert!(r.x[c] >= *lo && r.x[c] <= *hi, "input {c}: {}", r.x[c]);
            }
            // The reported objective is that of the returned model at the returned point.
            let weight = match scale {
                ElboScale::Sum => 1.0,
                ElboScale::PerDatum => 1.0 / 40.0,
            };
            let utility = SoftplusEi::new(1.0).unwrap();
            let v = r.model.parameters(false);
            let again = evaluate(&r.model, &v, opts.learn, weight, &r.x, &utility, true).unwrap();
            assert!((again.objective - r.objective).abs() < 1e-9 * r.objective.abs());
            // The mean is frozen by default.
            assert_eq!(r.model.mean(), gp.mean());
            let r2 = run();
            assert_eq!(r2.x, r.x);
            assert_eq!(r2.objective.to_bits(), r.objective.to_bits());
            assert_eq!(r2.model.parameters(true), r.model.parameters(true));
        }
    }
}

/// `ELBO = −(v − 1)²` with predictive `N(v + x, 1)` at the query `x`, which fails (an error or a
/// NaN) once `v` leaves `(−∞, limit]`: a model whose numerical failures the test controls.
struct Toy {
    v: f64,
    limit: f64,
    nan: bool,
}

impl EulboModel for Toy {
    fn n_data(&self) -> usize {
        1
    }
    fn input_dim(&self) -> usize {
        1
    }
    fn parameters(&self, _: Trainable) -> Vec<f64> {
        vec![self.v]
    }
    fn parameter_bounds(&self, _: Trainable) -> Vec<(f64, f64)> {
        vec![(f64::NEG_INFINITY, f64::INFINITY)]
    }
    fn with_parameters(&self, v: &[f64], _: Trainable) -> Result<Self, ModelError> {
        Ok(Toy {
            v: v[0],
            limit: self.limit,
            nan: self.nan,
        })
    }
    fn joint_evaluation(
        &self,
        v: &[f64],
        _: Trainable,
        w: f64,
        xq: MatRef<'_, f64>,
        adjoints: &mut dyn FnMut(&Marginals) -> (Vec<f64>, Vec<f64>),
    ) -> Result<JointEvaluation, ModelError> {
        let bad = v[0] > self.limit;
        if bad && !self.nan {
            return Err(ModelError::Invalid("toy failure".into()));
        }
        let predictive = Marginals {
            mean: vec![v[0] + xq[(0, 0)]],
            var: vec![1.0],
        };
        let (mb, _) = adjoints(&predictive);
        Ok(JointEvaluation {
            elbo: if bad { f64::NAN } else { -(v[0] - 1.0).powi(2) },
            predictive,
            parameters: vec![-2.0 * w * (v[0] - 1.0) + mb[0]],
            inputs: Mat::from_fn(1, 1, |_, _| mb[0]),
        })
    }
}

#[test]
fn numerical_failure_restores_and_shrinks_the_learning_rates() {
    // From v = 0 the ELBO pulls v up by about lr per step: with lr = 0.01 it passes 0.05
    // within the 10 warm-start steps; with 0.001 it cannot in 10 + 2·30 evaluations' 40 steps.
    for nan in [false, true] {
        let toy = Toy {
            v: 0.0,
            limit: 0.05,
            nan,
        };
        let r = optimize(&toy, &[0.5], &[(0.0, 1.0)], 0.0, &EulboOptions::default()).unwrap();
        assert!(!r.failed);
        assert_eq!(r.restores, 1, "nan {nan}");
        assert_eq!(r.learning_rates, (0.001, 0.0001));
        assert!(r.objective > r.start_objective);
        assert!(r.model.v > 0.0 && r.model.v <= 0.05);
        assert!(
            r.x[0] > 0.5 && r.x[0] <= 1.0,
            "the utility pulls x up: {}",
            r.x[0]
        );
        // Every try fails when any step fails: the start comes back.
        let stuck = Toy {
            v: 0.0,
            limit: 1e-12,
            nan,
        };
        let opts = EulboOptions {
            max_restores: 3,
            ..EulboOptions::default()
        };
        let r = optimize(&stuck, &[0.5], &[(0.0, 1.0)], 0.0, &opts).unwrap();
        assert!(r.failed);
        assert_eq!(r.restores, 3);
        assert_eq!((r.x, r.model.v), (vec![0.5], 0.0));
        assert_eq!(r.objective, r.start_objective);
        assert!((r.learning_rates.0 - 1e-5).abs() < 1e-20);
    }
}

#[test]
fn bad_inputs_are_rejected() {
    let gp = model(12, true, true);
    let ok = [(0.0, 1.0), (0.0, 1.0)];
    let cases: [(&[f64], &[(f64, f64)], f64, EulboOptions, &str); 6] = [
        (&[0.5], &ok, 0.0, EulboOptions::default(), "2 inputs"),
        (
            &[0.5, 0.5],
            &[(0.0, 1.0), (1.0, 0.0)],
            0.0,
            EulboOptions::default(),
            "bounds of input 1",
        ),
        (
            &[0.5, f64::NAN],
            &ok,
            0.0,
            EulboOptions::default(),
            "non-finite input 1",
        ),
        (
            &[0.5, 0.5],
            &ok,
            f64::INFINITY,
            EulboOptions::default(),
            "incumbent",
        ),
        (
            &[0.5, 0.5],
            &ok,
            0.0,
            EulboOptions {
                query_lr: 0.0,
                ..EulboOptions::default()
            },
            "query_lr",
        ),
        (
            &[0.5, 0.5],
            &ok,
            0.0,
            EulboOptions {
                patience: 0,
                ..EulboOptions::default()
            },
            "patience",
        ),
    ];
    for (x0, bounds, incumbent, opts, what) in cases {
        let err = optimize(&gp, x0, bounds, incumbent, &opts)
            .unwrap_err()
            .to_string();
        assert!(err.contains(what), "{what}: {err}");
    }
}
