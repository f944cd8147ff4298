//! The joint bound-and-predictive gradient (`joint`): the predictive against `predict_joint`
//! and the gradient of `w·bound + Σ (μ̄ μ(x) + v̄ v(x))` against central finite differences in
//! every parameter (kernel, noise, a linear mean's weights, inducing inputs) and every query
//! coordinate, for SGPR and RCSVGP.

use super::*;
use crate::posterior::Marginals;

/// The adjoints used throughout: fixed weights of the means and variances.
const MEAN_BAR: [f64; 2] = [0.7, -1.3];
const VAR_BAR: [f64; 2] = [2.1, 0.4];

fn objective(gp: &SparseGp, v: &[f64], w: f64, xq: MatRef<'_, f64>) -> f64 {
    let at = gp.with_parameters(v, true).unwrap();
    let (mean, cov) = at.predict_joint(xq);
    let mut total = w * at.bound();
    for t in 0..xq.nrows() {
        total += MEAN_BAR[t] * mean[t] + VAR_BAR[t] * cov[(t, t)];
    }
    total
}

fn check(kind: SparseKind, w: f64) {
    let (x, mut y) = data(21, 2, 90);
    contaminate(&mut y, 4, 5.0);
    let z = data(6, 2, 91).0;
    let mean = Mean::Linear {
        w: vec![0.2, -0.1],
        b: 0.3,
    };
    let k =
        kernel("const(var=0.8) * matern52(ls=[0.9, 0.6]) + const(var=0.3) * rq(ls=1.4, alpha=2)");
    let gp = SparseGp::from_parts(kind, x, y, k, mean, 0.3, z, 0.8, 1.0).unwrap();
    let xq = data(2, 2, 92).0;
    let v = gp.parameters(true);
    let mut adjoints = |_: &Marginals| (MEAN_BAR.to_vec(), VAR_BAR.to_vec());
    let ev = gp
        .joint_evaluation(&v, true, w, xq.as_ref(), &mut adjoints)
        .unwrap();
    let (mean, cov) = gp.predict_joint(xq.as_ref());
    for t in 0..2 {
        assert_rel(ev.predictive.mean[t], mean[t], 1e-12, 1.0, "mean");
        assert_rel(ev.predictive.var[t], cov[(t, t)], 1e-10, 1.0, "variance");
    }
    assert_rel(ev.elbo, gp.bound(), 1e-12, 1.0, "bound");
    let h = 1e-5;
    let scale = ev.parameters.iter().fold(1.0f64, |m, g| m.max(g.abs()));
    for k in 0..v.len() {
        let (mut lo, mut hi) = (v.clone(), v.clone());
        lo[k] -= h;
        hi[k] += h;
        let fd =
            (objective(&gp, &hi, w, xq.as_ref()) - objective(&gp, &lo, w, xq.as_ref())) / (2.0 * h);
        assert!(
            (fd - ev.parameters[k]).abs() < 1e-7 * scale,
            "{kind:?}, parameter {k} of {}: analytic {} vs finite difference {fd}",
            v.len(),
            ev.parameters[k]
        );
    }
    let part = |q: &Mat<f64>| objective(&gp, &v, w, q.as_ref()) - w * gp.bound();
    for t in 0..2 {
        for c in 0..2 {
            let (mut lo, mut hi) = (xq.clone(), xq.clone());
            lo[(t, c)] -= h;
            hi[(t, c)] += h;
            let fd = (part(&hi) - part(&lo)) / (2.0 * h);
            assert_rel(ev.inputs[(t, c)], fd, 1e-8, 1.0, "query input");
        }
    }
}

#[test]
fn joint_gradient_matches_finite_differences() {
    check(SparseKind::Rcsvgp, 1.0);
    check(SparseKind::Rcsvgp, 1.0 / 21.0);
    check(SparseKind::Sgpr, 0.5);
}
