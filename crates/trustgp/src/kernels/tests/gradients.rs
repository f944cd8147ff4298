//! Central finite-difference checks of `grad_contract` and `grad_x`.

use faer::{Mat, MatRef};

use super::{assert_close, kernel_for, Lcg};
use crate::kernels::Kernel;

/// Every base kernel (ARD, isotropic, dims subsets) and the required composites.
pub(super) const EXPRS: [&str; 24] = [
    "se",
    "se(ls=0.8)",
    "se(dims=[2, 0])",
    "matern12",
    "matern12(ls=1.1, dims=[1])",
    "matern32",
    "matern32(ls=0.6)",
    "matern52",
    "matern52(ls=1.4, dims=[0, 1])",
    "rq(alpha=0.8)",
    "rq(ls=0.9, alpha=3)",
    "per(period=1.5)",
    "per(ls=0.7, period=2.2, dims=[2])",
    "lin",
    "lin(dims=[1, 2])",
    "const(2)",
    "white(var=0.4)",
    "const * se + per",
    "(matern32 + lin) * rq",
    "se(dims=[0]) * per(dims=[1])",
    "se * white(var=0.3)",
    "const(2) * white + matern52",
    "const * const(3)",
    "(se + per) * const(var=2) * lin",
];

/// A random symmetric W whose strict upper triangle holds 1e300: only the lower
/// triangle may be read. Returns (W, the true symmetric matrix).
fn weights(n: usize, rng: &mut Lcg) -> (Mat<f64>, Mat<f64>) {
    let lower = Mat::from_fn(n, n, |_, _| rng.uniform(-1.0, 1.0));
    let w = Mat::from_fn(n, n, |a, b| if a >= b { lower[(a, b)] } else { 1e300 });
    let sym = Mat::from_fn(n, n, |a, b| lower[(a.max(b), a.min(b))]);
    (w, sym)
}

/// Σ_ab W_ab K_ab.
fn objective(k: &Kernel, x: MatRef<'_, f64>, sym: &Mat<f64>) -> f64 {
    let m = k.matrix(x);
    let n = x.nrows();
    (0..n)
        .flat_map(|a| (0..n).map(move |b| (a, b)))
        .map(|(a, b)| sym[(a, b)] * m[(a, b)])
        .sum()
}

fn check_grad_contract(expr: &str, n: usize, rng: &mut Lcg) {
    let x = rng.matrix(n, 3);
    let k = kernel_for(expr, x.as_ref(), rng);
    check_kernel_grad_contract(&k, x.as_ref(), rng, expr);
}

/// `grad_contract` of `k` on `x` against central differences of Σ W∘K in every parameter.
pub(super) fn check_kernel_grad_contract(
    k: &Kernel,
    x: MatRef<'_, f64>,
    rng: &mut Lcg,
    expr: &str,
) {
    let n = x.nrows();
    let (w, sym) = weights(n, rng);
    let mut g = vec![0.0; k.n_params()];
    k.grad_contract(x, w.as_ref(), &mut g);
    let p = k.log_params();
    // Round-off in the finite difference scales with the size of the summands.
    let m = k.matrix(x);
    let size: f64 = (0..n)
        .map(|a| (0..n).map(|b| (sym[(a, b)] * m[(a, b)]).abs()).sum::<f64>())
        .sum();
    let h = 1e-5;
    for (j, name) in k.param_names().iter().enumerate() {
        let mut kp = k.clone();
        let mut q = p.clone();
        q[j] = p[j] + h;
        kp.set_log_params(&q).unwrap();
        let fp = objective(&kp, x, &sym);
        q[j] = p[j] - h;
        kp.set_log_params(&q).unwrap();
        let fm = objective(&kp, x, &sym);
        let fd = (fp - fm) / (2.0 * h);
        assert_close(g[j], fd, 1e-6, 1e-4 * size, &format!("{expr} n={n} {name}"));
    }
}

#[test]
fn grad_contract_matches_finite_differences_small_n() {
    let mut rng = Lcg::new(11);
    for expr in EXPRS {
        check_grad_contract(expr, 23, &mut rng);
    }
}

#[test]
fn grad_contract_matches_finite_differences_parallel_n() {
    let mut rng = Lcg::new(12);
    for expr in EXPRS {
        check_grad_contract(expr, 300, &mut rng);
    }
}

#[test]
fn grad_contract_accumulates_into_out() {
    let mut rng = Lcg::new(13);
    let x = rng.matrix(15, 3);
    let k = kernel_for("const * se", x.as_ref(), &mut rng);
    let (w, _) = weights(15, &mut rng);
    let mut once = vec![0.0; k.n_params()];
    k.grad_contract(x.as_ref(), w.as_ref(), &mut once);
    let mut twice = once.clone();
    k.grad_contract(x.as_ref(), w.as_ref(), &mut twice);
    for (a, b) in once.iter().zip(&twice) {
        assert_close(2.0 * a, *b, 1e-15, 0.0, "accumulation");
    }
}

#[test]
fn grad_x_matches_finite_differences() {
    let mut rng = Lcg::new(14);
    let (n, d) = (17, 3);
    let x = rng.matrix(n, d);
    for expr in EXPRS {
        let k = kernel_for(expr, x.as_ref(), &mut rng);
        let xs: Vec<f64> = (0..d).map(|_| rng.uniform(-2.0, 2.0)).collect();
        let g = k.grad_x(&xs, x.as_ref());
        assert_eq!((g.nrows(), g.ncols()), (n, d));
        let h = 1e-6;
        for c in 0..d {
            let at = |delta: f64| {
                let mut p = xs.clone();
                p[c] += delta;
                k.cross(MatRef::from_row_major_slice(&p, 1, d), x.as_ref())
            };
            let (kp, km) = (at(h), at(-h));
            for b in 0..n {
                let fd = (kp[(0, b)] - km[(0, b)]) / (2.0 * h);
                assert_close(g[(b, c)], fd, 1e-6, 1e-6, &format!("{expr} b={b} c={c}"));
            }
        }
    }
}

#[test]
fn grad_x_of_matern12_at_zero_distance_is_zero() {
    let x = faer::mat![[0.5, -0.5]];
    let k = Kernel::parse("matern12(ls=[1, 2])").unwrap();
    assert_eq!(k.grad_x(&[0.5, -0.5], x.as_ref()), Mat::<f64>::zeros(1, 2));
}
