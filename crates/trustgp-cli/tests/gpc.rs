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
    assert_fails(
        &fit(&three, &["--inference", "ep", "--likelihood", "probit"]),
        &["3 classes", "EP is binary", "--inference laplace"],
    );
    let ep = ["--inference", "ep", "--likelihood", "probit"];
    assert_fails(
        &fit(&data, &["--sparse", "fic"]),
        &["--sparse fic", "--inference ep"],
    );
    assert_fails(
        &fit(&data, &[&ep[..], &["--sparse", "full"]].concat()),
        &["--sparse full", "fic, dtc or var"],
    );
    assert_fails(
        &fit(&data, &[&ep[..], &["--inducing", "5"]].concat()),
        &["--inducing 5", "--sparse"],
    );
    assert_fails(
        &fit(
            &data,
            &[&ep[..], &["--sparse", "dtc", "--inducing", "0"]].concat(),
        ),
        &["--inducing 0"],
    );
    assert_fails(
        &fit(&three, &[&ep[..], &["--per-class-kernels"]].concat()),
        &["--per-class-kernels", "laplace"],
    );
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
    for extra in [&["--sparse", "fic"][..], &["--per-class-kernels"]] {
        let mut args = vec![
            "fit", "--data", &data, "--target", "x2", "--inputs", "x1", "--out", &out,
        ];
        args.extend_from_slice(extra);
        assert_fails(&trustgp(&args), &[extra[0], "applies to gpc"]);
    }
}

/// The rows of a `predict` CSV: the probabilities and the label.
fn predictions(text: &str, classes: usize) -> Vec<(Vec<f64>, String)> {
    text.lines()
        .skip(1)
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            assert_eq!(f.len(), classes + 1, "{line}");
            let p = f[..classes].iter().map(|v| v.parse().unwrap()).collect();
            (p, f[classes].to_string())
        })
        .collect()
}

/// Three classes in bands of `x1` (separable), named by words.
fn three_bands(i: usize, _: f64) -> String {
    let a = (i % 10) as f64 / 3.0 - 1.5;
    if a < -0.6 {
        "red"
    } else if a < 0.6 {
        "green"
    } else {
        "blue"
    }
    .to_string()
}

/// More than two classes give the softmax model: probabilities sum to one, the labels are the
/// most probable classes, separable data is fitted well, a reloaded model predicts the same
/// numbers (the Monte Carlo seed is in the model file), per-class kernels work too.
#[test]
fn three_classes_fit_predict_evaluate() {
    let dir = scratch("gpc", "three");
    let data = write(&dir, "d.csv", &csv(three_bands));
    let truth: Vec<String> = (0..60).map(|i| three_bands(i, 0.0)).collect();
    for extra in [&[][..], &["--per-class-kernels"]] {
        let model = dir.join("m.json").display().to_string();
        let mut args = vec![
            "fit", "--data", &data, "--target", "kind", "--model", "gpc", "--out", &model,
        ];
        args.extend_from_slice(extra);
        let o = trustgp(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(v["classes"], serde_json::json!(["blue", "green", "red"]));
        assert_eq!(v["likelihood"], "softmax");
        assert_eq!(v["per_class_kernels"], !extra.is_empty());
        assert_eq!(
            v["kernel"].as_str().unwrap().matches("se(").count(),
            if extra.is_empty() { 1 } else { 3 }
        );
        let o = trustgp(&["predict", "--model", &model, "--data", &data]);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = stdout(&o);
        assert!(text.starts_with("prob_blue,prob_green,prob_red,label\n"));
        let rows = predictions(&text, 3);
        let mut correct = 0;
        for ((p, label), want) in rows.iter().zip(&truth) {
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{p:?}");
            let best = (0..3).fold(0, |b, c| if p[c] > p[b] { c } else { b });
            assert_eq!(label, ["blue", "green", "red"][best]);
            correct += usize::from(label == want);
        }
        assert!(correct >= 57, "training accuracy {correct}/60");
        let again = trustgp(&["predict", "--model", &model, "--data", &data]);
        assert_eq!(stdout(&again), text);
    }
    let o = trustgp(&[
        "evaluate",
        "--data",
        &data,
        "--target",
        "kind",
        "--model",
        "gpc",
        "--test-fraction",
        "0.25",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["accuracy"].as_f64().unwrap() >= 0.8, "{v}");
    let (ll, brier) = (
        v["log_loss"].as_f64().unwrap(),
        v["brier"].as_f64().unwrap(),
    );
    assert!(ll > 0.0 && ll < 0.8 && brier > 0.0 && brier < 0.5, "{v}");
}

/// Sparse EP with every training row an inducing input is dense EP (FIC, DTC and VAR all
/// reduce to the exact prior when `U = X`), up to the 1e-6 jitter on `K_uu`; fewer inducing
/// rows give a working model whose summary says which.
#[test]
fn sparse_ep_with_all_rows_inducing_is_dense_ep() {
    let dir = scratch("gpc", "sparse");
    let data = write(&dir, "d.csv", &csv(words));
    let run = |extra: &[&str]| {
        let model = dir.join("m.json").display().to_string();
        let mut args = vec![
            "fit",
            "--data",
            &data,
            "--target",
            "kind",
            "--model",
            "gpc",
            "--inference",
            "ep",
            "--likelihood",
            "probit",
            "--no-optimize",
            "--out",
            &model,
        ];
        args.extend_from_slice(extra);
        let o = trustgp(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let summary: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let o = trustgp(&["predict", "--model", &model, "--data", &data]);
        assert!(o.status.success(), "{}", stderr(&o));
        (summary, predictions(&stdout(&o), 2))
    };
    let (_, dense) = run(&[]);
    for prior in ["fic", "dtc", "var"] {
        let (v, sparse) = run(&["--sparse", prior, "--inducing", "60"]);
        assert_eq!(v["sparse"], prior);
        assert_eq!(v["inducing"], 60);
        for ((p, a), (q, b)) in sparse.iter().zip(&dense) {
            assert!((p[1] - q[1]).abs() < 1e-6, "{prior}: {} vs {}", p[1], q[1]);
            assert_eq!(a, b);
        }
        let (v, few) = run(&["--sparse", prior, "--inducing", "15", "--seed", "3"]);
        assert_eq!(v["inducing"], 15);
        let agree = few.iter().zip(&dense).filter(|(a, b)| a.1 == b.1).count();
        assert!(agree >= 45, "{prior}: {agree}/60 labels as dense EP");
    }
}
