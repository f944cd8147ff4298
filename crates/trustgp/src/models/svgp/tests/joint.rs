//! The joint ELBO-and-predictive gradient (`joint`): the predictive against `predict`, the
//! ELBO against `elbo`, and the gradient of `w·ELBO + Σ (μ̄ μ(x) + v̄ v(x))` against central
//! finite differences in every parameter (variational, kernel with a non-stationary term,
//! likelihood, linear mean, inducing inputs) and every query coordinate, for the Gaussian and
//! the Student-t likelihood; fixed groups have boxes of zero width.

use super::*;
use crate::models::svgp::Svgp;
use crate::posterior::Marginals;

const MEAN_BAR: [f64; 2] = [0.7, -1.3];
const VAR_BAR: [f64; 2] = [2.1, 0.4];

fn model(likelihood: SvgpLikelihood, lik_params: Vec<f64>) -> Svgp {
    let mean = Mean::Linear {
        w: vec![0.2, -0.1],
        b: 0.3,
    };
    let s = state(likelihood, lik_params, mean, 5, 93);
    Svgp::from_parts(
        s.kernel,
        s.mean,
        s.lik_params,
        s.likelihood,
        s.z,
        s.m_tilde,
        s.l_tilde,
    )
    .unwrap()
}

fn objective(gp: &Svgp, x: &Mat<f64>, y: &[f64], v: &[f64], w: f64, xq: MatRef<'_, f64>) -> f64 {
    let at = gp.with_parameters(v, true).unwrap();
    let p = at.predict(xq);
    let mut total = w * at.elbo(x.as_ref(), y).unwrap();
    for t in 0..xq.nrows() {
        total += MEAN_BAR[t] * p.mean[t] + VAR_BAR[t] * p.var[t];
    }
    total
}

fn check(gp: &Svgp, w: f64) {
    let (x, y) = data(19, 0.2, 94);
    let xq = data(2, 0.0, 95).0;
    let v = gp.parameters(true).unwrap();
    let mut adjoints = |_: &Marginals| (MEAN_BAR.to_vec(), VAR_BAR.to_vec());
    let ev = gp
        .joint_evaluation(x.as_ref(), &y, &v, true, w, xq.as_ref(), &mut adjoints)
        .unwrap();
    let p = gp.predict(xq.as_ref());
    assert!(max_rel(&ev.predictive.mean, &p.mean) < 1e-13);
    assert!(max_rel(&ev.predictive.var, &p.var) < 1e-13);
    let elbo = gp.elbo(x.as_ref(), &y).unwrap();
    assert!((ev.elbo - elbo).abs() < 1e-12 * elbo.abs());
    let h = 1e-5;
    let scale = ev.parameters.iter().fold(1.0f64, |m, g| m.max(g.abs()));
    for k in 0..v.len() {
        let (mut lo, mut hi) = (v.clone(), v.clone());
        lo[k] -= h;
        hi[k] += h;
        let fd = (objective(gp, &x, &y, &hi, w, xq.as_ref())
            - objective(gp, &x, &y, &lo, w, xq.as_ref()))
            / (2.0 * h);
        assert!(
            (fd - ev.parameters[k]).abs() < 1e-7 * scale,
            "parameter {k} of {}: analytic {} vs finite difference {fd}",
            v.len(),
            ev.parameters[k]
        );
    }
    let part = |q: &Mat<f64>| objective(gp, &x, &y, &v, w, q.as_ref()) - w * elbo;
    for t in 0..2 {
        for c in 0..2 {
            let (mut lo, mut hi) = (xq.clone(), xq.clone());
            lo[(t, c)] -= h;
            hi[(t, c)] += h;
            let fd = (part(&hi) - part(&lo)) / (2.0 * h);
            assert!(
                (fd - ev.inputs[(t, c)]).abs() < 1e-7 * fd.abs().max(1.0),
                "query {t}, input {c}: analytic {} vs finite difference {fd}",
                ev.inputs[(t, c)]
            );
        }
    }
}

#[test]
fn joint_gradient_matches_finite_differences() {
    check(&model(SvgpLikelihood::Gaussian, vec![0.3]), 1.0);
    check(&model(SvgpLikelihood::Gaussian, vec![0.3]), 1.0 / 19.0);
    check(&model(SvgpLikelihood::StudentT, vec![4.0, 0.2]), 0.5);
}

#[test]
fn fixed_groups_have_boxes_of_zero_width() {
    let gp = model(SvgpLikelihood::StudentT, vec![4.0, 0.2]);
    let v = gp.parameters(false).unwrap();
    let free = gp.parameter_bounds(true, true, false).unwrap();
    let fixed = gp.parameter_bounds(false, false, false).unwrap();
    assert_eq!(free.len(), v.len());
    // m̃ (5), L̃ (15), kernel, likelihood (2), linear mean (3).
    let n_kernel = gp.kernel().n_params();
    let lik = 20 + n_kernel;
    for k in 0..v.len() {
        if (lik..lik + 5).contains(&k) {
            assert_eq!(fixed[k], (v[k], v[k]), "entry {k}");
            assert!(free[k].0 < free[k].1, "entry {k}");
        } else {
            assert_eq!(fixed[k], free[k], "entry {k}");
        }
    }
    let err = gp.with_parameters(&v[1..], false).unwrap_err().to_string();
    assert!(err.contains("entries"), "{err}");
}
