//! The sparse posteriors against dense computations on tiny problems: the exact GP (and dense
//! EP) when the inducing inputs are the training inputs, dense FITC/DTC formulas and dense EP
//! on the same low-rank prior otherwise, and SGPR for VAR.

use faer::linalg::solvers::Solve;
use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::ep::probit_tilted_moments;
use super::*;
use crate::kernels::Covariance;
use crate::linalg::Parallelism;
use crate::means::Mean;
use crate::models::exact::ExactGp;
use crate::models::hyper::GpHyper;
use crate::models::sparse::{SparseGp, SparseKind};
use crate::posterior::LinearGaussianForm;
use crate::sequential::acquisition::normal::log_cdf;

fn inputs(n: usize, seed: u64) -> Mat<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    Mat::from_fn(n, 2, |_, _| rng.random_range(-2.0..2.0))
}

fn targets(x: &Mat<f64>) -> Vec<f64> {
    (0..x.nrows())
        .map(|i| (1.3 * x[(i, 0)]).sin() + 0.5 * x[(i, 1)] + 0.1 * (i as f64 * 2.7).cos())
        .collect()
}

fn labels(x: &Mat<f64>) -> Vec<usize> {
    // A smooth boundary, with two points flipped so that the problem is not separable.
    (0..x.nrows())
        .map(|i| usize::from((x[(i, 0)] + 0.5 * x[(i, 1)] > 0.2) ^ (i % 5 == 3)))
        .collect()
}

fn kernel() -> Kernel {
    Kernel::parse("se(ls=[0.9, 1.4], var=1.3)").unwrap()
}

fn solve(a: &Mat<f64>, b: &Mat<f64>) -> Mat<f64> {
    a.as_ref().partial_piv_lu().solve(b.as_ref())
}

fn log_det(a: &Mat<f64>) -> f64 {
    Cholesky::factor(a, "test", Parallelism::Sequential)
        .unwrap()
        .log_det()
}

/// `Q_ab = k(a, U) (K_uu + jitter I)⁻¹ k(U, b)`.
fn q(k: &Kernel, a: &Mat<f64>, b: &Mat<f64>, z: &Mat<f64>, jitter: f64) -> Mat<f64> {
    let mut kuu = k.matrix(z.as_ref());
    for i in 0..z.nrows() {
        kuu[(i, i)] += jitter;
    }
    k.cross(a.as_ref(), z.as_ref()) * solve(&kuu, &k.cross(z.as_ref(), b.as_ref()))
}

/// The training prior `Q_ff (+ diag(K_ff − Q_ff) for FIC)`.
fn dense_prior(prior: SparsePrior, x: &Mat<f64>, z: &Mat<f64>, jitter: f64) -> Mat<f64> {
    let k = kernel();
    let mut p = q(&k, x, x, z, jitter);
    if prior == SparsePrior::Fic {
        let kd = k.diag(x.as_ref());
        for i in 0..x.nrows() {
            p[(i, i)] = kd[i];
        }
    }
    p
}

fn trace(x: &Mat<f64>, z: &Mat<f64>, jitter: f64) -> Vec<f64> {
    let qff = q(&kernel(), x, x, z, jitter);
    let kd = kernel().diag(x.as_ref());
    (0..x.nrows()).map(|i| kd[i] - qff[(i, i)]).collect()
}

fn close(a: f64, b: f64, tol: f64, what: &str) {
    assert!(
        (a - b).abs() <= tol * (1.0 + b.abs()),
        "{what}: {a} vs {b} (difference {:.2e})",
        (a - b).abs()
    );
}

const PRIORS: [SparsePrior; 3] = [SparsePrior::Fic, SparsePrior::Dtc, SparsePrior::Var];

#[test]
fn regression_with_inducing_at_the_training_inputs_is_the_exact_gp() {
    let x = inputs(10, 1);
    let y = targets(&x);
    let xs = inputs(6, 2);
    let mean = Mean::Constant { c: 0.3 };
    let hyper = GpHyper {
        kernel: kernel(),
        mean: mean.clone(),
        noise: 0.05,
    };
    let exact = ExactGp::at(hyper, x.as_ref(), &y, 0.0).unwrap();
    let want = exact.predict(xs.as_ref(), true).unwrap();
    for prior in PRIORS {
        let m = SparseRegression::at(
            prior,
            x.as_ref(),
            &y,
            kernel(),
            mean.clone(),
            0.05,
            x.as_ref(),
            0.0,
        )
        .unwrap();
        close(m.lml(), exact.lml(), 1e-8, prior.name());
        let got = m.predict(xs.as_ref()).unwrap();
        for j in 0..xs.nrows() {
            close(got.mean[j], want.mean[j], 1e-8, "mean");
            close(got.var[j], want.var[j], 1e-8, "variance");
        }
    }
}

#[test]
fn regression_lml_and_predictions_match_dense_fitc_and_dtc() {
    let x = inputs(12, 3);
    let y = targets(&x);
    let z = inputs(4, 4);
    let xs = inputs(5, 5);
    let (noise, jitter) = (0.1, 1e-6);
    let k = kernel();
    let n = x.nrows();
    let tr = trace(&x, &z, jitter);
    let mut lmls = Vec::new();
    for prior in PRIORS {
        let m = SparseRegression::at(
            prior,
            x.as_ref(),
            &y,
            kernel(),
            Mean::Zero,
            noise,
            z.as_ref(),
            jitter,
        )
        .unwrap();
        // log N(y | 0, Q + Λ), Λ = σ²I (+ diag(K − Q) for FIC).
        let mut c = dense_prior(prior, &x, &z, jitter);
        for i in 0..n {
            c[(i, i)] += noise;
        }
        let yc = Mat::from_fn(n, 1, |i, _| y[i]);
        let quad = (yc.transpose() * solve(&c, &yc))[(0, 0)];
        let mut lml =
            -0.5 * quad - 0.5 * log_det(&c) - 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln();
        if prior == SparsePrior::Var {
            lml -= 0.5 * tr.iter().sum::<f64>() / noise;
        }
        close(m.lml(), lml, 1e-10, prior.name());
        lmls.push(m.lml());
        // FITC/DTC predictive: mean Q*f C⁻¹ y, variance k** − Q*f C⁻¹ Q_f*.
        let qsf = q(&k, &xs, &x, &z, jitter);
        let mean = &qsf * solve(&c, &yc);
        let cov = &qsf * solve(&c, &qsf.transpose().to_owned());
        let kss = k.diag(xs.as_ref());
        let got = m.predict(xs.as_ref()).unwrap();
        let form = m.linear_gaussian().marginals(xs.as_ref()).unwrap();
        for j in 0..xs.nrows() {
            close(got.mean[j], mean[(j, 0)], 1e-9, "mean");
            close(got.var[j], kss[j] - cov[(j, j)], 1e-9, "variance");
            assert!(got.var[j] > 0.0 && got.var[j] <= kss[j] + 1e-12);
            close(form.mean[j], got.mean[j], 1e-12, "form mean");
            close(form.var[j], got.var[j], 1e-12, "form variance");
        }
    }
    // VAR is DTC's evidence minus the trace term (checked above against the dense value).
    close(
        lmls[2],
        lmls[1] - 0.5 * tr.iter().sum::<f64>() / noise,
        1e-10,
        "var",
    );
}

#[test]
fn var_regression_is_sgpr() {
    let x = inputs(15, 6);
    let y = targets(&x);
    let z = inputs(5, 7);
    let xs = inputs(4, 8);
    let var = SparseRegression::at(
        SparsePrior::Var,
        x.as_ref(),
        &y,
        kernel(),
        Mean::Zero,
        0.2,
        z.as_ref(),
        INDUCING_JITTER,
    )
    .unwrap();
    let sgpr = SparseGp::from_parts(
        SparseKind::Sgpr,
        x.clone(),
        y.clone(),
        kernel(),
        Mean::Zero,
        0.2,
        z.clone(),
        1.0,
        1.0,
    )
    .unwrap();
    close(var.lml(), sgpr.bound(), 1e-12, "bound");
    let (a, b) = (var.predict(xs.as_ref()).unwrap(), sgpr.predict(xs.as_ref()));
    for j in 0..xs.nrows() {
        close(a.mean[j], b.mean[j], 1e-12, "mean");
        close(a.var[j], b.var[j], 1e-12, "variance");
    }
}

#[test]
fn bad_regression_inputs_are_rejected() {
    let x = inputs(6, 9);
    let y = targets(&x);
    let z = inputs(3, 10);
    let at = |noise: f64, z: &Mat<f64>, jitter: f64| {
        SparseRegression::at(
            SparsePrior::Fic,
            x.as_ref(),
            &y,
            kernel(),
            Mean::Zero,
            noise,
            z.as_ref(),
            jitter,
        )
    };
    assert!(at(0.0, &z, 0.0).unwrap_err().to_string().contains("noise"));
    assert!(at(0.1, &z, -1.0)
        .unwrap_err()
        .to_string()
        .contains("jitter"));
    let wide = Mat::<f64>::zeros(3, 3);
    assert!(at(0.1, &wide, 0.0)
        .unwrap_err()
        .to_string()
        .contains("inducing input"));
    let m = at(0.1, &z, 0.0).unwrap();
    assert!(m.predict(wide.as_ref()).is_err());
}

/// `Σ = K − K s B⁻¹ s K`, `μ = Σ ν` for sites `(τ, ν)`, `s = √τ`, `B = I + s K s`.
fn dense_posterior(k: &Mat<f64>, tau: &[f64], nu: &[f64]) -> (Mat<f64>, Vec<f64>) {
    let n = tau.len();
    let s = Mat::from_fn(n, n, |i, j| if i == j { tau[i].sqrt() } else { 0.0 });
    let b = Mat::from_fn(n, n, |i, j| if i == j { 1.0 } else { 0.0 }) + &s * k * &s;
    let sigma = k - k * &s * solve(&b, &(&s * k));
    let mu = &sigma * Mat::from_fn(n, 1, |i, _| nu[i]);
    (sigma, (0..n).map(|i| mu[(i, 0)]).collect())
}

/// Plain sequential EP (R&W Alg. 3.5) on a dense prior covariance, recomputing the posterior
/// from scratch after every site; then R&W Eq. 3.65 for the evidence.
fn dense_ep(k: &Mat<f64>, y: &[f64]) -> (Vec<f64>, Vec<f64>, f64) {
    let n = y.len();
    let (mut tau, mut nu) = (vec![0.0; n], vec![0.0; n]);
    for _ in 0..500 {
        let mut change = 0.0f64;
        for i in 0..n {
            let (sigma, mu) = dense_posterior(k, &tau, &nu);
            let tau_c = 1.0 / sigma[(i, i)] - tau[i];
            let nu_c = mu[i] / sigma[(i, i)] - nu[i];
            let (_, m, v) = probit_tilted_moments(y[i], nu_c / tau_c, 1.0 / tau_c);
            let t_new = (1.0 / v - tau_c).max(0.0);
            let n_new = m / v - nu_c;
            change = change.max((t_new - tau[i]).abs().max((n_new - nu[i]).abs()));
            tau[i] = t_new;
            nu[i] = n_new;
        }
        if change < 1e-13 {
            break;
        }
    }
    let (sigma, mu) = dense_posterior(k, &tau, &nu);
    let mut c = k.clone();
    for i in 0..n {
        c[(i, i)] += 1.0 / tau[i];
    }
    let mt = Mat::from_fn(n, 1, |i, _| nu[i] / tau[i]);
    let mut lml = -0.5 * log_det(&c) - 0.5 * (mt.transpose() * solve(&c, &mt))[(0, 0)];
    for i in 0..n {
        let s = 1.0 / (1.0 / sigma[(i, i)] - tau[i]);
        let m = s * (mu[i] / sigma[(i, i)] - nu[i]);
        let st = 1.0 / tau[i];
        lml += log_cdf(y[i] * m / (1.0 + s).sqrt())
            + 0.5 * (s + st).ln()
            + (m - mt[(i, 0)]).powi(2) / (2.0 * (s + st));
    }
    (tau, nu, lml)
}

fn signs(labels: &[usize]) -> Vec<f64> {
    labels
        .iter()
        .map(|&c| if c == 1 { 1.0 } else { -1.0 })
        .collect()
}

#[test]
fn sparse_ep_is_dense_ep_on_the_same_low_rank_prior() {
    let x = inputs(12, 11);
    let lab = labels(&x);
    let z = inputs(4, 12);
    let xs = inputs(5, 13);
    let jitter = 1e-6;
    let k = kernel();
    let tr = trace(&x, &z, jitter);
    let mut dtc_lml = 0.0;
    for prior in PRIORS {
        let ep = SparseEp::at(
            prior,
            x.as_ref(),
            &lab,
            kernel(),
            z.as_ref(),
            jitter,
            &EpOptions::default(),
        )
        .unwrap();
        // VAR runs DTC's EP.
        let dense_kind = if prior == SparsePrior::Fic {
            SparsePrior::Fic
        } else {
            SparsePrior::Dtc
        };
        let kt = dense_prior(dense_kind, &x, &z, jitter);
        let (tau, nu, lml) = dense_ep(&kt, &signs(&lab));
        let (t, v) = ep.sites();
        for i in 0..x.nrows() {
            close(t[i], tau[i], 1e-7, "site precision");
            close(v[i], nu[i], 1e-7, "site natural mean");
        }
        match prior {
            SparsePrior::Var => close(
                ep.lml(),
                dtc_lml - 0.5 * tau.iter().zip(&tr).map(|(a, b)| a * b).sum::<f64>(),
                1e-9,
                "var evidence",
            ),
            _ => close(ep.lml(), lml, 1e-8, prior.name()),
        }
        if prior == SparsePrior::Dtc {
            dtc_lml = ep.lml();
        }
        // Predictions: mean Q*f (K̃ + T̃⁻¹)⁻¹ μ̃, variance k** − Q*f (K̃ + T̃⁻¹)⁻¹ Q_f*.
        let n = x.nrows();
        let mut c = kt.clone();
        for i in 0..n {
            c[(i, i)] += 1.0 / tau[i];
        }
        let mt = Mat::from_fn(n, 1, |i, _| nu[i] / tau[i]);
        let qsf = q(&k, &xs, &x, &z, jitter);
        let mean = &qsf * solve(&c, &mt);
        let cov = &qsf * solve(&c, &qsf.transpose().to_owned());
        let kss = k.diag(xs.as_ref());
        let got = ep.linear_gaussian().marginals(xs.as_ref()).unwrap();
        let proba = ep.predict_proba(xs.as_ref()).unwrap();
        for j in 0..xs.nrows() {
            close(got.mean[j], mean[(j, 0)], 1e-7, "mean");
            close(got.var[j], kss[j] - cov[(j, j)], 1e-7, "variance");
            let want = crate::sequential::acquisition::normal::cdf(
                got.mean[j] / (1.0 + got.var[j]).sqrt(),
            );
            close(proba[j], want, 1e-15, "probability");
        }
    }
}

#[test]
fn sparse_ep_with_inducing_at_the_training_inputs_is_dense_ep() {
    let x = inputs(10, 14);
    let lab = labels(&x);
    let k = kernel().matrix(x.as_ref());
    let (tau, nu, lml) = dense_ep(&k, &signs(&lab));
    for prior in PRIORS {
        let ep = SparseEp::at(
            prior,
            x.as_ref(),
            &lab,
            kernel(),
            x.as_ref(),
            0.0,
            &EpOptions::default(),
        )
        .unwrap();
        let (t, v) = ep.sites();
        for i in 0..x.nrows() {
            close(t[i], tau[i], 1e-7, "site precision");
            close(v[i], nu[i], 1e-7, "site natural mean");
        }
        close(ep.lml(), lml, 1e-8, prior.name());
    }
}

#[test]
fn bad_ep_inputs_are_rejected() {
    let x = inputs(6, 15);
    let mut lab = labels(&x);
    let z = inputs(3, 16);
    let run = |lab: &[usize], options: &EpOptions| {
        SparseEp::at(
            SparsePrior::Fic,
            x.as_ref(),
            lab,
            kernel(),
            z.as_ref(),
            INDUCING_JITTER,
            options,
        )
    };
    let ok = EpOptions::default();
    let bad_damping = EpOptions { damping: 0.0, ..ok };
    assert!(run(&lab, &bad_damping).is_err());
    assert!(run(&lab[..5], &ok)
        .unwrap_err()
        .to_string()
        .contains("5 labels"));
    lab[2] = 2;
    assert!(run(&lab, &ok).unwrap_err().to_string().contains("row 2"));
    let few = EpOptions {
        max_sweeps: 1,
        ..ok
    };
    lab[2] = 0;
    assert!(run(&lab, &few)
        .unwrap_err()
        .to_string()
        .contains("converge"));
}

/// Central differences of `value` at `p0` against `grad`.
fn check_fd(p0: &[f64], grad: &[f64], tol: f64, value: impl Fn(&[f64]) -> f64, what: &str) {
    assert_eq!(grad.len(), p0.len());
    let h = 1e-5;
    for j in 0..p0.len() {
        let at = |d: f64| {
            let mut p = p0.to_vec();
            p[j] += d;
            value(&p)
        };
        let fd = (at(h) - at(-h)) / (2.0 * h);
        assert!(
            (grad[j] - fd).abs() <= tol * (1.0 + fd.abs()),
            "{what}, parameter {j}: analytic {} vs central difference {fd}",
            grad[j]
        );
    }
}

#[test]
fn regression_lml_gradient_matches_central_differences() {
    let x = inputs(12, 17);
    let y = targets(&x);
    let z = inputs(4, 18);
    for prior in PRIORS {
        let build = |p: &[f64]| {
            let mut k = kernel();
            k.set_params(&p[..p.len() - 1]).unwrap();
            let noise = p[p.len() - 1].exp();
            SparseRegression::at(
                prior,
                x.as_ref(),
                &y,
                k,
                Mean::Zero,
                noise,
                z.as_ref(),
                1e-6,
            )
            .unwrap()
        };
        let mut p0 = kernel().params();
        p0.push(0.1f64.ln());
        let g = build(&p0).lml_gradient().unwrap();
        check_fd(&p0, &g, 1e-6, |p| build(p).lml(), prior.name());
    }
}

#[test]
fn ep_lml_gradient_matches_central_differences_of_the_whole_ep() {
    let x = inputs(12, 19);
    let lab = labels(&x);
    let z = inputs(4, 20);
    let options = EpOptions {
        tol: 1e-13,
        max_sweeps: 1000,
        ..EpOptions::default()
    };
    for prior in [SparsePrior::Fic, SparsePrior::Dtc] {
        let build = |p: &[f64]| {
            let mut k = kernel();
            k.set_params(p).unwrap();
            SparseEp::at(prior, x.as_ref(), &lab, k, z.as_ref(), 1e-6, &options).unwrap()
        };
        let p0 = kernel().params();
        let g = build(&p0).lml_gradient().unwrap();
        check_fd(&p0, &g, 1e-6, |p| build(p).lml(), prior.name());
    }
    // VAR's evidence is not stationary in its (DTC) sites: no fixed-site gradient is offered.
    let var = SparseEp::at(
        SparsePrior::Var,
        x.as_ref(),
        &lab,
        kernel(),
        z.as_ref(),
        1e-6,
        &options,
    )
    .unwrap();
    assert!(var.lml_gradient().unwrap_err().to_string().contains("VAR"));
}

#[test]
fn fitting_raises_the_sparse_evidence() {
    let x = inputs(20, 21);
    let y = targets(&x);
    let lab = labels(&x);
    let z = inputs(5, 22);
    let start = Kernel::parse("se(ls=[3.0, 3.0], var=0.3)").unwrap();
    let fit = crate::fit::FitOptions::default();
    for prior in PRIORS {
        let before = SparseRegression::at(
            prior,
            x.as_ref(),
            &y,
            start.clone(),
            Mean::Zero,
            0.5,
            z.as_ref(),
            1e-6,
        )
        .unwrap();
        let after = SparseRegression::fit(
            prior,
            x.as_ref(),
            &y,
            start.clone(),
            Mean::Zero,
            0.5,
            z.as_ref(),
            1e-6,
            &fit,
        )
        .unwrap();
        assert!(after.lml() > before.lml() + 1.0, "{}", prior.name());
        let g = after.lml_gradient().unwrap();
        assert!(g.iter().all(|v| v.abs() < 1e-3), "{}: {g:?}", prior.name());

        let ep = |k: Kernel| {
            SparseEp::at(
                prior,
                x.as_ref(),
                &lab,
                k,
                z.as_ref(),
                1e-6,
                &EpOptions::default(),
            )
            .unwrap()
        };
        let fitted = SparseEp::fit(
            prior,
            x.as_ref(),
            &lab,
            start.clone(),
            z.as_ref(),
            1e-6,
            &EpOptions::default(),
            &fit,
        );
        if prior == SparsePrior::Var {
            assert!(fitted.is_err());
            continue;
        }
        let fitted = fitted.unwrap();
        assert!(
            fitted.lml() > ep(start.clone()).lml() + 0.1,
            "{}",
            prior.name()
        );
        let g = fitted.lml_gradient().unwrap();
        assert!(g.iter().all(|v| v.abs() < 1e-3), "{}: {g:?}", prior.name());
    }
}
