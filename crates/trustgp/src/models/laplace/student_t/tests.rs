use std::f64::consts::PI;

use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::kernels::{Coregion, Kernel, LmcTerm, MultiOutputKernel};
use crate::likelihoods::{ln_gamma_half_ratio, Likelihood, StudentT};
use crate::means::Mean;
use crate::models::exact::ExactGp;
use crate::models::hyper::GpHyper;

/// A 2-D single-output problem with two gross outliers (so that `W < 0` at the mode).
fn single(n: usize, seed: u64) -> (Mat<f64>, Vec<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let x = Mat::from_fn(n, 2, |_, _| rng.random_range(-2.0f64..2.0));
    let mut y: Vec<f64> = (0..n)
        .map(|i| (1.5 * x[(i, 0)]).sin() + 0.3 * x[(i, 1)] + 0.1 * rng.random_range(-1.0..1.0))
        .collect();
    y[1] += 4.0;
    y[n - 2] -= 5.0;
    let prior = (0..n).map(|i| 0.05 * x[(i, 1)]).collect();
    (x, y, prior)
}

/// Three outputs over 15 inputs, heterotopic, one outlier; noise shared by outputs 0 and 2.
fn multi() -> (Mat<f64>, Vec<f64>, Vec<usize>, MultiOutputKernel) {
    let mut rng = StdRng::seed_from_u64(4);
    let mut rows = Vec::new();
    let mut y = Vec::new();
    for i in 0..15 {
        let xi: f64 = rng.random_range(-2.0..2.0);
        for t in 0..3 {
            if (i + t) % 4 == 3 {
                continue;
            }
            rows.push([xi, t as f64]);
            let outlier = if i == 5 && t == 1 { 3.0 } else { 0.0 };
            y.push((xi + t as f64).sin() + 0.1 * rng.random_range(-1.0..1.0) + outlier);
        }
    }
    let x = Mat::from_fn(rows.len(), 2, |i, j| rows[i][j]);
    let group = rows.iter().map(|r| usize::from(r[1] == 1.0)).collect();
    let a = Mat::from_fn(3, 2, |i, k| [[1.0, 0.0], [0.7, 0.5], [-0.4, 0.3]][i][k]);
    let cov = MultiOutputKernel::new(vec![LmcTerm {
        kernel: Kernel::parse("se(ls=0.8)").unwrap(),
        coregion: Coregion::new(a, Some(vec![0.1, 0.05, 0.2])).unwrap(),
    }])
    .unwrap();
    (x, y, group, cov)
}

/// Value and gradient with the mode found to rounding (tolerance 1e-15), from a cold start.
fn tight<C: Covariance>(cov: &C, data: &StudentTData<'_>, noise: &[f64], nu: f64) -> Laplace {
    evaluate(cov, data, noise, nu, None, true, 1e-15).unwrap().0
}

/// Central differences over [covariance params, ln σ²_g]; returns the worst relative error.
fn check_gradient<C: Covariance>(cov: &C, data: &StudentTData<'_>, noise: &[f64], nu: f64) -> f64 {
    let nk = cov.n_params();
    let mut v0 = cov.params();
    v0.extend(noise.iter().map(|s| s.ln()));
    let at = |v: &[f64]| {
        let mut c = cov.clone();
        c.set_params(&v[..nk]).unwrap();
        let nz: Vec<f64> = v[nk..].iter().map(|l| l.exp()).collect();
        tight(&c, data, &nz, nu)
    };
    let base = at(&v0);
    assert_eq!(base.grad.len(), v0.len());
    // The test is only meaningful if the likelihood is not log-concave at the mode.
    let w = |j: usize| {
        let lik = StudentT::fixed_nu(nu, noise[data.group[j]]).unwrap();
        -lik.latent_derivatives(data.y[j], base.mode[j]).d2
    };
    assert!((0..data.y.len()).any(|j| w(j) < 0.0));
    let h = 1e-5;
    let mut worst: f64 = 0.0;
    for j in 0..v0.len() {
        let (mut up, mut down) = (v0.clone(), v0.clone());
        up[j] += h;
        down[j] -= h;
        let fd = (at(&up).value - at(&down).value) / (2.0 * h);
        let g = base.grad[j];
        let rel = (fd - g).abs() / g.abs().max(1e-2);
        assert!(
            rel < 1e-7,
            "parameter {j}: analytic {g} vs fd {fd} (rel {rel:e})"
        );
        worst = worst.max(rel);
    }
    worst
}

#[test]
fn log_gamma_ratio_and_density_have_closed_forms() {
    let sqrt_pi = PI.sqrt();
    assert!((ln_gamma_half_ratio(0.5) + 0.5 * PI.ln()).abs() < 1e-15);
    assert!((ln_gamma_half_ratio(1.0) - (sqrt_pi / 2.0).ln()).abs() < 1e-15);
    assert!((ln_gamma_half_ratio(2.0) - (3.0 * sqrt_pi / 4.0).ln()).abs() < 1e-15);
    // 35 = 30 + 5 crosses the switch to the series: Γ(35.5)/Γ(35) by the recurrence from 2.
    let mut d = ln_gamma_half_ratio(2.0);
    for k in 2..35 {
        d -= (k as f64 / (k as f64 + 0.5)).ln();
    }
    assert!((ln_gamma_half_ratio(35.0) - d).abs() < 1e-13);
    // Cauchy (ν = 1): 1/(π σ (1 + r²/σ²)); ν = 4 at r = 0: 3/(8σ).
    let (s2, r) = (0.3f64, 0.7f64);
    let cauchy = -(PI * s2.sqrt() * (1.0 + r * r / s2)).ln();
    assert!((student_t_log_pdf(1.0 + r, 1.0, s2, 1.0) - cauchy).abs() < 1e-14);
    assert!((student_t_log_pdf(2.0, 2.0, s2, 4.0) - (3.0 / (8.0 * s2.sqrt())).ln()).abs() < 1e-14);
    // ν → ∞: the Gaussian density.
    let gauss = -0.5 * (2.0 * PI * s2).ln() - r * r / (2.0 * s2);
    assert!((student_t_log_pdf(r, 0.0, s2, 1e12) - gauss).abs() < 1e-10);
    assert_eq!(student_t_noise_variance(0.5, 4.0), 1.0);
    assert_eq!(student_t_noise_variance(0.5, 2.0), f64::INFINITY);
}

#[test]
fn likelihood_derivatives_match_finite_differences() {
    let y = [0.3, -1.0, 4.0, 0.0];
    let group = [0, 1, 0, 1];
    let noise = [0.2, 1.7];
    // ℓ, ℓ', W = −ℓ'' and ℓ''' of entry j at latent value f under noise variances `nz`.
    struct Derivs {
        l: f64,
        d1: f64,
        w: f64,
        d3: f64,
    }
    let derivs = |nz: [f64; 2], j: usize, f: f64| {
        let d = StudentT::fixed_nu(3.0, nz[group[j]])
            .unwrap()
            .latent_derivatives(y[j], f);
        Derivs {
            l: d.value,
            d1: d.d1,
            w: -d.d2,
            d3: d.d3,
        }
    };
    let h = 1e-5;
    let close = |fd: f64, exact: f64| (fd - exact).abs() <= 1e-7 * (1.0 + exact.abs());
    for j in 0..y.len() {
        for f in [0.0, 0.5, -2.0, 7.0] {
            let d = derivs(noise, j, f);
            let at = |f: f64| derivs(noise, j, f);
            let fd1 = (at(f + h).l - at(f - h).l) / (2.0 * h);
            let fd2 = -(at(f + h).d1 - at(f - h).d1) / (2.0 * h);
            let fd3 = -(at(f + h).w - at(f - h).w) / (2.0 * h);
            assert!(close(fd1, d.d1), "{j} {f}: {fd1} vs {}", d.d1);
            assert!(close(fd2, d.w), "{j} {f}: {fd2} vs {}", d.w);
            assert!(close(fd3, d.d3), "{j} {f}: {fd3} vs {}", d.d3);
            // ∂/∂ ln σ² of the entry's group.
            let g = group[j];
            let shifted = |e: f64| {
                let mut nz = noise;
                nz[g] *= e.exp();
                derivs(nz, j, f)
            };
            let (up, down) = (shifted(h), shifted(-h));
            let mut p = [crate::likelihoods::ParamDerivatives::default()];
            StudentT::fixed_nu(3.0, noise[g])
                .unwrap()
                .param_derivatives(y[j], f, &mut p);
            let (dl, dd1, dw) = (p[0].value, p[0].d1, -p[0].d2);
            assert!(close((up.l - down.l) / (2.0 * h), dl), "{j} {f}");
            assert!(close((up.d1 - down.d1) / (2.0 * h), dd1), "{j} {f}");
            assert!(close((up.w - down.w) / (2.0 * h), dw), "{j} {f}");
        }
    }
}

#[test]
fn gradient_matches_finite_differences_single_output() {
    let (x, y, prior) = single(40, 3);
    let group = vec![0; y.len()];
    let data = StudentTData {
        x: x.as_ref(),
        y: &y,
        prior: &prior,
        group: &group,
    };
    let kernel = Kernel::parse("const(var=1.3) * se(ls=[0.7, 1.1])").unwrap();
    for nu in [4.0, 1.5] {
        let worst = check_gradient(&kernel, &data, &[0.02], nu);
        eprintln!("single output, nu {nu}: worst relative gradient error {worst:.2e}");
    }
}

#[test]
fn gradient_matches_finite_differences_multi_output_two_groups() {
    let (x, y, group, cov) = multi();
    let prior = vec![0.1; y.len()];
    let data = StudentTData {
        x: x.as_ref(),
        y: &y,
        prior: &prior,
        group: &group,
    };
    let worst = check_gradient(&cov, &data, &[0.01, 0.03], 4.0);
    eprintln!("multi-output: worst relative gradient error {worst:.2e}");
}

#[test]
fn large_nu_is_the_exact_gaussian_gp() {
    let mut rng = StdRng::seed_from_u64(7);
    let n = 30;
    let x = Mat::from_fn(n, 2, |_, _| rng.random_range(-2.0f64..2.0));
    let y: Vec<f64> = (0..n)
        .map(|i| x[(i, 0)].sin() * x[(i, 1)] + 0.1 * rng.random_range(-1.0..1.0))
        .collect();
    let kernel = Kernel::parse("const(var=0.9) * se(ls=[0.8, 1.3])").unwrap();
    let noise = 0.05;
    let prior = vec![0.0; n];
    let group = vec![0; n];
    let s = StudentTSettings {
        nu: 1e7,
        optimize: false,
        ..Default::default()
    };
    let st = StudentTGp::fit(kernel.clone(), x.as_ref(), &y, &prior, &group, &[noise], &s).unwrap();
    let hyper = GpHyper {
        kernel,
        mean: Mean::Zero,
        noise,
    };
    let gp = ExactGp::at(hyper, x.as_ref(), &y, 0.0).unwrap();
    let rel = (st.log_marginal() - gp.lml()).abs() / gp.lml().abs();
    eprintln!("large nu: rel. difference of log q {rel:.2e}");
    assert!(
        rel < 1e-6,
        "{} vs {} (rel {rel:e})",
        st.log_marginal(),
        gp.lml()
    );
    let xs = Mat::from_fn(50, 2, |i, j| {
        -2.5 + 5.0 * ((i * 7 + j * 3) % 50) as f64 / 49.0
    });
    let (mean, var) = st.predict_latent(xs.as_ref(), &vec![0.0; 50]).unwrap();
    let exact = gp.predict(xs.as_ref(), true).unwrap();
    for i in 0..50 {
        assert!((mean[i] - exact.mean[i]).abs() < 1e-6 * (1.0 + exact.mean[i].abs()));
        assert!(
            (var[i] - exact.var[i]).abs() < 1e-5 * exact.var[i] + 1e-10,
            "{i}"
        );
    }
}

/// `max_j |∇Ψ_j|` at `mode`, with `∇Ψ = ℓ'(f) − K⁻¹(f − m)` computed independently of the
/// model (faer's own Cholesky, `ℓ'` written out), and the number of entries with `W < 0`.
fn stationarity(
    kernel: &Kernel,
    data: &StudentTData<'_>,
    mode: &[f64],
    noise: f64,
    nu: f64,
) -> (f64, usize) {
    let k = kernel.matrix(data.x);
    let llt = k.llt(faer::Side::Lower).unwrap();
    let r = Mat::from_fn(mode.len(), 1, |j, _| mode[j] - data.prior[j]);
    let kinv_r = faer::linalg::solvers::Solve::solve(&llt, &r);
    let mut worst: f64 = 0.0;
    let mut negative_w = 0;
    for j in 0..mode.len() {
        let res = data.y[j] - mode[j];
        let d1 = (nu + 1.0) * res / (nu * noise + res * res);
        worst = worst.max((d1 - kinv_r[(j, 0)]).abs());
        negative_w += usize::from(res * res > nu * noise);
    }
    (worst, negative_w)
}

#[test]
fn mode_is_stationary_by_an_independent_check() {
    let (x, y, prior) = single(25, 11);
    let group = vec![0; y.len()];
    let data = StudentTData {
        x: x.as_ref(),
        y: &y,
        prior: &prior,
        group: &group,
    };
    let kernel = Kernel::parse("const(var=1.0) * se(ls=[0.6, 0.9])").unwrap();
    let (noise, nu) = (0.01, 4.0);
    let lap = laplace_log_marginal(&kernel, &data, &[noise], nu, None, false).unwrap();
    let (worst, negative_w) = stationarity(&kernel, &data, &lap.mode, noise, nu);
    assert!(negative_w >= 2, "the outliers should have W < 0");
    eprintln!("mode: max |∇Ψ| = {worst:.2e}");
    assert!(worst <= 1e-8, "|∇Ψ| = {worst:e}");
    // A warm start from nearby hyperparameters reaches the same mode in fewer iterations.
    let near = Kernel::parse("const(var=1.05) * se(ls=[0.62, 0.9])").unwrap();
    let cold = laplace_log_marginal(&near, &data, &[noise], nu, None, false).unwrap();
    let warm = laplace_log_marginal(&near, &data, &[noise], nu, Some(&lap.alpha), false).unwrap();
    assert!((cold.value - warm.value).abs() < 1e-9 * cold.value.abs());
    assert!(warm.newton_iterations < cold.newton_iterations);
}

#[test]
fn damped_newton_steps_reach_a_mode_when_b_is_indefinite() {
    // Every prior residual sits at r² = 3νσ², where W = −(ν+1)/(8νσ²) ≈ −1560: B = I + LᵀWL
    // is far from positive definite at the start, so the first steps must be damped.
    let n = 15;
    let x = Mat::from_fn(n, 1, |i, _| -3.0 + 6.0 * i as f64 / (n - 1) as f64);
    let y: Vec<f64> = (0..n).map(|i| x[(i, 0)].sin()).collect();
    let (noise, nu) = (1e-4f64, 4.0);
    let r0 = (3.0 * nu * noise).sqrt();
    let prior: Vec<f64> = (0..n)
        .map(|i| y[i] - if i % 2 == 0 { r0 } else { -r0 })
        .collect();
    let group = vec![0; n];
    let data = StudentTData {
        x: x.as_ref(),
        y: &y,
        prior: &prior,
        group: &group,
    };
    let kernel = Kernel::parse("const(var=1.0) * se(ls=1.0)").unwrap();
    let lap = laplace_log_marginal(&kernel, &data, &[noise], nu, None, true).unwrap();
    assert!(lap.damped_steps > 0);
    assert!(lap.value.is_finite() && lap.grad.iter().all(|g| g.is_finite()));
    let (worst, _) = stationarity(&kernel, &data, &lap.mode, noise, nu);
    eprintln!(
        "damped: {} of {} steps, max |∇Ψ| = {worst:.2e}",
        lap.damped_steps, lap.newton_iterations
    );
    assert!(worst <= 1e-8, "|∇Ψ| = {worst:e}");
}

#[test]
fn predictions_at_training_inputs_reproduce_the_mode() {
    let (x, y, prior) = single(20, 5);
    let group = vec![0; y.len()];
    let kernel = Kernel::parse("const(var=1.0) * se(ls=[0.7, 1.0])").unwrap();
    let s = StudentTSettings {
        optimize: false,
        ..Default::default()
    };
    let gp = StudentTGp::fit(kernel, x.as_ref(), &y, &prior, &group, &[0.02], &s).unwrap();
    let (mean, var) = gp.predict_latent(x.as_ref(), &prior).unwrap();
    for j in 0..y.len() {
        assert!((mean[j] - gp.mode()[j]).abs() < 1e-8, "{j}");
        assert!(var[j] > 0.0);
    }
    let obs = gp.observation_variance(&var, &group).unwrap();
    assert!((obs[0] - var[0] - 0.02 * 4.0 / 2.0).abs() < 1e-15);
    assert!(gp.observation_variance(&var, &vec![1; y.len()]).is_err());
}

#[test]
fn gross_outlier_moves_the_prediction_far_less_than_a_gaussian_gp() {
    let n = 21;
    let x = Mat::from_fn(n, 1, |i, _| -3.0 + 6.0 * i as f64 / (n - 1) as f64);
    let clean: Vec<f64> = (0..n).map(|i| x[(i, 0)].sin()).collect();
    let mut dirty = clean.clone();
    dirty[10] += 20.0;
    let kernel = Kernel::parse("const(var=1.0) * se(ls=1.0)").unwrap();
    let noise = 0.01;
    let xs = x.subrows(10, 1);
    let prior = vec![0.0; n];
    let group = vec![0; n];
    let s = StudentTSettings {
        optimize: false,
        ..Default::default()
    };
    let t_at = |y: &[f64]| {
        let gp = StudentTGp::fit(kernel.clone(), x.as_ref(), y, &prior, &group, &[noise], &s);
        gp.unwrap().predict_latent(xs, &[0.0]).unwrap().0[0]
    };
    let g_at = |y: &[f64]| {
        let hyper = GpHyper {
            kernel: kernel.clone(),
            mean: Mean::Zero,
            noise,
        };
        let gp = ExactGp::at(hyper, x.as_ref(), y, 0.0).unwrap();
        gp.predict(xs, true).unwrap().mean[0]
    };
    let t_shift = (t_at(&dirty) - t_at(&clean)).abs();
    let g_shift = (g_at(&dirty) - g_at(&clean)).abs();
    eprintln!("outlier shift: Student-t {t_shift:.3e}, Gaussian {g_shift:.3e}");
    assert!(g_shift > 1.0);
    assert!(t_shift < g_shift / 5.0, "{t_shift} vs {g_shift}");
}

#[test]
fn fit_improves_log_q_and_is_deterministic() {
    let (x, y, prior) = single(30, 9);
    let group = vec![0; y.len()];
    let kernel = Kernel::parse("const(var=1.0) * se(ls=[1.0, 1.0])").unwrap();
    let s = StudentTSettings::default();
    let fit = || StudentTGp::fit(kernel.clone(), x.as_ref(), &y, &prior, &group, &[0.5], &s);
    let (a, b) = (fit().unwrap(), fit().unwrap());
    let rep = a.report().unwrap();
    assert!(
        a.log_marginal() > rep.initial_log_marginal + 1.0,
        "{} vs start {}",
        a.log_marginal(),
        rep.initial_log_marginal
    );
    let start = laplace_log_marginal(
        &kernel,
        &StudentTData {
            x: x.as_ref(),
            y: &y,
            prior: &prior,
            group: &group,
        },
        &[0.5],
        4.0,
        None,
        false,
    )
    .unwrap();
    assert!((start.value - rep.initial_log_marginal).abs() < 1e-9 * start.value.abs());
    assert_eq!(a.log_marginal().to_bits(), b.log_marginal().to_bits());
    assert_eq!(a.covariance().params(), b.covariance().params());
    assert_eq!(a.noise(), b.noise());
    assert_eq!(a.nu(), 4.0);
}

#[test]
fn invalid_inputs_are_errors_naming_the_culprit() {
    let (x, y, prior) = single(6, 1);
    let group = vec![0; 6];
    let k = Kernel::parse("se(ls=[1.0, 1.0])").unwrap();
    let s = StudentTSettings::default();
    let msg = |r: Result<StudentTGp<Kernel>, ModelError>| match r {
        Err(ModelError::Invalid(m)) => m,
        other => panic!("expected Invalid, got {other:?}"),
    };
    let mut bad_y = y.clone();
    bad_y[3] = f64::NAN;
    let xr = x.as_ref();
    let fit = |y: &[f64], p: &[f64], g: &[usize], n: &[f64], s: &StudentTSettings| {
        StudentTGp::fit(k.clone(), xr, y, p, g, n, s)
    };
    assert!(msg(fit(&bad_y, &prior, &group, &[0.1], &s)).contains("y[3]"));
    assert!(msg(fit(&y, &prior[..5], &group, &[0.1], &s)).contains("prior"));
    assert!(msg(fit(&y, &prior, &group, &[-0.1], &s)).contains("noise[0]"));
    assert!(msg(fit(&y, &prior, &[0, 0, 2, 0, 0, 0], &[0.1], &s)).contains("group[2]"));
    assert!(msg(fit(&y, &prior, &group, &[], &s)).contains("noise"));
    for nu in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let bad = StudentTSettings {
            nu,
            ..Default::default()
        };
        assert!(msg(fit(&y, &prior, &group, &[0.1], &bad)).contains("nu"));
    }
    let data = StudentTData {
        x: xr,
        y: &y,
        prior: &prior,
        group: &group,
    };
    let r = laplace_log_marginal(&k, &data, &[0.1], 4.0, Some(&[0.0; 3]), false);
    assert!(matches!(r, Err(ModelError::Invalid(m)) if m.contains("warm_start")));
    let gp = fit(
        &y,
        &prior,
        &group,
        &[0.1],
        &StudentTSettings {
            optimize: false,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(gp
        .predict_latent(Mat::<f64>::zeros(2, 3).as_ref(), &[0.0; 2])
        .is_err());
    assert!(gp
        .predict_latent(Mat::<f64>::zeros(2, 2).as_ref(), &[0.0; 3])
        .is_err());
}
