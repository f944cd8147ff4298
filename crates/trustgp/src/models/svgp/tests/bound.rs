//! The ELBO against closed forms: Titsias' collapsed bound at the optimal `q`, the exact GP at
//! `Z = X`, the dense KL divergence and unwhitened marginals, and unbiased minibatches.

use std::f64::consts::PI;

use faer::{Mat, MatRef};

use super::super::elbo::{evaluate, Need, Rows};
use super::super::natural::natural_step;
use super::super::state::Whitened;
use super::super::train::Batches;
use super::super::{Svgp, SvgpLikelihood};
use super::*;
use crate::models::exact::ExactGp;
use crate::models::hyper::GpHyper;

/// The optimal whitened `q` for the Gaussian likelihood, densely: with `P = K_uu + σ⁻² K_uf K_fu`,
/// `Σ_u = K_uu P⁻¹ K_uu` and `μ_u − m(Z) = σ⁻² K_uu P⁻¹ K_uf r`, so `S̃ = L⁻¹ Σ_u L⁻ᵀ = Lᵀ P⁻¹ L`
/// and `m̃ = L⁻¹ (μ_u − m(Z)) = σ⁻² Lᵀ P⁻¹ K_uf r`.
fn optimal_q(
    k: &Kernel,
    mean: &Mean,
    z: MatRef<'_, f64>,
    x: MatRef<'_, f64>,
    y: &[f64],
    s2: f64,
) -> (Vec<f64>, Mat<f64>) {
    let (kuu, chol) = kuu(k, z);
    let l = lower_of(&chol);
    let kuf = k.cross(z, x);
    let prior = mean.eval(x);
    let r = Mat::from_fn(y.len(), 1, |i, _| y[i] - prior[i]);
    let p = &kuu + (&kuf * kuf.transpose()) * faer::Scale(1.0 / s2);
    let p_inv = Cholesky::factor(&p, "P", Parallelism::Sequential)
        .unwrap()
        .inverse();
    let m_tilde = (l.transpose() * &p_inv * &kuf * &r) * faer::Scale(1.0 / s2);
    let s_tilde = l.transpose() * &p_inv * &l;
    let l_tilde = lower_of(&Cholesky::factor(&s_tilde, "S", Parallelism::Sequential).unwrap());
    ((0..z.nrows()).map(|i| m_tilde[(i, 0)]).collect(), l_tilde)
}

/// Titsias' collapsed bound `log N(y | m, Q + σ²I) − tr(K − Q)/(2σ²)`, with n×n matrices.
fn titsias(
    k: &Kernel,
    mean: &Mean,
    z: MatRef<'_, f64>,
    x: MatRef<'_, f64>,
    y: &[f64],
    s2: f64,
) -> f64 {
    let n = y.len();
    let (_, chol) = kuu(k, z);
    let kuf = k.cross(z, x);
    let q = kuf.transpose() * chol.inverse() * &kuf;
    let kff = k.matrix(x);
    let mut c = q.clone();
    (0..n).for_each(|i| c[(i, i)] += s2);
    let cc = Cholesky::factor(&c, "C", Parallelism::Sequential).unwrap();
    let prior = mean.eval(x);
    let r: Vec<f64> = (0..n).map(|i| y[i] - prior[i]).collect();
    let alpha = cc.solve_vec(&r);
    let quad: f64 = r.iter().zip(&alpha).map(|(a, b)| a * b).sum();
    let trace: f64 = (0..n).map(|i| kff[(i, i)] - q[(i, i)]).sum();
    -0.5 * quad - 0.5 * cc.log_det() - 0.5 * n as f64 * (2.0 * PI).ln() - trace / (2.0 * s2)
}

fn gaussian_svgp(mean: &Mean, z: Mat<f64>, s2: f64, q: (Vec<f64>, Mat<f64>)) -> Svgp {
    Svgp::from_parts(
        kernel(),
        mean.clone(),
        vec![s2],
        SvgpLikelihood::Gaussian,
        z,
        q.0,
        q.1,
    )
    .unwrap()
}

/// On more rows than one block, the full-data ELBO at the optimal `q` is Titsias' bound, every
/// other `q` is lower, and one natural-gradient step of size 1 from any `q` lands on the optimum.
#[test]
fn optimal_q_attains_the_collapsed_bound_and_is_the_maximum() {
    let (x, y) = data(1100, 0.3, 1);
    let (s2, mean) = (0.2, Mean::Constant { c: 0.3 });
    let generic = state(SvgpLikelihood::Gaussian, vec![s2], mean.clone(), 8, 2);
    let z = generic.z.clone();
    let best = optimal_q(&kernel(), &mean, z.as_ref(), x.as_ref(), &y, s2);
    let svgp = gaussian_svgp(&mean, z.clone(), s2, best.clone());
    let elbo = svgp.elbo(x.as_ref(), &y).unwrap();
    let bound = titsias(&kernel(), &mean, z.as_ref(), x.as_ref(), &y, s2);
    assert!(
        (elbo - bound).abs() < 1e-9 * bound.abs(),
        "{elbo} vs {bound}"
    );
    for k in 0..8 {
        let mut q = best.clone();
        match k % 3 {
            0 => q.0[k] += 0.05,
            1 => q.1[(k, k)] *= 1.05,
            _ => q.1[(k, k - 1)] -= 0.05,
        }
        let other = gaussian_svgp(&mean, z.clone(), s2, q)
            .elbo(x.as_ref(), &y)
            .unwrap();
        assert!(other < elbo, "perturbation {k}: {other} ≥ {elbo}");
    }
    let w = Whitened::new(&generic).unwrap();
    let stats = evaluate(&generic, &w, x.as_ref(), &y, Rows::All, Need::Statistics).unwrap();
    let (m_tilde, l_tilde) = natural_step(&generic, &stats, 1.0).unwrap();
    assert!(max_rel(&m_tilde, &best.0) < 1e-8);
    for j in 0..8 {
        let (a, b): (Vec<f64>, Vec<f64>) =
            (0..8).map(|i| (l_tilde[(i, j)], best.1[(i, j)])).unzip();
        assert!(max_rel(&a, &b) < 1e-8, "column {j}: {a:?} vs {b:?}");
    }
}

/// With the inducing inputs at the data and the optimal `q`, the SVGP's predictive is the
/// exact GP's (up to the 10⁻⁶ jitter on `K_uu`).
#[test]
fn inducing_at_the_data_recovers_the_exact_gp() {
    let (x, y) = data(30, 0.3, 3);
    let (xs, _) = data(20, 0.0, 4);
    let (s2, mean) = (
        0.25,
        Mean::Linear {
            w: vec![0.2, -0.1],
            b: 0.4,
        },
    );
    let best = optimal_q(&kernel(), &mean, x.as_ref(), x.as_ref(), &y, s2);
    let svgp = gaussian_svgp(&mean, x.clone(), s2, best);
    let hyper = GpHyper {
        kernel: kernel(),
        mean,
        noise: s2,
    };
    let exact = ExactGp::at(hyper, x.as_ref(), &y, 0.0)
        .unwrap()
        .predict(xs.as_ref(), true)
        .unwrap();
    let approx = svgp.predict(xs.as_ref());
    // The gap is the effect of the 1e-6 jitter on K_uu: 2.5e-5 here, and it shrinks in
    // proportion to the jitter (2.5e-8 with 1e-9).
    let (mut worst_mean, mut worst_var) = (0.0f64, 0.0f64);
    for i in 0..20 {
        worst_mean = worst_mean.max((approx.mean[i] - exact.mean[i]).abs());
        worst_var = worst_var.max((approx.var[i] - exact.var[i]).abs());
    }
    assert!(
        worst_mean < 5e-5 && worst_var < 5e-5,
        "{worst_mean:e}, {worst_var:e}"
    );
    let noisy = svgp.predictive_noise();
    assert_eq!(noisy, s2);
}

/// The KL term and the marginals equal their unwhitened dense forms with
/// `q(u) = N(m(Z) + L m̃, L S̃ Lᵀ)` and `p(u) = N(m(Z), K_uu)`.
#[test]
fn kl_and_marginals_match_the_unwhitened_dense_forms() {
    let mean = Mean::Constant { c: -0.2 };
    let s = state(SvgpLikelihood::StudentT, vec![5.0, 0.1], mean.clone(), 9, 5);
    let m = 9;
    let (kuu, chol) = kuu(&s.kernel, s.z.as_ref());
    let l = lower_of(&chol);
    let kuu_inv = chol.inverse();
    let mt = Mat::from_fn(m, 1, |i, _| s.m_tilde[i]);
    let mu_u = &l * &mt; // minus m(Z)
    let sigma_u = &l * &s.l_tilde * s.l_tilde.transpose() * l.transpose();
    let sc = Cholesky::factor(&sigma_u, "Σ_u", Parallelism::Sequential).unwrap();
    let trace: f64 = (0..m).map(|i| (&kuu_inv * &sigma_u)[(i, i)]).sum();
    let quad = (mu_u.transpose() * &kuu_inv * &mu_u)[(0, 0)];
    let dense_kl = 0.5 * (trace + quad - m as f64 + chol.log_det() - sc.log_det());
    let svgp = Svgp::from_parts(
        s.kernel.clone(),
        mean.clone(),
        s.lik_params.clone(),
        s.likelihood,
        s.z.clone(),
        s.m_tilde.clone(),
        s.l_tilde.clone(),
    )
    .unwrap();
    assert!(
        (svgp.kl_divergence() - dense_kl).abs() < 1e-10 * dense_kl,
        "{dense_kl}"
    );
    let (xs, _) = data(1500, 0.0, 6);
    let kxu = s.kernel.cross(xs.as_ref(), s.z.as_ref());
    let proj = &kxu * &kuu_inv;
    let dense_mean = &proj * &mu_u;
    let cov_term = &proj * (&sigma_u - &kuu);
    let prior_var = s.kernel.diag(xs.as_ref());
    let got = svgp.predict(xs.as_ref());
    for i in 0..xs.nrows() {
        let v: f64 = prior_var[i] + (0..m).map(|k| cov_term[(i, k)] * proj[(i, k)]).sum::<f64>();
        assert!(
            (got.mean[i] - (-0.2 + dense_mean[(i, 0)])).abs() < 1e-9,
            "mean {i}"
        );
        assert!(
            (got.var[i] - v).abs() < 1e-9 * v.max(1e-3),
            "var {i}: {} vs {v}",
            got.var[i]
        );
    }
    assert!((svgp.predictive_noise() - 0.1 * 5.0 / 3.0).abs() < 1e-15);
    // A block of fewer rows than inducing points takes the whitened path (P K_uf from
    // A = L⁻¹ K_uf, no P): the same marginals.
    let few = svgp.predict(xs.subrows(0, 5));
    assert!(max_rel(&few.mean, &got.mean[..5]) < 1e-10);
    assert!(max_rel(&few.var, &got.var[..5]) < 1e-10);
}

/// The average of the minibatch estimates over one shuffled epoch of equal batches is the
/// full-data ELBO, and the epoch visits every row once.
#[test]
fn minibatch_estimate_is_unbiased_over_an_epoch() {
    let (x, y) = data(60, 0.3, 7);
    for (lik, params) in [
        (SvgpLikelihood::Gaussian, vec![0.3]),
        (SvgpLikelihood::StudentT, vec![3.0, 0.2]),
    ] {
        let s = state(lik, params, Mean::Zero, 5, 8);
        let svgp = Svgp::from_parts(
            s.kernel,
            s.mean,
            s.lik_params,
            lik,
            s.z,
            s.m_tilde,
            s.l_tilde,
        )
        .unwrap();
        let full = svgp.elbo(x.as_ref(), &y).unwrap();
        let mut batches = Batches::new(60, 15, 9);
        let mut seen = vec![0; 60];
        let mut sum = 0.0;
        for _ in 0..4 {
            let batch = batches.next_batch().to_vec();
            assert_eq!(batch.len(), 15);
            batch.iter().for_each(|&r| seen[r] += 1);
            sum += svgp.elbo_minibatch(x.as_ref(), &y, &batch).unwrap();
        }
        assert!(seen.iter().all(|&c| c == 1));
        assert!(
            (sum / 4.0 - full).abs() < 1e-12 * full.abs(),
            "{} vs {full}",
            sum / 4.0
        );
        assert!(svgp.elbo_minibatch(x.as_ref(), &y, &[]).is_err());
        assert!(svgp.elbo_minibatch(x.as_ref(), &y, &[60]).is_err());
    }
}
