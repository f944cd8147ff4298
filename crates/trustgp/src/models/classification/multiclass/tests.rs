//! Multi-class Laplace against dense brute force on tiny problems, finite differences, and the
//! two-class invariant: a 2-class softmax with a shared kernel `k` is, in `g = f_0 − f_1`, the
//! binary logit GP with kernel `2k` (and `f_0 + f_1` keeps its prior), and Laplace's method is
//! invariant under that linear change of variables, so the approximate evidence, the latent
//! mean of `g` and its variance agree exactly.

use faer::linalg::solvers::Solve;
use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::linalg::{Cholesky, Parallelism};

fn data(n: usize, classes: usize, seed: u64) -> (Mat<f64>, Vec<usize>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let x = Mat::from_fn(n, 2, |_, _| rng.random_range(-2.0..2.0));
    // Labels from the input (so that the kernel has something to fit), every class present.
    let y = (0..n)
        .map(|i| {
            if i < classes {
                i
            } else {
                ((x[(i, 0)] + 2.0) * classes as f64 / 4.0)
                    .floor()
                    .min(classes as f64 - 1.0) as usize
            }
        })
        .collect();
    (x, y)
}

fn kernel(s: &str) -> Kernel {
    Kernel::parse(s).unwrap()
}

fn per_class() -> ClassKernels {
    ClassKernels::PerClass(vec![
        kernel("se(ls=0.8, var=1.5)"),
        kernel("se(ls=1.3, var=0.7)"),
        kernel("matern52(ls=0.6, var=2.0)"),
    ])
}

/// The dense block-diagonal `K` (Cn×Cn).
fn dense_k(kernels: &ClassKernels, x: &Mat<f64>, classes: usize) -> Mat<f64> {
    let n = x.nrows();
    let mut k = Mat::zeros(classes * n, classes * n);
    for c in 0..classes {
        let kc = kernels.kernel(c).matrix(x.as_ref());
        for i in 0..n {
            for j in 0..n {
                k[(c * n + i, c * n + j)] = kc[(i, j)];
            }
        }
    }
    k
}

/// The dense `W = diag(π) − ΠΠᵀ` and `π` at `f`.
fn dense_w(f: &[f64], n: usize, classes: usize) -> (Mat<f64>, Vec<f64>) {
    let mut pi = vec![0.0; classes * n];
    for i in 0..n {
        let z: f64 = (0..classes).map(|c| f[c * n + i].exp()).sum();
        for c in 0..classes {
            pi[c * n + i] = f[c * n + i].exp() / z;
        }
    }
    let w = Mat::from_fn(classes * n, classes * n, |a, b| {
        let (ia, ib) = (a % n, b % n);
        if ia != ib {
            return 0.0;
        }
        (if a == b { pi[a] } else { 0.0 }) - pi[a] * pi[b]
    });
    (w, pi)
}

fn solve(a: &Mat<f64>, b: &Mat<f64>) -> Mat<f64> {
    a.as_ref().partial_piv_lu().solve(b.as_ref())
}

fn eye(n: usize) -> Mat<f64> {
    Mat::from_fn(n, n, |i, j| if i == j { 1.0 } else { 0.0 })
}

fn col(v: &[f64]) -> Mat<f64> {
    Mat::from_fn(v.len(), 1, |i, _| v[i])
}

/// The mode by plain dense Newton, `f ← K (I + W K)⁻¹ (W f + y − π)`.
fn brute_mode(k: &Mat<f64>, y: &[usize], classes: usize) -> Vec<f64> {
    let n = y.len();
    let cn = classes * n;
    let mut f = vec![0.0; cn];
    for _ in 0..100 {
        let (w, pi) = dense_w(&f, n, classes);
        let grad: Vec<f64> = (0..cn)
            .map(|j| (if y[j % n] == j / n { 1.0 } else { 0.0 }) - pi[j])
            .collect();
        let wf = &w * col(&f);
        let rhs = Mat::from_fn(cn, 1, |j, _| wf[(j, 0)] + grad[j]);
        let step = k * solve(&(eye(cn) + &w * k), &rhs);
        f = (0..cn).map(|j| step[(j, 0)]).collect();
    }
    f
}

#[test]
fn the_mode_lml_and_s_match_dense_brute_force() {
    let classes = 3;
    let (x, y) = data(8, classes, 1);
    let kernels = per_class();
    let model = MulticlassLaplace::at(x.as_ref(), &y, classes, kernels.clone()).unwrap();
    let n = y.len();
    let cn = classes * n;
    let k = dense_k(&kernels, &x, classes);
    let f = brute_mode(&k, &y, classes);
    for (a, b) in model.mode().iter().zip(&f) {
        assert!((a - b).abs() < 1e-9, "mode {a} vs brute force {b}");
    }
    // log q = −½ f̂ᵀK⁻¹f̂ + log p(y|f̂) − ½ log|I + L_Kᵀ W L_K| (K = L_K L_Kᵀ).
    let (w, pi) = dense_w(&f, n, classes);
    let lk = Cholesky::factor(&k, "K", Parallelism::Sequential).unwrap();
    let quad: f64 = f.iter().zip(lk.solve_vec(&f)).map(|(a, b)| a * b).sum();
    let loglik: f64 = (0..n).map(|i| pi[y[i] * n + i].ln()).sum();
    let l = Mat::from_fn(cn, cn, |i, j| if i >= j { lk.l()[(i, j)] } else { 0.0 });
    let inner = eye(cn) + l.transpose() * &w * &l;
    let logdet = Cholesky::factor(&inner, "B", Parallelism::Sequential)
        .unwrap()
        .log_det();
    let direct = -0.5 * quad + loglik - 0.5 * logdet;
    assert!(
        (model.lml() - direct).abs() < 1e-9 * direct.abs().max(1.0),
        "lml {} vs direct {direct}",
        model.lml()
    );
    // S = (I + W K)⁻¹ W, and t = y − π̂ = K⁻¹ f̂.
    let s = solve(&(eye(cn) + &w * &k), &w);
    let form = model.latent_form();
    for i in 0..cn {
        for j in 0..cn {
            assert!((form.s[(i, j)] - s[(i, j)]).abs() < 1e-9, "S[{i},{j}]");
        }
    }
    let kinv_f = lk.solve_vec(&f);
    for c in 0..classes {
        for i in 0..n {
            assert!((form.t[c][i] - kinv_f[c * n + i]).abs() < 1e-8);
        }
    }
    // S ⪰ 0.
    let eig = form
        .s
        .as_ref()
        .self_adjoint_eigenvalues(faer::Side::Lower)
        .unwrap();
    assert!(eig.iter().all(|&e| e > -1e-12), "{eig:?}");
}

#[test]
fn predictions_match_the_dense_textbook_form() {
    let classes = 3;
    let (x, y) = data(8, classes, 2);
    let kernels = per_class();
    let model = MulticlassLaplace::at(x.as_ref(), &y, classes, kernels.clone()).unwrap();
    let n = y.len();
    let cn = classes * n;
    let xs = Mat::from_fn(4, 2, |i, j| 0.3 * i as f64 - 0.7 * j as f64);
    let latent = model.predict_latent(xs.as_ref()).unwrap();
    let k = dense_k(&kernels, &x, classes);
    let f = model.mode().to_vec();
    let (w, _) = dense_w(&f, n, classes);
    // (K + W⁻¹)⁻¹ = (I + W K)⁻¹ W; mean_c = k_cᵀ K_c⁻¹ f̂_c.
    let s = solve(&(eye(cn) + &w * &k), &w);
    let kinv_f = solve(&k, &col(&f));
    for j in 0..xs.nrows() {
        // The stacked k_*: column c has k_c(X, x_j) in block c.
        let ks = Mat::from_fn(cn, classes, |a, c| {
            if a / n == c {
                model
                    .kernels()
                    .kernel(c)
                    .cross(x.as_ref().subrows(a % n, 1), xs.as_ref().subrows(j, 1))[(0, 0)]
            } else {
                0.0
            }
        });
        let mean = ks.transpose() * &kinv_f;
        let cov = ks.transpose() * &s * &ks;
        for c in 0..classes {
            assert!((latent.mean[(j, c)] - mean[(c, 0)]).abs() < 1e-9);
            let kss = model.kernels().kernel(c).diag(xs.as_ref().subrows(j, 1))[0];
            for d in 0..classes {
                let want = if c == d { kss } else { 0.0 } - cov[(c, d)];
                assert!((latent.cov[j][(c, d)] - want).abs() < 1e-9, "cov[{c},{d}]");
            }
        }
    }
    // Each class's linear-Gaussian form gives the same marginals.
    for c in 0..classes {
        let m = model
            .class_posterior(c)
            .unwrap()
            .marginals(xs.as_ref())
            .unwrap();
        for j in 0..xs.nrows() {
            assert!((m.mean[j] - latent.mean[(j, c)]).abs() < 1e-12);
            assert!((m.var[j] - latent.cov[j][(c, c)]).abs() < 1e-12);
        }
    }
    assert!(model.class_posterior(3).is_err());
}

fn check_gradient(kernels: ClassKernels, classes: usize, seed: u64) {
    let (x, y) = data(9, classes, seed);
    let model = MulticlassLaplace::at(x.as_ref(), &y, classes, kernels.clone()).unwrap();
    let g = model.lml_gradient().unwrap();
    let p0 = kernels.params();
    assert_eq!(g.len(), p0.len());
    let h = 1e-5;
    for j in 0..p0.len() {
        let at = |delta: f64| {
            let mut p = p0.clone();
            p[j] += delta;
            let mut ks = kernels.clone();
            ks.set_params(&p).unwrap();
            MulticlassLaplace::at(x.as_ref(), &y, classes, ks)
                .unwrap()
                .lml()
        };
        let fd = (at(h) - at(-h)) / (2.0 * h);
        assert!(
            (g[j] - fd).abs() < 1e-6 * (1.0 + fd.abs()),
            "parameter {j}: analytic {} vs central difference {fd}",
            g[j]
        );
    }
}

#[test]
fn lml_gradient_matches_central_differences_per_class_kernels() {
    check_gradient(per_class(), 3, 3);
}

#[test]
fn lml_gradient_matches_central_differences_shared_ard_kernel() {
    check_gradient(
        ClassKernels::Shared(kernel("se(ls=[0.7, 1.4], var=2.5)")),
        4,
        4,
    );
}

/// The binary logit Laplace approximation by dense Newton: (LML, latent mean, latent variance
/// at `xs`) for labels `t ∈ {±1}`.
fn binary_logit(
    k: &Mat<f64>,
    kstar: &Mat<f64>,
    kss: &[f64],
    t: &[f64],
) -> (f64, Vec<f64>, Vec<f64>) {
    let n = t.len();
    let sig = |v: f64| 1.0 / (1.0 + (-v).exp());
    let mut f = vec![0.0; n];
    let derivs = |f: &[f64]| -> (Vec<f64>, Vec<f64>) {
        let grad = (0..n).map(|i| (t[i] + 1.0) / 2.0 - sig(f[i])).collect();
        let w = (0..n).map(|i| sig(f[i]) * (1.0 - sig(f[i]))).collect();
        (grad, w)
    };
    for _ in 0..100 {
        let (grad, w) = derivs(&f);
        let wm = Mat::from_fn(n, n, |i, j| if i == j { w[i] } else { 0.0 });
        let rhs = Mat::from_fn(n, 1, |i, _| w[i] * f[i] + grad[i]);
        let step = k * solve(&(eye(n) + &wm * k), &rhs);
        f = (0..n).map(|i| step[(i, 0)]).collect();
    }
    let (grad, w) = derivs(&f);
    let sw = Mat::from_fn(n, n, |i, j| if i == j { w[i].sqrt() } else { 0.0 });
    let b = eye(n) + &sw * k * &sw;
    let logdet = Cholesky::factor(&b, "B", Parallelism::Sequential)
        .unwrap()
        .log_det();
    let kinv_f = solve(k, &col(&f));
    let quad: f64 = (0..n).map(|i| f[i] * kinv_f[(i, 0)]).sum();
    let loglik: f64 = (0..n).map(|i| sig(t[i] * f[i]).ln()).sum();
    let lml = -0.5 * quad + loglik - 0.5 * logdet;
    let mean = (0..kstar.ncols())
        .map(|j| (0..n).map(|i| kstar[(i, j)] * grad[i]).sum())
        .collect();
    let winv = Mat::from_fn(n, n, |i, j| if i == j { 1.0 / w[i] } else { 0.0 });
    let v = solve(&(k + &winv), kstar);
    let var = (0..kstar.ncols())
        .map(|j| kss[j] - (0..n).map(|i| kstar[(i, j)] * v[(i, j)]).sum::<f64>())
        .collect();
    (lml, mean, var)
}

#[test]
fn two_classes_with_a_shared_kernel_are_the_binary_logit_gp_with_twice_the_kernel() {
    let (x, y) = data(10, 2, 5);
    let shared = kernel("se(ls=0.9, var=1.7)");
    let model = MulticlassLaplace::at(x.as_ref(), &y, 2, ClassKernels::Shared(shared)).unwrap();
    let doubled = kernel("se(ls=0.9, var=3.4)");
    let xs = Mat::from_fn(5, 2, |i, j| -1.5 + 0.6 * i as f64 + 0.2 * j as f64);
    // Class 0 has probability σ(f_0 − f_1): binary label +1 for class 0.
    let t: Vec<f64> = y.iter().map(|&c| if c == 0 { 1.0 } else { -1.0 }).collect();
    let (lml, mean, var) = binary_logit(
        &doubled.matrix(x.as_ref()),
        &doubled.cross(x.as_ref(), xs.as_ref()),
        &doubled.diag(xs.as_ref()),
        &t,
    );
    assert!(
        (model.lml() - lml).abs() < 1e-9,
        "{} vs binary {lml}",
        model.lml()
    );
    let latent = model.predict_latent(xs.as_ref()).unwrap();
    for j in 0..xs.nrows() {
        let g = latent.mean[(j, 0)] - latent.mean[(j, 1)];
        let c = &latent.cov[j];
        let vg = c[(0, 0)] + c[(1, 1)] - 2.0 * c[(0, 1)];
        assert!((g - mean[j]).abs() < 1e-9, "mean {g} vs {}", mean[j]);
        assert!((vg - var[j]).abs() < 1e-9, "var {vg} vs {}", var[j]);
        // f_0 + f_1 keeps its prior: mean 0, variance 2 k(x, x).
        let h = latent.mean[(j, 0)] + latent.mean[(j, 1)];
        let vh = c[(0, 0)] + c[(1, 1)] + 2.0 * c[(0, 1)];
        assert!(h.abs() < 1e-9 && (vh - 3.4).abs() < 1e-9, "{h} {vh}");
    }
}

#[test]
fn probabilities_sum_to_one_are_seeded_and_match_quadrature_for_two_classes() {
    let classes = 3;
    let (x, y) = data(10, classes, 6);
    let model = MulticlassLaplace::at(x.as_ref(), &y, classes, per_class()).unwrap();
    let xs = Mat::from_fn(6, 2, |i, j| -1.8 + 0.7 * i as f64 - 0.1 * j as f64);
    let p = model.predict_proba(xs.as_ref(), 2000, 11).unwrap();
    for j in 0..xs.nrows() {
        let row: f64 = (0..classes).map(|c| p[(j, c)]).sum();
        assert!((row - 1.0).abs() < 1e-12);
        assert!((0..classes).all(|c| p[(j, c)] > 0.0 && p[(j, c)] < 1.0));
    }
    assert_eq!(p, model.predict_proba(xs.as_ref(), 2000, 11).unwrap());
    assert_ne!(p, model.predict_proba(xs.as_ref(), 2000, 12).unwrap());
    // A row's numbers depend only on its own input: not on the other rows predicted with it
    // nor on their order (common random numbers; scikit-learn checks both invariances).
    let sub = model
        .predict_proba(xs.as_ref().subrows(3, 1), 2000, 11)
        .unwrap();
    assert_eq!(sub.row(0), p.row(3));
    let reversed = Mat::from_fn(6, 2, |i, j| xs[(5 - i, j)]);
    let q = model.predict_proba(reversed.as_ref(), 2000, 11).unwrap();
    for j in 0..6 {
        assert_eq!(q.row(5 - j), p.row(j));
    }

    // C = 2: p(class 0) = E σ(g), g ~ N(μ_0 − μ_1, v); a fine 1-D rule for the reference.
    let (x2, y2) = data(10, 2, 7);
    let two = MulticlassLaplace::at(
        x2.as_ref(),
        &y2,
        2,
        ClassKernels::Shared(kernel("se(ls=0.9, var=1.7)")),
    )
    .unwrap();
    let latent = two.predict_latent(xs.as_ref()).unwrap();
    let p2 = two.predict_proba(xs.as_ref(), 200_000, 3).unwrap();
    for j in 0..xs.nrows() {
        let mu = latent.mean[(j, 0)] - latent.mean[(j, 1)];
        let c = &latent.cov[j];
        let sd = (c[(0, 0)] + c[(1, 1)] - 2.0 * c[(0, 1)]).sqrt();
        let steps = 20_000;
        let (lo, hi) = (-10.0, 10.0);
        let dz = (hi - lo) / steps as f64;
        let exact: f64 = (0..steps)
            .map(|s| {
                let z = lo + (s as f64 + 0.5) * dz;
                let phi = (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
                phi / (1.0 + (-(mu + sd * z)).exp()) * dz
            })
            .sum();
        // 200k antithetic draws of a [0, 1] quantity: standard error ≤ 0.5/√200000 ≈ 1.1e-3.
        assert!(
            (p2[(j, 0)] - exact).abs() < 5e-3,
            "{} vs {exact}",
            p2[(j, 0)]
        );
    }
}

#[test]
fn fitting_raises_the_evidence_and_is_reproducible() {
    let classes = 3;
    let (x, y) = data(12, classes, 8);
    let start = ClassKernels::Shared(kernel("se(ls=3.0, var=0.5)"));
    let before = MulticlassLaplace::at(x.as_ref(), &y, classes, start.clone()).unwrap();
    let options = FitOptions {
        restarts: 1,
        seed: 4,
        ..FitOptions::default()
    };
    let fitted = MulticlassLaplace::fit(x.as_ref(), &y, classes, start.clone(), &options).unwrap();
    assert!(
        fitted.lml() > before.lml() + 1e-3,
        "{} vs {}",
        fitted.lml(),
        before.lml()
    );
    assert_eq!(fitted.reports().len(), 2);
    let g = fitted.lml_gradient().unwrap();
    assert!(
        g.iter().all(|v| v.abs() < 1e-3),
        "not at a stationary point: {g:?}"
    );
    let again = MulticlassLaplace::fit(x.as_ref(), &y, classes, start, &options).unwrap();
    assert_eq!(fitted.lml(), again.lml());
}

#[test]
fn bad_inputs_are_rejected_with_what_was_expected() {
    let (x, y) = data(6, 3, 9);
    let k = ClassKernels::Shared(kernel("se(ls=1.0)"));
    let err = |r: Result<MulticlassLaplace, ModelError>| r.unwrap_err().to_string();
    let mut bad = y.clone();
    bad[4] = 3;
    assert!(err(MulticlassLaplace::at(x.as_ref(), &bad, 3, k.clone())).contains("row 4"));
    assert!(err(MulticlassLaplace::at(x.as_ref(), &y, 1, k.clone())).contains("at least 2"));
    assert!(err(MulticlassLaplace::at(x.as_ref(), &y[..5], 3, k.clone())).contains("5 labels"));
    let two = ClassKernels::PerClass(vec![kernel("se(ls=1.0)"), kernel("se(ls=1.0)")]);
    assert!(err(MulticlassLaplace::at(x.as_ref(), &y, 3, two)).contains("2 kernels"));
    let mut nan = x.clone();
    nan[(2, 1)] = f64::NAN;
    assert!(MulticlassLaplace::at(nan.as_ref(), &y, 3, k.clone()).is_err());
    let model = MulticlassLaplace::at(x.as_ref(), &y, 3, k).unwrap();
    assert!(model.predict_proba(x.as_ref(), 0, 1).is_err());
    assert!(model.predict_latent(Mat::zeros(2, 3).as_ref()).is_err());
}
