//! The joint ELBO-and-predictive gradient (`joint`): the predictive against `predict` and the
//! posterior's joint, the ELBO against `elbo`, and the gradient of `w·ELBO + Σ μ̄ μ(x) +
//! ⟨Σ̄, Σ(X)⟩` (diagonal `Σ̄` for two points, dense for a batch of three) against central
//! finite differences in every parameter (variational, kernel with a non-stationary term,
//! likelihood, linear mean, inducing inputs) and every query coordinate, for the Gaussian and
//! the Student-t likelihood; fixed groups have boxes of zero width.

use super::*;
use crate::models::svgp::Svgp;
use crate::posterior::{JointGaussian, Marginals, Posterior};

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

/// The adjoints of a linear function `Σ_t μ̄_t μ(x_t) + Σ_tu Σ̄_tu Σ(x_t, x_u)` of the
/// predictive: two points with a diagonal `Σ̄` (a function of the marginals), or a batch of
/// three with a dense, deliberately non-symmetric `Σ̄` (only its symmetric part may count).
fn adjoints(batch: bool) -> (Vec<f64>, Mat<f64>) {
    if batch {
        let cov = [[2.1, 0.6, -0.9], [0.2, 0.4, 0.7], [-0.5, 1.1, -0.3]];
        (vec![0.7, -1.3, 0.4], Mat::from_fn(3, 3, |r, c| cov[r][c]))
    } else {
        let var = [2.1, 0.4];
        (
            vec![0.7, -1.3],
            Mat::from_fn(2, 2, |r, c| if r == c { var[r] } else { 0.0 }),
        )
    }
}

/// `w·ELBO + Σ μ̄ μ + ⟨Σ̄, Σ⟩` with the predictive of the [`Posterior`] (the linear-Gaussian
/// form, computed independently of the joint gradient's code).
#[allow(clippy::too_many_arguments)]
fn objective(
    gp: &Svgp,
    x: &Mat<f64>,
    y: &[f64],
    v: &[f64],
    w: f64,
    xq: MatRef<'_, f64>,
    (mean_bar, cov_bar): &(Vec<f64>, Mat<f64>),
) -> f64 {
    let at = gp.with_parameters(v, true).unwrap();
    let p = at.joint(xq).unwrap();
    let mut total = w * at.elbo(x.as_ref(), y).unwrap();
    for t in 0..xq.nrows() {
        total += mean_bar[t] * p.mean[t];
        for u in 0..xq.nrows() {
            total += cov_bar[(t, u)] * p.cov[(t, u)];
        }
    }
    total
}

fn check(gp: &Svgp, w: f64, batch: bool) {
    let (x, y) = data(19, 0.2, 94);
    let adj = adjoints(batch);
    let xq = data(adj.0.len(), 0.0, 95).0;
    let v = gp.parameters(true).unwrap();
    let joint = gp.joint(xq.as_ref()).unwrap();
    let mut seen = None;
    let ev = if batch {
        let mut adjoints = |j: &JointGaussian| {
            seen = Some(j.clone());
            adj.clone()
        };
        gp.joint_evaluation_batch(x.as_ref(), &y, &v, true, w, xq.as_ref(), &mut adjoints)
    } else {
        let var_bar = (0..2).map(|t| adj.1[(t, t)]).collect::<Vec<_>>();
        let mut adjoints = |_: &Marginals| (adj.0.clone(), var_bar.clone());
        gp.joint_evaluation(x.as_ref(), &y, &v, true, w, xq.as_ref(), &mut adjoints)
    }
    .unwrap();
    // The predictive the function saw is the posterior's (joint, or its marginals).
    if let Some(seen) = seen {
        assert!(max_rel(&seen.mean, &joint.mean) < 1e-13);
        for t in 0..3 {
            for u in 0..3 {
                let (a, b) = (seen.cov[(t, u)], joint.cov[(t, u)]);
                assert!(
                    (a - b).abs() < 1e-13 * b.abs().max(1.0),
                    "({t}, {u}): {a} vs {b}"
                );
            }
        }
    }
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
        let fd = (objective(gp, &x, &y, &hi, w, xq.as_ref(), &adj)
            - objective(gp, &x, &y, &lo, w, xq.as_ref(), &adj))
            / (2.0 * h);
        assert!(
            (fd - ev.parameters[k]).abs() < 1e-7 * scale,
            "batch {batch}, parameter {k} of {}: analytic {} vs finite difference {fd}",
            v.len(),
            ev.parameters[k]
        );
    }
    let part = |q: &Mat<f64>| objective(gp, &x, &y, &v, w, q.as_ref(), &adj) - w * elbo;
    for t in 0..xq.nrows() {
        for c in 0..2 {
            let (mut lo, mut hi) = (xq.clone(), xq.clone());
            lo[(t, c)] -= h;
            hi[(t, c)] += h;
            let fd = (part(&hi) - part(&lo)) / (2.0 * h);
            assert!(
                (fd - ev.inputs[(t, c)]).abs() < 1e-7 * fd.abs().max(1.0),
                "batch {batch}, query {t}, input {c}: analytic {} vs finite difference {fd}",
                ev.inputs[(t, c)]
            );
        }
    }
}

#[test]
fn joint_gradient_matches_finite_differences() {
    check(&model(SvgpLikelihood::Gaussian, vec![0.3]), 1.0, false);
    check(
        &model(SvgpLikelihood::Gaussian, vec![0.3]),
        1.0 / 19.0,
        false,
    );
    check(&model(SvgpLikelihood::StudentT, vec![4.0, 0.2]), 0.5, false);
}

/// A function of the joint predictive of a batch of three: the dense covariance adjoint.
#[test]
fn batch_joint_gradient_matches_finite_differences() {
    check(&model(SvgpLikelihood::Gaussian, vec![0.3]), 1.0, true);
    check(
        &model(SvgpLikelihood::Gaussian, vec![0.3]),
        1.0 / 19.0,
        true,
    );
    check(&model(SvgpLikelihood::StudentT, vec![4.0, 0.2]), 0.5, true);
}

#[test]
fn batch_adjoints_of_the_wrong_shape_are_refused() {
    let gp = model(SvgpLikelihood::Gaussian, vec![0.3]);
    let (x, y) = data(19, 0.2, 94);
    let xq = data(3, 0.0, 95).0;
    let v = gp.parameters(true).unwrap();
    let mut adjoints = |_: &JointGaussian| (vec![0.0; 3], Mat::zeros(2, 2));
    let e = gp
        .joint_evaluation_batch(x.as_ref(), &y, &v, true, 1.0, xq.as_ref(), &mut adjoints)
        .unwrap_err()
        .to_string();
    assert!(e.contains("3×3 covariance adjoint, got 3 and 2×2"), "{e}");
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
