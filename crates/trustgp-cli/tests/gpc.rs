//! The classifier through the command line: `fit --model gpc` with string labels, `predict`
//! (`prob_<class>` columns and `label`, the same numbers as the fitted model), `evaluate`
//! (accuracy, log loss, Brier), numeric labels sorted numerically, and clean failures for a
//! single class, a NaN label, EP with the logit and more than two classes.

mod common;

use std::process::Output;

use common::{scratch, trustgp, write};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn assert_fails(o: &Output, expect: &[&str]) {
    let err = stderr(o);
    assert!(!o.status.success(), "expected failure, got success: {err}");
    assert_eq!(o.status.code(), Some(1), "exit code; stderr: {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
    for e in expect {
        assert!(err.contains(e), "expected '{e}' in: {err}");
    }
}

/// 60 rows on a grid with a smooth boundary; `label(i, s)` names the class of row `i` whose
/// boundary value is `s`.
fn csv(label: impl Fn(usize, f64) -> String) -> String {
    let mut s = String::from("x1,x2,kind\n");
    for i in 0..60 {
        let (a, b) = ((i % 10) as f64 / 3.0 - 1.5, (i / 10) as f64 / 2.0 - 1.2);
        let v = (1.3 * a).sin() + 0.6 * b + if i % 7 == 0 { 0.9 } else { 0.0 };
        s.push_str(&format!("{a},{b},{}\n", label(i, v)));
    }
    s
}

fn words(_: usize, v: f64) -> String {
    if v > 0.0 { "spam" } else { "ham" }.to_string()
}

#[test]
fn fit_predict_evaluate_with_string_labels() {
    let dir = scratch("gpc", "strings");
    let data = write(&dir, "d.csv", &csv(words));
    let model = dir.join("m.json").display().to_string();
    for inference in [["laplace", "logit"], ["ep", "probit"]] {
        let o = trustgp(&[
            "fit",
            "--data",
            &data,
            "--target",
            "kind",
            "--model",
            "gpc",
            "--inference",
            inference[0],
            "--likelihood",
            inference[1],
            "--out",
            &model,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(v["model"], "gpc");
        assert_eq!(v["classes"], serde_json::json!(["ham", "spam"]));
        assert_eq!(v["inference"], inference[0]);
        assert_eq!(v["likelihood"], inference[1]);
        for key in ["lml", "fit_seconds"] {
            assert!(v[key].as_f64().unwrap().is_finite(), "{key}");
        }
        assert!(v["kernel"].as_str().unwrap().contains("se("));

        let o = trustgp(&["predict", "--model", &model, "--data", &data]);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = stdout(&o);
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("prob_ham,prob_spam,label"));
        let mut correct = 0;
        for (i, line) in lines.enumerate() {
            let f: Vec<&str> = line.split(',').collect();
            let (p0, p1): (f64, f64) = (f[0].parse().unwrap(), f[1].parse().unwrap());
            assert!((p0 + p1 - 1.0).abs() < 1e-12 && (0.0..=1.0).contains(&p1));
            assert_eq!(f[2], if p1 > p0 { "spam" } else { "ham" });
            let truth = csv(words)
                .lines()
                .nth(i + 1)
                .unwrap()
                .rsplit(',')
                .next()
                .unwrap()
                .to_string();
            correct += usize::from(truth == f[2]);
        }
        assert!(correct >= 48, "training accuracy {correct}/60");
    }

    let o = trustgp(&[
        "evaluate",
        "--data",
        &data,
        "--target",
        "kind",
        "--model",
        "gpc",
        "--seed",
        "2",
        "--test-fraction",
        "0.25",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["n_train"], 45);
    assert_eq!(v["n_test"], 15);
    let acc = v["accuracy"].as_f64().unwrap();
    assert!((0.6..=1.0).contains(&acc), "accuracy {acc}");
    let (ll, brier) = (
        v["log_loss"].as_f64().unwrap(),
        v["brier"].as_f64().unwrap(),
    );
    assert!(
        ll > 0.0 && ll < 0.7 && brier > 0.0 && brier < 0.25,
        "{ll} {brier}"
    );
    assert!(v["fit_seconds"].as_f64().unwrap() >= 0.0);
}

/// Numeric labels sort as numbers (10 after 9), and the columns follow that order.
#[test]
fn numeric_labels_sort_numerically() {
    let dir = scratch("gpc", "numeric");
    let data = write(
        &dir,
        "d.csv",
        &csv(|_, v| if v > 0.0 { "10".into() } else { "9".into() }),
    );
    let model = dir.join("m.json").display().to_string();
    let o = trustgp(&[
        "fit",
        "--data",
        &data,
        "--target",
        "kind",
        "--model",
        "gpc",
        "--out",
        &model,
        "--no-optimize",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["classes"], serde_json::json!(["9", "10"]));
    let o = trustgp(&["predict", "--model", &model, "--data", &data]);
    assert!(stdout(&o).starts_with("prob_9,prob_10,label\n"));
}

#[test]
fn bad_input_fails_cleanly() {
    let dir = scratch("gpc", "bad");
    let out = dir.join("m.json").display().to_string();
    let fit = |data: &str, extra: &[&str]| {
        let mut args = vec![
            "fit", "--data", data, "--target", "kind", "--model", "gpc", "--out", &out,
        ];
        args.extend_from_slice(extra);
        trustgp(&args)
    };
    let one = write(&dir, "one.csv", &csv(|_, _| "ham".into()));
    assert_fails(&fit(&one, &[]), &["only one class", "ham"]);
    let nan = write(
        &dir,
        "nan.csv",
        &csv(|i, v| if i == 5 { "NaN".into() } else { words(i, v) }),
    );
    assert_fails(
        &fit(&nan, &[]),
        &["nan.csv", "line 7", "kind", "class label"],
    );
    let data = write(&dir, "d.csv", &csv(words));
    assert_fails(
        &fit(&data, &["--inference", "ep"]),
        &["--inference ep", "probit"],
    );
    assert_fails(
        &fit(&data, &["--likelihood", "cauchit"]),
        &["--likelihood cauchit"],
    );
    assert_fails(&fit(&data, &["--noise", "0.1"]), &["--noise", "gpc"]);
    let three = write(
        &dir,
        "three.csv",
        &csv(|i, _| ["a", "b", "c"][i % 3].into()),
    );
    assert_fails(&fit(&three, &[]), &["3 classes", "softmax"]);
    // A regression model refuses the classifier's option.
    let o = trustgp(&[
        "fit",
        "--data",
        &data,
        "--target",
        "x2",
        "--inputs",
        "x1",
        "--inference",
        "ep",
        "--out",
        &out,
    ]);
    assert_fails(&o, &["--inference", "gpc"]);
}
