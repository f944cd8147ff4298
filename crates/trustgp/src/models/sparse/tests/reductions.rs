//! Exact reductions: SGPR with Z = X is the exact GP, RCSVGP with Z = X is RCGP, the collapsed
//! RCSVGP bound is the uncollapsed one at the optimal q(u) (and above it elsewhere), and with
//! constant weights σ/√2 RCSVGP is SGPR.

use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

use super::*;
use crate::models::exact::{log_marginal_likelihood, ExactGp};
use crate::models::hyper::GpHyper;
use crate::models::sparse::KUU_JITTER;

const EXPR: &str = "const(var=1.5) * matern52(ls=[0.6, 0.9])";

fn rows(x: &Mat<f64>, idx: &[usize]) -> Mat<f64> {
    Mat::from_fn(idx.len(), x.ncols(), |a, c| x[(idx[a], c)])
}

fn test_inputs() -> Mat<f64> {
    data(15, 2, 99).0
}

fn lml(s: &Setup) -> f64 {
    let hyper = GpHyper {
        kernel: s.k.clone(),
        mean: s.mean.clone(),
        noise: s.noise,
    };
    log_marginal_likelihood(
        &hyper,
        s.x.as_ref(),
        &s.y,
        0.0,
        Parallelism::Sequential,
        false,
    )
    .unwrap()
    .value
}

fn setup(x: Mat<f64>, y: Vec<f64>, mean: Mean, noise: f64, c: f64) -> Setup {
    Setup {
        x,
        y,
        k: kernel(EXPR),
        mean,
        noise,
        c,
        beta: 1.0,
    }
}

/// Predictive mean, variance and joint covariance of `gp` against a dense reference.
fn assert_predictive(gp: &SparseGp, xs: &Mat<f64>, mean: &[f64], cov: &Mat<f64>) {
    let got = gp.predict(xs.as_ref());
    let (jm, jc) = gp.predict_joint(xs.as_ref());
    for a in 0..xs.nrows() {
        assert_rel(got.mean[a], mean[a], 1e-9, 1.0, "mean");
        assert_rel(got.var[a], cov[(a, a)], 1e-8, 1.0, "variance");
        assert_rel(jm[a], mean[a], 1e-9, 1.0, "joint mean");
        for b in 0..xs.nrows() {
            assert_rel(jc[(a, b)], cov[(a, b)], 1e-8, 1.0, "joint covariance");
        }
    }
}

#[test]
fn sgpr_with_all_inputs_is_the_exact_gp() {
    let (x, y) = data(30, 2, 1);
    let s = setup(x, y, Mean::Constant { c: 0.2 }, 0.05, 1.0);
    let gp = s.model(SparseKind::Sgpr, &s.x, 0.0);
    assert_rel(
        gp.bound(),
        lml(&s),
        1e-9,
        1.0,
        "bound vs log marginal likelihood",
    );
    let hyper = GpHyper {
        kernel: s.k.clone(),
        mean: s.mean.clone(),
        noise: s.noise,
    };
    let xs = test_inputs();
    let exact = ExactGp::at(hyper, s.x.as_ref(), &s.y, 0.0).unwrap();
    let (mean, cov) = exact.predict_joint(xs.as_ref()).unwrap();
    assert_predictive(&gp, &xs, &mean, &cov);
}

#[test]
fn sgpr_bound_is_below_the_evidence_and_grows_with_nested_subsets() {
    let (x, y) = data(40, 2, 2);
    let s = setup(x, y, Mean::Zero, 0.02, 1.0);
    let lml = lml(&s);
    let mut order: Vec<usize> = (0..40).collect();
    let mut rng = StdRng::seed_from_u64(3);
    for i in (1..40).rev() {
        order.swap(i, rng.random_range(0..=i));
    }
    let mut last = f64::NEG_INFINITY;
    for m in [3, 8, 15, 25, 40] {
        let z = rows(&s.x, &order[..m]);
        let exact = s.model(SparseKind::Sgpr, &z, 0.0);
        let jittered = s.model(SparseKind::Sgpr, &z, KUU_JITTER);
        assert!(jittered.bound() <= lml, "m = {m}");
        assert!(exact.bound() >= last - 1e-9 * lml.abs(), "m = {m}");
        last = exact.bound();
        if m < 40 {
            assert!(
                exact.bound() < lml - 1e-6,
                "m = {m}: {} vs {lml}",
                exact.bound()
            );
        }
    }
    assert_rel(last, lml, 1e-9, 1.0, "all inputs");
}

#[test]
fn rcsvgp_with_all_inputs_is_rcgp() {
    let (x, mut y) = data(30, 2, 4);
    contaminate(&mut y, 7, 6.0);
    let s = setup(x, y, Mean::Constant { c: 0.1 }, 0.3, 0.9);
    let gp = s.model(SparseKind::Rcsvgp, &s.x, 0.0);
    let xs = test_inputs();
    let (mean, cov) = s.dense_rcgp(&xs);
    assert_predictive(&gp, &xs, &mean, &cov);
    // The collapsed bound is the uncollapsed one at the optimal q(u), here with Z = X too.
    let (mu, sigma) = s.optimal_qu(&s.x, 0.0);
    let dense = s.uncollapsed(&s.x, 0.0, &mu, &sigma);
    assert_rel(
        gp.bound(),
        dense,
        1e-8,
        1.0,
        "collapsed vs uncollapsed, Z = X",
    );
    for (a, b) in gp.weights().iter().zip(&s.robust_terms().w) {
        assert_rel(*a, *b, 1e-14, 1.0, "weights");
    }
}

#[test]
fn collapsed_rcsvgp_bound_is_the_best_uncollapsed_bound() {
    let (x, mut y) = data(35, 2, 5);
    contaminate(&mut y, 5, -4.0);
    let mean = Mean::Linear {
        w: vec![0.3, -0.2],
        b: 0.1,
    };
    let s = setup(x, y, mean, 0.4, 0.7);
    let z = data(8, 2, 6).0;
    let gp = SparseGp::from_parts(
        SparseKind::Rcsvgp,
        s.x.clone(),
        s.y.clone(),
        s.k.clone(),
        s.mean.clone(),
        s.noise,
        z.clone(),
        s.c,
        s.beta,
    )
    .unwrap();
    assert_eq!(gp.jitter(), KUU_JITTER);
    let (mu, sigma) = s.optimal_qu(&z, KUU_JITTER);
    let at_opt = s.uncollapsed(&z, KUU_JITTER, &mu, &sigma);
    assert_rel(
        gp.bound(),
        at_opt,
        1e-8,
        1.0,
        "collapsed vs uncollapsed at the optimum",
    );

    let mut rng = StdRng::seed_from_u64(7);
    let m = z.nrows();
    for scale in [1e-3, 1e-2, 0.1, 0.3, 1.0, 3.0] {
        let mu2: Vec<f64> = mu
            .iter()
            .map(|v| v + scale * rng.sample::<f64, _>(StandardNormal))
            .collect();
        let r = Mat::from_fn(m, m, |_, _| scale * rng.sample::<f64, _>(StandardNormal));
        let near = &sigma + &r * r.transpose();
        // An arbitrary covariance, not a perturbation of the optimal one.
        let far = with_diag(&r * r.transpose(), &vec![0.05; m]);
        for (what, cov) in [("near", near), ("far", far)] {
            let other = s.uncollapsed(&z, KUU_JITTER, &mu2, &cov);
            assert!(
                other < gp.bound(),
                "{what} {scale}: {other} ≥ {}",
                gp.bound()
            );
        }
    }
}

#[test]
fn rcsvgp_with_constant_weights_is_sgpr() {
    let (x, mut y) = data(30, 2, 8);
    contaminate(&mut y, 6, 3.0);
    let noise = 0.15_f64;
    // w ≡ σ/√2: β = σ/√2 and a threshold far beyond every residual.
    let s = Setup {
        beta: (noise / 2.0).sqrt(),
        ..setup(x, y, Mean::Constant { c: -0.3 }, noise, 1e10)
    };
    let z = data(10, 2, 9).0;
    let sgpr = s.model(SparseKind::Sgpr, &z, KUU_JITTER);
    let robust = s.model(SparseKind::Rcsvgp, &z, KUU_JITTER);
    let xs = test_inputs();
    let (a, b) = (sgpr.predict(xs.as_ref()), robust.predict(xs.as_ref()));
    for i in 0..xs.nrows() {
        assert_rel(b.mean[i], a.mean[i], 1e-10, 1.0, "mean");
        assert_rel(b.var[i], a.var[i], 1e-10, 1.0, "variance");
    }
    // ℓ_RCSVGP = ℓ_SGPR + n + (n/2) log 2πσ² (spec §4 item 5, for the collapsed bounds).
    let n = s.y.len() as f64;
    let shift = n + 0.5 * n * (2.0 * std::f64::consts::PI * noise).ln();
    assert_rel(robust.bound(), sgpr.bound() + shift, 1e-10, 1.0, "bound");
    for w in sgpr.weights().iter().chain(&robust.weights()) {
        assert_rel(*w, s.beta, 1e-12, 1.0, "weight");
    }
}
