//! Model files: a saved model predicts bit-identically after loading, and every kind of
//! corruption is a clear error.

use faer::Mat;
use trustgp::data::read_csv_str;
use trustgp::models::file::{load, load_str, save, ModelRecord};
use trustgp::models::regressor::{Regressor, RegressorConfig};

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
