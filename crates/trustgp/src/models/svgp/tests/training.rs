//! Fitting: accuracy on a smooth function, robustness to outliers, determinism, bad inputs.

use faer::Mat;

use super::super::{Svgp, SvgpConfig, SvgpLikelihood};
use super::*;
use crate::fit::Optimizer;
use crate::models::inducing::InducingInit;
use crate::models::ModelError;

fn config(likelihood: SvgpLikelihood, natural_gradients: bool) -> SvgpConfig {
    SvgpConfig {
        likelihood,
        inducing: 25,
        batch_size: 100,
        optimizer: Optimizer::adam_early_stopping(1500, 0.02, 100, 1e-5),
        natural_gradients,
        seed: 3,
        ..SvgpConfig::default()
    }
}

fn fit(x: &Mat<f64>, y: &[f64], config: &SvgpConfig) -> Svgp {
    let k = Kernel::parse("se").unwrap();
    Svgp::fit(
        x.as_ref(),
        y,
        k,
        Mean::Constant { c: 0.0 },
        0.5,
        config,
        &mut |_, _| {},
    )
    .unwrap()
}

/// Root mean squared and mean absolute error of the latent mean against the truth.
fn errors(svgp: &Svgp, seed: u64) -> (f64, f64) {
    let (xs, _) = data(300, 0.0, seed);
    let p = svgp.predict(xs.as_ref());
    let e: Vec<f64> = (0..300)
        .map(|i| p.mean[i] - truth(xs.as_ref(), i))
        .collect();
    let rmse = (e.iter().map(|v| v * v).sum::<f64>() / 300.0).sqrt();
    (rmse, e.iter().map(|v| v.abs()).sum::<f64>() / 300.0)
}

/// Minibatches with natural gradients, and with Adam on every parameter: both reach a test
/// error well below the noise, and the full-data ELBO beats the initial one.
#[test]
fn fits_a_smooth_function_with_minibatches() {
    let (x, y) = data(600, 0.1, 31);
    for natural in [true, false] {
        let mut evaluations = 0;
        let svgp = Svgp::fit(
            x.as_ref(),
            &y,
            Kernel::parse("se").unwrap(),
            Mean::Constant { c: 0.0 },
            0.5,
            &config(SvgpLikelihood::Gaussian, natural),
            &mut |_, _| evaluations += 1,
        )
        .unwrap();
        let report = svgp.report().unwrap();
        assert_eq!(evaluations, report.evaluations);
        let (rmse, _) = errors(&svgp, 32);
        assert!(rmse < 0.06, "natural = {natural}: test RMSE {rmse}");
        let noise = svgp.likelihood().1[0];
        assert!((0.005..0.02).contains(&noise), "σ² = {noise}");
        let elbo = svgp.elbo(x.as_ref(), &y).unwrap();
        assert!(elbo > 0.5 * 600.0, "ELBO {elbo}");
        // The report holds the last minibatch estimate (100 of 600 rows: a standard error of
        // about 15%), on the same unnormalised scale.
        let objective = report.objective;
        assert!(
            (objective / elbo - 1.0).abs() < 0.5,
            "{objective} vs {elbo}"
        );
    }
}

/// With 10% gross outliers the Student-t SVGP's latent mean is closer to the truth than the
/// Gaussian SVGP's.
#[test]
fn student_t_is_robust_to_outliers() {
    let (x, mut y) = data(500, 0.1, 33);
    let mut rng = StdRng::seed_from_u64(34);
    for yi in y.iter_mut().step_by(10) {
        *yi += rng.random_range(4.0..8.0) * if rng.random::<bool>() { 1.0 } else { -1.0 };
    }
    let gaussian = fit(&x, &y, &config(SvgpLikelihood::Gaussian, true));
    let student = fit(&x, &y, &config(SvgpLikelihood::StudentT, true));
    let (_, mae_g) = errors(&gaussian, 35);
    let (_, mae_t) = errors(&student, 35);
    assert!(
        mae_t < 0.7 * mae_g,
        "Student-t MAE {mae_t} vs Gaussian {mae_g}"
    );
    assert!(mae_t < 0.1, "Student-t MAE {mae_t}");
    let (kind, params) = student.likelihood();
    assert_eq!(kind, SvgpLikelihood::StudentT);
    assert_eq!(SvgpLikelihood::from_name(kind.name()), Some(kind));
    assert_eq!(SvgpLikelihood::from_name("cauchy"), None);
    assert!(params[0] > 2.0 && params[1] > 0.0);
}

/// The same seed gives the same model; full batch is the paper's protocol and runs.
#[test]
fn same_seed_same_numbers_and_full_batch_protocol() {
    let (x, y) = data(150, 0.1, 36);
    let c = SvgpConfig {
        batch_size: 40,
        optimizer: Optimizer::adam_fixed_steps(60, 0.01),
        ..config(SvgpLikelihood::StudentT, false)
    };
    let (a, b) = (fit(&x, &y, &c), fit(&x, &y, &c));
    assert_eq!(a.variational().0, b.variational().0);
    assert_eq!(a.inducing(), b.inducing());
    assert_eq!(a.kernel(), b.kernel());
    let (xs, _) = data(10, 0.0, 37);
    assert_eq!(a.predict(xs.as_ref()), b.predict(xs.as_ref()));
    let paper = SvgpConfig {
        batch_size: 150,
        init: InducingInit::FirstRows,
        optimizer: Optimizer::adam_fixed_steps(50, 0.01),
        natural_gradients: false,
        ..config(SvgpLikelihood::Gaussian, false)
    };
    let svgp = fit(&x, &y, &paper);
    assert_eq!(svgp.report().unwrap().iterations, 50);
    assert_eq!(svgp.inducing().nrows(), 25);
}

fn invalid(r: Result<Svgp, ModelError>, needle: &str) {
    match r {
        Err(ModelError::Invalid(msg)) => assert!(msg.contains(needle), "{msg}"),
        other => panic!("expected an Invalid error mentioning '{needle}', got {other:?}"),
    }
}

#[test]
fn bad_inputs_are_errors() {
    let (x, y) = data(30, 0.1, 38);
    let c = config(SvgpLikelihood::Gaussian, true);
    let run = |x: &Mat<f64>, y: &[f64], noise: f64, c: &SvgpConfig| {
        Svgp::fit(
            x.as_ref(),
            y,
            kernel(),
            Mean::Zero,
            noise,
            c,
            &mut |_, _| {},
        )
    };
    let mut bad_x = x.clone();
    bad_x[(3, 1)] = f64::NAN;
    invalid(run(&bad_x, &y, 0.1, &c), "row 3, column 1");
    let mut bad_y = y.clone();
    bad_y[2] = f64::INFINITY;
    invalid(run(&x, &bad_y, 0.1, &c), "training row 2");
    invalid(run(&x, &y[..29], 0.1, &c), "targets");
    invalid(run(&x, &y, 0.0, &c), "noise");
    invalid(
        run(
            &x,
            &y,
            0.1,
            &SvgpConfig {
                inducing: 0,
                ..c.clone()
            },
        ),
        "inducing",
    );
    invalid(
        run(
            &x,
            &y,
            0.1,
            &SvgpConfig {
                inducing: 31,
                ..c.clone()
            },
        ),
        "inducing",
    );
    invalid(
        run(
            &x,
            &y,
            0.1,
            &SvgpConfig {
                batch_size: 0,
                ..c.clone()
            },
        ),
        "minibatch",
    );
    invalid(run(&Mat::zeros(0, 2), &[], 0.1, &c), "at least one row");
    let lbfgs = SvgpConfig {
        optimizer: Optimizer::lbfgs(30),
        ..c.clone()
    };
    invalid(
        run(
            &x,
            &y,
            0.1,
            &SvgpConfig {
                batch_size: 10,
                ..lbfgs.clone()
            },
        ),
        "L-BFGS",
    );
    let full = run(
        &x,
        &y,
        0.1,
        &SvgpConfig {
            inducing: 8,
            ..lbfgs
        },
    )
    .unwrap();
    assert!(full.report().unwrap().iterations > 0);
    let linear3 = Mean::Linear {
        w: vec![0.0; 3],
        b: 0.0,
    };
    assert!(Svgp::fit(x.as_ref(), &y, kernel(), linear3, 0.1, &c, &mut |_, _| {}).is_err());

    let s = state(SvgpLikelihood::StudentT, vec![4.0, 0.1], Mean::Zero, 4, 39);
    let parts = |params: Vec<f64>, m_tilde: Vec<f64>, l_tilde: Mat<f64>| {
        Svgp::from_parts(
            s.kernel.clone(),
            Mean::Zero,
            params,
            SvgpLikelihood::StudentT,
            s.z.clone(),
            m_tilde,
            l_tilde,
        )
    };
    let ok = parts(s.lik_params.clone(), s.m_tilde.clone(), s.l_tilde.clone()).unwrap();
    invalid(
        parts(vec![2.0, 0.1], s.m_tilde.clone(), s.l_tilde.clone()),
        "above 2",
    );
    invalid(
        parts(vec![4.0], s.m_tilde.clone(), s.l_tilde.clone()),
        "parameters",
    );
    invalid(
        parts(s.lik_params.clone(), vec![0.0; 3], s.l_tilde.clone()),
        "variational",
    );
    let mut zero_diag = s.l_tilde.clone();
    zero_diag[(2, 2)] = 0.0;
    invalid(
        parts(s.lik_params.clone(), s.m_tilde.clone(), zero_diag),
        "positive diagonal",
    );
    let wide = Mat::<f64>::zeros(3, 3);
    invalid(
        ok.try_predict(wide.as_ref()).map(|_| ok.clone()),
        "input columns",
    );
    invalid(ok.elbo(x.as_ref(), &y[..3]).map(|_| ok.clone()), "targets");
}
