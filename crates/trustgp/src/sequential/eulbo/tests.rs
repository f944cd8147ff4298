//! EULBO: the objective's gradient in the model parameters and the query point against central
//! finite differences (CaGP and RCaGP with block and inducing-point actions, RCSVGP and SGPR,
//! both ELBO scales); the
//! loop from models away from their ELBO optimum (improves on the start, query in the box,
//! deterministic); the restore-on-failure path on a model that fails past a known parameter
//! value. A model at its optimum: `converged_tests`.

use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

use super::objective::{evaluate, QueryUtility};
use super::{optimize, ElboScale, EulboModel, EulboOptions, EulboResult, SvgpOnData, Trainable};
use crate::kernels::Kernel;
use crate::means::Mean;
use crate::models::computation_aware::{Actions, CaGp, JointAdjoints, JointEvaluation};
use crate::models::sparse::{SparseGp, SparseKind};
use crate::models::svgp::{Svgp, SvgpLikelihood};
use crate::models::ModelError;
use crate::posterior::{JointGaussian, Marginals};
use crate::sequential::acquisition::{MarginalUtility, SoftplusEi};

const ALL: Trainable = Trainable {
    mean: true,
    noise: true,
    inducing: true,
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
pub(super) fn model(n: usize, robust: bool, blocks: bool) -> CaGp {
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

/// An RCSVGP (`robust`; SGPR otherwise) on [`data`] with 6 seeded inducing inputs.
pub(super) fn sparse_model(n: usize, robust: bool) -> SparseGp {
    let (x, y) = data(n, 81);
    let mut rng = StdRng::seed_from_u64(83);
    let z = Mat::from_fn(6, 2, |_, _| rng.random_range(0.0..1.0));
    let kernel = Kernel::parse("const(var=1.3) * matern52(ls=[0.4, 0.6])").unwrap();
    let kind = if robust {
        SparseKind::Rcsvgp
    } else {
        SparseKind::Sgpr
    };
    let mean = Mean::Constant { c: 0.2 };
    SparseGp::from_parts(kind, x, y, kernel, mean, 0.1, z, 1.0, 1.0).unwrap()
}

/// An SVGP (Gaussian likelihood, noise 0.1) on [`data`] with 6 seeded inducing inputs and
/// generic variational parameters.
pub(super) fn svgp_model(n: usize) -> SvgpOnData {
    let (x, y) = data(n, 81);
    let mut rng = StdRng::seed_from_u64(84);
    let m = 6;
    let z = Mat::from_fn(m, 2, |_, _| rng.random_range(0.0..1.0));
    let m_tilde = (0..m)
        .map(|_| rng.sample::<f64, _>(StandardNormal))
        .collect();
    let l_tilde = Mat::from_fn(m, m, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Greater => 0.2 * rng.sample::<f64, _>(StandardNormal),
        std::cmp::Ordering::Equal => 0.5,
        std::cmp::Ordering::Less => 0.0,
    });
    let kernel = Kernel::parse("const(var=1.3) * matern52(ls=[0.4, 0.6])").unwrap();
    let mean = Mean::Constant { c: 0.2 };
    let svgp = Svgp::from_parts(
        kernel,
        mean,
        vec![0.1],
        SvgpLikelihood::Gaussian,
        z,
        m_tilde,
        l_tilde,
    )
    .unwrap();
    SvgpOnData::new(svgp, x, y).unwrap()
}

/// The objective's gradient against central differences in every parameter and input (to
/// `tol` relative to the largest partial derivative: the difference's round-off scales with
/// the ELBO), and its value against the ELBO plus the utility at the model's own predictive.
fn check_gradient<M: EulboModel>(gp: &M, elbo: f64, predictive: Marginals, tol: f64, what: &str) {
    let single = SoftplusEi::new(0.9).unwrap();
    let utility = QueryUtility::Single(single);
    let x = [0.35, 0.7];
    for weight in [1.0, 1.0 / gp.n_data() as f64] {
        let v = gp.parameters(ALL).unwrap();
        let ev = evaluate(gp, &v, ALL, weight, &x, &utility, true).unwrap();
        let at = |v: &[f64], x: &[f64]| {
            evaluate(gp, v, ALL, weight, x, &utility, true)
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
                (fd - ev.d_parameters[k]).abs() < tol * scale,
                "{what}, weight {weight}, parameter {k}: analytic {} vs finite difference {fd}",
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
                "{what}, input {c}: {} vs {fd}",
                ev.d_x[c]
            );
        }
        let u = single.utility(predictive.mean[0], predictive.var[0].sqrt());
        assert!(
            (ev.objective - (weight * elbo + u.value)).abs() < 1e-10,
            "{what}"
        );
    }
}

#[test]
fn objective_gradient_matches_finite_differences() {
    let xq = MatRef::from_row_major_slice(&[0.35, 0.7], 1, 2);
    for (robust, blocks) in [(true, true), (false, true), (true, false), (false, false)] {
        let gp = model(17, robust, blocks);
        let what = format!("CaGP robust {robust}, blocks {blocks}");
        check_gradient(&gp, gp.elbo(), gp.predict(xq), 1e-8, &what);
    }
    for robust in [true, false] {
        let gp = sparse_model(17, robust);
        // The bound is strongly curved in Z (third derivatives ~10⁵ here: the difference's error
        // falls as h², 2e-6 at h = 1e-5); its own gradient test allows 1e-6 per entry.
        let what = format!("sparse, robust {robust}");
        check_gradient(&gp, gp.bound(), gp.predict(xq), 1e-7, &what);
    }
    let gp = svgp_model(17);
    let elbo = gp.model.elbo(gp.x(), gp.y()).unwrap();
    check_gradient(&gp, elbo, gp.model.predict(xq), 1e-7, "SVGP");
}

/// Runs the loop twice from a start outside the box and checks that it improves on the start,
/// stays in the box, reports the objective of what it returns, and repeats itself exactly.
fn check_loop<M: EulboModel>(gp: &M, scale: ElboScale, what: &str) -> EulboResult<M> {
    let bounds = [(0.1, 0.6), (0.2, 0.9)];
    let opts = EulboOptions {
        elbo_scale: scale,
        ..EulboOptions::default()
    };
    let run = || optimize(gp, &[0.55, 0.95], &bounds, 1.0, &opts).unwrap();
    let r = run();
    assert!(!r.failed && r.restores == 0, "{what}");
    assert!(
        r.objective > r.start_objective,
        "{what}, {scale:?}: {} vs start {}",
        r.objective,
        r.start_objective
    );
    assert!(!r.trace.is_empty() && r.trace.len() <= opts.max_epochs);
    for (c, (lo, hi)) in bounds.iter().enumerate() {
        assert!(
            r.x[c] >= *lo && r.x[c] <= *hi,
            "{what}, input {c}: {}",
            r.x[c]
        );
    }
    let weight = match scale {
        ElboScale::Sum => 1.0,
        ElboScale::PerDatum => 1.0 / gp.n_data() as f64,
    };
    let utility = QueryUtility::Single(SoftplusEi::new(1.0).unwrap());
    let v = r.model.parameters(opts.learn).unwrap();
    let again = evaluate(&r.model, &v, opts.learn, weight, &r.x, &utility, true).unwrap();
    assert!(
        (again.objective - r.objective).abs() < 1e-9 * r.objective.abs(),
        "{what}: {} vs {}",
        again.objective,
        r.objective
    );
    let r2 = run();
    assert_eq!(r2.x, r.x);
    assert_eq!(r2.objective.to_bits(), r.objective.to_bits());
    assert_eq!(
        r2.model.parameters(ALL).unwrap(),
        r.model.parameters(ALL).unwrap()
    );
    r
}

#[test]
fn the_loop_improves_stays_in_the_box_and_is_deterministic() {
    for scale in [ElboScale::Sum, ElboScale::PerDatum] {
        for (robust, blocks) in [(true, true), (false, true), (true, false)] {
            let gp = model(40, robust, blocks);
            let r = check_loop(
                &gp,
                scale,
                &format!("CaGP robust {robust}, blocks {blocks}"),
            );
            // The mean is frozen by default.
            assert_eq!(r.model.mean(), gp.mean());
        }
        let gp = sparse_model(40, true);
        let r = check_loop(&gp, scale, "RCSVGP");
        assert_eq!(r.model.mean(), gp.mean());
        assert!(
            r.model.inducing() != gp.inducing(),
            "the inducing inputs are trained"
        );
        let gp = svgp_model(40);
        let r = check_loop(&gp, scale, "SVGP");
        assert_eq!(r.model.model.mean(), gp.model.mean());
        assert!(
            r.model.model.likelihood() != gp.model.likelihood(),
            "the noise is trained"
        );
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
    fn parameters(&self, _: Trainable) -> Result<Vec<f64>, ModelError> {
        Ok(vec![self.v])
    }
    fn parameter_bounds(&self, _: Trainable) -> Result<Vec<(f64, f64)>, ModelError> {
        Ok(vec![(f64::NEG_INFINITY, f64::INFINITY)])
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
        adjoints: JointAdjoints<'_>,
    ) -> Result<JointEvaluation, ModelError> {
        let bad = v[0] > self.limit;
        if bad && !self.nan {
            return Err(ModelError::Invalid("toy failure".into()));
        }
        let predictive = Marginals {
            mean: vec![v[0] + xq[(0, 0)]],
            var: vec![1.0],
        };
        let (mb, _) = adjoints(&JointGaussian {
            mean: predictive.mean.clone(),
            cov: Mat::from_fn(1, 1, |_, _| 1.0),
        });
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

/// A start, a box, an incumbent, options, and a word the error must contain.
type Case<'a> = (&'a [f64], &'a [(f64, f64)], f64, EulboOptions, &'a str);

#[test]
fn bad_inputs_are_rejected() {
    let gp = model(12, true, true);
    let ok = [(0.0, 1.0), (0.0, 1.0)];
    let cases: [Case<'_>; 6] = [
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
