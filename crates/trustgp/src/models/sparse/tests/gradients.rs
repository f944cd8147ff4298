//! Central finite differences of the full gradient of both bounds: every kernel
//! log-hyperparameter (composite ARD kernels), log σ², the mean's parameters and every entry of
//! the inducing inputs, in the flat layout the optimiser sees.

use super::*;
use crate::models::sparse::collapsed::Wanted;
use crate::models::sparse::fit::Layout;
use crate::models::sparse::likelihood::WeightSettings;
use crate::models::sparse::{Problem, KUU_JITTER};

const KERNELS: [&str; 2] = [
    "const(var=1.3) * se(ls=[0.7, 1.1])",
    "const(var=0.8) * matern52(ls=[0.9, 0.6]) + const(var=0.3) * rq(ls=1.4, alpha=2)",
];

fn check(kind: SparseKind, expr: &str, mean: Mean, seed: u64) {
    let (x, mut y) = data(25, 2, seed);
    contaminate(&mut y, 4, 5.0);
    let z = data(7, 2, seed + 100).0;
    let k = kernel(expr);
    let problem = Problem {
        kind,
        x: x.as_ref(),
        y: &y,
        weight: WeightSettings { c: 0.8, beta: 1.0 },
        jitter: KUU_JITTER,
    };
    let layout = Layout {
        n_kernel: k.n_params(),
        n_mean: mean.n_params(),
        z_shape: (z.nrows(), z.ncols()),
        learn_z: true,
    };
    let eval = |v: &[f64], wanted: Wanted| {
        let (kk, s, mu, zz) = layout.unpack(v, &k, &mean, &z).unwrap();
        problem.evaluate(&kk, &mu, s, zz.as_ref(), wanted).unwrap()
    };
    let v0 = layout.pack(&k, 0.35, &mean, z.as_ref());
    let g = eval(&v0, Wanted::All).grad.unwrap();
    assert_eq!(g.len(), v0.len());
    // With the inducing inputs held fixed, the same gradient without its Z block.
    let fixed = eval(&v0, Wanted::FixedInducing).grad.unwrap();
    assert_eq!(fixed[..], g[..layout.n_hyper()]);
    let h = 1e-5;
    for i in 0..v0.len() {
        let mut v = v0.clone();
        v[i] = v0[i] + h;
        let fp = eval(&v, Wanted::Value).value;
        v[i] = v0[i] - h;
        let fm = eval(&v, Wanted::Value).value;
        let fd = (fp - fm) / (2.0 * h);
        assert_rel(
            g[i],
            fd,
            1e-6,
            1.0,
            &format!("{kind:?} {expr} {mean:?} parameter {i}"),
        );
    }
}

#[test]
fn sgpr_gradient_matches_finite_differences() {
    for (i, expr) in KERNELS.iter().enumerate() {
        check(SparseKind::Sgpr, expr, Mean::Constant { c: 0.3 }, i as u64);
        let linear = Mean::Linear {
            w: vec![0.2, -0.4],
            b: 0.1,
        };
        check(SparseKind::Sgpr, expr, linear, 10 + i as u64);
    }
}

#[test]
fn rcsvgp_gradient_matches_finite_differences() {
    for (i, expr) in KERNELS.iter().enumerate() {
        check(
            SparseKind::Rcsvgp,
            expr,
            Mean::Constant { c: 0.3 },
            20 + i as u64,
        );
        let linear = Mean::Linear {
            w: vec![0.2, -0.4],
            b: 0.1,
        };
        check(SparseKind::Rcsvgp, expr, linear, 30 + i as u64);
    }
}
