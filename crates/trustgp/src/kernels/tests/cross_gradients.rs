//! Central finite-difference checks of the cross and diagonal contractions and of the
//! contracted input gradient, which the sparse and computation-aware models rely on.

use faer::{Mat, MatRef};

use super::gradients::EXPRS;
use super::{assert_close, kernel_for, Lcg};
use crate::kernels::Kernel;

/// Σ_ab W_ab m_ab, and Σ_ab |W_ab m_ab| as the round-off scale of a finite difference.
fn weighted_sum(w: MatRef<'_, f64>, m: MatRef<'_, f64>) -> (f64, f64) {
    let (mut s, mut size) = (0.0, 0.0);
    for b in 0..m.ncols() {
        for a in 0..m.nrows() {
            s += w[(a, b)] * m[(a, b)];
            size += (w[(a, b)] * m[(a, b)]).abs();
        }
    }
    (s, size)
}

/// Checks `grad` (the analytic gradient of `f` in log-parameters) by central differences.
fn check_params(k: &Kernel, grad: &[f64], size: f64, f: impl Fn(&Kernel) -> f64, what: &str) {
    let p = k.log_params();
    let h = 1e-5;
    for (j, name) in k.param_names().iter().enumerate() {
        let mut kp = k.clone();
        let mut q = p.clone();
        q[j] = p[j] + h;
        kp.set_log_params(&q).unwrap();
        let fp = f(&kp);
        q[j] = p[j] - h;
        kp.set_log_params(&q).unwrap();
        let fd = (fp - f(&kp)) / (2.0 * h);
        assert_close(grad[j], fd, 1e-6, 1e-4 * size, &format!("{what} {name}"));
    }
}

fn check_cross(expr: &str, n1: usize, n2: usize, rng: &mut Lcg) {
    let (x1, x2) = (rng.matrix(n1, 3), rng.matrix(n2, 3));
    let k = kernel_for(expr, x1.as_ref(), rng);
    let w = Mat::from_fn(n1, n2, |_, _| rng.uniform(-1.0, 1.0));
    let mut g = vec![0.0; k.n_params()];
    k.grad_contract_cross(x1.as_ref(), x2.as_ref(), w.as_ref(), &mut g);
    let f = |k: &Kernel| weighted_sum(w.as_ref(), k.cross(x1.as_ref(), x2.as_ref()).as_ref());
    let size = f(&k).1;
    check_params(&k, &g, size, |k| f(k).0, &format!("cross {expr} {n1}×{n2}"));
}

#[test]
fn grad_contract_cross_matches_finite_differences() {
    let mut rng = Lcg::new(71);
    for expr in EXPRS {
        check_cross(expr, 7, 5, &mut rng);
    }
    // Large enough to take the parallel path.
    for expr in ["se", "const * matern52 + per", "(se + lin) * rq"] {
        check_cross(expr, 300, 230, &mut rng);
    }
}

/// `cross_and_grad_contract` returns `cross` (to round-off: products may scale in another
/// order) and exactly the gradient of `grad_contract_cross`.
fn check_values(expr: &str, n1: usize, n2: usize, rng: &mut Lcg) {
    let (x1, x2) = (rng.matrix(n1, 3), rng.matrix(n2, 3));
    let k = kernel_for(expr, x1.as_ref(), rng);
    let w = Mat::from_fn(n1, n2, |_, _| rng.uniform(-1.0, 1.0));
    let (mut g, mut g_both) = (vec![0.0; k.n_params()], vec![0.0; k.n_params()]);
    k.grad_contract_cross(x1.as_ref(), x2.as_ref(), w.as_ref(), &mut g);
    let values = k.cross_and_grad_contract(x1.as_ref(), x2.as_ref(), w.as_ref(), &mut g_both);
    assert_eq!(g, g_both, "{expr}: gradient");
    let cross = k.cross(x1.as_ref(), x2.as_ref());
    for b in 0..n2 {
        for a in 0..n1 {
            assert_close(values[(a, b)], cross[(a, b)], 1e-14, 1e-300, expr);
        }
    }
}

#[test]
fn cross_and_grad_contract_agree_with_cross_and_grad_contract_cross() {
    let mut rng = Lcg::new(73);
    for expr in EXPRS {
        check_values(expr, 7, 5, &mut rng);
    }
    // Large enough to take the parallel path, over several column blocks.
    for expr in ["se", "const * matern52 + per", "(se + lin) * rq"] {
        check_values(expr, 300, 230, &mut rng);
    }
}

#[test]
fn grad_contract_diag_matches_finite_differences() {
    let mut rng = Lcg::new(72);
    for expr in EXPRS {
        let x = rng.matrix(9, 3);
        let k = kernel_for(expr, x.as_ref(), &mut rng);
        let w: Vec<f64> = (0..9).map(|_| rng.uniform(-1.0, 1.0)).collect();
        let mut g = vec![0.0; k.n_params()];
        k.grad_contract_diag(x.as_ref(), &w, &mut g);
        let f = |k: &Kernel| -> f64 { k.diag(x.as_ref()).iter().zip(&w).map(|(d, w)| d * w).sum() };
        let size: f64 = k
            .diag(x.as_ref())
            .iter()
            .zip(&w)
            .map(|(d, w)| (d * w).abs())
            .sum();
        check_params(&k, &g, size, f, &format!("diag {expr}"));
    }
}

/// The contracted input gradient against central differences in every input entry.
#[test]
fn grad_inputs_cross_matches_finite_differences() {
    let mut rng = Lcg::new(73);
    for expr in EXPRS {
        let (x1, x2) = (rng.matrix(4, 3), rng.matrix(6, 3));
        let k = kernel_for(expr, x1.as_ref(), &mut rng);
        let w = Mat::from_fn(4, 6, |_, _| rng.uniform(-1.0, 1.0));
        let g = k.grad_inputs_cross(x1.as_ref(), x2.as_ref(), w.as_ref());
        let f =
            |x1: &Mat<f64>| weighted_sum(w.as_ref(), k.cross(x1.as_ref(), x2.as_ref()).as_ref());
        let size = f(&x1).1;
        let h = 1e-6;
        for a in 0..4 {
            for c in 0..3 {
                let (mut xp, mut xm) = (x1.clone(), x1.clone());
                xp[(a, c)] += h;
                xm[(a, c)] -= h;
                let fd = (f(&xp).0 - f(&xm).0) / (2.0 * h);
                assert_close(
                    g[(a, c)],
                    fd,
                    1e-6,
                    1e-4 * size,
                    &format!("{expr} x[{a},{c}]"),
                );
            }
        }
    }
}

/// For a symmetric W, the gradient of Σ W∘K(z, z) in z is twice the cross form.
#[test]
fn symmetric_input_gradient_is_twice_the_cross_form() {
    let mut rng = Lcg::new(74);
    let z = rng.matrix(5, 3);
    let k = kernel_for("const * matern52 + rq", z.as_ref(), &mut rng);
    let lower = Mat::from_fn(5, 5, |_, _| rng.uniform(-1.0, 1.0));
    let w = Mat::from_fn(5, 5, |a, b| lower[(a.max(b), a.min(b))]);
    let g = k.grad_inputs_cross(z.as_ref(), z.as_ref(), w.as_ref());
    let f = |z: &Mat<f64>| weighted_sum(w.as_ref(), k.matrix(z.as_ref()).as_ref()).0;
    let h = 1e-6;
    for a in 0..5 {
        for c in 0..3 {
            let (mut zp, mut zm) = (z.clone(), z.clone());
            zp[(a, c)] += h;
            zm[(a, c)] -= h;
            let fd = (f(&zp) - f(&zm)) / (2.0 * h);
            assert_close(2.0 * g[(a, c)], fd, 1e-6, 1e-6, &format!("z[{a},{c}]"));
        }
    }
}
