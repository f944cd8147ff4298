//! Model files: a saved model predicts bit-identically after loading, and every kind of
//! corruption is a clear error.

use faer::Mat;
use trustgp::data::read_csv_str;
use trustgp::estimators::file::{load, load_str, save, ModelRecord};
use trustgp::estimators::{ModelKind, Regressor, RegressorConfig};

fn csv() -> String {
    let mut s = String::from("a,b,y1,y2\n");
    for i in 0..30 {
        let a = i as f64 * 0.37 - 5.0;
        let b = (i as f64 * 1.3).cos() * 10.0 + 100.0;
        let y2 = if i % 7 == 3 {
            String::new()
        } else {
            format!("{}", 3.0 * a - 0.1 * b)
        };
        s.push_str(&format!(
            "{a},{b},{},{y2}\n",
            (0.5 * a).sin() * 20.0 + 0.01 * b
        ));
    }
    s
}

fn fitted() -> Regressor {
    let data = read_csv_str(&csv(), "mem.csv", &["y1".into(), "y2".into()], None).unwrap();
    let cfg = RegressorConfig {
        kernel: Some("const * matern52 + lin".into()),
        mean: "constant".into(),
        ..RegressorConfig::default()
    };
    Regressor::fit(&data, &cfg).unwrap()
}

#[test]
fn save_load_predicts_identically() {
    let model = fitted();
    // The missing y2 cells are reported, not silently dropped.
    assert_eq!(model.outputs()[1].missing_rows, vec![3, 10, 17, 24]);
    let path = std::env::temp_dir().join(format!("trustgp-model-{}.json", std::process::id()));
    save(&model, &path).unwrap();
    let back = load(&path).unwrap();
    std::fs::remove_file(&path).ok();
    let xs = Mat::from_fn(9, 2, |i, j| {
        if j == 0 {
            i as f64 - 4.0
        } else {
            95.0 + i as f64
        }
    });
    for latent in [false, true] {
        let a = model.predict(xs.as_ref(), latent).unwrap();
        let b = back.predict(xs.as_ref(), latent).unwrap();
        assert_eq!(a, b, "predictions changed after a save/load round trip");
    }
    assert_eq!(
        ModelRecord::from_regressor(&model),
        ModelRecord::from_regressor(&back)
    );
}

/// A corruption applied to a valid model file's JSON.
type Mutation = Box<dyn Fn(&mut serde_json::Value)>;

#[test]
fn corrupted_model_files_are_clear_errors() {
    let good = serde_json::to_value(ModelRecord::from_regressor(&fitted())).unwrap();
    let cases: Vec<(Mutation, &str)> = vec![
        (Box::new(|v| v["format"] = "other".into()), "format"),
        (Box::new(|v| v["version"] = 99.into()), "version 99"),
        (
            Box::new(|v| v["outputs"][0]["kernel"] = "se +".into()),
            "kernel",
        ),
        (
            Box::new(|v| v["outputs"][0]["noise"] = (-1.0).into()),
            "noise",
        ),
        (
            Box::new(|v| v["outputs"][0]["x_train"][2] = serde_json::json!([1.0])),
            "row 2",
        ),
        (
            Box::new(|v| v["outputs"][0]["y_train"] = serde_json::json!([1.0])),
            "targets",
        ),
        (
            Box::new(|v| v["standardizer"]["x_std"][1] = 0.0.into()),
            "x_std[1]",
        ),
        (
            Box::new(|v| v["inputs"] = serde_json::json!(["a"])),
            "standardizer",
        ),
        (
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("outputs");
            }),
            "outputs",
        ),
    ];
    for (mutate, expect) in cases {
        let mut v = good.clone();
        mutate(&mut v);
        let err = load_str(&v.to_string(), "m.json").unwrap_err().to_string();
        assert!(
            err.contains("m.json") && err.contains(expect),
            "expected '{expect}' in: {err}"
        );
    }
    for text in ["", "{", "null", "[1,2]", "\u{0}\u{1}garbage"] {
        let err = load_str(text, "m.json").unwrap_err().to_string();
        assert!(
            err.contains("m.json") && err.contains("not a valid trustgp model file"),
            "{err}"
        );
    }
    let err = load("/nonexistent/dir/m.json".as_ref())
        .unwrap_err()
        .to_string();
    assert!(err.contains("/nonexistent/dir/m.json"), "{err}");
}

/// A fit of the given robust or multi-output model on the test data (y2 has missing cells).
fn fitted_as(model: ModelKind, extra: impl Fn(&mut RegressorConfig)) -> Regressor {
    let data = read_csv_str(&csv(), "mem.csv", &["y1".into(), "y2".into()], None).unwrap();
    let mut cfg = RegressorConfig {
        model,
        kernel: Some(
            if model == ModelKind::Rcgp {
                "const * matern52"
            } else {
                "se"
            }
            .into(),
        ),
        ..RegressorConfig::default()
    };
    extra(&mut cfg);
    Regressor::fit(&data, &cfg).unwrap()
}

#[test]
fn robust_and_multi_output_models_round_trip_bit_for_bit() {
    let models = [
        fitted_as(ModelKind::Rcgp, |_| {}),
        fitted_as(ModelKind::Mogp, |c| c.shared_noise = true),
        fitted_as(ModelKind::MoRcgp, |c| c.epsilon = vec![0.1, 0.0]),
        fitted_as(ModelKind::MoRcgp, |c| {
            c.naive_weight = true;
            c.rank = Some(1);
            c.kernel = Some("se; matern32".into());
        }),
    ];
    let xs = Mat::from_fn(7, 2, |i, j| {
        if j == 0 {
            i as f64 - 3.0
        } else {
            97.0 + i as f64
        }
    });
    for model in &models {
        let text = serde_json::to_string(&ModelRecord::from_regressor(model)).unwrap();
        let back = load_str(&text, "m.json").unwrap();
        assert_eq!(back.model_name(), model.model_name());
        for latent in [false, true] {
            let a = model.predict(xs.as_ref(), latent).unwrap();
            let b = back.predict(xs.as_ref(), latent).unwrap();
            assert_eq!(
                a,
                b,
                "{}: predictions changed after a round trip",
                model.model_name()
            );
            assert_eq!(a.len(), 2, "every output is predicted");
        }
        assert_eq!(
            ModelRecord::from_regressor(model),
            ModelRecord::from_regressor(&back)
        );
    }
    // A multi-output file with its weights removed, or an rcgp output without them, is refused.
    let mut v = serde_json::to_value(ModelRecord::from_regressor(&models[2])).unwrap();
    v["joint"].as_object_mut().unwrap().remove("robust");
    let err = load_str(&v.to_string(), "m.json").unwrap_err().to_string();
    assert!(err.contains("robust weights"), "{err}");
    let mut v = serde_json::to_value(ModelRecord::from_regressor(&models[0])).unwrap();
    v["outputs"][1]["robust"]["w_hat"] = serde_json::json!([0.5]);
    let err = load_str(&v.to_string(), "m.json").unwrap_err().to_string();
    assert!(err.contains("entries of w_hat"), "{err}");
    let mut v = serde_json::to_value(ModelRecord::from_regressor(&models[1])).unwrap();
    v["joint"]["x_train"][0][2] = 7.0.into();
    let err = load_str(&v.to_string(), "m.json").unwrap_err().to_string();
    assert!(err.contains("task index"), "{err}");
}

#[test]
fn approximate_models_round_trip_bit_for_bit() {
    use trustgp::fit::Optimizer;
    use trustgp::models::approximate::ApproxOptions;
    use trustgp::models::computation_aware::ActionKind;
    let quick = |c: &mut RegressorConfig| {
        c.approx = ApproxOptions {
            inducing: Some(8),
            actions: Some(5),
            optimizer: Some(Optimizer::lbfgs(15)),
            ..ApproxOptions::default()
        };
    };
    let mut models = Vec::new();
    for kind in [
        ModelKind::Sgpr,
        ModelKind::Rcsvgp,
        ModelKind::Cagp,
        ModelKind::Rcagp,
        ModelKind::Svgp,
        ModelKind::Rrp,
    ] {
        models.push(fitted_as(kind, |c| {
            quick(c);
            c.kernel = Some("const * matern52".into());
        }));
    }
    models.push(fitted_as(ModelKind::Rcagp, |c| {
        quick(c);
        c.kernel = Some("const * matern52".into());
        c.approx.action_kind = ActionKind::Inducing;
    }));
    models.push(fitted_as(ModelKind::Svgp, |c| {
        quick(c);
        c.kernel = Some("const * se".into());
        c.approx.student_t = true;
        c.approx.optimizer = Some(Optimizer::adam_fixed_steps(20, 0.01));
    }));
    let xs = Mat::from_fn(7, 2, |i, j| {
        if j == 0 {
            i as f64 - 3.0
        } else {
            97.0 + i as f64
        }
    });
    for model in &models {
        let text = serde_json::to_string(&ModelRecord::from_regressor(model)).unwrap();
        let back = load_str(&text, "m.json").unwrap();
        assert_eq!(back.model_name(), model.model_name());
        for latent in [false, true] {
            let a = model.predict(xs.as_ref(), latent).unwrap();
            let b = back.predict(xs.as_ref(), latent).unwrap();
            assert_eq!(a, b, "{}: predictions changed", model.model_name());
        }
        assert_eq!(
            ModelRecord::from_regressor(model),
            ModelRecord::from_regressor(&back),
            "{}",
            model.model_name()
        );
    }
    // A missing model-specific field is named in the error.
    let mut v = serde_json::to_value(ModelRecord::from_regressor(&models[2])).unwrap();
    v["outputs"][0]["approx"]
        .as_object_mut()
        .unwrap()
        .remove("actions");
    let err = load_str(&v.to_string(), "m.json").unwrap_err().to_string();
    assert!(err.contains("actions"), "{err}");
    let mut v = serde_json::to_value(ModelRecord::from_regressor(&models[0])).unwrap();
    v["outputs"][0]["approx"]["inducing"][0] = serde_json::json!([1.0]);
    let err = load_str(&v.to_string(), "m.json").unwrap_err().to_string();
    assert!(err.contains("inducing"), "{err}");
    // RRP: its extra noise is required, and a version-2 file keeps it in the tagged record.
    let rrp = &models[5];
    assert_eq!(rrp.model_name(), "rrp");
    // The fit summary counts the rows given an extra noise variance.
    let summary =
        serde_json::to_value(trustgp::estimators::summary::FitSummary::of(rrp, 10)).unwrap();
    let mut supports = Vec::new();
    for (t, o) in v_outputs(rrp).iter().enumerate() {
        let positive = o.iter().filter(|r| **r > 0.0).count();
        assert_eq!(summary["per_output"][t]["support"], positive);
        supports.push(positive);
    }
    assert!(supports.iter().any(|&s| s > 0), "some row has extra noise");
    let mut v = serde_json::to_value(ModelRecord::from_regressor(rrp)).unwrap();
    v["outputs"][0]["approx"]
        .as_object_mut()
        .unwrap()
        .remove("rho");
    let err = load_str(&v.to_string(), "m.json").unwrap_err().to_string();
    assert!(err.contains("rho"), "{err}");
    let path = std::env::temp_dir().join(format!("trustgp-rrp-{}.json", std::process::id()));
    trustgp::estimators::file::save(rrp, &path).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["model"], "rrp");
    let n = v["outputs"][0]["y_train"].as_array().unwrap().len();
    assert_eq!(v["outputs"][0]["rho"].as_array().unwrap().len(), n);
    let back = trustgp::estimators::file::load(&path).unwrap();
    std::fs::remove_file(&path).ok();
    let xs = Mat::from_fn(3, 2, |i, j| i as f64 + j as f64);
    assert_eq!(
        rrp.predict(xs.as_ref(), false).unwrap(),
        back.predict(xs.as_ref(), false).unwrap()
    );
}

/// The extra noise variances ρ of each output of an RRP model, as its model record holds them.
fn v_outputs(r: &Regressor) -> Vec<Vec<f64>> {
    let v = serde_json::to_value(ModelRecord::from_regressor(r)).unwrap();
    v["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| serde_json::from_value(o["approx"]["rho"].clone()).unwrap())
        .collect()
}
