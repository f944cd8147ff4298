//! Kernel values against hand-written closed forms, and consistency of
//! `matrix`, `cross` and `diag`.

use std::f64::consts::PI;

use faer::{mat, Mat};

use super::{assert_close, kernel_for, Lcg};
use crate::kernels::Kernel;

/// k(x1, x2) for the two points x1 = (0.3, −1.2), x2 = (1.1, 0.4).
fn two_point(expr: &str) -> f64 {
    let x1 = mat![[0.3, -1.2]];
    let x2 = mat![[1.1, 0.4]];
    Kernel::parse(expr).unwrap().cross(x1.as_ref(), x2.as_ref())[(0, 0)]
}

/// r² for the two points with lengthscales (0.7, 1.9).
const R2: f64 = (0.8 / 0.7) * (0.8 / 0.7) + (1.6 / 1.9) * (1.6 / 1.9);

#[test]
fn base_kernel_values_match_closed_forms() {
    let ard = "var=1.7, ls=[0.7, 1.9]";
    let r = R2.sqrt();
    let cases = [
        (format!("se({ard})"), 1.7 * (-R2 / 2.0).exp()),
        (format!("rbf({ard})"), 1.7 * (-R2 / 2.0).exp()),
        (format!("matern12({ard})"), 1.7 * (-r).exp()),
        (
            format!("matern32({ard})"),
            1.7 * (1.0 + 3f64.sqrt() * r) * (-(3f64.sqrt()) * r).exp(),
        ),
        (
            format!("matern52({ard})"),
            1.7 * (1.0 + 5f64.sqrt() * r + 5.0 * R2 / 3.0) * (-(5f64.sqrt()) * r).exp(),
        ),
        (
            format!("rq({ard}, alpha=0.6)"),
            1.7 * (1.0 + R2 / 1.2).powf(-0.6),
        ),
        (
            "per(var=1.7, ls=[0.7, 1.9], period=2.5)".to_string(),
            1.7 * (-2.0
                * ((PI * 0.8 / 2.5).sin().powi(2) / 0.49 + (PI * 1.6 / 2.5).sin().powi(2) / 3.61))
                .exp(),
        ),
        ("lin(var=1.7)".to_string(), 1.7 * (0.3 * 1.1 - 1.2 * 0.4)),
        ("const(var=1.7)".to_string(), 1.7),
        ("const(1.7)".to_string(), 1.7),
        ("white(var=1.7)".to_string(), 0.0),
        // Isotropic lengthscale and a dims subset: only column 1 (Δ = 1.6) is active.
        (
            "se(ls=0.5, dims=[1])".to_string(),
            (-0.5 * (1.6f64 / 0.5).powi(2)).exp(),
        ),
        ("lin(dims=[0])".to_string(), 0.3 * 1.1),
    ];
    for (expr, expected) in cases {
        assert_close(two_point(&expr), expected, 1e-14, 1e-300, &expr);
    }
}

#[test]
fn composites_are_elementwise() {
    let se = 1.7 * (-R2 / 2.0).exp();
    let lin = 0.3 * 1.1 - 1.2 * 0.4;
    let sum = two_point("se(var=1.7, ls=[0.7, 1.9]) + lin + const(0.5)");
    assert_close(sum, se + lin + 0.5, 1e-14, 0.0, "sum");
    let prod = two_point("const(2) * se(var=1.7, ls=[0.7, 1.9]) * (lin + const(0.5))");
    assert_close(
        prod,
        2.0 * 1.7 * (-R2 / 2.0).exp() * (lin + 0.5),
        1e-14,
        0.0,
        "product",
    );
}

#[test]
fn white_noise_is_on_the_diagonal_only() {
    let x = mat![[0.0, 1.0], [0.0, 1.0], [2.0, 3.0]];
    let k = Kernel::parse("white(var=0.25)").unwrap();
    let m = k.matrix(x.as_ref());
    // Rows 0 and 1 are identical points but distinct observations: no covariance.
    let expected = Mat::from_fn(3, 3, |i, j| if i == j { 0.25 } else { 0.0 });
    assert_eq!(m, expected);
    assert_eq!(k.diag(x.as_ref()), vec![0.25; 3]);
    assert_eq!(k.cross(x.as_ref(), x.as_ref()), Mat::<f64>::zeros(3, 3));
}

const EXPRS: [&str; 12] = [
    "se",
    "se(ls=0.8, dims=[2, 0])",
    "matern12",
    "matern32(ls=1.3)",
    "matern52(dims=[1])",
    "rq(alpha=2.5)",
    "per(period=1.7, ls=0.9)",
    "lin(dims=[0, 2])",
    "const(3) * se + per(dims=[1])",
    "(matern32 + lin) * rq",
    "se(dims=[0]) * per(dims=[1])",
    "se * white(var=0.3) + const",
];

#[test]
fn matrix_its_lower_triangle_cross_and_diag_agree() {
    let mut rng = Lcg::new(7);
    for n in [9, 300] {
        let x = rng.matrix(n, 3);
        for expr in EXPRS {
            let k = kernel_for(expr, x.as_ref(), &mut rng);
            let m = k.matrix(x.as_ref());
            let lower = k.matrix_lower(x.as_ref());
            let c = k.cross(x.as_ref(), x.as_ref());
            let d = k.diag(x.as_ref());
            for a in 0..n {
                assert_eq!(d[a], m[(a, a)], "{expr}: diag");
                for b in 0..n {
                    assert_eq!(m[(a, b)], m[(b, a)], "{expr}: symmetry");
                    if a >= b {
                        assert_eq!(lower[(a, b)], m[(a, b)], "{expr}: lower triangle");
                    }
                    if a == b && expr.contains("white") {
                        // White noise adds to matrix(x) but never to cross(x, x).
                        assert!(m[(a, a)] > c[(a, a)] + 1e-3, "{expr}: white diagonal");
                    } else {
                        assert_close(m[(a, b)], c[(a, b)], 1e-13, 1e-12, expr);
                    }
                }
            }
        }
    }
}

#[test]
fn the_overall_scale_multiplies_the_whole_kernel() {
    // (expression, index of its overall scale in the log-parameter vector)
    let cases = [
        ("se", Some(0)),
        ("const * se", Some(0)),
        // The first `const` carries the scale wherever it stands; se's own variance is fixed.
        ("se(ls=[0.5, 2, 1]) * const", Some(3)),
        ("lin * (se + per)", Some(0)),
        ("per(dims=[1]) * const(2) * (matern32 + lin)", Some(2)),
        ("white", Some(0)),
        ("se + per", None),
        ("(se + per) * lin", None),
        ("const * se + white", None),
    ];
    let mut rng = Lcg::new(11);
    let x = rng.matrix(7, 3);
    for (expr, expected) in cases {
        let k = kernel_for(expr, x.as_ref(), &mut rng);
        assert_eq!(k.overall_scale_index(), expected, "{expr}");
        let Some(i) = expected else { continue };
        // Multiplying that one parameter by c multiplies every entry of K by c.
        let c: f64 = 2.75;
        let mut p = k.log_params();
        p[i] += c.ln();
        let mut scaled = k.clone();
        scaled.set_log_params(&p).unwrap();
        let (m, ms) = (k.matrix(x.as_ref()), scaled.matrix(x.as_ref()));
        for a in 0..7 {
            for b in 0..7 {
                assert_close(ms[(a, b)], c * m[(a, b)], 1e-14, 1e-300, expr);
            }
        }
    }
}
