//! `trustgp suggest` end to end: the JSON and CSV of a suggested point, the initial design
//! without rows, the direction, and one clear error line for bad bounds.

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::{trustgp, write};
use serde_json::Value;

fn scratch(name: &str) -> PathBuf {
    common::scratch("suggest", name)
}

fn json(o: &Output) -> Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The one error line of a failed run.
fn error(args: &[&str]) -> String {
    let o = trustgp(args);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(e.starts_with("error: ") && !e.contains("panicked"), "{e}");
    e
}

/// Eight evaluations of `f` on [0, 1] as CSV with columns `x,y`.
fn evaluated(f: impl Fn(f64) -> f64) -> String {
    let mut s = String::from("x,y\n");
    for i in 0..8 {
        let x = (i as f64 + 0.5) / 8.0;
        s.push_str(&format!("{x},{}\n", f(x)));
    }
    s
}

fn point_x(v: &Value) -> f64 {
    v["points"][0]["x"].as_f64().unwrap()
}

#[test]
fn bad_bounds_are_one_clear_error() {
    assert!(error(&["suggest", "--bounds", "x1=0"]).contains("no ':'"));
    assert!(error(&["suggest", "--bounds", "x1=1:0"]).contains("lo < hi"));
    assert!(error(&["suggest", "--bounds", "x1=0:inf"]).contains("not a finite number"));
    assert!(error(&["suggest", "--bounds", "x=0:1,x=0:2"]).contains("more than once"));
    let e = error(&["suggest", "--bounds", "x=0:1", "--direction", "up"]);
    assert!(e.contains("maximize or minimize"), "{e}");
    let e = error(&["suggest", "--bounds", "x=0:1", "--acquisition", "qei"]);
    assert!(e.contains("unknown acquisition 'qei'"), "{e}");
}

#[test]
fn without_data_the_point_is_seeded_and_inside_the_box() {
    let dir = scratch("initial");
    let header_only = write(&dir, "empty.csv", "x1,x2,y\n");
    let args = |seed: &'static str| vec!["suggest", "--bounds", "x1=0:1,x2=-5:10", "--seed", seed];
    let a = json(&trustgp(&args("7")));
    let p = &a["points"][0];
    let (x1, x2) = (p["x1"].as_f64().unwrap(), p["x2"].as_f64().unwrap());
    assert!(
        (0.0..=1.0).contains(&x1) && (-5.0..=10.0).contains(&x2),
        "{p}"
    );
    assert_eq!(a["points"], json(&trustgp(&args("7")))["points"]);
    assert_ne!(a["points"], json(&trustgp(&args("8")))["points"]);
    assert!(a["model"].is_null() && a["seconds"].as_f64().unwrap() >= 0.0);
    let mut with_empty = args("7");
    with_empty.extend(["--data", &header_only, "--target", "y"]);
    assert_eq!(a["points"], json(&trustgp(&with_empty))["points"]);
}

#[test]
fn the_point_is_near_the_maximiser_and_written_as_csv() {
    let dir = scratch("max");
    let data = write(&dir, "d.csv", &evaluated(|x| -(x - 0.3) * (x - 0.3)));
    let out = dir.join("next.csv").display().to_string();
    let v = json(&trustgp(&[
        "suggest",
        "--bounds",
        "x=0:1",
        "--data",
        &data,
        "--target",
        "y",
        "--acquisition",
        "ucb",
        "--out",
        &out,
    ]));
    let x = point_x(&v);
    assert!((x - 0.3).abs() < 0.1, "{v}");
    assert_eq!(v["acquisition"]["name"], "ucb");
    assert!(v["acquisition"]["value"].as_f64().unwrap().is_finite());
    assert_eq!(v["model"]["model"], "gp");
    assert_eq!(v["model"]["n"], 8);
    let csv = std::fs::read_to_string(&out).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("x"));
    assert_eq!(lines.next().unwrap().parse::<f64>().unwrap(), x);
    assert_eq!(lines.next(), None);
}

#[test]
fn minimize_flips_the_direction() {
    let dir = scratch("min");
    // A bowl: maximising would go to an edge, minimising to the bottom at 0.7.
    let data = write(&dir, "d.csv", &evaluated(|x| (x - 0.7) * (x - 0.7)));
    let run = |direction| {
        point_x(&json(&trustgp(&[
            "suggest",
            "--bounds",
            "x=0:1",
            "--data",
            &data,
            "--target",
            "y",
            "--direction",
            direction,
            "--acquisition",
            "ucb",
        ])))
    };
    let low = run("minimize");
    assert!((low - 0.7).abs() < 0.1, "{low}");
    let high = run("maximize");
    assert!(high < 0.2, "{high}");
}

/// `suggest` on the box x=0:1 with extra flags.
fn suggest_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["suggest", "--bounds", "x=0:1"];
    v.extend_from_slice(extra);
    v
}

#[test]
fn batches_unwired_acquisitions_and_bad_flags_are_clear_errors() {
    let dir = scratch("flags");
    let data = write(&dir, "d.csv", &evaluated(|x| x * (1.0 - x)));
    let d = ["--data", data.as_str(), "--target", "y"];
    let e = error(&suggest_args(
        &[&d[..], &["--batch", "2", "--acquisition", "pi"]].concat(),
    ));
    assert!(e.contains("'pi' proposes one point at a time"), "{e}");
    let e = error(&suggest_args(&["--model", "mogp"]));
    assert!(e.contains("multi-output"), "{e}");
    let e = error(&suggest_args(&["--method", "turbo"]));
    assert!(e.contains("give --state FILE"), "{e}");
    let e = error(&suggest_args(&["--method", "nope"]));
    assert!(e.contains("unknown method 'nope'"), "{e}");
    let e = error(&suggest_args(&["--method", "eulbo"]));
    assert!(e.contains("needs model svgp, rcsvgp, cagp, rcagp"), "{e}");
    // A row outside the box names its row and input.
    let outside = write(&dir, "o.csv", "x,y\n0.5,1\n1.5,2\n");
    let e = error(&suggest_args(&["--data", &outside, "--target", "y"]));
    assert!(
        e.contains("point 2, input 'x': 1.5 is not inside [0, 1]"),
        "{e}"
    );
    // In the initial design a batch is fine, and --out holds one row per point.
    let out = dir.join("next.csv").display().to_string();
    let v = json(&trustgp(&suggest_args(&["--batch", "3", "--out", &out])));
    assert_eq!(v["points"].as_array().unwrap().len(), 3);
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 4);
    // Another surrogate fits and says so.
    let v = json(&trustgp(&suggest_args(
        &[&d[..], &["--model", "rcgp"]].concat(),
    )));
    assert_eq!(v["model"]["model"], "rcgp");
}

#[test]
fn a_state_file_is_created_reused_and_checked() {
    let dir = scratch("state");
    let state = dir.join("run.json").display().to_string();
    let f = |x: f64| -(x - 0.3) * (x - 0.3);
    let base = [
        "--state", &state, "--method", "turbo", "--init", "3", "--seed", "5",
    ];
    // Three calls without data walk the initial design: distinct points, state kept.
    let mut rows = String::from("x,y\n");
    let mut seen = Vec::new();
    for _ in 0..3 {
        let v = json(&trustgp(&suggest_args(&base)));
        assert_eq!(v["acquisition"]["name"], "sobol");
        assert_eq!(v["state"], state.as_str());
        let x = point_x(&v);
        assert!(!seen.contains(&x), "{x} repeats");
        seen.push(x);
        rows.push_str(&format!("{x},{}\n", f(x)));
    }
    let data = write(&dir, "d.csv", &rows);
    let with_data = [&base[..], &["--data", &data, "--target", "y"]].concat();
    // Then the trust region is searched, and its side shows in the output.
    let v = json(&trustgp(&suggest_args(&with_data)));
    assert_eq!(v["acquisition"]["name"], "logei");
    assert_eq!(v["trust_region"]["length"], 0.8);
    let (lo, hi) = (
        v["trust_region"]["lower"][0].as_f64().unwrap(),
        v["trust_region"]["upper"][0].as_f64().unwrap(),
    );
    let x = point_x(&v);
    assert!(lo <= x && x <= hi && hi - lo <= 0.8 + 1e-12, "{v}");
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(stored["x"].as_array().unwrap().len(), 3);
    // Other settings than the state's are refused, naming them.
    let e = error(&suggest_args(
        &[&with_data[..], &["--model", "rcgp"]].concat(),
    ));
    assert!(
        e.contains("other --model") && e.contains("start a new state"),
        "{e}"
    );
    // A changed row the state has seen is refused.
    let mut edited: Vec<String> = rows.lines().map(String::from).collect();
    edited[1] = format!("{},{}", seen[0], f(seen[0]) + 1.0);
    let changed = write(&dir, "c.csv", &(edited.join("\n") + "\n"));
    let e = error(&suggest_args(
        &[&base[..], &["--data", &changed, "--target", "y"]].concat(),
    ));
    assert!(e.contains("differs from the state's observation"), "{e}");
    let fewer = write(&dir, "f.csv", "x,y\n0.5,1\n");
    let e = error(&suggest_args(
        &[&base[..], &["--data", &fewer, "--target", "y"]].concat(),
    ));
    assert!(
        e.contains("has 1 rows but the state has already seen 3"),
        "{e}"
    );
    let e = error(&suggest_args(&base));
    assert!(
        e.contains("--data (not given) has 0 rows but the state has already seen 3"),
        "{e}"
    );
    // A corrupted state file is one clear error, and the file is left alone.
    let broken = write(
        &dir,
        "broken.json",
        "{\"format\": \"trustgp-bayes-opt\", \"version\"",
    );
    let e = error(&suggest_args(&["--state", &broken]));
    assert!(
        e.contains("broken.json") && e.contains("not valid JSON"),
        "{e}"
    );
    assert!(std::fs::read_to_string(&broken)
        .unwrap()
        .ends_with("\"version\""));
}

#[test]
fn batches_of_logei_qlogei_ei_and_ts_are_points_of_the_box() {
    let dir = scratch("batches");
    let data = write(&dir, "d.csv", &evaluated(|x| (6.0 * x).sin()));
    for a in ["logei", "qlogei", "ei", "ts"] {
        let out = dir.join(format!("next_{a}.csv"));
        let out = out.to_str().unwrap();
        let v = json(&trustgp(&suggest_args(&[
            "--data",
            data.as_str(),
            "--target",
            "y",
            "--batch",
            "3",
            "--acquisition",
            a,
            "--out",
            out,
        ])));
        let xs: Vec<f64> = (0..3)
            .map(|i| v["points"][i]["x"].as_f64().unwrap())
            .collect();
        assert!(v["points"].as_array().unwrap().len() == 3, "{a}: {v}");
        // Eight points of sin 6x leave doubt only near its peak at π/12, so the batch
        // gathers there, as distinct points.
        for (i, x) in xs.iter().enumerate() {
            assert!(
                (x - std::f64::consts::PI / 12.0).abs() < 0.02,
                "{a}: {xs:?}"
            );
            assert!(xs[..i].iter().all(|y| (x - y).abs() > 1e-3), "{a}: {xs:?}");
        }
        assert_eq!(v["acquisition"]["name"], a, "{v}");
        assert_eq!(v["acquisition"]["value"].is_null(), a == "ts", "{v}");
        let csv = std::fs::read_to_string(out).unwrap();
        assert_eq!(csv.lines().count(), 4, "{a}: header and three rows\n{csv}");
    }
}

/// `--expert-mean corrections:COLUMN`: the expert's corrected values on the rows they flag
/// (empty elsewhere) change an RCGP suggestion; an empty column is no expert, bit for bit; a
/// constant mean is accepted; the column needs --data and a robust model.
#[test]
fn expert_corrections_come_from_a_column_of_the_data() {
    let dir = scratch("expert");
    let f = |x: f64| (6.0 * x).sin();
    let table = |fix: &dyn Fn(usize) -> String| {
        let mut s = String::from("x,y,fix\n");
        for i in 0..12 {
            let x = (i as f64 + 0.5) / 12.0;
            let y = f(x) + if i == 4 || i == 9 { 5.0 } else { 0.0 };
            s.push_str(&format!("{x},{y},{}\n", fix(i)));
        }
        s
    };
    let flagged = write(
        &dir,
        "flagged.csv",
        &table(&|i| match i {
            4 | 9 => format!("{}", f((i as f64 + 0.5) / 12.0)),
            _ => String::new(),
        }),
    );
    let unflagged = write(&dir, "unflagged.csv", &table(&|_| String::new()));
    let args = |data: &str, expert: &str| {
        trustgp(&[
            "suggest",
            "--bounds",
            "x=0:1",
            "--data",
            data,
            "--target",
            "y",
            "--model",
            "rcgp",
            "--expert-mean",
            expert,
        ])
    };
    let off = json(&args(&unflagged, "off"));
    assert_eq!(
        json(&args(&unflagged, "corrections:fix"))["points"],
        off["points"]
    );
    let corrected = json(&args(&flagged, "corrections:fix"));
    assert_ne!(corrected["points"], off["points"]);
    assert!((0.0..=1.0).contains(&point_x(&corrected)));
    assert!(point_x(&json(&args(&flagged, "constant:0.5"))).is_finite());
    let e = error(&[
        "suggest",
        "--bounds",
        "x=0:1",
        "--model",
        "rcgp",
        "--expert-mean",
        "corrections:fix",
    ]);
    assert!(e.contains("from a column of --data"), "{e}");
    let e = error(&[
        "suggest",
        "--bounds",
        "x=0:1",
        "--data",
        &flagged,
        "--target",
        "y",
        "--expert-mean",
        "corrections:fix",
    ]);
    assert!(
        e.contains("robust models rcgp, rcsvgp, rcagp (got 'gp')"),
        "{e}"
    );
}
