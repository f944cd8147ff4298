use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::kernels::{Coregion, Covariance, Kernel, LmcTerm, MultiOutputKernel};
use crate::linalg::Cholesky;
use crate::means::Mean;
use crate::models::exact::ExactGp;
use crate::models::hyper::GpHyper;

/// A small single-output problem with two gross outliers and non-trivial weights.
fn single(n: usize, seed: u64) -> (Mat<f64>, Vec<f64>, Vec<f64>, ImqWeights) {
    let mut rng = StdRng::seed_from_u64(seed);
    let x = Mat::from_fn(n, 2, |_, _| rng.random_range(-2.0f64..2.0));
    let mut y: Vec<f64> = (0..n)
        .map(|i| (1.5 * x[(i, 0)]).sin() + 0.3 * x[(i, 1)] + 0.1 * rng.random_range(-1.0..1.0))
        .collect();
    y[1] += 6.0;
    y[n - 2] -= 8.0;
    let prior = vec![0.05; n];
    let resid: Vec<f64> = y.iter().zip(&prior).map(|(a, b)| a - b).collect();
    let (c, _) = crate::robust::soft_threshold(&resid, 0.2).unwrap();
    let w = ImqWeights::new(&y, &prior, &vec![c; n]);
    (x, y, prior, w)
}

/// Brute-force LOO: delete entry j from Q and z and predict it from the rest.
fn brute_force_loo<C: LooCovariance>(
    cov: &C,
    x: MatRef<'_, f64>,
    terms: &RobustTerms<'_>,
    noise: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let n = terms.y.len();
    let k = cov.matrix(x);
    let (n_eff, z) = terms.noise_and_targets(noise);
    let mut mean = Vec::new();
    let mut var = Vec::new();
    for j in 0..n {
        let keep: Vec<usize> = (0..n).filter(|&i| i != j).collect();
        let q = Mat::from_fn(n - 1, n - 1, |a, b| {
            k[(keep[a], keep[b])] + if a == b { n_eff[keep[a]] } else { 0.0 }
        });
        let chol = Cholesky::factor(&q, "test", Parallelism::Sequential).unwrap();
        let kj: Vec<f64> = keep.iter().map(|&i| k[(i, j)]).collect();
        let zj: Vec<f64> = keep.iter().map(|&i| z[i]).collect();
        let a = chol.solve_vec(&zj);
        let b = chol.solve_vec(&kj);
        mean.push(terms.prior[j] + kj.iter().zip(&a).map(|(u, v)| u * v).sum::<f64>());
        var.push(k[(j, j)] - kj.iter().zip(&b).map(|(u, v)| u * v).sum::<f64>());
    }
    (mean, var)
}

#[test]
fn closed_form_loo_equals_brute_force_refits() {
    let (x, y, prior, w) = single(25, 1);
    let group = vec![0; y.len()];
    let terms = RobustTerms {
        y: &y,
        prior: &prior,
        group: &group,
        weights: &w,
    };
    let kernel = Kernel::parse("const(var=1.3) * se(ls=[0.7, 1.1])").unwrap();
    let noise = [0.04];
    let loo = loo_predictive(&kernel, x.as_ref(), &terms, &noise, Parallelism::Sequential).unwrap();
    let (mean, var) = brute_force_loo(&kernel, x.as_ref(), &terms, &noise);
    for j in 0..y.len() {
        assert!(
            (loo.mean[j] - mean[j]).abs() < 1e-10,
            "mean {j}: {} vs {}",
            loo.mean[j],
            mean[j]
        );
        assert!((loo.latent_var[j] - var[j]).abs() < 1e-10, "var {j}");
        assert!((loo.var[j] - var[j] - noise[0]).abs() < 1e-10);
    }
    // The paper's printed LOO variance 1/d − σ⁴ w/2 (with w = ŵ σ/√2) is wrong: on the
    // outliers it differs from brute force by orders of magnitude more than roundoff.
    let (n_eff, _) = terms.noise_and_targets(&noise);
    let j = 1;
    let d = 1.0 / (loo.latent_var[j] + n_eff[j]);
    let printed =
        1.0 / d - noise[0] * noise[0] * (w.w_hat[j] * noise[0].sqrt() / 2f64.sqrt()) / 2.0;
    assert!(
        (printed - var[j]).abs() > 1e-2,
        "printed {printed} vs {}",
        var[j]
    );
}

#[test]
fn gaussian_weights_give_the_exact_gp_loo() {
    let (x, y, _, _) = single(30, 2);
    let n = y.len();
    let prior = vec![0.0; n];
    let group = vec![0; n];
    let w = ImqWeights::gaussian(n);
    let terms = RobustTerms {
        y: &y,
        prior: &prior,
        group: &group,
        weights: &w,
    };
    let kernel = Kernel::parse("const(var=0.8) * matern52(ls=[0.9, 1.4])").unwrap();
    let noise = 0.07;
    let loo = loo_predictive(
        &kernel,
        x.as_ref(),
        &terms,
        &[noise],
        Parallelism::Sequential,
    )
    .unwrap();
    let gp = ExactGp::at(
        GpHyper {
            kernel: kernel.clone(),
            mean: Mean::Zero,
            noise,
        },
        x.as_ref(),
        &y,
        0.0,
    )
    .unwrap();
    let exact = gp.loo();
    for j in 0..n {
        assert!((loo.mean[j] - exact.mean[j]).abs() < 1e-11);
        assert!((loo.var[j] - exact.var[j]).abs() < 1e-11);
    }
    // φ with ŵ ≡ 1 is the plain LOO log predictive density.
    let phi = weighted_loo(
        &kernel,
        x.as_ref(),
        &terms,
        &[noise],
        Parallelism::Sequential,
        Derivatives::None,
    )
    .unwrap()
    .value;
    let direct: f64 = (0..n)
        .map(|j| {
            let (m, v) = (exact.mean[j], exact.var[j]);
            -0.5 * (2.0 * std::f64::consts::PI * v).ln() - (y[j] - m).powi(2) / (2.0 * v)
        })
        .sum();
    assert!((phi - direct).abs() < 1e-10 * direct.abs());
}

/// Central-difference check of the whole gradient.
fn check_gradient<C: LooCovariance>(
    cov: &C,
    set: impl Fn(&C, &[f64]) -> C,
    params: &[f64],
    x: MatRef<'_, f64>,
    terms: &RobustTerms<'_>,
    log_noise: &[f64],
) {
    let eval = |v: &[f64], derivatives: Derivatives| {
        let (pk, pn) = v.split_at(params.len());
        let c = set(cov, pk);
        let noise: Vec<f64> = pn.iter().map(|l| l.exp()).collect();
        weighted_loo(&c, x, terms, &noise, Parallelism::Sequential, derivatives).unwrap()
    };
    let v0: Vec<f64> = params.iter().chain(log_noise).copied().collect();
    let g = eval(&v0, Derivatives::Gradient).grad;
    assert_eq!(g.len(), v0.len());
    let h = 1e-5;
    for j in 0..v0.len() {
        let mut up = v0.clone();
        up[j] += h;
        let mut down = v0.clone();
        down[j] -= h;
        let fd =
            (eval(&up, Derivatives::None).value - eval(&down, Derivatives::None).value) / (2.0 * h);
        assert!(
            (fd - g[j]).abs() < 2e-6 * (1.0 + fd.abs()),
            "parameter {j}: analytic {} vs fd {fd}",
            g[j]
        );
    }
}

#[test]
fn gradient_matches_finite_differences_single_output() {
    let (x, y, prior, w) = single(40, 3);
    let group = vec![0; y.len()];
    let terms = RobustTerms {
        y: &y,
        prior: &prior,
        group: &group,
        weights: &w,
    };
    let kernel = Kernel::parse("const(var=1.3) * se(ls=[0.7, 1.1]) + matern32(ls=2)").unwrap();
    let set = |k: &Kernel, p: &[f64]| {
        let mut k = k.clone();
        k.set_log_params(p).unwrap();
        k
    };
    check_gradient(
        &kernel,
        set,
        &kernel.log_params(),
        x.as_ref(),
        &terms,
        &[0.05f64.ln()],
    );
}

#[test]
fn gradient_matches_finite_differences_multi_output() {
    // Heterotopic (the dense path) and complete (the ICM's folded contraction, and for two
    // outputs its block inverse).
    for (outputs, complete) in [(3, false), (3, true), (2, true)] {
        let (x, y, group, prior, w, cov) = multi_output(outputs, complete);
        let terms = RobustTerms {
            y: &y,
            prior: &prior,
            group: &group,
            weights: &w,
        };
        let set = |k: &MultiOutputKernel, p: &[f64]| {
            let mut k = k.clone();
            k.set_params(p).unwrap();
            k
        };
        check_gradient(
            &cov,
            set,
            &cov.params(),
            x.as_ref(),
            &terms,
            &[0.03f64.ln(), 0.08f64.ln()],
        );
        // And its LOO is the brute-force one.
        let noise = [0.03, 0.08];
        let loo =
            loo_predictive(&cov, x.as_ref(), &terms, &noise, Parallelism::Sequential).unwrap();
        let (mean, var) = brute_force_loo(&cov, x.as_ref(), &terms, &noise);
        for j in 0..y.len() {
            assert!((loo.mean[j] - mean[j]).abs() < 1e-10);
            assert!((loo.latent_var[j] - var[j]).abs() < 1e-10);
        }
    }
}

/// A problem with `outputs` (2 or 3) outputs over 15 inputs with one outlier: inputs,
/// targets, noise groups (output 1 has its own), prior, weights and an ICM covariance with
/// `κ`. Unless `complete`, some entries are missing (heterotopic).
fn multi_output(
    outputs: usize,
    complete: bool,
) -> (
    Mat<f64>,
    Vec<f64>,
    Vec<usize>,
    Vec<f64>,
    ImqWeights,
    MultiOutputKernel,
) {
    let mut rng = StdRng::seed_from_u64(4);
    let mut rows = Vec::new();
    let mut y = Vec::new();
    for i in 0..15 {
        let xi: f64 = rng.random_range(-2.0..2.0);
        for t in 0..outputs {
            let noise = 0.1 * rng.random_range(-1.0..1.0);
            if !complete && (i + t) % 4 == 3 {
                continue;
            }
            rows.push([xi, t as f64]);
            let outlier = if i == 5 && t == 1 { 7.0 } else { 0.0 };
            y.push((xi + t as f64).sin() + noise + outlier);
        }
    }
    let x = Mat::from_fn(rows.len(), 2, |i, j| rows[i][j]);
    let group: Vec<usize> = rows
        .iter()
        .map(|r| if r[1] == 1.0 { 1 } else { 0 })
        .collect();
    let prior = vec![0.1; y.len()];
    let w = ImqWeights::new(&y, &prior, &vec![0.6; y.len()]);
    let a = Mat::from_fn(outputs, 2, |i, k| {
        [[1.0, 0.0], [0.7, 0.5], [-0.4, 0.3]][i][k]
    });
    let kappa = [0.1, 0.05, 0.2][..outputs].to_vec();
    let cov = MultiOutputKernel::new(vec![LmcTerm {
        kernel: Kernel::parse("se(ls=0.8)").unwrap(),
        coregion: Coregion::new(a, Some(kappa)).unwrap(),
    }])
    .unwrap();
    (x, y, group, prior, w, cov)
}

/// `φ_w` at the covariance and noise variances both scaled by `c`.
fn at_scale<C: LooCovariance>(
    cov: &C,
    x: MatRef<'_, f64>,
    terms: &RobustTerms<'_>,
    noise: &[f64],
    c: f64,
) -> WeightedLoo {
    let s: Vec<f64> = noise.iter().map(|v| v * c).collect();
    let scaled = cov.scaled(c).unwrap();
    weighted_loo(
        &scaled,
        x,
        terms,
        &s,
        Parallelism::Sequential,
        Derivatives::None,
    )
    .unwrap()
}

/// The profiled objective is `φ_w` at `(ĉK, ĉσ²)` (value and LOO predictive), and no other
/// common scale does better: a log-spaced scan, and `ĉ(1 ± 10⁻⁴)`, are all lower.
fn check_profile<C: LooCovariance>(
    cov: &C,
    x: MatRef<'_, f64>,
    terms: &RobustTerms<'_>,
    noise: &[f64],
) {
    let p = profiled_weighted_loo(
        cov,
        x,
        terms,
        noise,
        Parallelism::Sequential,
        Derivatives::None,
    )
    .unwrap();
    let c = p.scale;
    let direct = at_scale(cov, x, terms, noise, c);
    assert!(
        (p.loo.value - direct.value).abs() < 1e-10 * direct.value.abs().max(1.0),
        "{} vs {}",
        p.loo.value,
        direct.value
    );
    for j in 0..terms.y.len() {
        assert!((p.loo.loo.mean[j] - direct.loo.mean[j]).abs() < 1e-10);
        assert!((p.loo.loo.var[j] - direct.loo.var[j]).abs() < 1e-10 * direct.loo.var[j]);
    }
    for k in -20..=20 {
        let other = c * 10f64.powf(k as f64 / 5.0);
        if k != 0 {
            assert!(
                at_scale(cov, x, terms, noise, other).value < p.loo.value,
                "c = {other}"
            );
        }
    }
    // Stationary in c: the symmetric difference at ±10⁻⁴ is second order.
    let up = at_scale(cov, x, terms, noise, c * 1.0001).value;
    let down = at_scale(cov, x, terms, noise, c / 1.0001).value;
    assert!(up < p.loo.value && down < p.loo.value);
    assert!(((up - down) / 2e-4).abs() < 1e-5 * (1.0 + p.loo.value.abs()));
}

#[test]
fn profiled_objective_is_the_best_common_scale() {
    let (x, y, prior, w) = single(30, 5);
    let group = vec![0; y.len()];
    let terms = RobustTerms {
        y: &y,
        prior: &prior,
        group: &group,
        weights: &w,
    };
    let kernel = Kernel::parse("const(var=0.4) * se(ls=[0.7, 1.1])").unwrap();
    check_profile(&kernel, x.as_ref(), &terms, &[0.02]);
    let (x, y, group, prior, w, cov) = multi_output(3, false);
    let terms = RobustTerms {
        y: &y,
        prior: &prior,
        group: &group,
        weights: &w,
    };
    check_profile(&cov, x.as_ref(), &terms, &[0.03, 0.08]);
}

#[test]
fn profiled_gradient_matches_finite_differences() {
    // Heterotopic (the dense path) and complete (the ICM's folded contraction, and for two
    // outputs its block inverse).
    check_profiled_gradient(3, false);
    check_profiled_gradient(3, true);
    check_profiled_gradient(2, true);
}

fn check_profiled_gradient(outputs: usize, complete: bool) {
    let (x, y, group, prior, w, cov) = multi_output(outputs, complete);
    let terms = RobustTerms {
        y: &y,
        prior: &prior,
        group: &group,
        weights: &w,
    };
    let eval = |v: &[f64], grad: bool| {
        let (pk, pn) = v.split_at(cov.n_params());
        let mut c = cov.clone();
        c.set_params(pk).unwrap();
        let noise: Vec<f64> = pn.iter().map(|l| l.exp()).collect();
        let seq = Parallelism::Sequential;
        profiled_weighted_loo(
            &c,
            x.as_ref(),
            &terms,
            &noise,
            seq,
            if grad {
                Derivatives::Gradient
            } else {
                Derivatives::None
            },
        )
        .unwrap()
    };
    let v0: Vec<f64> = cov
        .params()
        .into_iter()
        .chain([0.03f64.ln(), 0.08f64.ln()])
        .collect();
    let p0 = eval(&v0, true);
    assert!(
        (p0.scale - 1.0).abs() > 0.05,
        "a non-trivial scale: {}",
        p0.scale
    );
    let g = p0.loo.grad;
    assert_eq!(g.len(), v0.len());
    let h = 1e-5;
    for j in 0..v0.len() {
        let (mut up, mut down) = (v0.clone(), v0.clone());
        up[j] += h;
        down[j] -= h;
        let fd = (eval(&up, false).loo.value - eval(&down, false).loo.value) / (2.0 * h);
        assert!(
            (fd - g[j]).abs() < 2e-6 * (1.0 + fd.abs()),
            "parameter {j}: analytic {} vs fd {fd}",
            g[j]
        );
    }
    // Scaling A by √c and κ and every noise by c together leaves the profile unchanged: the
    // gradient is orthogonal to that direction.
    let names = cov.param_names();
    let along: f64 = (cov.params().iter().zip(&names))
        .map(|(p, name)| match name {
            n if n.contains(".A[") => 0.5 * p,
            n if n.contains("kappa") => 1.0,
            _ => 0.0,
        })
        .chain([1.0, 1.0])
        .zip(&g)
        .map(|(d, gi)| d * gi)
        .sum();
    assert!(
        along.abs() < 1e-8 * g.iter().map(|v| v.abs()).sum::<f64>(),
        "{along}"
    );
}

#[test]
fn zero_residuals_have_no_profiled_scale() {
    // Targets equal to the prior mean and weights without score corrections: every LOO
    // residual is zero, so φ_w increases without bound as c → 0.
    let (x, y, _, _) = single(12, 6);
    let prior = y.clone();
    let w = ImqWeights {
        w_hat: vec![1.0; y.len()],
        g: vec![0.0; y.len()],
    };
    let group = vec![0; y.len()];
    let terms = RobustTerms {
        y: &y,
        prior: &prior,
        group: &group,
        weights: &w,
    };
    let kernel = Kernel::parse("const * se(ls=[1, 1])").unwrap();
    let r = profiled_weighted_loo(
        &kernel,
        x.as_ref(),
        &terms,
        &[0.1],
        Parallelism::Sequential,
        Derivatives::Gradient,
    );
    assert!(matches!(r, Err(ModelError::Invalid(m)) if m.contains("no positive profiled scale")));
}

/// [`multi_output`] on complete data with its entries in layout order (output by output).
fn layout_ordered(
    outputs: usize,
) -> (
    Mat<f64>,
    Vec<f64>,
    Vec<usize>,
    Vec<f64>,
    ImqWeights,
    MultiOutputKernel,
) {
    let (x, y, group, prior, _, mut cov) = multi_output(outputs, true);
    // One kernel parameter (the lengthscale; B carries the scale), as the ICMs of the fits.
    cov = MultiOutputKernel::new(
        cov.terms()
            .iter()
            .map(|term| {
                let mut kernel = term.kernel.clone();
                kernel.fix_scale();
                LmcTerm {
                    kernel,
                    coregion: term.coregion.clone(),
                }
            })
            .collect(),
    )
    .unwrap();
    let m = y.len() / outputs;
    // Entry i·T + t (input i, output t) goes to t·m + i.
    let from = |k: usize| (k % m) * outputs + k / m;
    let x = Mat::from_fn(y.len(), 2, |k, j| x[(from(k), j)]);
    let y: Vec<f64> = (0..y.len()).map(|k| y[from(k)]).collect();
    let group: Vec<usize> = (0..y.len()).map(|k| group[from(k)]).collect();
    let prior: Vec<f64> = (0..y.len()).map(|k| prior[from(k)]).collect();
    let w = ImqWeights::new(&y, &prior, &vec![0.6; y.len()]);
    (x, y, group, prior, w, cov)
}

#[test]
fn fisher_matrix_and_gradient_match_the_loo_predictives_jacobian() {
    for outputs in [2, 3] {
        let (x, y, group, prior, w, cov) = layout_ordered(outputs);
        let terms = RobustTerms {
            y: &y,
            prior: &prior,
            group: &group,
            weights: &w,
        };
        let noise = [0.03, 0.08];
        let seq = Parallelism::Sequential;
        let with_fisher = Derivatives::GradientAndFisher;
        let p = profiled_weighted_loo(&cov, x.as_ref(), &terms, &noise, seq, with_fisher).unwrap();
        let fisher = p
            .loo
            .fisher
            .clone()
            .expect("an ICM on complete data in layout order has one");
        // The threaded code paths give the same derivatives.
        let par = Parallelism::Parallel;
        let threaded = profiled_weighted_loo(&cov, x.as_ref(), &terms, &noise, par, with_fisher);
        let threaded = threaded.unwrap();
        let close = |a: &[f64], b: &[f64]| {
            let size = a.iter().fold(0.0, |m: f64, v| m.max(v.abs()));
            a.iter().zip(b).all(|(u, v)| (u - v).abs() <= 1e-12 * size)
        };
        assert!(close(&threaded.loo.grad, &p.loo.grad));
        let threaded_fisher = threaded.loo.fisher.unwrap();
        let flat = |m: &Mat<f64>| {
            (0..m.ncols())
                .flat_map(|j| m.col_as_slice(j).to_vec())
                .collect::<Vec<_>>()
        };
        assert!(close(&flat(&threaded_fisher), &flat(&fisher)));
        // Unprofiled (unit scale), as the fit continues where the profile leaves the bounds.
        let plain = weighted_loo(&cov, x.as_ref(), &terms, &noise, seq, with_fisher).unwrap();
        let plain_fisher = plain.fisher.expect("the same Jacobian, without ln c");
        // The gradients from the Jacobian against the adjoint contraction's (itself checked
        // by finite differences above).
        let adjoint =
            profiled_weighted_loo(&cov, x.as_ref(), &terms, &noise, seq, Derivatives::Gradient);
        let plain_adjoint =
            weighted_loo(&cov, x.as_ref(), &terms, &noise, seq, Derivatives::Gradient);
        for (from_jacobian, adjoint) in [
            (&p.loo.grad, adjoint.unwrap().loo.grad),
            (&plain.grad, plain_adjoint.unwrap().grad),
        ] {
            let size = adjoint.iter().fold(0.0, |m: f64, g| m.max(g.abs()));
            assert_eq!(from_jacobian.len(), adjoint.len());
            for (k, (a, b)) in from_jacobian.iter().zip(&adjoint).enumerate() {
                assert!(
                    (a - b).abs() < 1e-8 * size,
                    "{outputs} outputs, gradient {k}: {a} from the Jacobian, {b} adjoint"
                );
            }
        }
        let v0: Vec<f64> = cov.params().into_iter().chain(noise.map(f64::ln)).collect();
        // The LOO residuals and variances at the flat vector v, at the common scale c.
        let loo_at = |v: &[f64], c: f64| {
            let (pk, pn) = v.split_at(cov.n_params());
            let mut k = cov.clone();
            k.set_params(pk).unwrap();
            let s: Vec<f64> = pn.iter().map(|l| l.exp()).collect();
            let loo = at_scale(&k, x.as_ref(), &terms, &s, c).loo;
            let r: Vec<f64> = (0..y.len()).map(|j| y[j] - loo.mean[j]).collect();
            (r, loo.var)
        };
        // The Fisher matrix at scale c over [v, ln c] from a central-difference Jacobian.
        let brute_fisher = |c: f64| {
            let h = 1e-5;
            let cols = v0.len() + 1;
            let mut jr = Mat::<f64>::zeros(y.len(), cols);
            let mut jv = Mat::<f64>::zeros(y.len(), cols);
            for k in 0..cols {
                let (up, down) = if k < v0.len() {
                    let (mut up, mut down) = (v0.clone(), v0.clone());
                    up[k] += h;
                    down[k] -= h;
                    (loo_at(&up, c), loo_at(&down, c))
                } else {
                    (loo_at(&v0, c * h.exp()), loo_at(&v0, c * (-h).exp()))
                };
                for j in 0..y.len() {
                    jr[(j, k)] = (up.0[j] - down.0[j]) / (2.0 * h);
                    jv[(j, k)] = (up.1[j] - down.1[j]) / (2.0 * h);
                }
            }
            let var = loo_at(&v0, c).1;
            Mat::from_fn(cols, cols, |a, b| {
                (0..y.len())
                    .map(|j| {
                        let w2 = w.w_hat[j] * w.w_hat[j];
                        w2 * (jr[(j, a)] * jr[(j, b)] / var[j]
                            + jv[(j, a)] * jv[(j, b)] / (2.0 * var[j] * var[j]))
                    })
                    .sum::<f64>()
            })
        };
        let last = v0.len();
        // Profiled: ln ĉ Schur-complemented away; unprofiled: the matrix without its column.
        let full = brute_fisher(p.scale);
        let unit = brute_fisher(1.0);
        let checks = [
            (
                &fisher,
                Mat::from_fn(last, last, |a, b| {
                    full[(a, b)] - full[(a, last)] * full[(last, b)] / full[(last, last)]
                }),
            ),
            (&plain_fisher, Mat::from_fn(last, last, |a, b| unit[(a, b)])),
        ];
        for (fast, brute) in checks {
            let largest = (0..last).map(|a| brute[(a, a)]).fold(0.0, f64::max);
            assert_eq!((fast.nrows(), fast.ncols()), (last, last));
            for a in 0..last {
                for b in 0..last {
                    assert!(
                        (fast[(a, b)] - brute[(a, b)]).abs() < 1e-6 * largest,
                        "{outputs} outputs, entry ({a}, {b}): {} vs {}",
                        fast[(a, b)],
                        brute[(a, b)]
                    );
                }
            }
        }
    }
    // A second kernel parameter (the variance, which B makes redundant) costs more than the
    // Gauss–Newton starts save: no Fisher.
    let (x, y, group, prior, w, _) = layout_ordered(2);
    let (_, _, _, _, _, two) = multi_output(2, true);
    assert_eq!(two.terms()[0].kernel.n_params(), 2);
    let terms = RobustTerms {
        y: &y,
        prior: &prior,
        group: &group,
        weights: &w,
    };
    let seq = Parallelism::Sequential;
    let with_fisher = Derivatives::GradientAndFisher;
    let p = profiled_weighted_loo(&two, x.as_ref(), &terms, &[0.03, 0.08], seq, with_fisher);
    assert!(p.unwrap().loo.fisher.is_none());
    // Entries interleaved by input: the ICM has no cheap derivatives there, so no Fisher.
    let (x, y, group, prior, w, cov) = multi_output(2, true);
    let terms = RobustTerms {
        y: &y,
        prior: &prior,
        group: &group,
        weights: &w,
    };
    let seq = Parallelism::Sequential;
    let with_fisher = Derivatives::GradientAndFisher;
    let p = profiled_weighted_loo(&cov, x.as_ref(), &terms, &[0.03, 0.08], seq, with_fisher);
    assert!(p.unwrap().loo.fisher.is_none());
}
