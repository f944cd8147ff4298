//! Spec §4 items 1–6 and 13: limits and structural properties of the posterior.

use faer::Mat;

use super::dense::{dense_actions, Dense};
use super::{entries, kernel, min_eigenvalue, model, problem, random_blocks, rel_err, test_inputs};
use crate::models::computation_aware::actions::BlockActions;
use crate::models::computation_aware::Actions;

const C: f64 = 0.8;

/// The dense reference at the parameters of [`model`].
fn reference(x: &Mat<f64>, y: &[f64], robust: bool) -> Dense {
    Dense::new(x, y, &kernel(), 0.2, 0.3, robust.then_some((1.0, C)))
}

#[test]
fn full_rank_actions_recover_rcgp_and_the_exact_gp() {
    let (x, y) = problem(24, 1, true);
    let xs = test_inputs(7, 2);
    for robust in [true, false] {
        let gp = model(&x, &y, random_blocks(24, 24, 3), robust, C);
        let dense = reference(&x, &y, robust);
        let (mean, cov) = gp.predict_joint(xs.as_ref());
        let (mean_ref, cov_ref) = dense.posterior(None, &xs);
        assert!(rel_err(&mean, &mean_ref) < 1e-8, "robust {robust}");
        assert!(
            rel_err(&entries(&cov), &entries(&cov_ref)) < 1e-8,
            "robust {robust}"
        );
        let marg = gp.predict(xs.as_ref());
        assert_eq!(marg.mean, mean);
        assert!(rel_err(&marg.var, &(0..7).map(|t| cov[(t, t)]).collect::<Vec<_>>()) < 1e-12);
        // ℓ = log Z^w (RCaGP), = the exact GP log evidence (CaGP).
        let lz = dense.log_evidence();
        assert!(
            (gp.elbo() - lz).abs() < 1e-8 * lz.abs(),
            "{} vs {lz}",
            gp.elbo()
        );
    }
}

#[test]
fn streamed_block_code_equals_the_dense_reference() {
    // 23 rows in 5 blocks: sizes 5, 5, 5, 4, 4.
    let (x, y) = problem(23, 4, true);
    let xs = test_inputs(6, 5);
    for robust in [true, false] {
        let blocks = random_blocks(23, 5, 6);
        let sizes: Vec<usize> = blocks.iter().map(Vec::len).collect();
        assert_eq!(sizes, [5, 5, 5, 4, 4]);
        let s = dense_actions(&blocks);
        let gp = model(&x, &y, blocks, robust, C);
        let dense = reference(&x, &y, robust);
        let (mean, cov) = gp.predict_joint(xs.as_ref());
        let (mean_ref, cov_ref) = dense.posterior(Some(&s), &xs);
        assert!(rel_err(&mean, &mean_ref) < 1e-8);
        assert!(rel_err(&entries(&cov), &entries(&cov_ref)) < 1e-8);
        let elbo_ref = dense.elbo(&s);
        assert!(
            (gp.elbo() - elbo_ref).abs() < 1e-8 * elbo_ref.abs(),
            "{} vs {elbo_ref}",
            gp.elbo()
        );
        assert!(rel_err(&gp.v, &dense.weights(Some(&s))) < 1e-8);
    }
}

#[test]
fn variance_is_conservative_and_below_the_prior() {
    let (x, y) = problem(23, 7, true);
    let xs = test_inputs(9, 8);
    for (i, seed) in [(1, 1), (4, 2), (9, 3)] {
        let gp = model(&x, &y, random_blocks(23, i, seed), true, C);
        let (_, cov) = gp.predict_joint(xs.as_ref());
        let (_, exact) = reference(&x, &y, true).posterior(None, &xs);
        let prior = kernel().matrix(xs.as_ref());
        assert!(min_eigenvalue(&(&cov - &exact)) >= -1e-10, "i = {i}");
        assert!(min_eigenvalue(&(&prior - &cov)) >= -1e-10, "i = {i}");
    }
}

#[test]
fn nested_actions_shrink_variance_and_error() {
    // With one value t_j per row, the i-block actions for i | 24 built from t are nested:
    // a block of i/2 blocks is the sum of two blocks of i.
    let (x, y) = problem(24, 9, true);
    let xs = test_inputs(10, 10);
    let t = random_blocks(24, 1, 11).concat();
    let dense = reference(&x, &y, true);
    let kt = dense.k_tilde();
    let v_hat = dense.weights(None);
    let norm = |v: &[f64]| -> f64 {
        let e: Vec<f64> = (0..24).map(|j| v_hat[j] - v[j]).collect();
        (0..24)
            .flat_map(|a| (0..24).map(move |b| (a, b)))
            .map(|(a, b)| e[a] * kt[(a, b)] * e[b])
            .sum::<f64>()
            .sqrt()
    };
    let (mut prev_var, mut prev_err) = (kernel().diag(xs.as_ref()), norm(&[0.0; 24]));
    for i in [1, 2, 6, 12, 24] {
        let blocks: Vec<Vec<f64>> = t.chunks(24 / i).map(<[f64]>::to_vec).collect();
        let gp = model(&x, &y, blocks, true, C);
        let var = gp.predict(xs.as_ref()).var;
        let err = norm(&gp.v);
        assert!(
            var.iter().zip(&prev_var).all(|(v, p)| *v <= p + 1e-12),
            "i = {i}"
        );
        assert!(err <= prev_err + 1e-12, "i = {i}: {err} > {prev_err}");
        (prev_var, prev_err) = (var, err);
    }
    assert!(prev_err < 1e-8, "i = n solves exactly");
}

#[test]
fn predictions_and_elbo_depend_only_on_the_span_of_the_actions() {
    let (x, y) = problem(22, 12, true);
    let xs = test_inputs(5, 13);
    let blocks = random_blocks(22, 4, 14);
    let base = model(&x, &y, blocks.clone(), true, C);
    let (mean, cov) = base.predict_joint(xs.as_ref());
    // Diagonal R through the block code path.
    let scaled: Vec<Vec<f64>> = blocks
        .iter()
        .zip([-3.0, 0.01, 7.5, -0.2])
        .map(|(t, r)| t.iter().map(|v| v * r).collect())
        .collect();
    let gp = model(&x, &y, scaled, true, C);
    let (mean_r, cov_r) = gp.predict_joint(xs.as_ref());
    assert!(rel_err(&mean_r, &mean) < 1e-8);
    assert!(rel_err(&entries(&cov_r), &entries(&cov)) < 1e-8);
    assert!((gp.elbo() - base.elbo()).abs() < 1e-8 * base.elbo().abs());
    // General R: no block structure left, so the dense reference with log det(SᵀDS).
    let dense = reference(&x, &y, true);
    let s = dense_actions(&blocks);
    let r = Mat::<f64>::from_fn(4, 4, |a, b| {
        if a == b {
            2.0
        } else {
            0.3 * (a as f64 - b as f64)
        }
    });
    let sr = &s * &r;
    let (mean_g, cov_g) = dense.posterior(Some(&sr), &xs);
    assert!(rel_err(&mean_g, &mean) < 1e-8);
    assert!(rel_err(&entries(&cov_g), &entries(&cov)) < 1e-8);
    let elbo_sr = dense.elbo_closed_form(&sr);
    assert!((elbo_sr - base.elbo()).abs() < 1e-8 * base.elbo().abs());
    assert!((dense.elbo(&sr) - base.elbo()).abs() < 1e-8 * base.elbo().abs());
}

#[test]
fn constant_weights_reduce_rcagp_to_cagp() {
    let (x, y) = problem(21, 15, true);
    let xs = test_inputs(6, 16);
    let blocks = random_blocks(21, 5, 17);
    let s2: f64 = 0.2;
    let cagp = model(&x, &y, blocks.clone(), false, C);
    // β = σ/√2 with c → ∞ gives w ≡ σ/√2.
    let beta = (s2 / 2.0).sqrt();
    let rcagp = super::CaGp::from_parts(
        x.clone(),
        y.clone(),
        kernel(),
        s2,
        0.3,
        Actions::Blocks(blocks.clone()),
        1e12,
        beta,
        true,
    )
    .unwrap();
    let (m1, c1) = cagp.predict_joint(xs.as_ref());
    let (m2, c2) = rcagp.predict_joint(xs.as_ref());
    assert!(rel_err(&m2, &m1) < 1e-8);
    assert!(rel_err(&entries(&c2), &entries(&c1)) < 1e-8);
    let n = 21.0;
    let offset = -n - 0.5 * n * (2.0 * std::f64::consts::PI * s2).ln();
    assert!((cagp.elbo() - (rcagp.elbo() + offset)).abs() < 1e-8 * cagp.elbo().abs());
    // More generally (β = 1, c → ∞): CaGP with noise σ⁴/(2β²).
    let wide = super::CaGp::from_parts(
        x.clone(),
        y.clone(),
        kernel(),
        s2,
        0.3,
        Actions::Blocks(blocks.clone()),
        1e12,
        1.0,
        true,
    )
    .unwrap();
    let narrow = super::CaGp::from_parts(
        x,
        y,
        kernel(),
        s2 * s2 / 2.0,
        0.3,
        Actions::Blocks(blocks),
        C,
        1.0,
        false,
    )
    .unwrap();
    let (m3, c3) = wide.predict_joint(xs.as_ref());
    let (m4, c4) = narrow.predict_joint(xs.as_ref());
    assert!(rel_err(&m3, &m4) < 1e-8);
    assert!(rel_err(&entries(&c3), &entries(&c4)) < 1e-8);
}

#[test]
fn sequential_algorithm_equals_the_batch_solution() {
    let (x, y) = problem(20, 18, true);
    let blocks = random_blocks(20, 6, 19);
    let gp = model(&x, &y, blocks.clone(), true, C);
    let dense = reference(&x, &y, true);
    let kt = dense.k_tilde();
    let s = dense_actions(&blocks);
    // Algorithm S with C̃ kept as Σ d dᵀ/η.
    let n = 20;
    let mut c = Mat::<f64>::zeros(n, n);
    let mut v = vec![0.0; n];
    for j in 0..6 {
        let sj: Vec<f64> = (0..n).map(|a| s[(a, j)]).collect();
        let res: Vec<f64> = (0..n)
            .map(|a| dense.r[a] - (0..n).map(|b| kt[(a, b)] * v[b]).sum::<f64>())
            .collect();
        let alpha: f64 = (0..n).map(|a| sj[a] * res[a]).sum();
        let z: Vec<f64> = (0..n)
            .map(|a| (0..n).map(|b| kt[(a, b)] * sj[b]).sum())
            .collect();
        let d: Vec<f64> = (0..n)
            .map(|a| sj[a] - (0..n).map(|b| c[(a, b)] * z[b]).sum::<f64>())
            .collect();
        let eta: f64 = (0..n).map(|a| z[a] * d[a]).sum();
        c += Mat::<f64>::from_fn(n, n, |a, b| d[a] * d[b] / eta);
        for a in 0..n {
            v[a] += alpha / eta * d[a];
        }
    }
    assert!(rel_err(&v, &gp.v) < 1e-8);
    // The batch C̃ = S G⁻¹ Sᵀ from the model's own factor.
    let batch = &s * gp.chol.inverse() * s.transpose();
    assert!(rel_err(&entries(&c), &entries(&batch)) < 1e-8);
}

#[test]
fn block_t_is_the_dense_projected_noise() {
    let blocks = random_blocks(17, 4, 20);
    let acts = BlockActions::from_blocks(17, blocks.clone()).unwrap();
    let d: Vec<f64> = (0..17).map(|j| 0.05 + 0.3 * j as f64).collect();
    let s = dense_actions(&blocks);
    let dm = Mat::<f64>::from_fn(17, 17, |a, b| if a == b { d[a] } else { 0.0 });
    let sds = s.transpose() * dm * &s;
    let log_d: Vec<f64> = d.iter().map(|v| v.ln()).collect();
    let t = acts.log_t(&log_d);
    for a in 0..4 {
        for b in 0..4 {
            let want = if a == b { t[a].0.exp() } else { 0.0 };
            assert!(
                (sds[(a, b)] - want).abs() < 1e-12 * sds[(a, a)],
                "({a}, {b})"
            );
        }
    }
    // The log-sum-exp survives noise that overflows, and the floor catches a zero block.
    let huge: Vec<f64> = log_d.iter().map(|v| v + 1000.0).collect();
    let t_huge = acts.log_t(&huge);
    assert!((t_huge[1].0 - (t[1].0 + 1000.0)).abs() < 1e-10);
    let mut zero = blocks;
    zero[2] = vec![0.0; zero[2].len()];
    let t0 = BlockActions::from_blocks(17, zero).unwrap().log_t(&log_d);
    assert_eq!(t0[2], (1e-30f64.ln(), true));
}
