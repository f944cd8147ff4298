//! `trustgp kernels` and `fit`/`predict`/`evaluate --model vbks` end to end: the spaces, the
//! kernel posterior in the summary, the model file's mixture predicting exactly as the fit,
//! seeded reproducibility, and clear errors for bad options.

mod common;

use common::{trustgp, write};
use serde_json::Value;

fn scratch(name: &str) -> std::path::PathBuf {
    common::scratch("vbks", name)
}

/// A trend plus a periodic signal (period 2) with a little noise, 240 rows.
fn series() -> String {
    let mut s = String::from("t,y\n");
    let mut state: u64 = 7;
    for i in 0..240 {
        let t = i as f64 * 0.05;
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let u = (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
        let y = 0.5 * t + (std::f64::consts::PI * t).sin() + 0.05 * u;
        s.push_str(&format!("{t},{y}\n"));
    }
    s
}

fn ok(args: &[&str]) -> Vec<u8> {
    let o = trustgp(args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

fn error(args: &[&str]) -> String {
    let o = trustgp(args);
    assert!(!o.status.success(), "expected a failure: {args:?}");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn kernels_prints_the_spaces() {
    let lines = String::from_utf8(ok(&["kernels", "--space", "k144"])).unwrap();
    let k: Vec<&str> = lines.lines().collect();
    assert_eq!(k.len(), 144);
    assert_eq!((k[0], k[143]), ("se", "(lin + lin) * lin"));
    let j: Value = serde_json::from_slice(&ok(&["kernels", "--space", "k12", "--json"])).unwrap();
    assert_eq!(j["count"], 12);
    assert_eq!(j["kernels"][11], "(rq + per) * lin");
    let user = String::from_utf8(ok(&["kernels", "--space", "lin * (per + rq); se"])).unwrap();
    assert_eq!(user, "(rq + per) * lin\nse\n");
    assert!(error(&["kernels", "--space", "se; se"]).contains("same structure"));
    assert!(error(&["kernels", "--space", "k7"]).contains("unknown kernel `k7`"));
}

#[test]
fn fit_predict_evaluate_average_over_the_kernel_posterior() {
    let dir = scratch("fit");
    let data = write(&dir, "ts.csv", &series());
    let model = dir.join("m.json").display().to_string();
    let args = [
        "fit",
        "--data",
        &data,
        "--target",
        "y",
        "--model",
        "vbks",
        "--kernels",
        "se; per + lin; per * lin; lin",
        "--inducing",
        "20",
        "--epochs",
        "40",
        "--top",
        "3",
        "--seed",
        "5",
        "--out",
        &model,
    ];
    let summary: Value = serde_json::from_slice(&ok(&args)).unwrap();
    assert_eq!(summary["model"], "vbks");
    let out = &summary["per_output"][0];
    let posterior = out["kernel_posterior"].as_array().unwrap();
    assert_eq!(posterior.len(), 4);
    let total: f64 = posterior
        .iter()
        .map(|p| p["probability"].as_f64().unwrap())
        .sum();
    assert!((total - 1.0).abs() < 1e-9);
    for pair in posterior.windows(2) {
        assert!(pair[0]["probability"].as_f64() >= pair[1]["probability"].as_f64());
    }
    // A trend plus a periodic part: the structure a person would name leads.
    assert_eq!(posterior[0]["kernel"], "per + lin", "{posterior:?}");
    let average = out["model_average"].as_array().unwrap();
    assert_eq!(average.len(), 3);
    let weights: f64 = average.iter().map(|a| a["weight"].as_f64().unwrap()).sum();
    assert!((weights - 1.0).abs() < 1e-12);
    // The same seed gives the same file.
    let again = dir.join("again.json").display().to_string();
    let mut args2 = args.to_vec();
    *args2.last_mut().unwrap() = &again;
    ok(&args2);
    assert_eq!(
        std::fs::read_to_string(&model).unwrap(),
        std::fs::read_to_string(&again).unwrap()
    );
    // predict reads the mixture back: finite, and the std of y exceeds the latent one.
    let p = String::from_utf8(ok(&["predict", "--model", &model, "--data", &data])).unwrap();
    let l = String::from_utf8(ok(&[
        "predict", "--model", &model, "--data", &data, "--latent",
    ]))
    .unwrap();
    let rows = |s: &str| -> Vec<(f64, f64)> {
        s.lines()
            .skip(1)
            .map(|r| {
                let v: Vec<f64> = r.split(',').map(|x| x.parse().unwrap()).collect();
                (v[0], v[1])
            })
            .collect()
    };
    let (p, l) = (rows(&p), rows(&l));
    assert_eq!(p.len(), 240);
    for (a, b) in p.iter().zip(&l) {
        assert_eq!(a.0, b.0);
        assert!(a.1 > b.1 && b.1 > 0.0);
    }
    let e: Value = serde_json::from_slice(&ok(&[
        "evaluate",
        "--data",
        &data,
        "--target",
        "y",
        "--model",
        "vbks",
        "--kernels",
        "se; per + lin",
        "--inducing",
        "15",
        "--epochs",
        "20",
        "--seed",
        "1",
    ]))
    .unwrap();
    assert_eq!(e["model"], "vbks");
    assert!(e["rmse"].as_f64().unwrap() < 0.5, "{e}");
}

#[test]
fn full_theta_mode_fits_seeded_and_predicts() {
    let dir = scratch("full");
    let data = write(&dir, "ts.csv", &series());
    let model = dir.join("m.json").display().to_string();
    let again = dir.join("again.json").display().to_string();
    let fit = |out: &str| -> Value {
        serde_json::from_slice(&ok(&[
            "fit",
            "--data",
            &data,
            "--target",
            "y",
            "--model",
            "vbks",
            "--mode",
            "full",
            "--kernels",
            "se; per + lin",
            "--inducing",
            "12",
            "--epochs",
            "10",
            "--top",
            "2",
            "--seed",
            "4",
            "--out",
            out,
        ]))
        .unwrap()
    };
    let summary = fit(&model);
    fit(&again);
    assert_eq!(
        std::fs::read_to_string(&model).unwrap(),
        std::fs::read_to_string(&again).unwrap()
    );
    let out = &summary["per_output"][0];
    let posterior = out["kernel_posterior"].as_array().unwrap();
    assert_eq!(posterior.len(), 2);
    let total: f64 = posterior
        .iter()
        .map(|p| p["probability"].as_f64().unwrap())
        .sum();
    assert!((total - 1.0).abs() < 1e-9);
    // Each kept kernel is averaged over 16 samples of its q(θ).
    let average = out["model_average"].as_array().unwrap();
    assert_eq!(average.len(), 2 * 16);
    let p = String::from_utf8(ok(&["predict", "--model", &model, "--data", &data])).unwrap();
    assert_eq!(p.lines().count(), 241);
    assert!(p
        .lines()
        .skip(1)
        .all(|r| r.split(',').all(|v| v.parse::<f64>().unwrap().is_finite())));
}

#[test]
fn bad_vbks_options_are_clear_errors() {
    let dir = scratch("errors");
    let data = write(&dir, "ts.csv", &series());
    let out = dir.join("x.json").display().to_string();
    let run = |extra: &[&str]| {
        let mut args = vec!["fit", "--data", &data, "--target", "y", "--out", &out];
        args.extend_from_slice(extra);
        error(&args)
    };
    assert!(run(&["--model", "vbks", "--mode", "fast"]).contains("expected point or full"));
    assert!(run(&["--model", "vbks", "--kernels", "se; foo"]).contains("entry 2"));
    assert!(run(&["--model", "vbks", "--kernel", "se"]).contains("--kernels"));
    assert!(run(&["--model", "vbks", "--top", "0"]).contains("--top 0"));
    assert!(run(&["--model", "vbks", "--epochs", "0"]).contains("--epochs 0"));
    assert!(run(&["--model", "vbks", "--mean", "linear"]).contains("--mean linear"));
    assert!(run(&["--model", "gp", "--kernels", "k12"]).contains("applies to vbks"));
    assert!(run(&["--model", "vbks", "--batch-size", "0"]).contains("--batch-size 0"));
}

/// 300 rows of seeded white noise (a uniform LCG's values) on t = 0, 0.1, …
fn noise_series() -> String {
    let mut s = String::from("t,y\n");
    let mut state: u64 = 11;
    for i in 0..300 {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let u = (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
        s.push_str(&format!("{},{u}\n", i as f64 * 0.1));
    }
    s
}

#[test]
fn period_init_is_an_option_and_reported_in_input_units() {
    let dir = scratch("period-init");
    let data = write(&dir, "ts.csv", &series());
    let out = dir.join("m.json").display().to_string();
    let fit = |data: &str, extra: &[&str]| -> Value {
        let mut args = vec![
            "fit",
            "--data",
            data,
            "--target",
            "y",
            "--model",
            "vbks",
            "--kernels",
            "se; per + lin",
            "--inducing",
            "10",
            "--epochs",
            "2",
            "--out",
            &out,
        ];
        args.extend_from_slice(extra);
        let s: Value = serde_json::from_slice(&ok(&args)).unwrap();
        s["per_output"][0]["period_init"].clone()
    };
    // The default reads the period 2 of `series` off the data, in t's units.
    let data_init = fit(&data, &[]);
    assert_eq!(fit(&data, &["--period-init", "data"]), data_init);
    assert_eq!(data_init["method"], "data");
    assert_eq!(data_init["input"], "t");
    assert_eq!(data_init["alpha"], 0.01);
    let periods = data_init["periods"].as_array().unwrap();
    assert_eq!(periods.len(), 1, "{data_init}");
    let period = periods[0]["period"].as_f64().unwrap();
    assert!((period / 2.0 - 1.0).abs() < 0.02, "{data_init}");
    assert!(
        periods[0]["p_value"].as_f64().unwrap() < 1e-6,
        "{data_init}"
    );
    // The spec's period 1 in t's units is t's (population) standard deviation.
    let sd = 0.05 * ((240.0f64 * 240.0 - 1.0) / 12.0).sqrt();
    let unit_period = data_init["unit_period"][0]["period"].as_f64().unwrap();
    assert!((unit_period / sd - 1.0).abs() < 1e-12, "{data_init}");
    assert_eq!(data_init["unit_period"][0]["input"], "t");
    // The spec's start on request.
    let unit = fit(&data, &["--period-init", "unit"]);
    assert_eq!(unit["method"], "unit");
    assert!(unit["periods"].as_array().unwrap().is_empty());
    assert!(unit.get("alpha").is_none());
    assert_eq!(unit["unit_period"], data_init["unit_period"]);
    // The model file keeps what the summary reports, and predicts.
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let kept = &file["outputs"][0]["period_init"];
    assert_eq!(kept["init"], "unit", "{kept}");
    ok(&["predict", "--model", &out, "--data", &data]);
    // White noise: no significant peak, every PER factor starts at 1.
    let noise = write(&dir, "noise.csv", &noise_series());
    let none = fit(&noise, &[]);
    assert!(none["periods"].as_array().unwrap().is_empty(), "{none}");
    assert!(
        none["rejected"]["p_value"].as_f64().unwrap() >= 0.01,
        "{none}"
    );
    let note = none["note"].as_str().unwrap();
    assert!(note.contains("no significant periodogram peak"), "{note}");
    // Bad values and other models are clear errors.
    let bad = dir.join("bad.json").display().to_string();
    let e = error(&[
        "fit",
        "--data",
        &data,
        "--target",
        "y",
        "--model",
        "vbks",
        "--period-init",
        "fft",
        "--out",
        &bad,
    ]);
    assert!(
        e.contains("--period-init fft") && e.contains("expected data or unit"),
        "{e}"
    );
    let e = error(&[
        "fit",
        "--data",
        &data,
        "--target",
        "y",
        "--model",
        "gp",
        "--period-init",
        "unit",
        "--out",
        &bad,
    ]);
    assert!(
        e.contains("--period-init unit") && e.contains("applies to vbks"),
        "{e}"
    );
}
