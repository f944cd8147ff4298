//! EULBO with a batch (`q > 1`, the Monte Carlo form of `rcagp.md` §2.11): the batch utility's
//! derivatives in the mean and the covariance by central differences; `q = 1` agrees with the
//! Gauss–Hermite utility within Monte Carlo error; the models' joint predictive against their
//! posterior's; the objective's gradient in the model parameters and in every batch point by
//! central differences (CaGP, RCaGP with block and inducing-point actions, RCSVGP, SVGP); the loop
//! with a batch improves, stays in the box and repeats itself bit for bit (SVGP included).

use faer::{Mat, MatRef};

use super::objective::{evaluate, QueryUtility};
use super::tests::{model, sparse_model, svgp_model};
use super::{optimize, EulboModel, EulboOptions, Trainable};
use crate::posterior::Posterior;
use crate::sequential::acquisition::{BatchSoftplusEi, MarginalUtility, SoftplusEi};

const ALL: Trainable = Trainable {
    mean: true,
    noise: true,
    inducing: true,
};

/// A 3×3 covariance with strong correlations and a mean near the incumbent.
fn three() -> (Vec<f64>, Mat<f64>) {
    let cov = Mat::from_fn(3, 3, |r, c| {
        [[0.5, 0.3, -0.1], [0.3, 0.8, 0.2], [-0.1, 0.2, 0.3]][r][c]
    });
    (vec![0.2, -0.4, 0.9], cov)
}

#[test]
fn batch_utility_derivatives_match_central_differences() {
    let u = BatchSoftplusEi::new(0.5, 3, 64, 7).unwrap();
    let (mean, cov) = three();
    let at = |m: &[f64], c: &Mat<f64>| u.utility(m, c.as_ref()).unwrap().value;
    let g = u.utility(&mean, cov.as_ref()).unwrap();
    let h = 1e-6;
    for j in 0..3 {
        let (mut lo, mut hi) = (mean.clone(), mean.clone());
        lo[j] -= h;
        hi[j] += h;
        let fd = (at(&hi, &cov) - at(&lo, &cov)) / (2.0 * h);
        assert!(
            (fd - g.d_mean[j]).abs() < 1e-7,
            "mean {j}: {} vs {fd}",
            g.d_mean[j]
        );
    }
    // A symmetric perturbation E of entry (r, c) and (c, r): dU = ⟨Σ̄, E⟩.
    for r in 0..3 {
        for c in 0..=r {
            let e = Mat::from_fn(3, 3, |a, b| {
                f64::from(u8::from((a, b) == (r, c) || (a, b) == (c, r)))
            });
            let fd = (at(&mean, &(&cov + &e * h)) - at(&mean, &(&cov - &e * h))) / (2.0 * h);
            let analytic: f64 = (0..3)
                .flat_map(|a| (0..3).map(move |b| (a, b)))
                .map(|(a, b)| g.d_cov[(a, b)] * e[(a, b)])
                .sum();
            assert!(
                (fd - analytic).abs() < 1e-7,
                "covariance ({r}, {c}): {analytic} vs {fd}"
            );
            assert_eq!(g.d_cov[(r, c)], g.d_cov[(c, r)]);
        }
    }
    // A batch is worth at least its best point alone: the max over the batch dominates.
    let one = BatchSoftplusEi::new(0.5, 1, 64, 7).unwrap();
    let single = one
        .utility(&mean[2..], Mat::from_fn(1, 1, |_, _| cov[(2, 2)]).as_ref())
        .unwrap();
    assert!(g.value > single.value);
}

/// With one point the Monte Carlo estimate is the Gauss–Hermite utility within its error
/// (4096 Sobol samples: well below 1e-3 for these smooth integrands), values and derivatives.
#[test]
fn a_batch_of_one_is_the_quadrature_utility_within_monte_carlo_error() {
    for (mean, var, incumbent) in [(0.3, 0.5, 0.0), (-2.0, 0.1, 1.0), (1.5, 2.0, 0.2)] {
        let mc = BatchSoftplusEi::new(incumbent, 1, 4096, 3).unwrap();
        let b = mc
            .utility(&[mean], Mat::from_fn(1, 1, |_, _| var).as_ref())
            .unwrap();
        let sd = (var + crate::sequential::acquisition::EULBO_BATCH_JITTER).sqrt();
        let gh = SoftplusEi::new(incumbent).unwrap().utility(mean, sd);
        assert!(
            (b.value - gh.value).abs() < 1e-3,
            "{} vs {}",
            b.value,
            gh.value
        );
        assert!((b.d_mean[0] - gh.d_mean).abs() < 1e-3);
        // ∂u/∂v = (∂u/∂σ)/(2σ).
        let d_var = gh.d_sd / (2.0 * sd);
        assert!(
            (b.d_cov[(0, 0)] - d_var).abs() < 2e-3,
            "{} vs {d_var}",
            b.d_cov[(0, 0)]
        );
    }
    // And at the objective: the same model and point, q = 1 by both routes.
    let gp = model(17, true, true);
    let v = EulboModel::parameters(&gp, ALL).unwrap();
    let x = [0.35, 0.7];
    let single = QueryUtility::Single(SoftplusEi::new(0.9).unwrap());
    let batch = QueryUtility::Batch(BatchSoftplusEi::new(0.9, 1, 4096, 3).unwrap());
    let a = evaluate(&gp, &v, ALL, 1.0, &x, &single, true).unwrap();
    let b = evaluate(&gp, &v, ALL, 1.0, &x, &batch, true).unwrap();
    assert!(
        (a.utility - b.utility).abs() < 1e-3,
        "{} vs {}",
        a.utility,
        b.utility
    );
    for (p, q) in a.d_x.iter().zip(&b.d_x) {
        assert!((p - q).abs() < 1e-2 * p.abs().max(1.0), "{p} vs {q}");
    }
}

/// The batch rows of `data`'s box, three points.
const BATCH: [f64; 6] = [0.35, 0.7, 0.6, 0.2, 0.1, 0.9];

/// The objective's gradient in every parameter and every coordinate of a batch of three
/// against central differences, and the joint predictive the utility saw against that of
/// `posterior` (the model's own, at the same parameters).
fn check_batch_gradient<M: EulboModel, P: Posterior>(gp: &M, posterior: &P, tol: f64, what: &str) {
    let xq = MatRef::from_row_major_slice(&BATCH, 3, 2);
    let joint = posterior.joint(xq).unwrap();
    let utility = BatchSoftplusEi::new(0.9, 3, 64, 11).unwrap();
    let direct = utility.utility(&joint.mean, joint.cov.as_ref()).unwrap();
    let utility = QueryUtility::Batch(utility);
    for weight in [1.0, 1.0 / gp.n_data() as f64] {
        let v = gp.parameters(ALL).unwrap();
        let ev = evaluate(gp, &v, ALL, weight, &BATCH, &utility, true).unwrap();
        // The model's own joint predictive gives the same utility.
        assert!(
            (ev.utility - direct.value).abs() < 1e-10,
            "{what}: {} vs {}",
            ev.utility,
            direct.value
        );
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
            let fd = (at(&hi, &BATCH) - at(&lo, &BATCH)) / (2.0 * h);
            assert!(
                (fd - ev.d_parameters[k]).abs() < tol * scale,
                "{what}, weight {weight}, parameter {k}: analytic {} vs finite difference {fd}",
                ev.d_parameters[k]
            );
        }
        assert_eq!(ev.d_x.len(), 6);
        for k in 0..6 {
            let (mut lo, mut hi) = (BATCH, BATCH);
            lo[k] -= h;
            hi[k] += h;
            let fd = (at(&v, &hi) - at(&v, &lo)) / (2.0 * h);
            assert!(
                (fd - ev.d_x[k]).abs() < 1e-7 * ev.d_x[k].abs().max(1.0),
                "{what}, point {} input {}: {} vs {fd}",
                k / 2,
                k % 2,
                ev.d_x[k]
            );
        }
    }
}

#[test]
fn batch_objective_gradient_matches_finite_differences() {
    for (robust, blocks) in [(true, true), (false, true), (true, false)] {
        let gp = model(17, robust, blocks);
        check_batch_gradient(
            &gp,
            &gp,
            1e-8,
            &format!("CaGP robust {robust}, blocks {blocks}"),
        );
    }
    // The bound's curvature in Z limits the difference (see the q = 1 test).
    let sparse = sparse_model(17, true);
    check_batch_gradient(&sparse, &sparse, 1e-7, "RCSVGP");
    let svgp = svgp_model(17);
    check_batch_gradient(&svgp, &svgp.model, 1e-7, "SVGP");
}

#[test]
fn the_batch_loop_improves_stays_in_the_box_and_repeats_itself() {
    let gp = model(17, true, true);
    let bounds = [(0.1, 0.6), (0.2, 0.9)];
    let opts = EulboOptions {
        mc_seed: 5,
        ..EulboOptions::default()
    };
    // The third point starts outside the box: it is projected in.
    let x0 = [0.2, 0.3, 0.5, 0.8, 0.7, 0.95];
    let run = || optimize(&gp, &x0, &bounds, 1.0, &opts).unwrap();
    let r = run();
    assert!(!r.failed && r.restores == 0);
    assert!(
        r.objective > r.start_objective,
        "{} vs {}",
        r.objective,
        r.start_objective
    );
    assert_eq!(r.x.len(), 6);
    for (k, v) in r.x.iter().enumerate() {
        let (lo, hi) = bounds[k % 2];
        assert!(lo <= *v && *v <= hi, "coordinate {k}: {v}");
    }
    let again = run();
    assert_eq!(again.x, r.x);
    assert_eq!(again.objective.to_bits(), r.objective.to_bits());
    // The objective reported is that of the points and model returned.
    let utility = QueryUtility::Batch(BatchSoftplusEi::new(1.0, 3, opts.mc_samples, 5).unwrap());
    let v = EulboModel::parameters(&r.model, opts.learn).unwrap();
    let ev = evaluate(&r.model, &v, opts.learn, 1.0, &r.x, &utility, true).unwrap();
    assert!((ev.objective - r.objective).abs() < 1e-9 * r.objective.abs());
    // Another seed draws other base samples, so another estimate at the start.
    let other = optimize(
        &gp,
        &x0,
        &bounds,
        1.0,
        &EulboOptions {
            mc_seed: 6,
            ..opts.clone()
        },
    )
    .unwrap();
    assert_ne!(other.start_objective, r.start_objective);
}

/// SVGP takes a batch like the other models: the loop improves the objective and keeps the
/// points in the box.
#[test]
fn the_svgp_batch_loop_improves_and_stays_in_the_box() {
    let gp = svgp_model(17);
    let bounds = [(0.1, 0.6), (0.2, 0.9)];
    let opts = EulboOptions {
        mc_seed: 5,
        ..EulboOptions::default()
    };
    let r = optimize(&gp, &BATCH[..4], &bounds, 1.0, &opts).unwrap();
    assert!(!r.failed);
    assert!(
        r.objective > r.start_objective,
        "{} vs {}",
        r.objective,
        r.start_objective
    );
    assert_eq!(r.x.len(), 4);
    for (k, v) in r.x.iter().enumerate() {
        let (lo, hi) = bounds[k % 2];
        assert!(lo <= *v && *v <= hi, "coordinate {k}: {v}");
    }
}

#[test]
fn starts_must_be_whole_points() {
    let bounds = [(0.0, 1.0), (0.0, 1.0)];
    let ca = model(12, true, true);
    let e = optimize(&ca, &BATCH[..3], &bounds, 1.0, &EulboOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("got 3 start values"), "{e}");
}
