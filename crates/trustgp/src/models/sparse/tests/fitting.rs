//! Fitting: the bound increases, a smooth function is recovered, RCSVGP resists outliers that
//! mislead SGPR, runs are deterministic, and bad inputs are clear errors.

use faer::Mat;

use super::*;
use crate::fit::Optimizer;
use crate::models::inducing::InducingInit;
use crate::models::sparse::SparseConfig;
use crate::models::ModelError;

fn config(kind: SparseKind, inducing: usize) -> SparseConfig {
    SparseConfig {
        kind,
        inducing,
        optimizer: Optimizer::lbfgs(300),
        ..SparseConfig::default()
    }
}

fn fit(x: &Mat<f64>, y: &[f64], expr: &str, cfg: &SparseConfig) -> Result<SparseGp, ModelError> {
    SparseGp::fit(
        x.as_ref(),
        y,
        kernel(expr),
        Mean::Constant { c: 0.0 },
        0.1,
        cfg,
        &mut |_, _| {},
    )
}

/// Mean absolute error and root mean squared error of the predictive mean against the truth.
fn errors(gp: &SparseGp, xs: &Mat<f64>) -> (f64, f64) {
    let p = gp.predict(xs.as_ref());
    let n = xs.nrows() as f64;
    let e: Vec<f64> = (0..xs.nrows())
        .map(|i| p.mean[i] - truth(xs.as_ref(), i))
        .collect();
    (
        e.iter().map(|v| v.abs()).sum::<f64>() / n,
        (e.iter().map(|v| v * v).sum::<f64>() / n).sqrt(),
    )
}

#[test]
fn fitting_increases_the_bound_and_reports_every_evaluation() {
    let (x, mut y) = data(80, 1, 11);
    contaminate(&mut y, 9, 4.0);
    for kind in [SparseKind::Sgpr, SparseKind::Rcsvgp] {
        let cfg = config(kind, 10);
        let mut seen = Vec::new();
        let gp = SparseGp::fit(
            x.as_ref(),
            &y,
            kernel("const * se(ls=1)"),
            Mean::Constant { c: 0.0 },
            0.1,
            &cfg,
            &mut |i, f| seen.push((i, f)),
        )
        .unwrap();
        let z0 = InducingInit::KMeans
            .select(x.as_ref(), 10, cfg.seed)
            .unwrap();
        let start = SparseGp::from_parts(
            kind,
            x.clone(),
            y.clone(),
            kernel("const * se(ls=1)"),
            Mean::Constant { c: 0.0 },
            0.1,
            z0,
            gp.threshold(),
            gp.beta(),
        )
        .unwrap();
        let report = gp.report().unwrap();
        assert_eq!(seen.len(), report.evaluations);
        // The same point up to the round trip through log-space.
        assert_rel(seen[0].1, start.bound(), 1e-12, 1.0, "first evaluation");
        assert!(gp.bound() > start.bound() + 1.0, "{kind:?}");
        assert_rel(
            report.objective,
            gp.bound(),
            1e-12,
            1.0,
            "reported objective",
        );
        assert!(start.report().is_none());
    }
}

#[test]
fn sgpr_recovers_a_smooth_function() {
    let (x, y) = data(150, 2, 12);
    let gp = fit(&x, &y, "const * se", &config(SparseKind::Sgpr, 20)).unwrap();
    let xs = data(200, 2, 13).0;
    let (_, rmse) = errors(&gp, &xs);
    assert!(rmse < 0.06, "test RMSE {rmse}");
    assert!(
        (gp.noise().sqrt() - 0.1).abs() < 0.03,
        "noise {}",
        gp.noise()
    );
}

#[test]
fn rcsvgp_resists_outliers_that_mislead_sgpr() {
    let (x, mut y) = data(200, 1, 14);
    contaminate(&mut y, 10, 8.0);
    let xs = Mat::from_fn(100, 1, |i, _| 0.03 * i as f64);
    let sgpr = fit(&x, &y, "const * se", &config(SparseKind::Sgpr, 15)).unwrap();
    let rcsvgp = fit(&x, &y, "const * se", &config(SparseKind::Rcsvgp, 15)).unwrap();
    let (mae_sgpr, _) = errors(&sgpr, &xs);
    let (mae_robust, _) = errors(&rcsvgp, &xs);
    assert!(
        mae_robust < 0.5 * mae_sgpr && mae_robust < 0.1,
        "RCSVGP MAE {mae_robust}, SGPR MAE {mae_sgpr}"
    );
    // The outliers get the small weights.
    let w = rcsvgp.weights();
    let outlier = w.iter().step_by(10).fold(0.0_f64, |a, &b| a.max(b));
    let inlier = (0..w.len()).filter(|i| i % 10 != 0).map(|i| w[i]);
    assert!(inlier.fold(f64::INFINITY, f64::min) > 2.0 * outlier);
}

#[test]
fn fits_are_deterministic_and_honour_the_settings() {
    let (x, y) = data(60, 2, 15);
    let cfg = config(SparseKind::Rcsvgp, 8);
    let a = fit(&x, &y, "const * matern52", &cfg).unwrap();
    let b = fit(&x, &y, "const * matern52", &cfg).unwrap();
    assert_eq!(a.bound(), b.bound());
    assert_eq!(a.inducing().to_owned(), b.inducing().to_owned());
    let xs = data(20, 2, 16).0;
    assert_eq!(a.predict(xs.as_ref()), b.predict(xs.as_ref()));

    // The threshold is the 0.8 order statistic of |y − 0| (as RCGP's): the ⌊0.8 · 59⌋ = 47th
    // of the sorted absolute residuals, no interpolation.
    let mut r: Vec<f64> = y.iter().map(|v| v.abs()).collect();
    r.sort_by(f64::total_cmp);
    assert_eq!(a.threshold(), r[47]);
    assert_eq!(a.beta(), 1.0);

    // Frozen inducing inputs stay where the initialisation put them; Adam runs its steps.
    let frozen = SparseConfig {
        learn_inducing: false,
        init: InducingInit::FirstRows,
        optimizer: Optimizer::adam_fixed_steps(40, 0.05),
        ..cfg.clone()
    };
    let gp = fit(&x, &y, "const * matern52", &frozen).unwrap();
    assert_eq!(gp.inducing().to_owned(), x.subrows(0, 8).to_owned());
    assert_eq!(gp.report().unwrap().iterations, 40);
    assert_eq!(gp.kind(), SparseKind::Rcsvgp);

    // More inducing inputs than rows: capped at the rows.
    let many = fit(&x, &y, "const * matern52", &config(SparseKind::Sgpr, 500)).unwrap();
    assert_eq!(many.inducing().nrows(), 60);

    // Predictions in blocks agree with the joint predictive, across block boundaries.
    let big = data(1100, 2, 17).0;
    let m = a.predict(big.as_ref());
    let (jm, jc) = a.predict_joint(big.as_ref());
    for i in (0..1100).step_by(7) {
        assert_rel(m.mean[i], jm[i], 1e-12, 1.0, "mean");
        assert_rel(m.var[i], jc[(i, i)], 1e-10, 1.0, "variance");
    }
}

#[test]
fn bad_inputs_are_errors() {
    let (x, y) = data(20, 2, 18);
    let cfg = config(SparseKind::Rcsvgp, 5);
    let expect = |r: Result<SparseGp, ModelError>, needle: &str| match r {
        Err(ModelError::Invalid(msg)) => assert!(msg.contains(needle), "{msg}"),
        other => panic!(
            "expected an error about {needle}, got {:?}",
            other.map(|g| g.bound())
        ),
    };
    let mut bad_x = x.clone();
    bad_x[(3, 1)] = f64::NAN;
    expect(fit(&bad_x, &y, "se", &cfg), "row 3, column 1");
    let mut bad_y = y.clone();
    bad_y[4] = f64::INFINITY;
    expect(fit(&x, &bad_y, "se", &cfg), "row 4");
    expect(
        fit(&x, &y[..19], "se", &cfg),
        "20 input rows but 19 targets",
    );
    expect(
        fit(&x, &y, "se", &config(SparseKind::Sgpr, 0)),
        "at least 1",
    );
    for eps in [0.0, 1.0, f64::NAN, -0.1] {
        let c = SparseConfig {
            epsilon: eps,
            ..cfg.clone()
        };
        expect(fit(&x, &y, "se", &c), "epsilon");
    }
    let c = SparseConfig {
        beta: 0.0,
        ..cfg.clone()
    };
    expect(fit(&x, &y, "se", &c), "beta");
    for noise in [0.0, -1.0, f64::NAN] {
        let r = SparseGp::fit(
            x.as_ref(),
            &y,
            kernel("se"),
            Mean::Zero,
            noise,
            &cfg,
            &mut |_, _| {},
        );
        expect(r, "noise");
    }
    let empty = Mat::<f64>::zeros(0, 2);
    expect(fit(&empty, &[], "se", &cfg), "at least one row");

    let parts = |z: Mat<f64>, c: f64| {
        SparseGp::from_parts(
            SparseKind::Rcsvgp,
            x.clone(),
            y.clone(),
            kernel("se(ls=1)"),
            Mean::Zero,
            0.1,
            z,
            c,
            1.0,
        )
    };
    expect(parts(Mat::zeros(3, 1), 1.0), "3×1");
    expect(
        parts(Mat::from_fn(3, 2, |_, _| f64::NAN), 1.0),
        "inducing input row 0",
    );
    expect(parts(x.subrows(0, 3).to_owned(), 0.0), "soft threshold");
    expect(parts(Mat::zeros(0, 2), 1.0), "0×2");
    // A linear mean with the wrong number of weights is the mean's own error.
    let wrong = SparseGp::fit(
        x.as_ref(),
        &y,
        kernel("se"),
        Mean::Linear {
            w: vec![0.0],
            b: 0.0,
        },
        0.1,
        &cfg,
        &mut |_, _| {},
    );
    assert!(matches!(wrong, Err(ModelError::Mean(_))));
}
