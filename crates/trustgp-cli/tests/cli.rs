//! The command-line contract end to end: JSON on stdout, CSV from predict, and one clear error
//! line with a non-zero exit (never a panic) for every kind of bad input.

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::{trustgp, write};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A scratch directory unique to one test.
fn scratch(name: &str) -> PathBuf {
    common::scratch("cli", name)
}

fn yacht() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/uci_yacht/data.csv")
        .display()
        .to_string()
}

fn toy_csv() -> String {
    let mut s = String::from("x1,x2,y\n");
    for i in 0..25 {
        let a = i as f64 / 5.0;
        s.push_str(&format!(
            "{a},{},{}\n",
            (i % 4) as f64,
            a.sin() + 0.1 * (i % 4) as f64
        ));
    }
    s
}

/// Assert a clean failure: non-zero exit, no panic, one line naming what we expect.
fn assert_fails(o: &Output, expect: &[&str]) {
    let err = stderr(o);
    assert!(!o.status.success(), "expected failure, got success: {err}");
    assert_eq!(o.status.code(), Some(1), "exit code; stderr: {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
    for e in expect {
        assert!(err.contains(e), "expected '{e}' in: {err}");
    }
}

#[test]
fn fit_predict_round_trip_on_yacht() {
    let dir = scratch("fit");
    let model = dir.join("m.json").display().to_string();
    let o = trustgp(&[
        "fit",
        "--data",
        &yacht(),
        "--target",
        "residuary_resistance",
        "--out",
        &model,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    for key in [
        "model",
        "n",
        "d",
        "outputs",
        "objective",
        "lml",
        "kernel",
        "noise",
        "jitter",
        "fit_seconds",
    ] {
        assert!(v.get(key).is_some(), "missing {key} in {v}");
    }
    assert_eq!(v["n"], 308);
    assert_eq!(v["d"], 6);
    assert!(v["lml"].as_f64().unwrap() > 200.0, "{v}");
    let pred = dir.join("p.csv").display().to_string();
    let o = trustgp(&[
        "predict",
        "--model",
        &model,
        "--data",
        &yacht(),
        "--out",
        &pred,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&pred).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "mean_residuary_resistance,std_residuary_resistance"
    );
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|c| c.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 308);
    // In-sample predictions of a good fit are close to the targets (residuary resistance
    // ranges 0–62) and have positive std.
    let data = std::fs::read_to_string(yacht()).unwrap();
    let ys: Vec<f64> = data
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').next().unwrap().parse().unwrap())
        .collect();
    let rmse = (rows
        .iter()
        .zip(&ys)
        .map(|(r, y)| (r[0] - y).powi(2))
        .sum::<f64>()
        / 308.0)
        .sqrt();
    assert!(rmse < 1.0, "in-sample rmse {rmse}");
    assert!(rows.iter().all(|r| r[1] > 0.0));
    // Without --out, CSV goes to stdout; --latent gives smaller std.
    let o = trustgp(&["predict", "--model", &model, "--data", &yacht(), "--latent"]);
    assert!(o.status.success());
    let latent: Vec<f64> = stdout(&o)
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
        .collect();
    assert!(latent.iter().zip(&rows).all(|(l, r)| *l < r[1]));
}

#[test]
fn evaluate_reports_metrics_for_random_and_file_splits() {
    let dir = scratch("eval");
    let o = trustgp(&[
        "evaluate",
        "--data",
        &yacht(),
        "--target",
        "residuary_resistance",
        "--test-fraction",
        "0.25",
        "--seed",
        "3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["n_test"], 77);
    assert_eq!(v["n_train"], 231);
    assert!(
        v["rmse"].as_f64().unwrap() < 2.0 && v["mae"].as_f64().unwrap() > 0.0,
        "{v}"
    );
    assert!(v["nlpd"].as_f64().unwrap().is_finite());
    let mut split = String::from("split,set,row\n");
    for r in 0..308 {
        split.push_str(&format!(
            "0,{},{r}\n",
            if r % 10 == 0 { "test" } else { "train" }
        ));
    }
    let sf = write(&dir, "splits.csv", &split);
    let with_split = |k: &str| {
        trustgp(&[
            "evaluate",
            "--data",
            &yacht(),
            "--target",
            "residuary_resistance",
            "--split-file",
            &sf,
            "--split",
            k,
        ])
    };
    let o = with_split("0");
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["n_test"], 31);
    let o = with_split("4");
    assert_fails(&o, &["splits.csv", "4"]);
}

#[test]
fn demo_runs_without_arguments() {
    let o = trustgp(&["demo"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let demo = &v["demo"];
    assert!(
        demo["test_rmse"].as_f64().unwrap() < 0.2 * demo["baseline_rmse"].as_f64().unwrap(),
        "{v}"
    );
    assert!(demo["coverage_95"].as_f64().unwrap() > 0.8);
    let svg = scratch("demo").join("demo.svg");
    let o = trustgp(&["demo", "--plot", &svg.display().to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(
        text.matches("<circle").count(),
        demo["n_test"].as_u64().unwrap() as usize
    );
}

#[test]
fn bad_data_files_fail_cleanly() {
    let dir = scratch("bad");
    let out = dir.join("m.json").display().to_string();
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        ("empty.csv", String::new(), vec!["empty.csv"]),
        ("header.csv", "x1,x2,y\n".into(), vec!["header.csv"]),
        (
            "ragged.csv",
            "x1,x2,y\n1,2,3\n4,5\n".into(),
            vec!["ragged.csv", "3"],
        ),
        (
            "text.csv",
            "x1,x2,y\n1,2,3\n4,abc,6\n".into(),
            vec!["text.csv", "abc", "x2"],
        ),
        (
            "nan.csv",
            "x1,x2,y\n1,2,3\n4,NaN,6\n".into(),
            vec!["nan.csv", "x2"],
        ),
        (
            "inf.csv",
            "x1,x2,y\n1,2,inf\n4,5,6\n".into(),
            vec!["inf.csv", "y"],
        ),
        (
            "missing_input.csv",
            "x1,x2,y\n1,,3\n4,5,6\n".into(),
            vec!["missing_input.csv", "x2"],
        ),
        (
            "nocol.csv",
            "x1,x2,z\n1,2,3\n".into(),
            vec!["nocol.csv", "y"],
        ),
    ];
    for (name, text, expect) in cases {
        let f = write(&dir, name, &text);
        let o = trustgp(&["fit", "--data", &f, "--target", "y", "--out", &out]);
        assert_fails(&o, &expect);
    }
    let o = trustgp(&[
        "fit",
        "--data",
        "/nonexistent.csv",
        "--target",
        "y",
        "--out",
        &out,
    ]);
    assert_fails(&o, &["/nonexistent.csv"]);
}

#[test]
fn bad_options_fail_cleanly() {
    let dir = scratch("opts");
    let data = write(&dir, "toy.csv", &toy_csv());
    let out = dir.join("m.json").display().to_string();
    let fit = |extra: &[&str]| {
        let mut a = vec![
            "fit",
            "--data",
            data.as_str(),
            "--target",
            "y",
            "--out",
            out.as_str(),
        ];
        a.extend_from_slice(extra);
        trustgp(&a)
    };
    assert_fails(&fit(&["--kernel", "se + "]), &["kernel"]);
    assert_fails(&fit(&["--kernel", "gauss"]), &["gauss"]);
    assert_fails(&fit(&["--kernel", "se(ls=[1,2,3])"]), &["ls"]);
    assert_fails(&fit(&["--kernel", "se(dims=[5])"]), &["5"]);
    assert_fails(&fit(&["--noise", "-1"]), &["noise"]);
    assert_fails(&fit(&["--mean", "cubic"]), &["cubic"]);
    assert_fails(&fit(&["--model", "bogus"]), &["bogus"]);
    assert_fails(&fit(&["--inputs", "x1,q"]), &["q"]);
    let o = trustgp(&[
        "evaluate",
        "--data",
        &data,
        "--target",
        "y",
        "--test-fraction",
        "1.5",
    ]);
    assert_fails(&o, &["1.5"]);
    let evaluate = |extra: &[&str]| {
        let mut a = vec!["evaluate", "--data", data.as_str(), "--target", "y"];
        a.extend_from_slice(extra);
        trustgp(&a)
    };
    assert_fails(
        &evaluate(&["--contaminate", "uniform:1.5"]),
        &["uniform:1.5"],
    );
    assert_fails(&evaluate(&["--contaminate", "sideways:0.1"]), &["sideways"]);
    assert_fails(&evaluate(&["--contaminate", "uniform:0.1:zz"]), &["zz"]);
    assert_fails(
        &evaluate(&[
            "--contaminate",
            "uniform:0.1",
            "--contaminate-protocol",
            "x",
        ]),
        &["x"],
    );
    assert_fails(&fit(&["--epsilon", "0.1"]), &["epsilon"]);
    assert_fails(&fit(&["--model", "rcgp", "--epsilon", "1.2"]), &["1.2"]);
    assert_fails(
        &fit(&["--model", "rcgp", "--epsilon", "-0.1"]),
        &["--epsilon -0.1", "[0, 1)"],
    );
    assert_fails(
        &fit(&["--model", "rcgp", "--epsilon", "0.1,0.2"]),
        &["2 epsilon"],
    );
    assert_fails(&fit(&["--shared-noise"]), &["shared-noise"]);
    assert_fails(&fit(&["--model", "mogp", "--rank", "0"]), &["rank"]);
    assert_fails(&fit(&["--model", "mo-rcgp", "--weight", "odd"]), &["odd"]);
    // A good fit, then predictions on data missing an input column, and corrupted model files.
    assert!(fit(&[]).status.success());
    let nox2 = write(&dir, "nox2.csv", "x1,y\n1,2\n");
    assert_fails(
        &trustgp(&["predict", "--model", &out, "--data", &nox2]),
        &["nox2.csv", "x2"],
    );
    let broken = write(
        &dir,
        "broken.json",
        "{\"format\": \"trustgp-model\", \"version\": 1",
    );
    assert_fails(
        &trustgp(&["predict", "--model", &broken, "--data", &data]),
        &["broken.json"],
    );
    let text = std::fs::read_to_string(&out)
        .unwrap()
        .replace("\"version\": 2", "\"version\": 7");
    let future = write(&dir, "future.json", &text);
    assert_fails(
        &trustgp(&["predict", "--model", &future, "--data", &data]),
        &["future.json", "version 7"],
    );
}

/// Two correlated outputs of three inputs, with a few empty cells in the second.
fn two_output_csv() -> String {
    let mut s = String::from("a,b,c,y1,y2\n");
    for i in 0..90 {
        let (a, b, c) = (
            (i as f64 * 0.37).sin() * 2.0,
            (i as f64 * 0.11).cos(),
            (i % 7) as f64 / 3.0,
        );
        let f = a + 0.5 * b * b - 0.3 * c;
        let noise = ((i * 7919) % 13) as f64 / 130.0 - 0.05;
        let y2 = if i % 9 == 4 {
            String::new()
        } else {
            format!("{}", 2.0 * f + 1.0 - noise)
        };
        s.push_str(&format!("{a},{b},{c},{},{y2}\n", f + noise));
    }
    s
}

#[test]
fn robust_models_resist_outliers_end_to_end() {
    let dir = scratch("robust");
    let data = write(&dir, "two.csv", &two_output_csv());
    let mae = |model: &str, target: &str| -> f64 {
        let o = trustgp(&[
            "evaluate",
            "--data",
            &data,
            "--target",
            target,
            "--inputs",
            "a,b,c",
            "--model",
            model,
            "--contaminate",
            "asymmetric:0.1:y1",
            "--seed",
            "3",
        ]);
        assert!(o.status.success(), "{model}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(v["model"], model);
        assert!(v["contamination"]["rows"].as_array().unwrap().len() >= 7);
        v["metrics_per_output"][0]["mae"].as_f64().unwrap()
    };
    let (gp, rcgp) = (mae("gp", "y1"), mae("rcgp", "y1"));
    assert!(rcgp < 0.5 * gp, "rcgp MAE {rcgp} vs gp {gp}");
    let (mogp, morcgp) = (mae("mogp", "y1,y2"), mae("mo-rcgp", "y1,y2"));
    assert!(morcgp < 0.5 * mogp, "mo-rcgp MAE {morcgp} vs mogp {mogp}");
    // fit + predict of a multi-output model: every output gets mean and std columns.
    let out = dir.join("mo.json").display().to_string();
    let o = trustgp(&[
        "fit",
        "--data",
        &data,
        "--target",
        "y1,y2",
        "--model",
        "mo-rcgp",
        "--epsilon",
        "0.1,0",
        "--out",
        &out,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["objective"]["name"], "weighted_loo_cv");
    assert_eq!(
        v["terms"][0]["coregionalization"].as_array().unwrap().len(),
        2
    );
    let o = trustgp(&["predict", "--model", &out, "--data", &data]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = stdout(&o);
    assert_eq!(csv.lines().next().unwrap(), "mean_y1,std_y1,mean_y2,std_y2");
    assert_eq!(csv.lines().count(), 91);
}

/// The approximate models through `evaluate` on the bundled Yacht data with 10% asymmetric
/// outliers: the robust ones beat their Gaussian counterparts by a wide margin, and a fitted
/// model file predicts through `predict`.
#[test]
fn approximate_models_end_to_end() {
    let data = yacht();
    let mae = |extra: &[&str]| -> f64 {
        let mut a = vec![
            "evaluate",
            "--data",
            data.as_str(),
            "--target",
            "residuary_resistance",
            "--contaminate",
            "asymmetric:0.1",
            "--seed",
            "1",
        ];
        a.extend_from_slice(extra);
        let o = trustgp(&a);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        v["mae"].as_f64().unwrap()
    };
    let quick = ["--iterations", "60"];
    let cagp = mae(&[&["--model", "cagp"][..], &quick].concat());
    let rcagp = mae(&[&["--model", "rcagp"][..], &quick].concat());
    assert!(rcagp < 0.5 * cagp, "rcagp MAE {rcagp} vs cagp {cagp}");
    let quick = ["--iterations", "100"];
    let sgpr = mae(&[&["--model", "sgpr"][..], &quick].concat());
    let rcsvgp = mae(&[&["--model", "rcsvgp"][..], &quick].concat());
    assert!(rcsvgp < 0.5 * sgpr, "rcsvgp MAE {rcsvgp} vs sgpr {sgpr}");

    // With as many actions as rows RCaGP's ELBO is RCGP's pseudo-evidence, unbounded as the
    // noise goes to 0: trained freely (--free-noise) the noise collapses to its floor; the
    // default keeps an exact RCGP's noise estimate.
    let noise_and_mae = |extra: &[&str]| -> (f64, f64) {
        let mut a = vec![
            "evaluate",
            "--data",
            data.as_str(),
            "--target",
            "residuary_resistance",
            "--contaminate",
            "asymmetric:0.1",
            "--seed",
            "1",
            "--model",
            "rcagp",
            "--actions",
            "246",
        ];
        a.extend_from_slice(extra);
        let o = trustgp(&a);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        (v["noise"][0].as_f64().unwrap(), v["mae"].as_f64().unwrap())
    };
    let (free_noise, free_mae) = noise_and_mae(&["--free-noise"]);
    let (noise, default_mae) = noise_and_mae(&[]);
    assert!(free_noise < 2e-4 && noise > 1e-2, "{free_noise} vs {noise}");
    assert!(default_mae < 0.1 * free_mae, "{default_mae} vs {free_mae}");

    // A fitted model file predicts every row through `predict`; returns the fit summary.
    let dir = scratch("approx");
    let fit_and_predict = |name: &str, extra: &[&str]| -> serde_json::Value {
        let out = dir.join(format!("{name}.json")).display().to_string();
        let mut a = vec![
            "fit",
            "--data",
            data.as_str(),
            "--target",
            "residuary_resistance",
            "--out",
            out.as_str(),
        ];
        a.extend_from_slice(extra);
        let o = trustgp(&a);
        assert!(o.status.success(), "{}", stderr(&o));
        let summary = serde_json::from_str(&stdout(&o)).unwrap();
        let o = trustgp(&["predict", "--model", &out, "--data", &data]);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = stdout(&o);
        assert!(text.starts_with("mean_residuary_resistance,std_residuary_resistance"));
        assert_eq!(text.lines().count(), 309);
        summary
    };
    let v = fit_and_predict(
        "svgp",
        &[
            "--model",
            "svgp",
            "--inducing",
            "20",
            "--optimizer",
            "adam",
            "--iterations",
            "100",
            "--lr",
            "0.05",
        ],
    );
    assert_eq!(v["model"], "svgp");
    assert_eq!(v["per_output"][0]["inducing"], 20);
    assert_eq!(v["per_output"][0]["training"]["iterations"], 100);
    // RCaGP with dense inducing-point actions.
    let v = fit_and_predict(
        "rcagp",
        &[
            "--model",
            "rcagp",
            "--action-kind",
            "inducing",
            "--actions",
            "12",
            "--iterations",
            "20",
        ],
    );
    assert_eq!(v["per_output"][0]["actions"], 12);
    assert_eq!(v["per_output"][0]["action_kind"], "inducing");
}

#[test]
fn approximate_model_options_fail_cleanly() {
    let dir = scratch("approx-opts");
    let data = write(&dir, "toy.csv", &toy_csv());
    let out = dir.join("m.json").display().to_string();
    let fit = |extra: &[&str]| {
        let mut a = vec!["fit", "--data", &data, "--target", "y", "--out", &out];
        a.extend_from_slice(extra);
        trustgp(&a)
    };
    assert_fails(
        &fit(&["--model", "sgpr", "--actions", "3"]),
        &["--actions", "sgpr"],
    );
    assert_fails(
        &fit(&["--model", "cagp", "--inducing", "3"]),
        &["--inducing", "cagp"],
    );
    assert_fails(
        &fit(&["--model", "gp", "--iterations", "3"]),
        &["--iterations"],
    );
    assert_fails(
        &fit(&["--model", "sgpr", "--inducing", "0"]),
        &["--inducing 0"],
    );
    assert_fails(
        &fit(&["--model", "svgp", "--batch-size", "0"]),
        &["--batch-size 0"],
    );
    assert_fails(&fit(&["--model", "svgp", "--lr", "-1"]), &["--lr -1"]);
    assert_fails(&fit(&["--model", "svgp", "--optimizer", "sgd"]), &["sgd"]);
    assert_fails(
        &fit(&["--model", "sgpr", "--likelihood", "student-t"]),
        &["student-t"],
    );
    assert_fails(
        &fit(&["--model", "svgp", "--likelihood", "cauchy"]),
        &["cauchy"],
    );
    assert_fails(
        &fit(&["--model", "cagp", "--free-noise"]),
        &["--free-noise"],
    );
    assert_fails(
        &fit(&["--model", "cagp", "--mean", "linear"]),
        &["constant"],
    );
    assert_fails(
        &fit(&["--model", "sgpr", "--kernel", "se + white"]),
        &["white"],
    );
    assert_fails(
        &fit(&["--model", "rcagp", "--epsilon", "1.5"]),
        &["epsilon"],
    );
    assert_fails(
        &fit(&["--model", "sgpr", "--action-kind", "inducing"]),
        &["--action-kind", "sgpr"],
    );
    assert_fails(
        &fit(&["--model", "cagp", "--action-kind", "dense"]),
        &["--action-kind dense", "blocks or inducing"],
    );
}
