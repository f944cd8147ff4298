//! The user-facing MO-RCGP defaults (`estimators`): the optimiser stops at
//! `DEFAULT_MULTI_OUTPUT_ROBUST_TOLERANCE` unless the caller sets a tolerance, and the MOGP keeps
//! L-BFGS's default stopping rule.

use faer::Mat;
use trustgp::data::{read_csv_str, Dataset};
use trustgp::estimators::{
    ModelKind, Regressor, RegressorConfig, DEFAULT_MULTI_OUTPUT_ROBUST_TOLERANCE,
};

/// Two correlated outputs of two inputs on 60 rows, with every 9th `y1` shifted by +6.
fn data() -> Dataset {
    let mut s = String::from("a,b,y1,y2\n");
    for i in 0..60 {
        let a = i as f64 * 0.17 - 5.0;
        let b = (i as f64 * 0.7).sin() * 3.0;
        let f = (0.8 * a).sin() + 0.3 * b;
        let noise = 0.05 * ((i * 37 % 11) as f64 - 5.0) / 5.0;
        let shift = if i % 9 == 4 { 6.0 } else { 0.0 };
        s.push_str(&format!(
            "{a},{b},{},{}\n",
            f + noise + shift,
            0.7 * f - 0.2 * a + noise
        ));
    }
    read_csv_str(&s, "mem.csv", &["y1".into(), "y2".into()], None).unwrap()
}

/// Predictions (mean and variance of y) of `model` fitted with `edit` applied to the defaults.
fn predictions(model: ModelKind, edit: impl Fn(&mut RegressorConfig)) -> Vec<f64> {
    let mut cfg = RegressorConfig {
        model,
        ..RegressorConfig::default()
    };
    edit(&mut cfg);
    let fitted = Regressor::fit(&data(), &cfg).unwrap();
    let xs = Mat::from_fn(5, 2, |i, j| if j == 0 { i as f64 - 2.0 } else { 0.5 });
    let p = fitted.predict(xs.as_ref(), false).unwrap();
    let mut out = Vec::new();
    for m in p {
        out.extend(m.mean);
        out.extend(m.std);
    }
    out
}

fn with_tolerance(tol: f64) -> impl Fn(&mut RegressorConfig) {
    move |c: &mut RegressorConfig| {
        c.fit.lbfgs.f_rel_tol = tol;
        c.fit.lbfgs.grad_tol = tol;
    }
}

#[test]
fn mo_rcgp_stops_at_its_default_tolerance_unless_told_otherwise() {
    let default = predictions(ModelKind::MoRcgp, |_| {});
    let explicit = predictions(
        ModelKind::MoRcgp,
        with_tolerance(DEFAULT_MULTI_OUTPUT_ROBUST_TOLERANCE),
    );
    assert_eq!(default, explicit);
    // A caller's own (tighter) tolerance is kept, and it changes the fit.
    let tight = predictions(ModelKind::MoRcgp, with_tolerance(1e-12));
    assert_ne!(default, tight);
}

#[test]
fn mogp_keeps_the_default_stopping_rule() {
    let default = predictions(ModelKind::Mogp, |_| {});
    let loose = predictions(
        ModelKind::Mogp,
        with_tolerance(DEFAULT_MULTI_OUTPUT_ROBUST_TOLERANCE),
    );
    assert_ne!(default, loose);
}
