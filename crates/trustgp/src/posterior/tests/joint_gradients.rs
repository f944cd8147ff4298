//! [`Posterior::joint_gradients`] against central finite differences of [`Posterior::joint`].

use faer::{Mat, MatRef};

use super::STEP;
use crate::posterior::Posterior;

/// Splits `xs` into its first row (fixed) and the others (free), and checks the joint
/// gradients of the free rows, for the first `continuous` columns (task columns get zero),
/// against central differences of the joint mean and covariance; also with no fixed rows.
pub(super) fn check_joint_gradients<P: Posterior>(p: &P, xs: MatRef<'_, f64>, continuous: usize) {
    for split in [0, 1] {
        let (fixed, free) = (xs.subrows(0, split), xs.subrows(split, xs.nrows() - split));
        check_split(p, fixed, free, continuous);
    }
}

fn check_split<P: Posterior>(
    p: &P,
    fixed: MatRef<'_, f64>,
    free: MatRef<'_, f64>,
    continuous: usize,
) {
    let g = p.joint_gradients(fixed, free).unwrap();
    let (np, q) = (fixed.nrows(), free.nrows());
    let m = np + q;
    let all = Mat::from_fn(m, free.ncols(), |i, c| {
        if i < np {
            fixed[(i, c)]
        } else {
            free[(i - np, c)]
        }
    });
    let direct = p.joint(all.as_ref()).unwrap();
    assert_eq!(g.fixed, np);
    assert_eq!(g.joint, direct, "joint with and without gradients");
    let mut worst = 0.0f64;
    for a in 0..q {
        for c in 0..free.ncols() {
            let (dmean, u) = (g.mean[(a, c)], g.cov[a].col(c));
            if c >= continuous {
                assert_eq!(dmean, 0.0);
                assert!(u.iter().all(|&v| v == 0.0));
                continue;
            }
            let at = |h: f64| {
                let mut moved = all.clone();
                moved[(np + a, c)] += h;
                p.joint(moved.as_ref()).unwrap()
            };
            let (up, down) = (at(STEP), at(-STEP));
            let mut check = |what: &str, fd: f64, an: f64| {
                let err = (fd - an).abs() / (1.0 + an.abs());
                worst = worst.max(err);
                assert!(err < 1e-8, "{what} row {a} col {c}: {an} vs FD {fd}");
            };
            for i in 0..m {
                let fd = (up.mean[i] - down.mean[i]) / (2.0 * STEP);
                check("mean", fd, if i == np + a { dmean } else { 0.0 });
                for j in 0..m {
                    let fd = (up.cov[(i, j)] - down.cov[(i, j)]) / (2.0 * STEP);
                    // ∂C = u eᵀ + e uᵀ with e the free row's unit vector.
                    let e = |k: usize| if k == np + a { 1.0 } else { 0.0 };
                    check("cov", fd, u[i] * e(j) + e(i) * u[j]);
                }
            }
        }
    }
    eprintln!("joint gradients ({np} fixed): worst relative error {worst:.1e}");
}
