//! Every likelihood against independent computations: central differences for every derivative
//! (in `f`, in the parameters, of the expected log-likelihood in `μ`, `v` and the parameters),
//! brute-force integration for the predictive densities, closed forms against quadrature, the
//! IMQ weight against the spec's formulas and its Gaussian limit.

use std::f64::consts::PI;

use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};

use super::quadrature;
use super::*;

/// The likelihoods under test: every kind and parametrisation.
fn all() -> Vec<Box<dyn Likelihood>> {
    vec![
        Box::new(Gaussian::new(0.37).unwrap()),
        Box::new(StudentT::fixed_nu(1.5, 0.2).unwrap()),
        Box::new(StudentT::learned_nu(3.5, 0.3).unwrap()),
        Box::new(Imq::new(0.4, ImqWeighting::Imq { beta: 0.9, c: 0.7 }, 0.2).unwrap()),
        Box::new(Imq::new(0.4, ImqWeighting::Constant, 0.2).unwrap()),
    ]
}

/// The same likelihood at unconstrained parameters `u`.
fn at_params(lik: &dyn Likelihood, u: &[f64]) -> Box<dyn Likelihood> {
    let mut l: Box<dyn Likelihood> = match lik.name() {
        "gaussian" => Box::new(Gaussian::new(1.0).unwrap()),
        "student_t" if lik.param_names().len() == 2 => {
            Box::new(StudentT::learned_nu(3.5, 0.3).unwrap())
        }
        "student_t" => Box::new(StudentT::fixed_nu(1.5, 0.2).unwrap()),
        _ => {
            let w = if lik.latent_derivatives(5.0, 0.0).d2 == lik.latent_derivatives(0.2, 0.0).d2 {
                ImqWeighting::Constant
            } else {
                ImqWeighting::Imq { beta: 0.9, c: 0.7 }
            };
            Box::new(Imq::new(0.4, w, 0.2).unwrap())
        }
    };
    l.set_unconstrained(u).unwrap();
    l
}

fn close(fd: f64, exact: f64, tol: f64) -> bool {
    (fd - exact).abs() <= tol * (1.0 + exact.abs())
}

const POINTS: [(f64, f64); 5] = [(0.3, 0.1), (-1.0, 0.5), (4.0, -0.5), (0.2, 0.2), (0.9, 7.0)];

#[test]
fn latent_derivatives_match_central_differences() {
    let h = 1e-5;
    for lik in all() {
        for (y, f) in POINTS {
            let d = lik.latent_derivatives(y, f);
            assert_eq!(d.value, lik.log_density(y, f), "{}", lik.name());
            let (up, down) = (
                lik.latent_derivatives(y, f + h),
                lik.latent_derivatives(y, f - h),
            );
            let fd = |a: f64, b: f64| (a - b) / (2.0 * h);
            assert!(
                close(fd(up.value, down.value), d.d1, 1e-8),
                "{} d1 at {y}, {f}",
                lik.name()
            );
            assert!(
                close(fd(up.d1, down.d1), d.d2, 1e-8),
                "{} d2 at {y}, {f}",
                lik.name()
            );
            assert!(
                close(fd(up.d2, down.d2), d.d3, 1e-8),
                "{} d3 at {y}, {f}",
                lik.name()
            );
            // The Newton curvature bounds max(W, 0) from above.
            assert!(lik.newton_curvature(y, f) >= (-d.d2).max(0.0) - 1e-15);
        }
    }
}

#[test]
fn parameter_derivatives_match_central_differences() {
    let h = 1e-5;
    for lik in all() {
        let u0 = lik.unconstrained();
        assert_eq!(u0.len(), lik.param_names().len());
        assert_eq!(lik.natural().len(), u0.len());
        assert_eq!(lik.bounds().len(), u0.len());
        let mut p = vec![ParamDerivatives::default(); u0.len()];
        for (y, f) in POINTS {
            lik.param_derivatives(y, f, &mut p);
            for k in 0..u0.len() {
                let (mut up, mut down) = (u0.clone(), u0.clone());
                up[k] += h;
                down[k] -= h;
                let (a, b) = (
                    at_params(lik.as_ref(), &up).latent_derivatives(y, f),
                    at_params(lik.as_ref(), &down).latent_derivatives(y, f),
                );
                let fd = |a: f64, b: f64| (a - b) / (2.0 * h);
                let name = lik.name();
                assert!(
                    close(fd(a.value, b.value), p[k].value, 1e-8),
                    "{name} {k} value"
                );
                assert!(close(fd(a.d1, b.d1), p[k].d1, 1e-8), "{name} {k} d1");
                assert!(close(fd(a.d2, b.d2), p[k].d2, 1e-8), "{name} {k} d2");
            }
        }
        // The unconstrained parameters round-trip.
        let back = at_params(lik.as_ref(), &u0);
        for (a, b) in back.natural().iter().zip(lik.natural()) {
            assert!((a / b - 1.0).abs() < 1e-14, "{}", lik.name());
        }
    }
}

#[test]
fn expected_log_lik_gradients_match_central_differences() {
    let y = [0.3, 3.0, 0.9];
    let mu = [0.1, -0.5, 0.2];
    let v = [0.5, 2.0, 0.04];
    for lik in all() {
        let u0 = lik.unconstrained();
        let (mut d_mu, mut d_v, mut d_p) = ([0.0; 3], [0.0; 3], vec![0.0; u0.len()]);
        let grad = ExpectedGrad {
            d_mu: &mut d_mu,
            d_v: &mut d_v,
            d_params: &mut d_p,
        };
        let value = lik.expected_log_lik(&y, &mu, &v, Some(grad));
        assert_eq!(value, lik.expected_log_lik(&y, &mu, &v, None));
        let at =
            |l: &dyn Likelihood, mu: [f64; 3], v: [f64; 3]| l.expected_log_lik(&y, &mu, &v, None);
        let h = 1e-5;
        let name = lik.name();
        for j in 0..3 {
            let (mut up, mut down) = (mu, mu);
            up[j] += h;
            down[j] -= h;
            let fd = (at(lik.as_ref(), up, v) - at(lik.as_ref(), down, v)) / (2.0 * h);
            assert!(
                close(fd, d_mu[j], 1e-8),
                "{name} mu {j}: {fd} vs {}",
                d_mu[j]
            );
            let hv = 1e-4 * v[j];
            let (mut up, mut down) = (v, v);
            up[j] += hv;
            down[j] -= hv;
            let fd = (at(lik.as_ref(), mu, up) - at(lik.as_ref(), mu, down)) / (2.0 * hv);
            assert!(close(fd, d_v[j], 1e-7), "{name} v {j}: {fd} vs {}", d_v[j]);
        }
        for k in 0..u0.len() {
            let (mut up, mut down) = (u0.clone(), u0.clone());
            up[k] += h;
            down[k] -= h;
            let fd = (at(at_params(lik.as_ref(), &up).as_ref(), mu, v)
                - at(at_params(lik.as_ref(), &down).as_ref(), mu, v))
                / (2.0 * h);
            assert!(
                close(fd, d_p[k], 1e-8),
                "{name} param {k}: {fd} vs {}",
                d_p[k]
            );
        }
        // At v = 0 the derivative in v is the limit ½ ℓ''(μ), which a tiny v approaches.
        let (mut d0, mut dt) = ([0.0; 3], [0.0; 3]);
        let tiny_grad = |v: [f64; 3], out: &mut [f64; 3]| {
            let grad = ExpectedGrad {
                d_mu: &mut [0.0; 3],
                d_v: out,
                d_params: &mut vec![0.0; u0.len()],
            };
            lik.expected_log_lik(&y, &mu, &v, Some(grad));
        };
        tiny_grad([0.0; 3], &mut d0);
        tiny_grad([1e-9; 3], &mut dt);
        for j in 0..3 {
            assert!((d0[j] - 0.5 * lik.latent_derivatives(y[j], mu[j]).d2).abs() < 1e-12);
            assert!(
                (d0[j] - dt[j]).abs() < 1e-6 * (1.0 + d0[j].abs()),
                "{name} {j}"
            );
        }
    }
}

/// `log ∫ exp(log_p(f)) N(f; μ, v) df` by the trapezoid rule on ±14 standard deviations (the
/// integrand is smooth and decays like a Gaussian, so the rule converges geometrically).
fn trapezoid_log_predictive(log_p: impl Fn(f64) -> f64, mu: f64, v: f64) -> f64 {
    let (sd, n) = (v.sqrt(), 40_000);
    let step = 28.0 * sd / n as f64;
    let sum: f64 = (0..=n)
        .map(|i| {
            let f = mu - 14.0 * sd + i as f64 * step;
            let weight = if i == 0 || i == n { 0.5 } else { 1.0 };
            let normal = (-(f - mu).powi(2) / (2.0 * v)).exp() / (2.0 * PI * v).sqrt();
            weight * log_p(f).exp() * normal
        })
        .sum();
    (sum * step).ln()
}

#[test]
fn predictive_densities_match_brute_force_integration() {
    let gaussian = Gaussian::new(0.5).unwrap();
    let student = StudentT::fixed_nu(4.0, 0.3).unwrap();
    let imq = Imq::new(0.5, ImqWeighting::Imq { beta: 0.9, c: 0.7 }, 0.2).unwrap();
    // The IMQ loss is not a density of y: its predictive is that of the Gaussian model it
    // robustifies, N(y; f, σ²), written out here.
    let normal = |y: f64, f: f64| -0.5 * (2.0 * PI * 0.5f64).ln() - (y - f).powi(2) / (2.0 * 0.5);
    for (y, mu, v) in [(0.3, 0.1, 0.05), (2.5, -0.5, 0.1), (0.0, 0.4, 0.02)] {
        let cases: [(&dyn Likelihood, f64, f64); 3] = [
            (
                &gaussian,
                trapezoid_log_predictive(|f| normal(y, f), mu, v),
                1e-12,
            ),
            (
                &imq,
                trapezoid_log_predictive(|f| normal(y, f), mu, v),
                1e-12,
            ),
            (
                &student,
                trapezoid_log_predictive(|f| student_t_log_pdf(y, f, 0.3, 4.0), mu, v),
                1e-12,
            ),
        ];
        for (lik, brute, tol) in cases {
            let lpd = lik.log_predictive_density(y, mu, v);
            assert!(
                (lpd - brute).abs() < tol,
                "{}: {lpd} vs {brute}",
                lik.name()
            );
        }
    }
    // The Gaussian closed form equals the shared quadrature, which is what Student-t uses.
    for (y, mu, v) in [(0.3, 0.1, 0.3), (-1.0, 0.5, 0.01)] {
        let closed = gaussian.log_predictive_density(y, mu, v);
        let quad = quadrature::log_predictive_density(&gaussian, y, mu, v);
        assert!((closed - quad).abs() < 1e-12, "{closed} vs {quad}");
    }
    // Predictive moments: the latent variance plus the noise variance.
    assert_eq!(gaussian.predict(0.3, 0.2), (0.3, 0.2 + 0.5));
    assert_eq!(imq.predict(0.3, 0.2), (0.3, 0.2 + 0.5));
    let (m, var) = student.predict(0.3, 0.2);
    assert!(m == 0.3 && (var - (0.2 + 0.3 * 4.0 / 2.0)).abs() < 1e-15);
    assert_eq!(
        StudentT::fixed_nu(2.0, 0.3).unwrap().predict(0.0, 0.1).1,
        f64::INFINITY
    );
}

/// The closed-form expectations (Gaussian, IMQ) equal the 20-node quadrature, exact for their
/// quadratic log densities; so do their derivatives.
#[test]
fn closed_form_expectations_match_quadrature() {
    let (y, mu, v) = ([0.4, -1.2, 3.0], [0.1, 0.5, -0.2], [0.8, 2.5e-3, 1.1]);
    let liks: [Box<dyn Likelihood>; 3] = [
        Box::new(Gaussian::new(0.37).unwrap()),
        Box::new(Imq::new(0.4, ImqWeighting::Imq { beta: 0.9, c: 0.7 }, 0.2).unwrap()),
        Box::new(Imq::new(0.4, ImqWeighting::Constant, 0.2).unwrap()),
    ];
    for lik in liks {
        let mut buffers = [[0.0; 3], [0.0; 3], [0.0; 3], [0.0; 3]];
        let (mut p_closed, mut p_quad) = ([0.0], [0.0]);
        let [a_mu, a_v, b_mu, b_v] = &mut buffers;
        let closed = lik.expected_log_lik(
            &y,
            &mu,
            &v,
            Some(ExpectedGrad {
                d_mu: a_mu,
                d_v: a_v,
                d_params: &mut p_closed,
            }),
        );
        let quad = quadrature::expected_log_lik(
            lik.as_ref(),
            &y,
            &mu,
            &v,
            Some(ExpectedGrad {
                d_mu: b_mu,
                d_v: b_v,
                d_params: &mut p_quad,
            }),
        );
        let near = |a: f64, b: f64| (a - b).abs() < 1e-12 * (1.0 + a.abs());
        assert!(near(closed, quad), "{}: {closed} vs {quad}", lik.name());
        assert!(near(p_closed[0], p_quad[0]), "{}", lik.name());
        for j in 0..3 {
            assert!(
                near(a_mu[j], b_mu[j]) && near(a_v[j], b_v[j]),
                "{} {j}",
                lik.name()
            );
        }
    }
}

#[test]
fn student_t_expectation_agrees_with_monte_carlo() {
    let lik = StudentT::learned_nu(3.5, 0.2).unwrap();
    let mut rng = StdRng::seed_from_u64(11);
    for (y, mu, v) in [(0.3, 0.1, 0.5), (4.0, -0.5, 1.7)] {
        let quad = lik.expected_log_lik(&[y], &[mu], &[v], None);
        let normal = Normal::new(mu, f64::sqrt(v)).unwrap();
        let draws: Vec<f64> = (0..100_000)
            .map(|_| student_t_log_pdf(y, normal.sample(&mut rng), 0.2, 3.5))
            .collect();
        let n = draws.len() as f64;
        let mean = draws.iter().sum::<f64>() / n;
        let var = draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let se = (var / n).sqrt();
        assert!((quad - mean).abs() < 3.0 * se, "{quad} vs {mean} ± {se}");
    }
}

#[test]
fn digamma_difference_has_closed_forms_and_matches_differences() {
    let ln2 = std::f64::consts::LN_2;
    // ψ(1) − ψ(½) = 2 ln 2 and ψ(3/2) − ψ(1) = 2 − 2 ln 2.
    assert!((ln_gamma_half_ratio_derivative(0.5) - 2.0 * ln2).abs() < 1e-14);
    assert!((ln_gamma_half_ratio_derivative(1.0) - (2.0 - 2.0 * ln2)).abs() < 1e-14);
    for x in [2.7, 45.0, 3e4] {
        let h = 1e-4 * x;
        let fd = (ln_gamma_half_ratio(x + h) - ln_gamma_half_ratio(x - h)) / (2.0 * h);
        let d = ln_gamma_half_ratio_derivative(x);
        assert!((fd - d).abs() < 1e-8 * d, "x = {x}: {fd} vs {d}");
    }
}

#[test]
fn domains_are_checked() {
    assert!(Gaussian::new(0.0).is_err() && Gaussian::new(f64::NAN).is_err());
    assert!(StudentT::learned_nu(2.0, 1.0).is_err());
    assert!(StudentT::learned_nu(f64::INFINITY, 1.0).is_err());
    assert!(StudentT::learned_nu(4.0, -1.0).is_err());
    assert!(StudentT::fixed_nu(0.0, 1.0).is_err());
    assert!(StudentT::fixed_nu(1.0, 1.0).is_ok());
    let imq = |beta: f64, c: f64| Imq::new(1.0, ImqWeighting::Imq { beta, c }, 0.0);
    assert!(imq(0.0, 1.0).is_err() && imq(1.0, f64::NAN).is_err() && imq(1.0, 1.0).is_ok());
    let mut g = Gaussian::new(1.0).unwrap();
    assert!(g.set_unconstrained(&[0.0, 1.0]).is_err());
    assert!(g.set_unconstrained(&[f64::NAN]).is_err());
    let lik = StudentT::learned_nu(4.0, 0.5).unwrap();
    assert!((lik.predict(0.0, 0.0).1 - 1.0).abs() < 1e-15);
    assert_eq!(lik.param_names(), ["nu", "scale2"]);
}

/// The IMQ weight, its derivative in y, g, h and their derivatives against the formulas of
/// the spec (`rcagp.md` §2.1) and central differences.
#[test]
fn imq_weight_matches_the_spec() {
    let (beta, c, centre) = (0.8, 0.7, -0.3);
    let h_step = 1e-6;
    for y in [-5.0, -0.3, 0.1, 2.0, 30.0] {
        let u = y - centre;
        let p = ImqPoint::new(u, c);
        let w = beta * (1.0 + u * u / (c * c)).powf(-0.5);
        assert!((beta * p.w_hat() - w).abs() < 1e-15);
        assert!((beta * beta * p.w_hat2() - w * w).abs() < 1e-15);
        assert!((p.log_w_hat2() - (p.w_hat() * p.w_hat()).ln()).abs() < 1e-14);
        // ∂_y w = −w³u/(β²c²), g = −2u/(c² + u²), h = w²(1 − 2yu/(c² + u²)).
        assert!((beta * p.dw_hat_dy() + w.powi(3) * u / (beta * beta * c * c)).abs() < 1e-15);
        assert!((p.g() + 2.0 * u / (c * c + u * u)).abs() < 1e-15);
        let h = w * w * (1.0 - 2.0 * y * u / (c * c + u * u));
        assert!((p.h(beta, y) - h).abs() < 1e-14);
        // Differences in y (γ fixed), and in the residual at fixed y for h.
        let at = |r: f64| ImqPoint::new(r, c);
        let fd = |a: f64, b: f64| (a - b) / (2.0 * h_step);
        let (up, down) = (at(u + h_step), at(u - h_step));
        assert!(close(fd(up.w_hat(), down.w_hat()), p.dw_hat_dy(), 1e-8));
        assert!(close(fd(up.w_hat2().ln(), down.w_hat2().ln()), p.g(), 1e-8));
        assert!(close(fd(up.g(), down.g()), p.dg_dy(), 1e-8));
        assert!(close(
            fd(up.h(beta, y), down.h(beta, y)),
            p.dh_dresidual(beta, y),
            1e-8
        ));
        // h is ∂(y w²)/∂y when y and the residual move together.
        let yw2 = |d: f64| (y + d) * beta * beta * at(u + d).w_hat2();
        assert!(close(fd(yw2(h_step), yw2(-h_step)), p.h(beta, y), 1e-8));
        // The weighting's forms agree with the point's.
        let weighting = ImqWeighting::Imq { beta, c };
        let (lw2, g) = weighting.log_w2_and_g(u, 0.4);
        assert!((lw2 - (w * w).ln()).abs() < 1e-14 && g == p.g());
        assert!((weighting.weight(u, 0.4) - w).abs() < 1e-15);
    }
    let (lw2, g) = ImqWeighting::Constant.log_w2_and_g(3.0, 0.4);
    assert!((lw2 - 0.2f64.ln()).abs() < 1e-15 && g == 0.0);
    assert!((ImqWeighting::Constant.weight(3.0, 0.4) - 0.2f64.sqrt()).abs() < 1e-15);
}

/// The IMQ pseudo-likelihood is the spec's `−½(P f² − 2 f ν + C)` per point, with `P = 2w²/σ⁴`,
/// `ν = P(y − σ² g)`, `C = P y² − 4 h/σ²`; with `w ≡ σ/√2` it is the Gaussian log density plus
/// `1 + ½ log(2πσ²)`, with the Gaussian's derivatives.
#[test]
fn imq_pseudo_likelihood_is_the_spec_loss_and_its_gaussian_limit() {
    let (s2, beta, c, centre) = (0.4, 0.9, 0.7, 0.2);
    let lik = Imq::new(s2, ImqWeighting::Imq { beta, c }, centre).unwrap();
    let limit = Imq::new(s2, ImqWeighting::Constant, centre).unwrap();
    let gaussian = Gaussian::new(s2).unwrap();
    for (y, f) in POINTS {
        let p = ImqPoint::new(y - centre, c);
        let w2 = beta * beta * p.w_hat2();
        let prec = 2.0 * w2 / (s2 * s2);
        let nu = prec * (y - s2 * p.g());
        let cc = prec * y * y - 4.0 / s2 * p.h(beta, y);
        let spec = -0.5 * (prec * f * f - 2.0 * f * nu + cc);
        let d = lik.latent_derivatives(y, f);
        assert!(
            (d.value - spec).abs() < 1e-12 * (1.0 + spec.abs()),
            "{} vs {spec}",
            d.value
        );
        assert!((d.d2 + prec).abs() < 1e-12 * prec);
        let (a, b) = (
            limit.latent_derivatives(y, f),
            gaussian.latent_derivatives(y, f),
        );
        let shift = 1.0 + 0.5 * (2.0 * PI * s2).ln();
        assert!((a.value - b.value - shift).abs() < 1e-14);
        assert!((a.d1 - b.d1).abs() < 1e-14 && (a.d2 - b.d2).abs() < 1e-14);
    }
}

/// `predict_marginals` applies `predict` to every test point: the latent mean kept, the
/// likelihood's noise variance added (Gaussian σ², Student-t s²ν/(ν−2)).
#[test]
fn predict_marginals_adds_each_likelihoods_noise_variance() {
    let latent = crate::posterior::Marginals {
        mean: vec![0.3, -1.1, 2.0],
        var: vec![0.2, 1e-9, 4.0],
    };
    for (lik, noise) in [
        (
            Box::new(Gaussian::new(0.37).unwrap()) as Box<dyn Likelihood>,
            0.37,
        ),
        (
            Box::new(StudentT::learned_nu(3.5, 0.3).unwrap()),
            0.3 * 3.5 / 1.5,
        ),
    ] {
        let y = lik.predict_marginals(&latent);
        assert_eq!(y.mean, latent.mean);
        for (a, v) in y.var.iter().zip(&latent.var) {
            assert!((a - (v + noise)).abs() <= 1e-15 * a, "{}: {a}", lik.name());
        }
    }
}
