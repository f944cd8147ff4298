//! The joint ELBO-and-predictive gradient (`joint`): the predictive against Algorithm P and the
//! gradient of `w·ELBO + Σ (μ̄ μ(x) + v̄ v(x))` against central finite differences in every
//! parameter and every query coordinate, for CaGP and RCaGP with block and inducing-point
//! actions.

use faer::{Mat, MatRef};

use super::{model_with, problem, random_blocks, rel_err, test_inputs};
use crate::models::computation_aware::{Actions, CaGp};

/// The adjoints used throughout: fixed weights of the means and variances.
const MEAN_BAR: [f64; 2] = [0.7, -1.3];
const VAR_BAR: [f64; 2] = [2.1, 0.4];

/// `w·ELBO + Σ (μ̄ μ + v̄ v)` at parameters `v` and query rows `xq`.
fn objective(gp: &CaGp, v: &[f64], learn_mean: bool, w: f64, xq: MatRef<'_, f64>) -> f64 {
    let at = gp.with_parameters(v, learn_mean).unwrap();
    let p = at.predict_joint(xq);
    let mut total = w * at.elbo();
    for t in 0..xq.nrows() {
        total += MEAN_BAR[t] * p.0[t] + VAR_BAR[t] * p.1[(t, t)];
    }
    total
}

fn check(gp: &CaGp, learn_mean: bool, w: f64) {
    let xq = test_inputs(2, 71);
    let v = gp.parameters(learn_mean);
    let mut adjoints = |_: &crate::posterior::Marginals| (MEAN_BAR.to_vec(), VAR_BAR.to_vec());
    let ev = gp
        .joint_evaluation(&v, learn_mean, w, xq.as_ref(), &mut adjoints)
        .unwrap();
    // The predictive is Algorithm P's.
    let (mean, cov) = gp.predict_joint(xq.as_ref());
    assert!(rel_err(&ev.predictive.mean, &mean) < 1e-12);
    assert!(rel_err(&ev.predictive.var, &[cov[(0, 0)], cov[(1, 1)]]) < 1e-12);
    assert!((ev.elbo - gp.elbo()).abs() < 1e-12 * gp.elbo().abs());
    let h = 1e-5;
    let scale = ev.parameters.iter().fold(1.0f64, |m, g| m.max(g.abs()));
    for k in 0..v.len() {
        let (mut lo, mut hi) = (v.clone(), v.clone());
        lo[k] -= h;
        hi[k] += h;
        let fd = (objective(gp, &hi, learn_mean, w, xq.as_ref())
            - objective(gp, &lo, learn_mean, w, xq.as_ref()))
            / (2.0 * h);
        assert!(
            (fd - ev.parameters[k]).abs() < 1e-8 * scale,
            "parameter {k} of {}: analytic {} vs finite difference {fd}",
            v.len(),
            ev.parameters[k]
        );
    }
    // The query inputs' gradient is that of the predictive part alone.
    let at = |x: &Mat<f64>| objective(gp, &v, learn_mean, w, x.as_ref()) - w * gp.elbo();
    for t in 0..xq.nrows() {
        for c in 0..xq.ncols() {
            let (mut lo, mut hi) = (xq.clone(), xq.clone());
            lo[(t, c)] -= h;
            hi[(t, c)] += h;
            let fd = (at(&hi) - at(&lo)) / (2.0 * h);
            assert!(
                (fd - ev.inputs[(t, c)]).abs() < 1e-8,
                "query {t}, input {c}: analytic {} vs finite difference {fd}",
                ev.inputs[(t, c)]
            );
        }
    }
}

#[test]
fn joint_gradient_matches_finite_differences_for_block_actions() {
    let (x, y) = problem(23, 72, true);
    for robust in [true, false] {
        let gp = model_with(
            &x,
            &y,
            Actions::Blocks(random_blocks(23, 4, 73)),
            robust,
            0.8,
        );
        check(&gp, true, 1.0);
        check(&gp, false, 1.0 / 23.0);
    }
}

#[test]
fn joint_gradient_matches_finite_differences_for_inducing_actions() {
    let (x, y) = problem(19, 74, true);
    for robust in [true, false] {
        let gp = model_with(&x, &y, Actions::Inducing(test_inputs(5, 75)), robust, 0.8);
        check(&gp, true, 0.5);
    }
}

#[test]
fn joint_evaluation_rejects_bad_inputs() {
    let (x, y) = problem(10, 76, false);
    let gp = model_with(&x, &y, Actions::Blocks(random_blocks(10, 2, 77)), true, 0.8);
    let v = gp.parameters(true);
    let mut adjoints = |_: &crate::posterior::Marginals| (vec![1.0], vec![1.0]);
    let xq = test_inputs(1, 78);
    let wide = Mat::<f64>::zeros(1, 3);
    let nan = Mat::<f64>::from_fn(1, 2, |_, _| f64::NAN);
    for (v, w, xq, what) in [
        (&v[1..], 1.0, xq.as_ref(), "entries"),
        (&v[..], 0.0, xq.as_ref(), "ELBO weight"),
        (&v[..], 1.0, wide.as_ref(), "columns"),
        (&v[..], 1.0, nan.as_ref(), "finite"),
    ] {
        let err = gp
            .joint_evaluation(v, true, w, xq, &mut adjoints)
            .unwrap_err()
            .to_string();
        assert!(err.contains(what), "{what}: {err}");
    }
    let mut bad = v.clone();
    bad[0] = f64::INFINITY;
    let err = gp.with_parameters(&bad, true).unwrap_err().to_string();
    assert!(err.contains("not finite"), "{err}");
}

#[test]
fn random_blocks_have_the_spec_sizes_and_variance_and_depend_only_on_the_seed() {
    let Actions::Blocks(blocks) = Actions::random_blocks(20_003, 4, 5).unwrap() else {
        panic!("block actions expected");
    };
    // 20 003 = 4·5000 + 3: the first three blocks one row longer.
    let sizes: Vec<usize> = blocks.iter().map(Vec::len).collect();
    assert_eq!(sizes, [5001, 5001, 5001, 5000]);
    for b in &blocks {
        let k = b.len() as f64;
        // k·mean square estimates 1 with relative standard deviation √(2/k) = 2%.
        let ms = b.iter().map(|v| v * v).sum::<f64>() / k;
        assert!((k * ms - 1.0).abs() < 0.1, "k·E[θ²] = {}", k * ms);
    }
    assert_eq!(
        Actions::random_blocks(30, 4, 5).unwrap(),
        Actions::random_blocks(30, 4, 5).unwrap()
    );
    assert_ne!(
        Actions::random_blocks(30, 4, 5).unwrap(),
        Actions::random_blocks(30, 4, 6).unwrap()
    );
    for i in [0, 31] {
        let err = Actions::random_blocks(30, i, 5).unwrap_err().to_string();
        assert!(err.contains("action blocks"), "{err}");
    }
}
