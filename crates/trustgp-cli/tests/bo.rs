//! `trustgp bo` end to end on Branin: one JSON line per evaluation, the best clean value never
//! decreasing, regret ≥ 0, seeded reproducibility, outliers and the SVG plot.

mod common;

use common::{trustgp, write};
use serde_json::Value;

fn scratch(name: &str) -> std::path::PathBuf {
    common::scratch("bo", name)
}

/// The summary and the JSON lines of a run on Branin with `extra` flags.
fn run(name: &str, extra: &[&str]) -> (Value, Vec<Value>) {
    run_seeded(name, "3", extra)
}

/// [`run`] with the seed `seed`.
fn run_seeded(name: &str, seed: &str, extra: &[&str]) -> (Value, Vec<Value>) {
    run_budget(name, "12", seed, extra)
}

/// [`run_seeded`] with `budget` evaluations.
fn run_budget(name: &str, budget: &str, seed: &str, extra: &[&str]) -> (Value, Vec<Value>) {
    let out = scratch(name).join("run.jsonl").display().to_string();
    let mut args = vec![
        "bo",
        "--problem",
        "branin",
        "--budget",
        budget,
        "--init",
        "6",
        "--seed",
        seed,
        "--out",
        &out,
    ];
    args.extend_from_slice(extra);
    let o = trustgp(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    let lines = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (summary, lines)
}

/// The error output of a failed run.
fn error(args: &[&str]) -> String {
    let o = trustgp(args);
    assert!(!o.status.success());
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn without_seconds(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .map(|l| {
            let mut l = l.clone();
            l.as_object_mut().unwrap().remove("seconds");
            l
        })
        .collect()
}

#[test]
fn every_evaluation_is_a_line_and_the_best_never_decreases() {
    let (summary, lines) = run("lines", &[]);
    assert_eq!(lines.len(), 12);
    assert_eq!(summary["evaluations"], 12);
    let mut best = f64::NEG_INFINITY;
    for (k, l) in lines.iter().enumerate() {
        assert_eq!(l["iteration"], k + 1);
        let clean = l["y_clean"].as_f64().unwrap();
        assert_eq!(l["y_observed"].as_f64().unwrap(), clean);
        assert_eq!(l["is_outlier"], false);
        best = best.max(clean);
        assert_eq!(l["best_clean"].as_f64().unwrap(), best);
        let regret = l["regret"].as_f64().unwrap();
        assert!(regret >= 0.0, "{l}");
        // Branin's maximum is −5/(4π).
        assert!((regret - (-5.0 / (4.0 * std::f64::consts::PI) - best)).abs() < 1e-12);
        let x = l["x"].as_array().unwrap();
        let x1 = x[0].as_f64().unwrap();
        let x2 = x[1].as_f64().unwrap();
        assert!(
            (-5.0..=10.0).contains(&x1) && (0.0..=15.0).contains(&x2),
            "{l}"
        );
    }
    assert_eq!(summary["best"].as_f64().unwrap(), best);
    assert_eq!(summary["settings"]["model"], "gp");
    // The same seed gives the same run; another seed another one.
    let (_, again) = run("again", &[]);
    assert_eq!(without_seconds(&again), without_seconds(&lines));
    let (_, other) = run_seeded("other", "4", &[]);
    assert_ne!(without_seconds(&other), without_seconds(&lines));
}

#[test]
fn outliers_corrupt_what_the_model_sees_only() {
    let (summary, lines) = run(
        "outliers",
        &["--outliers", "asymmetric:0.5", "--method", "turbo"],
    );
    let flagged: Vec<&Value> = lines.iter().filter(|l| l["is_outlier"] == true).collect();
    assert!(!flagged.is_empty());
    assert_eq!(summary["outliers"], flagged.len());
    for l in &lines {
        let (obs, clean) = (
            l["y_observed"].as_f64().unwrap(),
            l["y_clean"].as_f64().unwrap(),
        );
        if l["is_outlier"] == true {
            assert!(obs > clean, "{l}");
        } else {
            assert_eq!(obs, clean);
        }
    }
    // The best is that of the clean values.
    let best = lines
        .iter()
        .map(|l| l["y_clean"].as_f64().unwrap())
        .fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(summary["best"].as_f64().unwrap(), best);
}

#[test]
fn the_plot_is_svg_and_bad_flags_are_errors() {
    // A plot file already there is replaced.
    let plot = write(&scratch("plot"), "run.svg", "old");
    let (_, _) = run("plot", &["--plot", &plot]);
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("<polyline") && svg.contains("branin"));
    let e = error(&["bo", "--problem", "nope", "--budget", "5"]);
    assert!(e.contains("unknown problem"), "{e}");
    let e = error(&["bo", "--problem", "branin", "--budget", "5", "--init", "6"]);
    assert!(e.contains("--init 6 exceeds --budget 5"), "{e}");
    let e = error(&[
        "bo",
        "--problem",
        "branin",
        "--budget",
        "8",
        "--init",
        "4",
        "--batch",
        "2",
        "--acquisition",
        "ucb",
    ]);
    assert!(e.contains("one point at a time"), "{e}");
    let e = error(&[
        "bo",
        "--problem",
        "branin",
        "--budget",
        "5",
        "--outliers",
        "half:0.2",
    ]);
    assert!(e.contains("bad outlier spec"), "{e}");
}

#[test]
fn init_points_are_the_first_evaluations_and_bad_rows_are_named() {
    let dir = scratch("init_points");
    let rows = [[-5.0, 0.0], [10.0, 15.0], [2.5, 7.5], [0.0, 1.0]];
    let mut csv = String::from("x1,x2,y\n");
    for r in rows {
        csv.push_str(&format!("{},{},0\n", r[0], r[1]));
    }
    let file = write(&dir, "init.csv", &csv);
    let (summary, lines) = run("init_points_run", &["--init-points", &file]);
    assert_eq!(lines.len(), 12);
    assert_eq!(summary["settings"]["init"], 4);
    for (line, r) in lines.iter().zip(rows) {
        let x: Vec<f64> = serde_json::from_value(line["x"].clone()).unwrap();
        assert_eq!(x, r.to_vec());
        // The objective is evaluated at the rows: the file's y column is not used.
        assert_ne!(line["y_clean"].as_f64().unwrap(), 0.0);
    }
    let outside = write(&dir, "outside.csv", "x1,x2\n0,0\n11,3\n");
    let e = error(&[
        "bo",
        "--problem",
        "branin",
        "--budget",
        "5",
        "--init-points",
        &outside,
    ]);
    assert!(
        e.contains("row 2, column x1") && e.contains("outside the box"),
        "{e}"
    );
    let missing = write(&dir, "missing.csv", "a,b\n0,0\n");
    let e = error(&[
        "bo",
        "--problem",
        "branin",
        "--budget",
        "5",
        "--init-points",
        &missing,
    ]);
    assert!(e.contains("x1"), "{e}");
}

#[test]
fn dpp_bo_runs_with_rcagp_and_refuses_models_without_inducing_inputs() {
    let (summary, lines) = run("dpp", &["--method", "dpp", "--model", "rcagp"]);
    assert_eq!(lines.len(), 12);
    assert_eq!(summary["settings"]["method"], "dpp");
    assert_eq!(summary["settings"]["model"], "rcagp");
    assert!(summary["regret"].as_f64().unwrap() >= 0.0, "{summary}");
    let e = error(&[
        "bo",
        "--problem",
        "branin",
        "--budget",
        "8",
        "--init",
        "4",
        "--method",
        "dpp-turbo",
    ]);
    assert!(
        e.contains("method dpp-turbo") && e.contains("sgpr, svgp, rcsvgp, cagp, rcagp"),
        "{e}"
    );
}

/// `--robust-centre loo` changes an RCGP run (and is reported in the settings), is
/// reproducible, and is refused for a model without robust weights or an unknown centre.
#[test]
fn the_robust_centre_is_a_setting_of_the_robust_models() {
    let base = ["--model", "rcgp", "--outliers", "asymmetric:0.25"];
    let (prior, prior_lines) = run("centre-prior", &base);
    assert_eq!(prior["settings"]["robust_centre"], "prior");
    let with_loo = [&base[..], &["--robust-centre", "loo"]].concat();
    let (loo, loo_lines) = run("centre-loo", &with_loo);
    assert_eq!(loo["settings"]["robust_centre"], "loo");
    assert_ne!(without_seconds(&loo_lines), without_seconds(&prior_lines));
    let (_, again) = run("centre-loo-again", &with_loo);
    assert_eq!(without_seconds(&again), without_seconds(&loo_lines));
    let bad = |extra: &[&str]| {
        let args = [
            &["bo", "--problem", "branin", "--budget", "8", "--init", "4"][..],
            extra,
        ]
        .concat();
        error(&args)
    };
    let e = bad(&["--robust-centre", "loo"]);
    assert!(
        e.contains("--robust-centre applies to the robust models rcgp, rcagp (got --model gp)"),
        "{e}"
    );
    let e = bad(&["--model", "rcgp", "--robust-centre", "knn"]);
    assert!(e.contains("unknown robust centre 'knn'"), "{e}");
}

/// EULBO proposes batches (`--batch 2`, the Monte Carlo batch utility) with rcagp and svgp:
/// each batch is two distinct points in Branin's box, and a seeded run repeats itself.
#[test]
fn eulbo_proposes_batches() {
    for model in ["rcagp", "svgp"] {
        let extra = ["--model", model, "--method", "eulbo", "--batch", "2"];
        let (summary, lines) = run(&format!("eulbo-batch-{model}"), &extra);
        assert_eq!(summary["evaluations"], 12, "{model}");
        assert_eq!(summary["settings"]["model"], model);
        assert_eq!(summary["settings"]["batch"], 2);
        assert_eq!(lines.len(), 12, "{model}");
        let x = |l: &Value| -> Vec<f64> {
            l["x"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect()
        };
        for l in &lines {
            let x = x(l);
            assert!(
                (-5.0..=10.0).contains(&x[0]) && (0.0..=15.0).contains(&x[1]),
                "{model}: {x:?}"
            );
        }
        // After the 6-point design: batches (7, 8), (9, 10), (11, 12).
        for pair in lines[6..].chunks(2) {
            assert_ne!(x(&pair[0]), x(&pair[1]), "{model}");
        }
        let (_, again) = run(&format!("eulbo-batch-{model}-again"), &extra);
        assert_eq!(without_seconds(&again), without_seconds(&lines), "{model}");
    }
}

/// `--expert-mean simulated`: the first correction comes 20 evaluations after the design, so
/// until then the run is the one without an expert, line for line; then every outlier seen so
/// far is corrected and the run moves on differently. Refused without outliers or a robust
/// model.
#[test]
fn the_simulated_expert_corrects_the_outliers_every_twenty_evaluations() {
    let base = ["--model", "rcgp", "--outliers", "asymmetric:0.25"];
    let (plain, plain_lines) = run_budget("expert-off", "28", "3", &base);
    let with = [&base[..], &["--expert-mean", "simulated"]].concat();
    let (expert, lines) = run_budget("expert-simulated", "28", "3", &with);
    assert_eq!(expert["settings"]["expert_mean"], "simulated");
    assert_eq!(plain["corrections"], 0);
    let first = 6 + 20;
    let outliers = lines[..first]
        .iter()
        .filter(|l| l["is_outlier"] == true)
        .count();
    assert!(outliers > 0);
    assert_eq!(expert["corrections"], outliers);
    assert_eq!(
        without_seconds(&lines[..first]),
        without_seconds(&plain_lines[..first])
    );
    assert_ne!(without_seconds(&lines), without_seconds(&plain_lines));
    let (_, again) = run_budget("expert-simulated-again", "28", "3", &with);
    assert_eq!(without_seconds(&again), without_seconds(&lines));
    let bad = |extra: &[&str]| {
        let args = [
            &["bo", "--problem", "branin", "--budget", "8", "--init", "4"][..],
            extra,
        ]
        .concat();
        error(&args)
    };
    let e = bad(&["--model", "rcgp", "--expert-mean", "simulated"]);
    assert!(e.contains("give --outliers"), "{e}");
    let e = bad(&["--expert-mean", "constant:1"]);
    assert!(
        e.contains("robust models rcgp, rcsvgp, rcagp (got 'gp')"),
        "{e}"
    );
}
