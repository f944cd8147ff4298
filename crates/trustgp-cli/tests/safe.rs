//! Safe learning end to end: `suggest --constraint` (with a pool, a source task, the box) and
//! `safe-al` (a benchmark run, its export), and one clear error line for bad requests.

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::{trustgp, write};
use serde_json::Value;

fn scratch(name: &str) -> PathBuf {
    common::scratch("safe", name)
}

fn json(o: &Output) -> Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn error(args: &[&str]) -> String {
    let o = trustgp(args);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(e.starts_with("error: ") && !e.contains("panicked"), "{e}");
    e
}

/// `y = 2 sin(2πx) + 1.2` (safe where y ≥ 0: [0, 0.61] and [0.89, 1]) and a temperature
/// `t = x`, at `xs`, as CSV with columns `x,y,temp`.
fn rows(xs: impl Iterator<Item = f64>) -> String {
    let mut s = String::from("x,y,temp\n");
    for x in xs {
        let y = 2.0 * (2.0 * std::f64::consts::PI * x).sin() + 1.2;
        s.push_str(&format!("{x},{y},{x}\n"));
    }
    s
}

#[test]
fn suggest_with_a_constraint_proposes_a_certified_pool_row_not_yet_evaluated() {
    let dir = scratch("pool");
    let data = write(
        &dir,
        "eval.csv",
        &rows((0..6).map(|i| 0.05 + 0.02 * f64::from(i))),
    );
    let pool = write(
        &dir,
        "pool.csv",
        &rows((0..101).map(|i| f64::from(i) / 100.0)),
    );
    let v = json(&trustgp(&[
        "suggest",
        "--data",
        &data,
        "--target",
        "y",
        "--bounds",
        "x=0:1",
        "--constraint",
        "y>=0",
        "--constraint",
        "temp<=0.5",
        "--acquisition",
        "entropy",
        "--pool",
        &pool,
    ]));
    let x = v["points"][0]["x"].as_f64().unwrap();
    assert!(x <= 0.5 + 1e-12, "temp = x must stay ≤ 0.5, got {x}");
    assert!((0..6).all(|i| (x - (0.05 + 0.02 * f64::from(i))).abs() > 1e-9));
    let p = v["safe_set"]["probability"][0].as_array().unwrap();
    assert_eq!(p.len(), 2);
    assert!(p
        .iter()
        .all(|p| p.as_f64().unwrap() >= 1.0 - 0.02275013194817922 - 1e-12));
    assert_eq!(v["model"]["outputs"], serde_json::json!(["y", "temp"]));
    assert_eq!(v["model"]["transfer"], "none");
    assert_eq!(v["safe_set"]["from"], "pool");
    assert!(v["safe_set"]["size"].as_u64().unwrap() >= 1);
}

#[test]
fn a_source_task_reaches_the_safe_region_the_target_data_do_not_touch() {
    let dir = scratch("source");
    let data = write(
        &dir,
        "eval.csv",
        &rows((0..6).map(|i| 0.05 + 0.02 * f64::from(i))),
    );
    let source = write(
        &dir,
        "source.csv",
        &rows((0..40).map(|i| f64::from(i) / 39.0)),
    );
    let far = write(
        &dir,
        "far.csv",
        &rows((0..10).map(|i| 0.91 + 0.009 * f64::from(i))),
    );
    let base = [
        "suggest",
        "--data",
        &data,
        "--target",
        "y",
        "--bounds",
        "x=0:1",
        "--constraint",
        "y>=0",
        "--acquisition",
        "entropy",
        "--pool",
        &far,
    ];
    let e = error(&base);
    assert!(e.contains("safe"), "{e}");
    let mut with = base.to_vec();
    with.extend(["--source", &source]);
    let v = json(&trustgp(&with));
    assert_eq!(v["model"]["transfer"], "efficient-hgp");
    assert!(v["points"][0]["x"].as_f64().unwrap() > 0.9);
}

#[test]
fn suggest_without_a_pool_searches_the_box_and_writes_the_point() {
    let dir = scratch("box");
    let data = write(
        &dir,
        "eval.csv",
        &rows((0..6).map(|i| 0.05 + 0.02 * f64::from(i))),
    );
    let out = dir.join("next.csv");
    let v = json(&trustgp(&[
        "suggest",
        "--data",
        &data,
        "--target",
        "y",
        "--bounds",
        "x=0:1",
        "--constraint",
        "y>=0",
        "--acquisition",
        "ucb",
        "--out",
        out.to_str().unwrap(),
    ]));
    let x = v["points"][0]["x"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&x));
    assert!(v["safe_set"]["pool_row"].is_null());
    let csv = std::fs::read_to_string(&out).unwrap();
    assert!(csv.starts_with("x\n"));
}

#[test]
fn bad_safe_requests_fail_with_one_clear_line() {
    let dir = scratch("bad");
    let data = write(
        &dir,
        "eval.csv",
        &rows((0..6).map(|i| 0.05 + 0.02 * f64::from(i))),
    );
    let pool = write(
        &dir,
        "pool.csv",
        &rows((0..11).map(|i| f64::from(i) / 10.0)),
    );
    let s = |extra: &[&str]| {
        let mut a = vec![
            "suggest", "--data", &data, "--target", "y", "--bounds", "x=0:1",
        ];
        a.extend_from_slice(extra);
        error(&a)
    };
    assert!(s(&["--pool", &pool]).contains("--constraint"));
    assert!(s(&["--constraint", "y=>0"]).contains("COLUMN<=VALUE"));
    assert!(s(&["--constraint", "nox<=1"]).contains("nox"));
    assert!(s(&["--constraint", "y>=0", "--transfer", "magic"]).contains("--transfer"));
    assert!(s(&["--constraint", "y>=0", "--transfer", "hgp"]).contains("source"));
    assert!(s(&["--constraint", "y>=0", "--batch", "2"]).contains("--batch"));
    assert!(s(&["--constraint", "y>=0", "--acquisition", "ts"]).contains("entropy"));
    let holes = write(&dir, "holes.csv", "x,y,temp\n0.1,1.0,0.1\n0.2,,0.2\n");
    let e = error(&[
        "suggest",
        "--data",
        &holes,
        "--target",
        "y",
        "--bounds",
        "x=0:1",
        "--constraint",
        "temp<=0.5",
    ]);
    assert!(e.contains("row 2") && e.contains("'y'"), "{e}");
}

#[test]
fn safe_al_runs_a_benchmark_and_exports_it_for_suggest() {
    let dir = scratch("al");
    let out = dir.join("run.json");
    let plot = dir.join("map.svg");
    let v = json(&trustgp(&[
        "safe-al",
        "--problem",
        "toy1d",
        "--method",
        "efficient-hgp",
        "--queries",
        "8",
        "--out",
        out.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ]));
    assert_eq!(v["queries"], 8);
    assert_eq!(v["method"], "efficient-hgp");
    assert!(v["safe_query_ratio"].as_f64().unwrap() <= 1.0);
    let run: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(run["queries"].as_array().unwrap().len(), 8);
    assert!(std::fs::read_to_string(&plot).unwrap().starts_with("<svg"));

    let export = dir.join("export");
    let v = json(&trustgp(&[
        "safe-al",
        "--problem",
        "toy1d",
        "--export",
        export.to_str().unwrap(),
    ]));
    assert_eq!(v["suggest"]["constraints"], serde_json::json!(["y>=0"]));
    for f in ["initial.csv", "pool.csv", "test.csv", "source1.csv"] {
        assert!(export.join(f).exists(), "{f}");
    }
    let pool = std::fs::read_to_string(export.join("pool.csv")).unwrap();
    assert!(pool.starts_with("x1,y,truly_safe\n"));

    let e = error(&["safe-al", "--problem", "nowhere"]);
    assert!(e.contains("nowhere"), "{e}");
    let e = error(&["safe-al", "--problem", "toy1d", "--method", "magic"]);
    assert!(e.contains("--method"), "{e}");
    let e = error(&[
        "safe-al",
        "--problem",
        "pengine",
        "--data-dir",
        "/nonexistent",
    ]);
    assert!(e.contains("/nonexistent") || e.contains("engine"), "{e}");
}
