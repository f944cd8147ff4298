//! Tests of relevance pursuit against SGPR, dense references written here and the spec's
//! invariants (§2.10).

use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

use super::loo::{best_rho, point_objective};
use super::objective::{Layout, Params, Problem};
use super::*;
use crate::linalg::{Cholesky, Parallelism};
use crate::models::sparse::{SparseGp, SparseKind};
use crate::posterior::Posterior;

/// Inputs uniform on [0, 3]^d, targets `sin(x₁) + cos(x₂)/2` plus N(0, 0.1²) noise.
fn data(n: usize, d: usize, seed: u64) -> (Mat<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let x = Mat::from_fn(n, d, |_, _| 3.0 * rng.random::<f64>());
    let y = (0..n)
        .map(|i| truth(x.as_ref(), i) + 0.1 * rng.sample::<f64, _>(StandardNormal))
        .collect();
    (x, y)
}

fn truth(x: MatRef<'_, f64>, i: usize) -> f64 {
    x[(i, 0)].sin() + (1..x.ncols()).map(|c| 0.5 * x[(i, c)].cos()).sum::<f64>()
}

fn kernel() -> Kernel {
    Kernel::parse("const(1.3) * se(ls=[0.9, 1.4])").unwrap()
}

fn mean() -> Mean {
    Mean::Constant { c: 0.2 }
}

/// Inducing inputs between the data points (not at them, so that `δ_j > 0`).
fn inducing(m: usize) -> Mat<f64> {
    Mat::from_fn(m, 2, |i, c| {
        0.1 + 2.8 * ((i * 3 + c * 5) % m) as f64 / m as f64
    })
}

/// A sparse ρ with a few positive entries.
fn sparse_rho(n: usize) -> Vec<f64> {
    (0..n)
        .map(|j| {
            if j % 7 == 3 {
                0.3 + 0.2 * j as f64
            } else {
                0.0
            }
        })
        .collect()
}

fn model(n: usize, m: usize, rho: Vec<f64>) -> RelevancePursuit {
    let (x, y) = data(n, 2, 1);
    RelevancePursuit::from_parts(x, y, kernel(), mean(), 0.05, inducing(m), rho).unwrap()
}

/// Dense `A = Q + D_ρ` (with `K_uu` jittered as the model does), `K` and `Q`.
fn dense(g: &RelevancePursuit) -> (Mat<f64>, Mat<f64>, Mat<f64>) {
    let (x, z) = (g.x(), g.inducing());
    let k = g.kernel().matrix(x);
    let mut kuu = g.kernel().matrix(z);
    for i in 0..z.nrows() {
        kuu[(i, i)] += g.jitter();
    }
    let kuf = g.kernel().cross(z, x);
    let kuu_inv = Cholesky::exact(kuu, Parallelism::Sequential)
        .unwrap()
        .inverse();
    let q = kuf.transpose() * &kuu_inv * &kuf;
    let mut a = q.clone();
    for j in 0..x.nrows() {
        a[(j, j)] += g.noise() + g.rho()[j];
    }
    (a, k, q)
}

fn inverse(a: &Mat<f64>) -> Mat<f64> {
    Cholesky::exact(a.clone(), Parallelism::Sequential)
        .unwrap()
        .inverse()
}

fn assert_close(a: f64, b: f64, tol: f64, what: &str) {
    assert!(
        (a - b).abs() <= tol * b.abs().max(1.0),
        "{what}: {a} vs {b} (diff {:e})",
        (a - b).abs()
    );
}

#[test]
fn with_rho_zero_the_bound_and_the_predictive_are_sgprs() {
    let (x, y) = data(30, 2, 1);
    let g = model(30, 8, vec![0.0; 30]);
    let s = SparseGp::from_parts(
        SparseKind::Sgpr,
        x,
        y,
        kernel(),
        mean(),
        0.05,
        inducing(8),
        1.0,
        1.0,
    )
    .unwrap();
    assert_close(g.bound(), s.bound(), 1e-12, "bound");
    let xs = Mat::from_fn(5, 2, |i, c| 0.3 + 0.55 * i as f64 + 0.1 * c as f64);
    let (a, b) = (g.predict(xs.as_ref()), s.predict(xs.as_ref()));
    for j in 0..5 {
        assert_close(a.mean[j], b.mean[j], 1e-12, "mean");
        assert_close(a.var[j], b.var[j], 1e-12, "var");
    }
}

#[test]
fn the_bound_matches_the_dense_formula() {
    let g = model(25, 6, sparse_rho(25));
    let (a, k, q) = dense(&g);
    let u: Vec<f64> = (0..25).map(|j| g.y()[j] - 0.2).collect();
    let chol = Cholesky::exact(a.clone(), Parallelism::Sequential).unwrap();
    let alpha = chol.solve_vec(&u);
    let quad: f64 = u.iter().zip(&alpha).map(|(u, a)| u * a).sum();
    let trace: f64 = (0..25)
        .map(|j| (k[(j, j)] - q[(j, j)]) / (g.noise() + g.rho()[j]))
        .sum();
    let want = -0.5 * (25.0 * (2.0 * std::f64::consts::PI).ln() + chol.log_det() + quad + trace);
    // The reference inverts K_uu explicitly (condition number ≈ 10⁶ here), which costs about
    // 10⁻¹⁰ relative accuracy.
    assert_close(g.bound(), want, 1e-9, "bound");
}

#[test]
fn leave_one_out_matches_dense_conditionals_and_sgpr_refits_without_the_point() {
    // With ρ ≠ 0: the Gaussian conditionals of y ~ N(m, Q + D_ρ).
    let g = model(16, 5, sparse_rho(16));
    let l = g.leave_one_out();
    let (a, k, q) = dense(&g);
    for i in 0..16 {
        let rest: Vec<usize> = (0..16).filter(|&j| j != i).collect();
        let arr = Mat::from_fn(15, 15, |r, c| a[(rest[r], rest[c])]);
        let inv = inverse(&arr);
        let cross: Vec<f64> = rest.iter().map(|&j| a[(i, j)]).collect();
        let ur: Vec<f64> = rest.iter().map(|&j| g.y()[j] - 0.2).collect();
        let (mut mean, mut var) = (0.2, a[(i, i)]);
        for r in 0..15 {
            for c in 0..15 {
                mean += cross[r] * inv[(r, c)] * ur[c];
                var -= cross[r] * inv[(r, c)] * cross[c];
            }
        }
        assert_close(l.residual[i], g.y()[i] - mean, 1e-9, "LOO residual");
        assert_close(l.variance[i], var, 1e-9, "LOO variance");
        assert_close(l.nystrom_gap[i], k[(i, i)] - q[(i, i)], 1e-9, "δ");
    }
    // With ρ = 0: SGPR refitted (at the same hyperparameters) on the other points predicts
    // y_i with the same mean, and with variance V_i + δ_i (SGPR's predictive adds K_ii − Q_ii).
    let g0 = model(16, 5, vec![0.0; 16]);
    let l0 = g0.leave_one_out();
    for i in 0..16 {
        let rest: Vec<usize> = (0..16).filter(|&j| j != i).collect();
        let x = Mat::from_fn(15, 2, |r, c| g0.x()[(rest[r], c)]);
        let y: Vec<f64> = rest.iter().map(|&j| g0.y()[j]).collect();
        let s = SparseGp::from_parts(
            SparseKind::Sgpr,
            x,
            y,
            kernel(),
            mean(),
            0.05,
            inducing(5),
            1.0,
            1.0,
        )
        .unwrap();
        let p = s.predict(g0.x().subrows(i, 1));
        assert_close(g0.y()[i] - l0.residual[i], p.mean[0], 1e-9, "refit mean");
        assert_close(
            l0.variance[i] + l0.nystrom_gap[i],
            p.var[0] + 0.05,
            1e-9,
            "refit variance",
        );
    }
}

#[test]
fn the_one_dimensional_objective_is_the_bound_along_one_rho() {
    let base = sparse_rho(20);
    let g = model(20, 6, base.clone());
    let l = g.leave_one_out();
    let v0 = l.variance_without_rho(g.rho());
    // One point outside the support and one inside (ρ₃ = 0.9 there).
    for j in [5, 3] {
        let at = |r: f64| {
            let mut rho = base.clone();
            rho[j] = r;
            model(20, 6, rho).bound()
        };
        let f = |r: f64| point_objective(l.residual[j], v0[j], l.nystrom_gap[j], 0.05, r);
        for r in [0.0, 0.01, 0.4, 3.0, 25.0] {
            let lhs = at(r) - at(0.0);
            let rhs = 0.5 * (f(r) - f(0.0));
            assert!(
                (lhs - rhs).abs() < 1e-9,
                "point {j}, ρ = {r}: {lhs} vs {rhs}"
            );
        }
        // The update maximises the bound along ρ_j among nearby values.
        let star = g.best_rho(RhoUpdate::Exact)[j];
        for r in [star * 0.9, star * 1.1 + 1e-6, 0.0] {
            assert!(at(star) >= at(r) - 1e-12);
        }
    }
}

#[test]
fn the_exact_search_finds_the_maximum_of_a_dense_grid() {
    let mut rng = StdRng::seed_from_u64(7);
    for case in 0..60 {
        let s = 10f64.powf(rng.random_range(-3.0..0.0));
        let v0 = s + 10f64.powf(rng.random_range(-3.0..1.0));
        let e = 10f64.powf(rng.random_range(-2.0..1.5)) * if case % 2 == 0 { 1.0 } else { -1.0 };
        let delta = if case % 5 == 0 {
            0.0
        } else {
            10f64.powf(rng.random_range(-4.0..1.0))
        };
        let f = |r: f64| point_objective(e, v0, delta, s, r);
        let star = best_rho(e, v0, delta, s, RhoUpdate::Exact);
        let upper = 3.0 * v0.max(e * e + 4.0 * delta);
        let grid_best = (0..=200_000)
            .map(|k| upper * k as f64 / 200_000.0)
            .map(f)
            .fold(f64::NEG_INFINITY, f64::max);
        assert!(
            f(star) >= grid_best - 1e-12 * grid_best.abs().max(1.0),
            "case {case}: f(ρ*) = {} < grid {grid_best}",
            f(star)
        );
        if delta == 0.0 {
            // Ament et al.'s closed form.
            let ament = (e * e - v0).max(0.0);
            assert!(
                (star - ament).abs() <= 1e-7 * ament.max(v0),
                "case {case}: {star} vs {ament}"
            );
            assert_eq!(best_rho(e, v0, 0.0, s, RhoUpdate::Paper), ament);
        } else {
            let paper = (e / delta.sqrt() - v0).max(0.0);
            assert_eq!(best_rho(e, v0, delta, s, RhoUpdate::Paper), paper);
        }
    }
}

/// Central differences of the bound in every parameter (kernel, noise, mean, Z, log ρ_S).
#[test]
fn the_gradient_matches_central_differences() {
    let (x, y) = data(18, 2, 3);
    let rho = sparse_rho(18);
    let support: Vec<usize> = (0..18).filter(|&j| rho[j] > 0.0).collect();
    let start = Params {
        kernel: kernel(),
        noise: 0.05,
        mean: mean(),
        z: inducing(5),
        rho,
    };
    let layout = Layout {
        n_kernel: start.kernel.n_params(),
        n_mean: 1,
        z_shape: (5, 2),
        learn_z: true,
    };
    let problem = Problem {
        x: x.as_ref(),
        y: &y,
    };
    let eval = |v: &[f64], wanted| {
        let p = layout.unpack(v, &start, &support, 18).unwrap();
        problem
            .evaluate(
                &p.kernel,
                &p.mean,
                p.noise,
                p.z.as_ref(),
                &p.rho,
                &support,
                wanted,
            )
            .unwrap()
    };
    let v = layout.pack(&start, &support);
    let g = eval(&v, Wanted::All).grad.unwrap();
    assert_eq!(g.len(), v.len());
    for i in 0..v.len() {
        let h = 1e-5;
        let (mut vp, mut vm) = (v.clone(), v.clone());
        vp[i] += h;
        vm[i] -= h;
        let fd = (eval(&vp, Wanted::Value).value - eval(&vm, Wanted::Value).value) / (2.0 * h);
        assert!(
            (g[i] - fd).abs() < 1e-6 * fd.abs().max(1.0),
            "parameter {i}: analytic {} vs central difference {fd}",
            g[i]
        );
    }
}

#[test]
fn a_gross_outlier_gets_a_large_rho_and_a_clean_point_none() {
    let (x, mut y) = data(40, 2, 5);
    let outlier = 17;
    y[outlier] += 6.0;
    let cfg = RrpConfig {
        inducing: 15,
        ..RrpConfig::default()
    };
    let k = Kernel::parse("const * se").unwrap();
    let g = RelevancePursuit::fit(
        x.as_ref(),
        &y,
        k,
        Mean::Constant { c: 0.0 },
        0.1,
        &cfg,
        &mut |_, _| {},
    )
    .unwrap();
    let rho = g.rho();
    let top = (0..40).fold(0, |b, j| if rho[j] > rho[b] { j } else { b });
    assert_eq!(top, outlier, "ρ = {rho:?}");
    // The outlier's extra variance is of the order of its squared shift, far above σ².
    assert!(
        rho[outlier] > 10.0 && rho[outlier] > 100.0 * g.noise(),
        "ρ = {}",
        rho[outlier]
    );
    // The clean point closest to the truth keeps ρ = 0.
    let clean = (0..40)
        .filter(|&j| j != outlier)
        .min_by(|&a, &b| {
            let r = |j: usize| (y[j] - truth(x.as_ref(), j)).abs();
            r(a).total_cmp(&r(b))
        })
        .unwrap();
    assert_eq!(rho[clean], 0.0);
    // κ = 2 per round up to |S| ≤ 12: rounds at 0, 2, …; the kept one has the best bound.
    let rounds = g.rounds();
    assert!(rounds.len() >= 2 && rounds[0].support == 0 && rounds[1].support == 2);
    assert!(rounds.iter().all(|r| r.support <= 12));
    let best = rounds
        .iter()
        .map(|r| r.bound)
        .fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(g.bound(), best);
    assert!(g.support().len() <= 12);
}

#[test]
fn rebuilt_parts_give_the_same_model_and_the_posterior_form_agrees() {
    let g = model(20, 6, sparse_rho(20));
    let again = RelevancePursuit::from_parts(
        g.x().to_owned(),
        g.y().to_vec(),
        g.kernel().clone(),
        g.mean().clone(),
        g.noise(),
        g.inducing().to_owned(),
        g.rho().to_vec(),
    )
    .unwrap();
    assert_eq!(again.bound(), g.bound());
    let xs = Mat::from_fn(4, 2, |i, c| 0.2 + 0.7 * i as f64 + 0.3 * c as f64);
    let p = g.predict(xs.as_ref());
    assert_eq!(again.predict(xs.as_ref()), p);
    let form = g.marginals(xs.as_ref()).unwrap();
    let (jm, jc) = g.predict_joint(xs.as_ref());
    for j in 0..4 {
        assert_close(form.mean[j], p.mean[j], 1e-12, "form mean");
        assert_close(form.var[j], p.var[j], 1e-12, "form var");
        assert_close(jm[j], p.mean[j], 1e-12, "joint mean");
        assert_close(jc[(j, j)], p.var[j], 1e-12, "joint var");
    }
}

#[test]
fn bad_parts_and_settings_are_errors_that_name_the_problem() {
    let (x, y) = data(10, 2, 1);
    let parts = |rho: Vec<f64>| {
        RelevancePursuit::from_parts(
            x.clone(),
            y.clone(),
            kernel(),
            mean(),
            0.05,
            inducing(3),
            rho,
        )
    };
    let e = parts(vec![0.0; 9]).unwrap_err().to_string();
    assert!(
        e.contains("9 extra noise variances") && e.contains("10 training rows"),
        "{e}"
    );
    let mut neg = vec![0.0; 10];
    neg[4] = -1.0;
    let e = parts(neg).unwrap_err().to_string();
    assert!(e.contains("row 4"), "{e}");
    let fit = |cfg: RrpConfig| {
        RelevancePursuit::fit(x.as_ref(), &y, kernel(), mean(), 0.05, &cfg, &mut |_, _| {})
    };
    for bad in [
        RrpConfig {
            inducing: 0,
            ..RrpConfig::default()
        },
        RrpConfig {
            expansion: 0.0,
            ..RrpConfig::default()
        },
        RrpConfig {
            max_support: 1.0,
            ..RrpConfig::default()
        },
    ] {
        assert!(matches!(fit(bad), Err(ModelError::Invalid(_))));
    }
}

/// What acquisition functions ask of the model: input gradients of the predictive mean and
/// variance, against central differences of the predictive itself.
#[test]
fn the_posterior_input_gradients_match_central_differences() {
    let g = model(20, 6, sparse_rho(20));
    let xs = Mat::from_fn(3, 2, |i, c| 0.4 + 0.9 * i as f64 + 0.35 * c as f64);
    let grads = g.marginal_gradients(xs.as_ref()).unwrap();
    let h = 1e-6;
    for a in 0..3 {
        for c in 0..2 {
            let (mut up, mut down) = (xs.clone(), xs.clone());
            up[(a, c)] += h;
            down[(a, c)] -= h;
            let (p, m) = (g.predict(up.as_ref()), g.predict(down.as_ref()));
            let d_mean = (p.mean[a] - m.mean[a]) / (2.0 * h);
            let d_var = (p.var[a] - m.var[a]) / (2.0 * h);
            assert!(
                (grads.mean[(a, c)] - d_mean).abs() < 1e-7,
                "mean, point {a}, input {c}"
            );
            assert!(
                (grads.var[(a, c)] - d_var).abs() < 1e-7,
                "var, point {a}, input {c}"
            );
        }
    }
}
