//! The exact GP against independent computations: explicit inverses on tiny problems, central
//! finite differences, brute-force leave-one-out refits, and save/load round trips.

use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use trustgp::fit::FitOptions;
use trustgp::kernels::Kernel;
use trustgp::linalg::Parallelism;
use trustgp::means::Mean;
use trustgp::models::exact::{log_marginal_likelihood, ExactGp};
use trustgp::models::hyper::GpHyper;

/// A smooth 2-D toy problem with noise, seeded.
fn toy(n: usize, seed: u64) -> (Mat<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let x = Mat::from_fn(n, 2, |_, _| rng.random_range(-2.0..2.0f64));
    let y = (0..n)
        .map(|i| {
            (1.5 * x[(i, 0)]).sin()
                + 0.3 * x[(i, 1)] * x[(i, 1)]
                + 0.1 * rng.random_range(-1.0..1.0)
        })
        .collect();
    (x, y)
}

fn hyper(expr: &str, mean: Mean, noise: f64, x: &Mat<f64>) -> GpHyper {
    let mut kernel = Kernel::parse(expr).unwrap();
    kernel.initialize(x.as_ref()).unwrap();
    GpHyper {
        kernel,
        mean,
        noise,
    }
}

/// Naive O(n³) reference: explicit inverse by Gauss–Jordan on a small dense matrix.
fn invert(a: &Mat<f64>) -> Mat<f64> {
    let n = a.nrows();
    let mut m = Mat::from_fn(n, 2 * n, |i, j| {
        if j < n {
            a[(i, j)]
        } else if j - n == i {
            1.0
        } else {
            0.0
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
        let piv = m[(c, c)];
        for j in 0..2 * n {
            m[(c, j)] /= piv;
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

fn det_by_lu(a: &Mat<f64>) -> f64 {
    let n = a.nrows();
    let mut m = a.clone();
    let mut det = 1.0;
    for c in 0..n {
        let p = (c..n)
            .max_by(|&i, &j| m[(i, c)].abs().total_cmp(&m[(j, c)].abs()))
            .unwrap();
        if p != c {
            det = -det;
            for j in 0..n {
                let t = m[(c, j)];
                m[(c, j)] = m[(p, j)];
                m[(p, j)] = t;
            }
        }
        det *= m[(c, c)];
        for i in c + 1..n {
            let f = m[(i, c)] / m[(c, c)];
            for j in c..n {
                m[(i, j)] -= f * m[(c, j)];
            }
        }
    }
    det
}

#[test]
fn lml_and_posterior_match_explicit_inverse_on_a_tiny_problem() {
    let (x, y) = toy(7, 1);
    let h = hyper(
        "const(var=1.7) * se(ls=[0.8, 1.3])",
        Mean::Constant { c: 0.2 },
        0.05,
        &x,
    );
    let lml =
        log_marginal_likelihood(&h, x.as_ref(), &y, 0.0, Parallelism::Sequential, false).unwrap();
    let mut k = h.kernel.matrix(x.as_ref());
    for i in 0..7 {
        k[(i, i)] += 0.05;
    }
    let kinv = invert(&k);
    let r: Vec<f64> = y.iter().map(|v| v - 0.2).collect();
    let quad: f64 = (0..7)
        .map(|i| (0..7).map(|j| r[i] * kinv[(i, j)] * r[j]).sum::<f64>())
        .sum();
    let expect = -0.5 * quad - 0.5 * det_by_lu(&k).ln() - 3.5 * (2.0 * std::f64::consts::PI).ln();
    assert!(
        (lml.value - expect).abs() < 1e-11 * expect.abs(),
        "{} vs {expect}",
        lml.value
    );

    let gp = ExactGp::at(h.clone(), x.as_ref(), &y, 0.0).unwrap();
    let xs = Mat::from_fn(3, 2, |i, j| 0.3 * i as f64 - 0.2 * j as f64);
    let p = gp.predict(xs.as_ref(), true).unwrap();
    let ks = h.kernel.cross(x.as_ref(), xs.as_ref());
    for s in 0..3 {
        let mean = 0.2
            + (0..7)
                .map(|i| ks[(i, s)] * (0..7).map(|j| kinv[(i, j)] * r[j]).sum::<f64>())
                .sum::<f64>();
        let quad: f64 = (0..7)
            .map(|i| {
                (0..7)
                    .map(|j| ks[(i, s)] * kinv[(i, j)] * ks[(j, s)])
                    .sum::<f64>()
            })
            .sum();
        let var = 1.7 - quad;
        assert!((p.mean[s] - mean).abs() < 1e-12, "mean {s}");
        assert!((p.var[s] - var).abs() < 1e-12, "var {s}");
    }
    // Noisy predictions add σ²; the joint covariance's diagonal is the marginal variance.
    let pn = gp.predict(xs.as_ref(), false).unwrap();
    let (_, cov) = gp.predict_joint(xs.as_ref()).unwrap();
    for s in 0..3 {
        assert!((pn.var[s] - p.var[s] - 0.05).abs() < 1e-14);
        assert!((cov[(s, s)] - p.var[s]).abs() < 1e-12);
    }
    // The linear-Gaussian form (t, S) reproduces the mean and variance.
    let t = gp.posterior().t();
    let smat = gp.posterior().s_matrix();
    for s in 0..3 {
        let mean = 0.2 + (0..7).map(|i| ks[(i, s)] * t[i]).sum::<f64>();
        let quad: f64 = (0..7)
            .map(|i| {
                (0..7)
                    .map(|j| ks[(i, s)] * smat[(i, j)] * ks[(j, s)])
                    .sum::<f64>()
            })
            .sum();
        assert!((mean - p.mean[s]).abs() < 1e-12 && (1.7 - quad - p.var[s]).abs() < 1e-12);
    }
}

#[test]
fn lml_gradient_matches_central_finite_differences() {
    let (x, y) = toy(40, 2);
    let d = 2;
    let cases = [
        ("const * se", Mean::Zero),
        (
            "const * matern52 + per(period=2)",
            Mean::Constant { c: 0.1 },
        ),
        (
            "se(dims=[0]) * rq(dims=[1]) + lin + white(var=0.01)",
            Mean::by_name("linear", d).unwrap(),
        ),
        ("matern32(ls=0.7) + matern12", Mean::Zero),
    ];
    for (expr, mean) in cases {
        let h = hyper(expr, mean, 0.07, &x);
        let v0 = h.to_vec();
        let g = log_marginal_likelihood(&h, x.as_ref(), &y, 0.0, Parallelism::Sequential, true)
            .unwrap()
            .grad;
        assert_eq!(g.len(), v0.len());
        for j in 0..v0.len() {
            let step = 1e-5;
            let f = |delta: f64| {
                let mut v = v0.clone();
                v[j] += delta;
                let hj = h.with_vec(&v).unwrap();
                log_marginal_likelihood(&hj, x.as_ref(), &y, 0.0, Parallelism::Sequential, false)
                    .unwrap()
                    .value
            };
            let fd = (f(step) - f(-step)) / (2.0 * step);
            let tol = 1e-6 * (1.0 + g[j].abs());
            assert!(
                (fd - g[j]).abs() < tol,
                "{expr}, parameter {} : analytic {} vs fd {fd}",
                h.param_names()[j],
                g[j]
            );
        }
    }
}

#[test]
fn parallel_and_sequential_lml_agree_and_parallel_is_reproducible() {
    let (x, y) = toy(900, 3);
    let h = hyper("const * se", Mean::Zero, 0.1, &x);
    let a =
        log_marginal_likelihood(&h, x.as_ref(), &y, 0.0, Parallelism::Sequential, true).unwrap();
    let b = log_marginal_likelihood(&h, x.as_ref(), &y, 0.0, Parallelism::Parallel, true).unwrap();
    assert!((a.value - b.value).abs() < 1e-9 * a.value.abs());
    for (p, q) in a.grad.iter().zip(&b.grad) {
        assert!((p - q).abs() < 1e-8 * (1.0 + p.abs()));
    }
    // Repeated parallel evaluations give the same bits: partial sums are combined in a fixed
    // order, whichever thread computed them.
    for _ in 0..5 {
        let c =
            log_marginal_likelihood(&h, x.as_ref(), &y, 0.0, Parallelism::Parallel, true).unwrap();
        assert_eq!(c.value.to_bits(), b.value.to_bits());
        assert!(c
            .grad
            .iter()
            .zip(&b.grad)
            .all(|(p, q)| p.to_bits() == q.to_bits()));
    }
}

#[test]
fn closed_form_loo_equals_brute_force_refits() {
    let (x, y) = toy(12, 4);
    let h = hyper(
        "const(var=1.3) * matern52(ls=[0.9, 1.1])",
        Mean::Constant { c: -0.1 },
        0.02,
        &x,
    );
    let gp = ExactGp::at(h.clone(), x.as_ref(), &y, 0.0).unwrap();
    let loo = gp.loo();
    for i in 0..12 {
        let keep: Vec<usize> = (0..12).filter(|&r| r != i).collect();
        let xi = Mat::from_fn(11, 2, |a, b| x[(keep[a], b)]);
        let yi: Vec<f64> = keep.iter().map(|&r| y[r]).collect();
        let refit = ExactGp::at(h.clone(), xi.as_ref(), &yi, 0.0).unwrap();
        let xt = Mat::from_fn(1, 2, |_, b| x[(i, b)]);
        let p = refit.predict(xt.as_ref(), false).unwrap();
        assert!(
            (p.mean[0] - loo.mean[i]).abs() < 1e-10,
            "row {i}: {} vs {}",
            p.mean[0],
            loo.mean[i]
        );
        assert!((p.var[0] - loo.var[i]).abs() < 1e-10, "row {i} variance");
    }
}

#[test]
fn fitting_increases_the_lml_and_restarts_are_reproducible() {
    let (x, y) = toy(60, 5);
    let h = hyper("const * se", Mean::Zero, 0.5, &x);
    let start = log_marginal_likelihood(&h, x.as_ref(), &y, 0.0, Parallelism::Sequential, false)
        .unwrap()
        .value;
    let opts = FitOptions {
        restarts: 3,
        seed: 9,
        ..FitOptions::default()
    };
    let a = ExactGp::fit(x.as_ref(), &y, h.clone(), &opts).unwrap();
    let b = ExactGp::fit(x.as_ref(), &y, h.clone(), &opts).unwrap();
    assert!(a.lml() > start + 1.0);
    assert_eq!(a.starts().len(), 4);
    assert_eq!(a.hyper().to_vec(), b.hyper().to_vec());
    // The chosen start is the best one, and the optimum is stationary.
    let best = a
        .starts()
        .iter()
        .map(|s| s.objective)
        .fold(f64::NEG_INFINITY, f64::max);
    assert!((a.lml() - best).abs() < 1e-9 * best.abs());
    let g = log_marginal_likelihood(
        a.hyper(),
        x.as_ref(),
        &y,
        0.0,
        Parallelism::Sequential,
        true,
    )
    .unwrap()
    .grad;
    let b = a.hyper().bounds();
    for (j, (gj, v)) in g.iter().zip(a.hyper().to_vec()).enumerate() {
        let at_bound = (v - b[j].0).abs() < 1e-8 || (v - b[j].1).abs() < 1e-8;
        assert!(at_bound || gj.abs() < 1e-3, "parameter {j} gradient {gj}");
    }
}

#[test]
fn posterior_samples_are_seeded_and_have_the_posterior_moments() {
    let (x, y) = toy(15, 6);
    let h = hyper("const * se(ls=1)", Mean::Zero, 0.05, &x);
    let gp = ExactGp::at(h, x.as_ref(), &y, 0.0).unwrap();
    let xs = Mat::from_fn(2, 2, |i, j| 0.5 * i as f64 + 0.1 * j as f64);
    let s1 = gp.sample(xs.as_ref(), 20000, 42).unwrap();
    let s2 = gp.sample(xs.as_ref(), 20000, 42).unwrap();
    assert_eq!(s1, s2);
    let p = gp.predict(xs.as_ref(), true).unwrap();
    for i in 0..2 {
        let m: f64 = (0..20000).map(|k| s1[(i, k)]).sum::<f64>() / 20000.0;
        let v: f64 = (0..20000).map(|k| (s1[(i, k)] - m).powi(2)).sum::<f64>() / 19999.0;
        let se = (p.var[i] / 20000.0).sqrt();
        assert!(
            (m - p.mean[i]).abs() < 5.0 * se,
            "sample mean {m} vs {}",
            p.mean[i]
        );
        assert!(
            (v / p.var[i] - 1.0).abs() < 0.05,
            "sample variance {v} vs {}",
            p.var[i]
        );
    }
}

#[test]
fn bad_inputs_are_errors_not_panics() {
    let (x, mut y) = toy(10, 7);
    let h = hyper("const * se", Mean::Zero, 0.1, &x);
    assert!(ExactGp::at(h.clone(), x.as_ref(), &y[..9], 0.0).is_err());
    y[3] = f64::NAN;
    let e = ExactGp::at(h.clone(), x.as_ref(), &y, 0.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("row 3"), "{e}");
    y[3] = 0.0;
    let gp = ExactGp::at(h.clone(), x.as_ref(), &y, 0.0).unwrap();
    assert!(gp.predict(Mat::<f64>::zeros(2, 3).as_ref(), false).is_err());
    let mut bad = Mat::<f64>::zeros(2, 2);
    bad[(1, 0)] = f64::INFINITY;
    assert!(gp
        .predict(bad.as_ref(), false)
        .unwrap_err()
        .to_string()
        .contains("row 1"));
    assert!(h.with_vec(&[0.0]).is_err());
    // Hyperparameters that do not fit the data are errors too.
    let uninitialised = GpHyper {
        kernel: Kernel::parse("se").unwrap(),
        mean: Mean::Zero,
        noise: 0.1,
    };
    let e = ExactGp::at(uninitialised, x.as_ref(), &y, 0.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("initialise"), "{e}");
    let three_dims = hyper(
        "se(ls=[1, 1, 1])",
        Mean::Zero,
        0.1,
        &Mat::<f64>::zeros(2, 3),
    );
    assert!(ExactGp::at(three_dims, x.as_ref(), &y, 0.0).is_err());
    // Too many rows for dense n×n matrices is refused before anything is allocated.
    let big = Mat::<f64>::zeros(trustgp::models::exact::MAX_EXACT_ROWS + 1, 2);
    let ybig = vec![0.0; big.nrows()];
    let e = ExactGp::at(h.clone(), big.as_ref(), &ybig, 0.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("GiB"), "{e}");
    let mut negative = h.clone();
    negative.noise = -1.0;
    assert!(ExactGp::at(negative, x.as_ref(), &y, 0.0)
        .unwrap_err()
        .to_string()
        .contains("noise"));
}

/// Fits `h` with and without profiling the kernel's overall scale.
fn fit_both_ways(x: &Mat<f64>, y: &[f64], h: &GpHyper) -> (ExactGp, ExactGp) {
    let fit = |profile_scale| {
        let opts = FitOptions {
            profile_scale,
            ..FitOptions::default()
        };
        ExactGp::fit(x.as_ref(), y, h.clone(), &opts).unwrap()
    };
    (fit(true), fit(false))
}

#[test]
fn profiling_the_scale_reaches_the_same_optimum() {
    let (x, y) = toy(60, 12);
    let h = hyper("const * se", Mean::Constant { c: 0.0 }, 0.3, &x);
    let (p, f) = fit_both_ways(&x, &y, &h);
    assert!(
        (p.lml() - f.lml()).abs() < 1e-7 * f.lml().abs(),
        "{} vs {}",
        p.lml(),
        f.lml()
    );
    for (a, b) in p.hyper().to_vec().iter().zip(f.hyper().to_vec()) {
        assert!((a - b).abs() < 1e-3, "{:?} vs {:?}", p.hyper(), f.hyper());
    }
    assert_eq!(p.starts().len(), 1);
    assert!(p.starts()[0].converged);

    // Targets in the thousands without standardisation put the best scale (≈ 1e7) above the
    // bound on `const` (1e5): the profiled optimum is then continued within the bounds and
    // must end where the full parameterisation does, with the scale at its bound.
    let big: Vec<f64> = y.iter().map(|v| 3000.0 * v).collect();
    let (p, f) = fit_both_ways(&x, &big, &h);
    assert_eq!(p.starts().len(), 2);
    assert!(p.starts()[1].message.starts_with("continued within"));
    assert!((p.hyper().kernel.log_params()[0] - 1e5f64.ln()).abs() < 1e-9);
    assert!(
        (p.lml() - f.lml()).abs() < 1e-6 * f.lml().abs(),
        "{} vs {}",
        p.lml(),
        f.lml()
    );
}

#[test]
fn a_fitted_model_is_bit_for_bit_the_model_at_its_hyperparameters() {
    // With and without a profiled scale: the first reuses the optimiser's last factorisation,
    // the second refactorises; either way `at` must reproduce it exactly (model files rely on
    // this).
    let (x, y) = toy(50, 13);
    let (xs, _) = toy(9, 14);
    for expr in ["se + per(period=2)", "const * matern32"] {
        let h = hyper(expr, Mean::Zero, 0.2, &x);
        let gp = ExactGp::fit(x.as_ref(), &y, h, &FitOptions::default()).unwrap();
        let again = ExactGp::at(gp.hyper().clone(), x.as_ref(), &y, 0.0).unwrap();
        assert_eq!(gp.lml(), again.lml(), "{expr}");
        assert_eq!(
            gp.predict(xs.as_ref(), false).unwrap(),
            again.predict(xs.as_ref(), false).unwrap(),
            "{expr}"
        );
    }
}

#[test]
fn targets_equal_to_the_mean_still_fit() {
    // A zero residual makes the profiled scale ĉ = 0: the fit must fall back to the full
    // parameterisation instead of failing.
    let (x, _) = toy(30, 15);
    let y = vec![0.5; 30];
    let h = hyper("const * se", Mean::Constant { c: 0.5 }, 0.1, &x);
    let gp = ExactGp::fit(x.as_ref(), &y, h, &FitOptions::default()).unwrap();
    assert!(gp.lml().is_finite());
    let p = gp.predict(x.as_ref(), false).unwrap();
    assert!(
        p.mean.iter().all(|m| (m - 0.5).abs() < 1e-6),
        "{:?}",
        p.mean
    );
}

#[test]
fn parallel_gradient_matches_finite_differences() {
    // 600 rows: the parallel factorisation and the row-block Gram inverse with several blocks.
    let (x, y) = toy(600, 16);
    let h = hyper("const * matern52", Mean::Constant { c: 0.1 }, 0.05, &x);
    let par = Parallelism::Parallel;
    let with = log_marginal_likelihood(&h, x.as_ref(), &y, 0.0, par, true).unwrap();
    let value = |h: &GpHyper| {
        log_marginal_likelihood(h, x.as_ref(), &y, 0.0, par, false)
            .unwrap()
            .value
    };
    let v0 = h.to_vec();
    for j in 0..v0.len() {
        let step = 1e-5;
        let at = |delta: f64| {
            let mut v = v0.clone();
            v[j] += delta;
            value(&h.with_vec(&v).unwrap())
        };
        let fd = (at(step) - at(-step)) / (2.0 * step);
        assert!(
            (fd - with.grad[j]).abs() < 1e-6 * (1.0 + with.grad[j].abs()),
            "{}: analytic {} vs fd {fd}",
            h.param_names()[j],
            with.grad[j]
        );
    }
}

/// A pilot on a subset (n > 2 × 512 rows) reaches the optimum the unpiloted fit reaches: the
/// full fit only starts elsewhere, it converges by the same rule on every row.
#[test]
fn a_pilot_fit_reaches_the_unpiloted_optimum() {
    let (x, y) = toy(1200, 11);
    let fit = |pilot_rows| {
        let opts = FitOptions {
            pilot_rows,
            ..FitOptions::default()
        };
        ExactGp::fit(
            x.as_ref(),
            &y,
            hyper("const * se", Mean::Zero, 0.1, &x),
            &opts,
        )
        .unwrap()
    };
    let (piloted, plain) = (fit(512), fit(0));
    let rel = (piloted.lml() - plain.lml()).abs() / plain.lml().abs();
    assert!(rel < 1e-7, "{} vs {}", piloted.lml(), plain.lml());
    for (a, b) in piloted.hyper().to_vec().iter().zip(plain.hyper().to_vec()) {
        assert!((a - b).abs() < 2e-3, "{a} vs {b} (log scale)");
    }
    assert!(piloted.starts()[0]
        .message
        .contains("pilot fit on 512 of 1200 rows"));
    assert!(!plain.starts()[0].message.contains("pilot"));
}
