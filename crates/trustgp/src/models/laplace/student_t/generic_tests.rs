//! The Laplace approximation with likelihoods other than the Student-t: with the Gaussian it is
//! exact, so its evidence, gradient and mode equal the exact GP's closed forms; with the IMQ
//! pseudo-likelihood (quadratic in f) its mode is the RCGP posterior mean, and with the
//! constant weight `w ≡ σ/√2` it is the Gaussian GP up to the constant `n(1 + ½ log 2πσ²)`.

use std::f64::consts::PI;

use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::kernels::Kernel;
use crate::likelihoods::{Gaussian, Imq, ImqPoint, ImqWeighting, Likelihood};
use crate::linalg::Cholesky;

fn problem(n: usize) -> (Mat<f64>, Vec<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(8);
    let x = Mat::from_fn(n, 2, |_, _| rng.random_range(-2.0f64..2.0));
    let mut y: Vec<f64> = (0..n)
        .map(|i| (1.5 * x[(i, 0)]).sin() + 0.3 * x[(i, 1)] + 0.1 * rng.random_range(-1.0..1.0))
        .collect();
    y[2] += 3.0;
    let prior = (0..n).map(|i| 0.1 * x[(i, 0)]).collect();
    (x, y, prior)
}

/// `K + diag(d)` factorised.
fn factor_with(kernel: &Kernel, x: &Mat<f64>, d: &[f64]) -> Cholesky {
    let mut k = kernel.matrix(x.as_ref());
    for (i, di) in d.iter().enumerate() {
        k[(i, i)] += di;
    }
    Cholesky::exact(k, crate::linalg::Parallelism::Sequential).unwrap()
}

/// Central differences of `log q` over the covariance parameters and every likelihood's
/// unconstrained parameters, against the analytic gradient.
fn check_gradient<L: Likelihood + Clone>(kernel: &Kernel, data: &StudentTData<'_>, liks: &[L]) {
    let nk = kernel.n_params();
    let mut v0 = kernel.params();
    for l in liks {
        v0.extend(l.unconstrained());
    }
    let at = |v: &[f64]| {
        let mut k = kernel.clone();
        k.set_params(&v[..nk]).unwrap();
        let mut ls = liks.to_vec();
        let mut at = nk;
        for l in &mut ls {
            let np = l.param_names().len();
            l.set_unconstrained(&v[at..at + np]).unwrap();
            at += np;
        }
        laplace::evaluate(&k, data, &ls, None, true, 1e-15)
            .unwrap()
            .0
    };
    let base = at(&v0);
    assert_eq!(base.grad.len(), v0.len());
    let h = 1e-5;
    for j in 0..v0.len() {
        let (mut up, mut down) = (v0.clone(), v0.clone());
        up[j] += h;
        down[j] -= h;
        let fd = (at(&up).value - at(&down).value) / (2.0 * h);
        let g = base.grad[j];
        assert!(
            (fd - g).abs() < 1e-7 * g.abs().max(1e-2),
            "parameter {j}: analytic {g} vs fd {fd}"
        );
    }
}

#[test]
fn laplace_with_a_gaussian_likelihood_is_the_exact_gp() {
    let (x, y, prior) = problem(25);
    let group = vec![0; y.len()];
    let data = StudentTData {
        x: x.as_ref(),
        y: &y,
        prior: &prior,
        group: &group,
    };
    let kernel = Kernel::parse("se(ls=[0.6, 0.9], var=1.3)").unwrap();
    let s2 = 0.05;
    let lik = [Gaussian::new(s2).unwrap()];
    let lap = laplace_approximation(&kernel, &data, &lik, None, true).unwrap();
    // log N(y; m, K + σ²I) and the posterior mean m + K(K + σ²I)⁻¹(y − m) = y − σ²α.
    let n = y.len();
    let chol = factor_with(&kernel, &x, &vec![s2; n]);
    let r: Vec<f64> = (0..n).map(|j| y[j] - prior[j]).collect();
    let alpha = chol.solve_vec(&r);
    let quad: f64 = r.iter().zip(&alpha).map(|(a, b)| a * b).sum();
    let lml = -0.5 * quad - 0.5 * chol.log_det() - 0.5 * n as f64 * (2.0 * PI).ln();
    assert!(
        (lap.value - lml).abs() < 1e-10 * lml.abs(),
        "{} vs {lml}",
        lap.value
    );
    for j in 0..n {
        let mean = y[j] - s2 * alpha[j];
        assert!(
            (lap.mode[j] - mean).abs() < 1e-9,
            "{j}: {} vs {mean}",
            lap.mode[j]
        );
    }
    // A log-concave likelihood never needs a damped step.
    assert_eq!(lap.damped_steps, 0);
    check_gradient(&kernel, &data, &lik);
}

#[test]
fn laplace_with_the_imq_pseudo_likelihood_is_rcgp() {
    let (x, y, prior) = problem(20);
    let n = y.len();
    let (s2, beta, c) = (0.04, 0.15, 0.5);
    let group: Vec<usize> = (0..n).collect();
    let data = StudentTData {
        x: x.as_ref(),
        y: &y,
        prior: &prior,
        group: &group,
    };
    let kernel = Kernel::parse("matern52(ls=[0.7, 1.1])").unwrap();
    let weighting = ImqWeighting::Imq { beta, c };
    let liks: Vec<Imq> = prior
        .iter()
        .map(|&m| Imq::new(s2, weighting, m).unwrap())
        .collect();
    let lap = laplace_approximation(&kernel, &data, &liks, None, false).unwrap();
    // RCGP (spec §2.2): mean m + K(K + D)⁻¹(y − m_w), D = σ⁴/(2w²), m_w = m + σ² g.
    let (mut d, mut z) = (vec![0.0; n], vec![0.0; n]);
    for j in 0..n {
        let p = ImqPoint::new(y[j] - prior[j], c);
        d[j] = s2 * s2 / (2.0 * beta * beta * p.w_hat2());
        z[j] = y[j] - prior[j] - s2 * p.g();
    }
    let chol = factor_with(&kernel, &x, &d);
    let v = chol.solve_vec(&z);
    for j in 0..n {
        // K v = z − D v.
        let mean = prior[j] + z[j] - d[j] * v[j];
        assert!(
            (lap.mode[j] - mean).abs() < 1e-9,
            "{j}: {} vs {mean}",
            lap.mode[j]
        );
    }
    check_gradient(&kernel, &data, &liks);
    // w ≡ σ/√2: the Gaussian GP, its log q shifted by n(1 + ½ log 2πσ²).
    let constant: Vec<Imq> = prior
        .iter()
        .map(|&m| Imq::new(s2, ImqWeighting::Constant, m).unwrap())
        .collect();
    let a = laplace_approximation(&kernel, &data, &constant, None, true).unwrap();
    let gaussian = [Gaussian::new(s2).unwrap()];
    let shared = vec![0; n];
    let gdata = StudentTData {
        group: &shared,
        ..data
    };
    let b = laplace_approximation(&kernel, &gdata, &gaussian, None, true).unwrap();
    let shift = n as f64 * (1.0 + 0.5 * (2.0 * PI * s2).ln());
    assert!((a.value - b.value - shift).abs() < 1e-10 * b.value.abs().max(1.0));
    for j in 0..n {
        assert!((a.mode[j] - b.mode[j]).abs() < 1e-10);
    }
    // The kernel gradients agree; the noise gradient of the loss differs from the Gaussian's
    // by the derivative of the shift, n/2, split over the per-point likelihoods.
    let nk = kernel.n_params();
    for k in 0..nk {
        assert!((a.grad[k] - b.grad[k]).abs() < 1e-8 * b.grad[k].abs().max(1.0));
    }
    let noise_a: f64 = a.grad[nk..].iter().sum();
    assert!((noise_a - b.grad[nk] - 0.5 * n as f64).abs() < 1e-8 * (1.0 + b.grad[nk].abs()));
}

/// Asserts that two Laplace evaluations agree in value, gradient and mode to `tol`.
fn assert_agree(a: &Laplace, b: &Laplace, tol: f64, what: &str) {
    assert!(
        (a.value - b.value).abs() < tol * a.value.abs().max(1.0),
        "{what}: value {} vs {}",
        a.value,
        b.value
    );
    assert_eq!(a.grad.len(), b.grad.len());
    for (k, (ga, gb)) in a.grad.iter().zip(&b.grad).enumerate() {
        assert!(
            (ga - gb).abs() < tol * ga.abs().max(1.0),
            "{what}: gradient {k}: {ga} vs {gb}"
        );
    }
    for (j, (fa, fb)) in a.mode.iter().zip(&b.mode).enumerate() {
        assert!((fa - fb).abs() < tol, "{what}: mode {j}: {fa} vs {fb}");
    }
}

/// The log-concave form `B = I + W½KW½` is the generic `B = I + LᵀWL` form rewritten: on
/// log-concave likelihoods (Bernoulli with either link, Gaussian with its noise gradient) and
/// a non-zero prior mean both give the same evidence, gradient and mode, from a cold and from
/// a warm start; the warm start from a nearby θ's mode needs fewer Newton steps.
#[test]
fn the_log_concave_form_agrees_with_the_generic_form() {
    use crate::likelihoods::{Bernoulli, Link};
    let (x, y, prior) = problem(30);
    let labels: Vec<f64> = y
        .iter()
        .map(|&v| if v > 0.2 { 1.0 } else { -1.0 })
        .collect();
    let group = vec![0; y.len()];
    let kernel = Kernel::parse("se(ls=[0.6, 0.9], var=2.5)").unwrap();
    let near = Kernel::parse("se(ls=[0.65, 0.85], var=2.3)").unwrap();
    for link in [Link::Logit, Link::Probit] {
        let data = StudentTData {
            x: x.as_ref(),
            y: &labels,
            prior: &prior,
            group: &group,
        };
        let lik = [Bernoulli::new(link)];
        let generic = laplace::evaluate(&kernel, &data, &lik, None, true, 1e-15)
            .unwrap()
            .0;
        let fast = laplace::evaluate_log_concave(&kernel, &data, &lik, None, true, 1e-15).unwrap();
        assert_agree(&generic, &fast, 1e-9, link.name());
        let warm_start = laplace::evaluate_log_concave(&near, &data, &lik, None, false, 1e-15)
            .unwrap()
            .alpha;
        let warm =
            laplace::evaluate_log_concave(&kernel, &data, &lik, Some(&warm_start), true, 1e-15)
                .unwrap();
        assert_agree(&generic, &warm, 1e-9, "warm");
        assert!(
            warm.newton_iterations < fast.newton_iterations,
            "warm {} vs cold {} Newton steps",
            warm.newton_iterations,
            fast.newton_iterations
        );
    }
    let data = StudentTData {
        x: x.as_ref(),
        y: &y,
        prior: &prior,
        group: &group,
    };
    let lik = [Gaussian::new(0.05).unwrap()];
    let generic = laplace::evaluate(&kernel, &data, &lik, None, true, 1e-15)
        .unwrap()
        .0;
    let fast = laplace::evaluate_log_concave(&kernel, &data, &lik, None, true, 1e-15).unwrap();
    assert_agree(&generic, &fast, 1e-9, "gaussian");
}

/// The first-order prediction of the mode at new parameters (`PreviousMode::predict`) is
/// second-order accurate: halving the parameter step shrinks its error in `a` about fourfold,
/// where the error of the previous mode's `â` only halves. Started from it, a log-concave
/// evaluation reaches the evidence, gradient and mode of a cold start (to 1e-9) in fewer
/// Newton steps than from `â` alone.
#[test]
fn the_predicted_mode_is_second_order_accurate_and_saves_newton_steps() {
    use crate::likelihoods::{Bernoulli, Link};
    use crate::linalg::Parallelism;
    let (x, y, prior) = problem(40);
    let labels: Vec<f64> = y
        .iter()
        .map(|&v| if v > 0.2 { 1.0 } else { -1.0 })
        .collect();
    let group = vec![0; y.len()];
    let data = StudentTData {
        x: x.as_ref(),
        y: &labels,
        prior: &prior,
        group: &group,
    };
    let lik = [Bernoulli::new(Link::Logit)];
    let base = Kernel::parse("se(ls=[0.6, 0.9], var=2.5)").unwrap();
    let (_, previous) =
        laplace::evaluate_log_concave_from(&base, &data, &lik, None, None, false, 1e-15).unwrap();
    // A step of length h along a fixed direction of the (log) parameters.
    let moved = |h: f64| {
        let p: Vec<f64> = base
            .params()
            .iter()
            .zip([0.7, -0.4, 0.5])
            .map(|(p, d)| p + h * d)
            .collect();
        let mut k = base.clone();
        k.set_params(&p).unwrap();
        k
    };
    let errors = |h: f64| {
        let k = moved(h);
        let exact = laplace::evaluate_log_concave(&k, &data, &lik, None, false, 1e-15)
            .unwrap()
            .alpha;
        let predicted = previous.predict(k.matrix(x.as_ref()).as_ref(), Parallelism::Sequential);
        let dist = |a: &[f64]| {
            a.iter()
                .zip(&exact)
                .map(|(u, v)| (u - v).powi(2))
                .sum::<f64>()
                .sqrt()
        };
        (dist(previous.alpha()), dist(&predicted))
    };
    let ((plain1, pred1), (plain2, pred2)) = (errors(0.02), errors(0.01));
    assert!(
        (1.8..2.2).contains(&(plain1 / plain2)),
        "â: {plain1:e} then {plain2:e}"
    );
    assert!(
        (3.6..4.4).contains(&(pred1 / pred2)),
        "predicted: {pred1:e} then {pred2:e}"
    );
    assert!(pred1 < 0.1 * plain1, "{pred1:e} vs {plain1:e}");
    let k = moved(0.15);
    let cold = laplace::evaluate_log_concave(&k, &data, &lik, None, true, 1e-15).unwrap();
    let from_alpha =
        laplace::evaluate_log_concave(&k, &data, &lik, Some(previous.alpha()), true, 1e-15)
            .unwrap();
    let (from_previous, _) =
        laplace::evaluate_log_concave_from(&k, &data, &lik, None, Some(&previous), true, 1e-15)
            .unwrap();
    assert_agree(&cold, &from_previous, 1e-9, "from the predicted mode");
    assert!(
        from_previous.newton_iterations < from_alpha.newton_iterations,
        "{} Newton steps from the prediction, {} from â, {} cold",
        from_previous.newton_iterations,
        from_alpha.newton_iterations,
        cold.newton_iterations
    );
}

/// With a very large kernel variance the logit mode is so confident that some `W_ii K_ii` fall
/// below the cancellation threshold of `Σ_ii = (1 − B⁻¹_ii)/W_ii`: the log-concave gradient
/// takes those rows the exact way and still agrees with the generic form, which never divides
/// by `W`.
#[test]
fn the_log_concave_gradient_agrees_where_w_is_tiny() {
    use crate::likelihoods::{Bernoulli, Link};
    let (x, y, _) = problem(30);
    let labels: Vec<f64> = y
        .iter()
        .map(|&v| if v > 0.2 { 1.0 } else { -1.0 })
        .collect();
    let (prior, group) = (vec![0.0; y.len()], vec![0; y.len()]);
    let var = 1e8;
    let kernel = Kernel::parse(&format!("se(ls=[0.6, 0.9], var={var})")).unwrap();
    let data = StudentTData {
        x: x.as_ref(),
        y: &labels,
        prior: &prior,
        group: &group,
    };
    let lik = [Bernoulli::new(Link::Logit)];
    let generic = laplace::evaluate(&kernel, &data, &lik, None, true, 1e-15)
        .unwrap()
        .0;
    let fast = laplace::evaluate_log_concave(&kernel, &data, &lik, None, true, 1e-15).unwrap();
    let wk: Vec<f64> = fast
        .mode
        .iter()
        .map(|&f| {
            let p = 1.0 / (1.0 + (-f).exp());
            p * (1.0 - p) * var
        })
        .collect();
    let below = wk
        .iter()
        .filter(|&&v| v < laplace::SIGMA_DIAG_CANCELLATION)
        .count();
    assert!(
        below > 0 && below < wk.len(),
        "rows below the threshold: {below} of {}",
        wk.len()
    );
    assert_agree(&generic, &fast, 1e-7, "confident");
}
