//! Every fitted latent model, built small at fixed parameters, through the posterior checks.

use faer::Mat;

use super::{check_form, check_posterior, uniform};
use crate::fit::FitOptions;
use crate::kernels::Kernel;
use crate::likelihoods::Link;
use crate::means::Mean;
use crate::models::classification::{BinaryEp, BinaryLaplace, EpSettings};
use crate::models::computation_aware::{Actions, CaGp};
use crate::models::exact::ExactGp;
use crate::models::hyper::GpHyper;
use crate::models::laplace::student_t::{StudentTGp, StudentTSettings};
use crate::models::robust::multi_output::{MultiOutputConfig, MultiOutputKind, MultiOutputModel};
use crate::models::robust::{prior_centred_weights, RobustGp};
use crate::models::sparse::{SparseGp, SparseKind};
use crate::models::svgp::{Svgp, SvgpLikelihood};
use crate::posterior::{with_task, LinearGaussian, LinearGaussianForm, Marginals};

const N: usize = 20;

/// Training inputs on `[-2, 2]²` and a smooth target with a little noise and one outlier.
fn data() -> (Mat<f64>, Vec<f64>) {
    let x = uniform(N, 2, -2.0, 2.0, 1);
    let e = uniform(N, 1, -0.1, 0.1, 2);
    let mut y: Vec<f64> = (0..N)
        .map(|i| x[(i, 0)].sin() * x[(i, 1)] + e[(i, 0)])
        .collect();
    y[3] += 4.0;
    (x, y)
}

/// Three test points among the training inputs (the joint covariance is positive definite).
fn test_inputs() -> Mat<f64> {
    uniform(3, 2, -1.5, 1.5, 3)
}

/// A non-stationary kernel (its `lin` term has `∂k(x, x)/∂x ≠ 0`) and a linear mean, so that
/// every part of the input gradients is exercised.
fn kernel() -> Kernel {
    Kernel::parse("const(var=0.9) * se(ls=[0.8, 1.3]) + lin(var=0.2)").unwrap()
}

fn linear_mean() -> Mean {
    Mean::Linear {
        w: vec![0.3, -0.2],
        b: 0.1,
    }
}

/// Inducing inputs.
fn inducing() -> Mat<f64> {
    uniform(6, 2, -2.0, 2.0, 4)
}

#[test]
fn exact_gp() {
    let (x, y) = data();
    let hyper = GpHyper {
        kernel: kernel(),
        mean: linear_mean(),
        noise: 0.05,
    };
    let gp = ExactGp::at(hyper, x.as_ref(), &y, 0.0).unwrap();
    let xs = test_inputs();
    check_posterior(&gp, xs.as_ref(), 2);
    let predicted = gp.predict(xs.as_ref(), true).unwrap();
    check_form(&gp.linear_gaussian(), xs.as_ref(), &predicted);
    let (mean, cov) = gp.predict_joint(xs.as_ref()).unwrap();
    let joint = gp.linear_gaussian().joint(xs.as_ref()).unwrap();
    for i in 0..3 {
        assert!((mean[i] - joint.mean[i]).abs() < 1e-12);
        for j in 0..3 {
            assert!((cov[(i, j)] - joint.cov[(i, j)]).abs() < 1e-12);
        }
    }
}

#[test]
fn rcgp() {
    let (x, y) = data();
    let mean = linear_mean();
    let prior = mean.eval(x.as_ref());
    let weights = prior_centred_weights(&y, &prior, &[0; N], &[0.1]).unwrap();
    let gp = RobustGp::at(kernel(), mean, x.as_ref(), &y, &[0; N], &[0.05], weights).unwrap();
    let xs = test_inputs();
    check_posterior(&gp, xs.as_ref(), 2);
    check_form(
        &gp.linear_gaussian(),
        xs.as_ref(),
        &gp.predict(xs.as_ref(), true, &[0; 3]),
    );
}

/// Two outputs, the second missing at a few inputs.
fn multi_output(kind: MultiOutputKind) -> MultiOutputModel {
    let (x, y) = data();
    let y2 = Mat::from_fn(N, 2, |i, t| match t {
        0 => y[i],
        _ if i % 4 == 1 => f64::NAN,
        _ => x[(i, 1)].cos() + 0.5 * y[i],
    });
    let cfg = MultiOutputConfig {
        kind,
        kernels: vec![Kernel::parse("se(ls=[0.8, 1.3]) + lin(var=0.2)").unwrap()],
        rank: None,
        shared_noise: false,
        noise: 0.05,
        epsilon: vec![0.1, 0.1],
        mcd_support: None,
        task_means: None,
        fit: FitOptions {
            optimize: false,
            ..FitOptions::default()
        },
    };
    MultiOutputModel::fit(x.as_ref(), y2.as_ref(), &cfg).unwrap()
}

fn check_multi_output(model: &MultiOutputModel) {
    let xs = test_inputs();
    let both = Mat::from_fn(6, 3, |i, c| {
        if c < 2 {
            xs[(i % 3, c)]
        } else {
            (i / 3) as f64
        }
    });
    check_posterior(model, both.as_ref(), 2);
    let predicted = model.predict(xs.as_ref());
    for (t, p) in predicted.iter().enumerate() {
        check_form(
            &model.linear_gaussian(),
            with_task(xs.as_ref(), t).as_ref(),
            p,
        );
    }
}

#[test]
fn mogp() {
    check_multi_output(&multi_output(MultiOutputKind::Mogp));
}

#[test]
fn mo_rcgp() {
    check_multi_output(&multi_output(MultiOutputKind::MoRcgp));
}

fn sparse(kind: SparseKind) {
    let (x, y) = data();
    let gp = SparseGp::from_parts(
        kind,
        x,
        y,
        kernel(),
        linear_mean(),
        0.05,
        inducing(),
        0.5,
        1.0,
    )
    .unwrap();
    let xs = test_inputs();
    check_posterior(&gp, xs.as_ref(), 2);
    check_form(&gp.linear_gaussian(), xs.as_ref(), &gp.predict(xs.as_ref()));
    assert_eq!(gp.linear_gaussian().support(), gp.inducing());
}

#[test]
fn sgpr() {
    sparse(SparseKind::Sgpr);
}

#[test]
fn rcsvgp() {
    sparse(SparseKind::Rcsvgp);
}

fn svgp(likelihood: SvgpLikelihood, params: Vec<f64>) {
    let z = inducing();
    let m = z.nrows();
    let m_tilde = uniform(m, 1, -1.0, 1.0, 5).col_as_slice(0).to_vec();
    let r = uniform(m, m, -0.3, 0.3, 6);
    let l_tilde = Mat::from_fn(m, m, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Greater => r[(i, j)],
        std::cmp::Ordering::Equal => 0.4 + r[(i, j)].abs(),
        std::cmp::Ordering::Less => 0.0,
    });
    let gp = Svgp::from_parts(
        kernel(),
        linear_mean(),
        params,
        likelihood,
        z,
        m_tilde,
        l_tilde,
    )
    .unwrap();
    let xs = test_inputs();
    check_posterior(&gp, xs.as_ref(), 2);
    check_form(&gp.linear_gaussian(), xs.as_ref(), &gp.predict(xs.as_ref()));
}

#[test]
fn svgp_gaussian() {
    svgp(SvgpLikelihood::Gaussian, vec![0.05]);
}

#[test]
fn svgp_student_t() {
    svgp(SvgpLikelihood::StudentT, vec![4.0, 0.05]);
}

fn computation_aware(actions: Actions, robust: bool) {
    let (x, y) = data();
    let gp = CaGp::from_parts(x, y, kernel(), 0.05, 0.1, actions, 0.5, 1.0, robust).unwrap();
    let xs = test_inputs();
    check_posterior(&gp, xs.as_ref(), 2);
    check_form(&gp.linear_gaussian(), xs.as_ref(), &gp.predict(xs.as_ref()));
    let (mean, cov) = gp.predict_joint(xs.as_ref());
    let joint = gp.linear_gaussian().joint(xs.as_ref()).unwrap();
    for i in 0..3 {
        assert!((mean[i] - joint.mean[i]).abs() < 1e-12);
        for j in 0..3 {
            assert!((cov[(i, j)] - joint.cov[(i, j)]).abs() < 1e-12);
        }
    }
}

#[test]
fn cagp_blocks() {
    let theta = uniform(4, 5, 0.2, 1.0, 7);
    let blocks = (0..4)
        .map(|b| theta.row(b).iter().copied().collect())
        .collect();
    computation_aware(Actions::Blocks(blocks), false);
}

#[test]
fn rcagp_inducing() {
    computation_aware(Actions::Inducing(inducing()), true);
}

#[test]
fn student_t_laplace() {
    let (x, y) = data();
    let mean = linear_mean();
    let prior = mean.eval(x.as_ref());
    let settings = StudentTSettings {
        nu: 4.0,
        optimize: false,
        ..Default::default()
    };
    let gp = StudentTGp::fit(
        kernel(),
        x.as_ref(),
        &y,
        &prior,
        &[0; N],
        &[0.05],
        &settings,
    )
    .unwrap();
    let form = gp.linear_gaussian(mean.clone());
    let xs = test_inputs();
    check_posterior(&form, xs.as_ref(), 2);
    let (m, v) = gp
        .predict_latent(xs.as_ref(), &mean.eval(xs.as_ref()))
        .unwrap();
    check_form(&form, xs.as_ref(), &Marginals { mean: m, var: v });
    // S = (K + W⁻¹)⁻¹, i.e. S (K W + I) = W, with W = −∂² log p(y | f̂) (negative at the
    // outlier, where the stable form matters).
    let (nu, s2) = (4.0, 0.05);
    let w: Vec<f64> = (0..N)
        .map(|j| {
            let r = y[j] - gp.mode()[j];
            let u = nu * s2 + r * r;
            (nu + 1.0) * (nu * s2 - r * r) / (u * u)
        })
        .collect();
    assert!(w[3] < 0.0, "the outlier has negative curvature");
    let s = form.s_matrix();
    let k = gp.covariance().matrix(x.as_ref());
    let kw_i = Mat::from_fn(N, N, |i, j| {
        k[(i, j)] * w[j] + if i == j { 1.0 } else { 0.0 }
    });
    let lhs = &s * &kw_i;
    for i in 0..N {
        for j in 0..N {
            let want = if i == j { w[i] } else { 0.0 };
            assert!(
                (lhs[(i, j)] - want).abs() < 1e-9,
                "({i},{j}): {}",
                lhs[(i, j)]
            );
        }
    }
}

/// Labels `±1` from the regression data's sign.
fn labels() -> (Mat<f64>, Vec<f64>) {
    let (x, y) = data();
    let median = {
        let mut s = y.clone();
        s.sort_by(f64::total_cmp);
        s[N / 2]
    };
    (
        x,
        y.iter()
            .map(|&v| if v > median { 1.0 } else { -1.0 })
            .collect(),
    )
}

#[test]
fn binary_laplace() {
    let (x, y) = labels();
    for link in [Link::Probit, Link::Logit] {
        let gp = BinaryLaplace::at(x.as_ref(), &y, kernel(), link).unwrap();
        let xs = test_inputs();
        check_posterior(&gp, xs.as_ref(), 2);
        check_form(
            &gp.linear_gaussian(),
            xs.as_ref(),
            &gp.predict_latent(xs.as_ref()).unwrap(),
        );
    }
}

#[test]
fn binary_ep() {
    let (x, y) = labels();
    let gp = BinaryEp::at(x.as_ref(), &y, kernel(), &EpSettings::default()).unwrap();
    let xs = test_inputs();
    check_posterior(&gp, xs.as_ref(), 2);
    check_form(
        &gp.linear_gaussian(),
        xs.as_ref(),
        &gp.predict_latent(xs.as_ref()).unwrap(),
    );
}

/// The form used directly (not through a model) is a posterior too.
#[test]
fn a_form_is_a_posterior() {
    let (x, y) = data();
    let hyper = GpHyper {
        kernel: kernel(),
        mean: Mean::Zero,
        noise: 0.05,
    };
    let gp = ExactGp::at(hyper, x.as_ref(), &y, 0.0).unwrap();
    let form: LinearGaussian<'_, Kernel, Mean> = gp.linear_gaussian();
    check_posterior(&form, test_inputs().as_ref(), 2);
}

/// Task-indexed inputs for one output of a multi-output kernel.
#[test]
fn with_task_appends_the_output_index() {
    let xs = test_inputs();
    let xt = with_task(xs.as_ref(), 1);
    assert_eq!(xt.ncols(), 3);
    for i in 0..3 {
        assert_eq!(
            xt.row(i).iter().copied().collect::<Vec<_>>(),
            [xs[(i, 0)], xs[(i, 1)], 1.0]
        );
    }
}
