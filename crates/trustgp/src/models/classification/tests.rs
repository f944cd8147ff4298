//! Binary Laplace and EP against independent computations on tiny problems: the Laplace mode
//! and evidence by a dense Newton iteration with explicit inverses, EP's tilted moments and its
//! fixed point by numerical integration, EP's evidence by R&W eq. 3.65 formed densely, every
//! evidence gradient by central differences, EP with Gaussian terms against the exact GP, and
//! the hyperparameter fit.

// Index loops mirror the formulas they check.
#![allow(clippy::needless_range_loop)]

use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::ep::{ep_evidence, EpSettings, EpSite, Probit};
use super::laplace::laplace_evidence;
use super::{BinaryEp, BinaryLaplace};
use crate::fit::FitOptions;
use crate::kernels::{Covariance, Kernel};
use crate::likelihoods::{Bernoulli, Gaussian, Likelihood, Link};
use crate::means::Mean;
use crate::models::exact::ExactGp;
use crate::models::hyper::GpHyper;
use crate::sequential::acquisition::normal::cdf;

/// `n` inputs on `[-2, 2]²` with labels from a smooth boundary and a few flipped.
fn data(n: usize, seed: u64) -> (Mat<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let x = Mat::from_fn(n, 2, |_, _| rng.random_range(-2.0f64..2.0));
    let y = (0..n)
        .map(|i| {
            let s = (x[(i, 0)] * 1.3).sin() + 0.5 * x[(i, 1)];
            let flip = rng.random_range(0.0..1.0) < 0.15;
            if (s > 0.0) != flip {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    (x, y)
}

fn kernel() -> Kernel {
    Kernel::parse("const(var=2.3) * se(ls=[0.8, 1.3])").unwrap()
}

/// The dense inverse of a small symmetric positive definite matrix (Gauss–Jordan).
fn inverse(a: &Mat<f64>) -> Mat<f64> {
    let n = a.nrows();
    let mut m = Mat::from_fn(n, 2 * n, |i, j| {
        if j < n {
            a[(i, j)]
        } else {
            f64::from(u8::from(j - n == i))
        }
    });
    for c in 0..n {
        let p = (c..n)
            .max_by(|&i, &j| m[(i, c)].abs().total_cmp(&m[(j, c)].abs()))
            .unwrap();
        for j in 0..2 * n {
            let t = m[(c, j)];
            m[(c, j)] = m[(p, j)];
            m[(p, j)] = t;
        }
        let d = m[(c, c)];
        for j in 0..2 * n {
            m[(c, j)] /= d;
        }
        for i in 0..n {
            if i != c {
                let f = m[(i, c)];
                for j in 0..2 * n {
                    m[(i, j)] -= f * m[(c, j)];
                }
            }
        }
    }
    Mat::from_fn(n, n, |i, j| m[(i, j + n)])
}

/// `log |A|` of a small symmetric positive definite matrix (by elimination without pivoting).
fn log_det(a: &Mat<f64>) -> f64 {
    let n = a.nrows();
    let mut m = a.clone();
    let mut total = 0.0;
    for c in 0..n {
        total += m[(c, c)].ln();
        for i in c + 1..n {
            let f = m[(i, c)] / m[(c, c)];
            for j in c..n {
                m[(i, j)] -= f * m[(c, j)];
            }
        }
    }
    total
}

fn mat_vec(a: &Mat<f64>, v: &[f64]) -> Vec<f64> {
    (0..a.nrows())
        .map(|i| (0..a.ncols()).map(|j| a[(i, j)] * v[j]).sum())
        .collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The Laplace mode by plain Newton `f ← (K⁻¹ + W)⁻¹ (W f + ∇ℓ)` with explicit inverses, and
/// the evidence `Σ ℓ(f̂) − ½ f̂ᵀK⁻¹f̂ − ½ log|I + KW|` (R&W eq. 3.32).
#[test]
fn laplace_mode_and_evidence_match_dense_newton() {
    let (x, y) = data(8, 1);
    let k = kernel().matrix(x.as_ref());
    let k_inv = inverse(&k);
    for link in [Link::Probit, Link::Logit] {
        let lik = Bernoulli::new(link);
        let mut f = vec![0.0; 8];
        for _ in 0..60 {
            let d: Vec<_> = (0..8).map(|i| lik.latent_derivatives(y[i], f[i])).collect();
            let a = Mat::from_fn(8, 8, |i, j| {
                k_inv[(i, j)] + if i == j { -d[i].d2 } else { 0.0 }
            });
            let rhs: Vec<f64> = (0..8).map(|i| -d[i].d2 * f[i] + d[i].d1).collect();
            f = mat_vec(&inverse(&a), &rhs);
        }
        let w: Vec<f64> = (0..8)
            .map(|i| -lik.latent_derivatives(y[i], f[i]).d2)
            .collect();
        let i_kw = Mat::from_fn(8, 8, |i, j| {
            f64::from(u8::from(i == j)) + w[i].sqrt() * k[(i, j)] * w[j].sqrt()
        });
        let evidence = (0..8).map(|i| lik.log_density(y[i], f[i])).sum::<f64>()
            - 0.5 * dot(&f, &mat_vec(&k_inv, &f))
            - 0.5 * log_det(&i_kw);
        let lap = laplace_evidence(&kernel(), x.as_ref(), &y, link, None, false).unwrap();
        for i in 0..8 {
            assert!(
                (lap.mode[i] - f[i]).abs() < 1e-8,
                "{link:?} mode {i}: {} vs {}",
                lap.mode[i],
                f[i]
            );
        }
        assert!(
            (lap.value - evidence).abs() < 1e-9 * evidence.abs(),
            "{link:?}: {} vs {evidence}",
            lap.value
        );
        // The fitted model holds the same mode and evidence; t = ∇ℓ(f̂) = K⁻¹f̂.
        let model = BinaryLaplace::at(x.as_ref(), &y, kernel(), link).unwrap();
        assert_eq!(model.lml(), lap.value);
        let kif = mat_vec(&k_inv, &f);
        let lg = crate::posterior::LinearGaussianForm::linear_gaussian(&model);
        for i in 0..8 {
            assert!((lg.t()[i] - kif[i]).abs() < 1e-7, "t {i}");
        }
    }
}

/// Central differences of `log q` in every kernel parameter (ARD lengthscales, the scale and
/// a linear term's variance).
#[test]
fn laplace_evidence_gradient_matches_central_differences() {
    let (x, y) = data(15, 2);
    let base = Kernel::parse("const(var=1.9) * se(ls=[0.7, 1.4]) + lin(var=0.3)").unwrap();
    for link in [Link::Probit, Link::Logit] {
        let p0 = base.params();
        let lap = laplace_evidence(&base, x.as_ref(), &y, link, None, true).unwrap();
        assert_eq!(lap.grad.len(), p0.len());
        let h = 1e-5;
        for j in 0..p0.len() {
            let at = |d: f64| {
                let mut k = base.clone();
                let mut p = p0.clone();
                p[j] += d;
                k.set_params(&p).unwrap();
                laplace_evidence(&k, x.as_ref(), &y, link, None, false)
                    .unwrap()
                    .value
            };
            let fd = (at(h) - at(-h)) / (2.0 * h);
            assert!(
                (fd - lap.grad[j]).abs() < 1e-6 * (1.0 + fd.abs()),
                "{link:?} param {j}: {} vs FD {fd}",
                lap.grad[j]
            );
        }
    }
}

/// `(log Z, mean, variance)` of `Φ(y f) N(f; μ, v)` by the trapezoid rule on ±14 sd.
fn tilted_by_integration(y: f64, mu: f64, v: f64) -> (f64, f64, f64) {
    let (sd, n) = (v.sqrt(), 40_000);
    let step = 28.0 * sd / n as f64;
    let (mut z, mut m1, mut m2) = (0.0, 0.0, 0.0);
    for i in 0..=n {
        let f = mu - 14.0 * sd + i as f64 * step;
        let w = if i == 0 || i == n { 0.5 } else { 1.0 };
        let g = w * cdf(y * f) * (-(f - mu).powi(2) / (2.0 * v)).exp();
        z += g;
        m1 += g * f;
        m2 += g * f * f;
    }
    let mean = m1 / z;
    let var = m2 / z - mean * mean;
    let z = z * step / (2.0 * std::f64::consts::PI * v).sqrt();
    (z.ln(), mean, var)
}

#[test]
fn probit_tilted_moments_match_numerical_integration() {
    for (y, mu, v) in [
        (1.0, 0.3, 0.8),
        (-1.0, 0.3, 0.8),
        (1.0, -2.5, 2.0),
        (-1.0, 4.0, 0.1),
    ] {
        let t = Probit.tilted(y, mu, v);
        let (lz, m, s2) = tilted_by_integration(y, mu, v);
        assert!((t.log_z - lz).abs() < 1e-9, "log Z {y} {mu} {v}");
        assert!((t.mean - m).abs() < 1e-9, "mean {y} {mu} {v}");
        assert!((t.var - s2).abs() < 1e-9, "var {y} {mu} {v}");
    }
}

/// At convergence, every site's tilted distribution (cavity times the true probit term,
/// integrated numerically) has the posterior marginal's mean and variance: EP's fixed point.
/// Damped and undamped EP reach the same fixed point.
#[test]
fn ep_fixed_point_matches_tilted_moments_by_integration() {
    let (x, y) = data(10, 3);
    let tight = EpSettings {
        tol: 1e-12,
        ..EpSettings::default()
    };
    let r = ep_evidence(&kernel(), x.as_ref(), &y, &Probit, &tight, None, false).unwrap();
    for i in 0..10 {
        let tau_cav = 1.0 / r.var[i] - r.tau[i];
        let nu_cav = r.mean[i] / r.var[i] - r.nu[i];
        let (_, m, v) = tilted_by_integration(y[i], nu_cav / tau_cav, 1.0 / tau_cav);
        assert!(
            (m - r.mean[i]).abs() < 1e-8,
            "mean {i}: {m} vs {}",
            r.mean[i]
        );
        assert!((v - r.var[i]).abs() < 1e-8, "var {i}: {v} vs {}", r.var[i]);
        assert!(r.tau[i] > 0.0);
    }
    let damped = EpSettings {
        damping: 0.5,
        ..tight
    };
    let d = ep_evidence(&kernel(), x.as_ref(), &y, &Probit, &damped, None, false).unwrap();
    assert!(d.sweeps > r.sweeps);
    assert!((d.value - r.value).abs() < 1e-9);
    for i in 0..10 {
        assert!((d.tau[i] - r.tau[i]).abs() < 1e-8 && (d.nu[i] - r.nu[i]).abs() < 1e-8);
    }
}

/// `log Z_EP` by R&W eq. 3.65 with explicit matrices: `−½ log|K + Σ̃| − ½ μ̃ᵀ(K + Σ̃)⁻¹μ̃ +
/// Σ log Φ(y_i μ₋ᵢ/√(1 + σ²₋ᵢ)) + ½ Σ log(σ²₋ᵢ + σ̃²ᵢ) + Σ (μ₋ᵢ − μ̃ᵢ)²/(2(σ²₋ᵢ + σ̃²ᵢ))`.
#[test]
fn ep_evidence_matches_the_dense_formula() {
    let (x, y) = data(9, 4);
    let settings = EpSettings {
        tol: 1e-12,
        ..EpSettings::default()
    };
    let r = ep_evidence(&kernel(), x.as_ref(), &y, &Probit, &settings, None, false).unwrap();
    let k = kernel().matrix(x.as_ref());
    let n = 9;
    let site_var: Vec<f64> = r.tau.iter().map(|t| 1.0 / t).collect();
    let site_mean: Vec<f64> = (0..n).map(|i| r.nu[i] / r.tau[i]).collect();
    let a = Mat::from_fn(n, n, |i, j| {
        k[(i, j)] + if i == j { site_var[i] } else { 0.0 }
    });
    let mut value = -0.5 * log_det(&a) - 0.5 * dot(&site_mean, &mat_vec(&inverse(&a), &site_mean));
    for i in 0..n {
        let v_cav = 1.0 / (1.0 / r.var[i] - r.tau[i]);
        let m_cav = v_cav * (r.mean[i] / r.var[i] - r.nu[i]);
        value += cdf(y[i] * m_cav / (1.0 + v_cav).sqrt()).ln()
            + 0.5 * (v_cav + site_var[i]).ln()
            + (m_cav - site_mean[i]).powi(2) / (2.0 * (v_cav + site_var[i]));
    }
    assert!(
        (r.value - value).abs() < 1e-9 * value.abs(),
        "{} vs {value}",
        r.value
    );
}

/// EP's gradient at convergence (eq. 5.27) against central differences of `log Z_EP`
/// (each side converged afresh).
#[test]
fn ep_evidence_gradient_matches_central_differences() {
    let (x, y) = data(12, 5);
    let base = Kernel::parse("const(var=1.9) * se(ls=[0.7, 1.4]) + lin(var=0.3)").unwrap();
    let settings = EpSettings {
        tol: 1e-12,
        ..EpSettings::default()
    };
    let p0 = base.params();
    let r = ep_evidence(&base, x.as_ref(), &y, &Probit, &settings, None, true).unwrap();
    let h = 1e-5;
    for j in 0..p0.len() {
        let at = |d: f64| {
            let mut k = base.clone();
            let mut p = p0.clone();
            p[j] += d;
            k.set_params(&p).unwrap();
            ep_evidence(&k, x.as_ref(), &y, &Probit, &settings, None, false)
                .unwrap()
                .value
        };
        let fd = (at(h) - at(-h)) / (2.0 * h);
        assert!(
            (fd - r.grad[j]).abs() < 1e-6 * (1.0 + fd.abs()),
            "param {j}: {} vs FD {fd}",
            r.grad[j]
        );
    }
}

/// With Gaussian terms EP is exact: its evidence is the exact GP's log marginal likelihood,
/// its gradient the exact one, and its posterior the exact posterior (spec §4).
#[test]
fn ep_with_gaussian_terms_is_the_exact_gp() {
    let (x, labels) = data(11, 6);
    let y: Vec<f64> = (0..11).map(|i| labels[i] + 0.3 * x[(i, 0)]).collect();
    let noise = 0.2;
    let site = Gaussian::new(noise).unwrap();
    let r = ep_evidence(
        &kernel(),
        x.as_ref(),
        &y,
        &site,
        &EpSettings::default(),
        None,
        true,
    )
    .unwrap();
    // One sweep sets every site; the second only confirms.
    assert_eq!(r.sweeps, 2);
    let hyper = GpHyper {
        kernel: kernel(),
        mean: Mean::Zero,
        noise,
    };
    let gp = ExactGp::at(hyper, x.as_ref(), &y, 0.0).unwrap();
    assert!((r.value - gp.lml()).abs() < 1e-10 * gp.lml().abs());
    let exact = gp.predict(x.as_ref(), true).unwrap();
    for i in 0..11 {
        assert!((r.mean[i] - exact.mean[i]).abs() < 1e-10);
        assert!((r.var[i] - exact.var[i]).abs() < 1e-10);
        assert!((r.tau[i] - 1.0 / noise).abs() < 1e-10);
    }
    // The exact GP's gradient by central differences.
    let p0 = kernel().params();
    for j in 0..p0.len() {
        let at = |d: f64| {
            let mut k = kernel();
            let mut p = p0.clone();
            p[j] += d;
            k.set_params(&p).unwrap();
            let hyper = GpHyper {
                kernel: k,
                mean: Mean::Zero,
                noise,
            };
            ExactGp::at(hyper, x.as_ref(), &y, 0.0).unwrap().lml()
        };
        let fd = (at(1e-5) - at(-1e-5)) / 2e-5;
        assert!((fd - r.grad[j]).abs() < 1e-6 * (1.0 + fd.abs()), "{j}");
    }
}

/// Both models' predictions against the textbook formulas formed densely: Laplace mean
/// `k*ᵀ∇ℓ(f̂)`, variance `k** − k*ᵀ(K + W⁻¹)⁻¹k*` (R&W Alg. 3.2); EP mean `k*ᵀ(K + S̃⁻¹)⁻¹μ̃`,
/// variance `k** − k*ᵀ(K + S̃⁻¹)⁻¹k*` (Alg. 3.6); probabilities `Φ(μ/√(1+v))` for the probit and
/// the logistic integral for the logit.
#[test]
fn predictions_match_textbook_formulas() {
    let (x, y) = data(10, 7);
    let (xs, _) = data(4, 8);
    let k = kernel().matrix(x.as_ref());
    let ks = kernel().cross(x.as_ref(), xs.as_ref());
    let kss = kernel().diag(xs.as_ref());
    let check = |mean: &[f64], var: &[f64], a: &Mat<f64>, t: &[f64], what: &str| {
        let a_inv = inverse(a);
        for j in 0..4 {
            let kj: Vec<f64> = (0..10).map(|i| ks[(i, j)]).collect();
            let m = dot(&kj, t);
            let v = kss[j] - dot(&kj, &mat_vec(&a_inv, &kj));
            assert!((mean[j] - m).abs() < 1e-9, "{what} mean {j}");
            assert!((var[j] - v).abs() < 1e-9, "{what} var {j}");
        }
    };
    for link in [Link::Probit, Link::Logit] {
        let model = BinaryLaplace::at(x.as_ref(), &y, kernel(), link).unwrap();
        let lik = Bernoulli::new(link);
        let f = model.mode();
        let w: Vec<f64> = (0..10)
            .map(|i| -lik.latent_derivatives(y[i], f[i]).d2)
            .collect();
        let grad: Vec<f64> = (0..10)
            .map(|i| lik.latent_derivatives(y[i], f[i]).d1)
            .collect();
        let a = Mat::from_fn(10, 10, |i, j| {
            k[(i, j)] + if i == j { 1.0 / w[i] } else { 0.0 }
        });
        let m = model.predict_latent(xs.as_ref()).unwrap();
        let p = model.predict_proba(xs.as_ref()).unwrap();
        check(&m.mean, &m.var, &a, &grad, "laplace");
        for j in 0..4 {
            assert_eq!(p[j], lik.class_probability(m.mean[j], m.var[j]));
        }
    }
    let ep = BinaryEp::at(x.as_ref(), &y, kernel(), &EpSettings::default()).unwrap();
    let s = ep.sites();
    let a = Mat::from_fn(10, 10, |i, j| {
        k[(i, j)] + if i == j { 1.0 / s.tau[i] } else { 0.0 }
    });
    let site_mean: Vec<f64> = (0..10).map(|i| s.nu[i] / s.tau[i]).collect();
    let t = mat_vec(&inverse(&a), &site_mean);
    let m = ep.predict_latent(xs.as_ref()).unwrap();
    let p = ep.predict_proba(xs.as_ref()).unwrap();
    check(&m.mean, &m.var, &a, &t, "ep");
    for j in 0..4 {
        let want = cdf(m.mean[j] / (1.0 + m.var[j]).sqrt());
        assert!((p[j] - want).abs() < 1e-15);
    }
}

/// With a smooth kernel on many nearby inputs `K` is ill-conditioned (its Cholesky needs
/// jitter); the posterior's `S = (K + W⁻¹)⁻¹`, materialised as verification does, must still
/// give the variance of the well-conditioned `K + W⁻¹` (`W ≤ ¼` for the logit, so its smallest
/// eigenvalue is at least 4). The old form `K⁻¹ − L⁻ᵀ(I + LᵀWL)⁻¹L⁻¹` was off by 0.24 in a
/// variance of 1.7 on such data.
#[test]
fn the_posterior_form_is_accurate_where_k_is_ill_conditioned() {
    use crate::posterior::LinearGaussianForm;
    let n = 120;
    let (x, y) = data(n, 11);
    let kernel = Kernel::parse("const(var=9.2) * se(ls=[1.6, 3.5])").unwrap();
    let (xs, _) = data(6, 12);
    for link in [Link::Logit, Link::Probit] {
        let model = BinaryLaplace::at(x.as_ref(), &y, kernel.clone(), link).unwrap();
        let k_factor = crate::linalg::Cholesky::factor(
            &kernel.matrix(x.as_ref()),
            "K",
            crate::linalg::Parallelism::Sequential,
        )
        .unwrap();
        assert!(k_factor.jitter() > 0.0, "K should need jitter here");
        assert_eq!(model.jitter(), 0.0, "B = I + W½KW½ never does");
        let lik = Bernoulli::new(link);
        let f = model.mode();
        let a = Mat::from_fn(n, n, |i, j| {
            let w = -lik.latent_derivatives(y[i], f[i]).d2;
            kernel.matrix(x.as_ref())[(i, j)] + if i == j { 1.0 / w } else { 0.0 }
        });
        let a_inv = inverse(&a);
        let form = model.linear_gaussian();
        let s = form.s_matrix();
        let ks = kernel.cross(x.as_ref(), xs.as_ref());
        let kss = kernel.diag(xs.as_ref());
        let m = model.predict_latent(xs.as_ref()).unwrap();
        for j in 0..6 {
            let kj: Vec<f64> = (0..n).map(|i| ks[(i, j)]).collect();
            let want = kss[j] - dot(&kj, &mat_vec(&a_inv, &kj));
            let materialised = kss[j] - dot(&kj, &mat_vec(&s, &kj));
            assert!(
                (materialised - want).abs() < 1e-9 * kss[j],
                "{link:?} point {j}: S materialised gives {materialised}, (K + W⁻¹)⁻¹ {want}"
            );
            assert!(
                (m.var[j] - want).abs() < 1e-9 * kss[j],
                "{link:?} point {j}"
            );
        }
    }
}

/// The fit raises the evidence, is reproducible (same seed, same numbers) and reports its
/// starts; bad labels, inputs and settings are clear errors.
#[test]
fn fits_raise_the_evidence_and_are_reproducible() {
    let (x, y) = data(30, 9);
    let opts = FitOptions {
        restarts: 2,
        seed: 3,
        ..FitOptions::default()
    };
    let start = BinaryLaplace::at(x.as_ref(), &y, kernel(), Link::Logit).unwrap();
    let fitted = BinaryLaplace::fit(x.as_ref(), &y, kernel(), Link::Logit, &opts).unwrap();
    assert!(
        fitted.lml() > start.lml() + 1e-3,
        "{} vs {}",
        fitted.lml(),
        start.lml()
    );
    assert_eq!(fitted.starts().len(), 3);
    let again = BinaryLaplace::fit(x.as_ref(), &y, kernel(), Link::Logit, &opts).unwrap();
    assert_eq!(fitted.lml(), again.lml());
    assert_eq!(fitted.kernel().params(), again.kernel().params());
    // At the optimum the gradient vanishes (up to the parameter bounds).
    let g = laplace_evidence(fitted.kernel(), x.as_ref(), &y, Link::Logit, None, true).unwrap();
    let bounds = fitted.kernel().bounds();
    for (j, (gj, p)) in g.grad.iter().zip(fitted.kernel().params()).enumerate() {
        let at_bound = p <= bounds[j].0 + 1e-9 || p >= bounds[j].1 - 1e-9;
        assert!(at_bound || gj.abs() < 1e-3, "param {j}: gradient {gj}");
    }

    let settings = EpSettings::default();
    let start = BinaryEp::at(x.as_ref(), &y, kernel(), &settings).unwrap();
    let fitted = BinaryEp::fit(x.as_ref(), &y, kernel(), &settings, &opts).unwrap();
    assert!(fitted.lml() > start.lml() + 1e-3);
    let again = BinaryEp::fit(x.as_ref(), &y, kernel(), &settings, &opts).unwrap();
    assert_eq!(fitted.lml(), again.lml());

    let mut bad = y.clone();
    bad[4] = 0.0;
    let e = BinaryLaplace::at(x.as_ref(), &bad, kernel(), Link::Logit).unwrap_err();
    assert!(e.to_string().contains("y[4] = 0"), "{e}");
    let e = BinaryEp::at(x.as_ref(), &bad, kernel(), &settings).unwrap_err();
    assert!(e.to_string().contains("y[4]"), "{e}");
    let mut xn = x.clone();
    xn[(2, 1)] = f64::NAN;
    let e = BinaryLaplace::at(xn.as_ref(), &y, kernel(), Link::Probit).unwrap_err();
    assert!(e.to_string().contains("x[2, 1]"), "{e}");
    let e = BinaryEp::at(
        x.as_ref(),
        &y,
        kernel(),
        &EpSettings {
            damping: 0.0,
            ..settings
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("damping"), "{e}");
}

/// With one start the evaluations of a fit run one after another, so each mode search starts
/// from the previous evaluation's mode, and the final model's from the last one: the fitted
/// model is the one computed from scratch at the fitted parameters (found in fewer Newton
/// steps), and the fit is reproducible.
#[test]
fn a_warm_started_laplace_fit_gives_the_model_computed_from_scratch() {
    let (x, y) = data(40, 4);
    let opts = FitOptions::default();
    assert_eq!(opts.restarts, 0);
    let fitted = BinaryLaplace::fit(x.as_ref(), &y, kernel(), Link::Logit, &opts).unwrap();
    let cold = BinaryLaplace::at(x.as_ref(), &y, fitted.kernel().clone(), Link::Logit).unwrap();
    assert!(
        (fitted.lml() - cold.lml()).abs() < 1e-12 * cold.lml().abs(),
        "{} vs {}",
        fitted.lml(),
        cold.lml()
    );
    for (a, b) in fitted.mode().iter().zip(cold.mode()) {
        assert!((a - b).abs() < 1e-9, "{a} vs {b}");
    }
    assert!(
        fitted.newton_iterations() < cold.newton_iterations(),
        "{} vs {}",
        fitted.newton_iterations(),
        cold.newton_iterations()
    );
    let again = BinaryLaplace::fit(x.as_ref(), &y, kernel(), Link::Logit, &opts).unwrap();
    assert_eq!(fitted.lml(), again.lml());
    assert_eq!(fitted.kernel().params(), again.kernel().params());
}

/// The binary Laplace fit with a pilot on 512 of 1100 rows reaches the unpiloted optimum.
#[test]
fn laplace_fit_with_a_pilot_reaches_the_unpiloted_optimum() {
    let (x, y) = data(1100, 5);
    let fit = |pilot_rows| {
        let opts = FitOptions {
            pilot_rows,
            ..FitOptions::default()
        };
        BinaryLaplace::fit(x.as_ref(), &y, kernel(), Link::Logit, &opts).unwrap()
    };
    let (piloted, plain) = (fit(512), fit(0));
    let rel = (piloted.lml() - plain.lml()).abs() / plain.lml().abs();
    assert!(rel < 1e-7, "{} vs {}", piloted.lml(), plain.lml());
    for (a, b) in piloted
        .kernel()
        .params()
        .iter()
        .zip(plain.kernel().params())
    {
        assert!((a - b).abs() < 2e-3, "{a} vs {b} (log scale)");
    }
    assert!(piloted.starts()[0]
        .message
        .contains("pilot fit on 512 of 1100 rows"));
}
