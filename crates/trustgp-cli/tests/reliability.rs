//! What a hostile-input probe found at the command line, each now a clear error or a correct,
//! usable result: unbounded restarts, fits too large for the machine, an unwritable `--out`
//! found only after the fit, kernel errors that do not name `--kernel`, silence when piped,
//! 300-digit numbers, non-finite output with exit 0, and one summary schema for every model.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{run, trustgp, write};
use serde_json::Value;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    common::scratch("rel", name)
}

/// A smooth function of two inputs and a second output, `rows` rows, targets times `scale`.
fn csv(rows: usize, scale: f64) -> String {
    let mut s = String::from("x1,x2,y,z\n");
    for i in 0..rows {
        let a = i as f64 / 5.0;
        let b = (i % 4) as f64;
        let y = (a.sin() + 0.1 * b + 0.01 * ((i * 7) % 5) as f64) * scale;
        s.push_str(&format!(
            "{a},{b},{y:e},{:e}\n",
            (2.0 * a.cos() - b) * scale
        ));
    }
    s
}

fn assert_fails(o: &Output, expect: &[&str]) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "expected failure; stderr: {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
    assert!(
        o.stdout.is_empty(),
        "stdout on failure: {}",
        text(&o.stdout)
    );
    for e in expect {
        assert!(err.contains(e), "expected '{e}' in: {err}");
    }
}

fn json(o: &Output) -> Value {
    assert!(o.status.success(), "{}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("stdout is one JSON object")
}

#[test]
fn restarts_are_bounded() {
    let dir = scratch("restarts");
    let data = write(&dir, "d.csv", &csv(25, 1.0));
    let out = dir.join("m.json").display().to_string();
    let o = trustgp(&[
        "fit",
        "--data",
        &data,
        "--target",
        "y",
        "--inputs",
        "x1,x2",
        "--restarts",
        "1000000",
        "--out",
        &out,
    ]);
    assert_fails(&o, &["--restarts 1000000", "at most 1000"]);
    assert!(!Path::new(&out).exists());
}

/// A negative count or seed is read as that flag's value and refused as out of range, not
/// reported as an "unexpected argument '-1'" that names no flag.
#[test]
fn negative_counts_and_seeds_name_their_flag() {
    let cases: [(&[&str], &str); 3] = [
        (
            &["suggest", "--bounds", "x=0:1", "--seed", "-1"],
            "'--seed <SEED>'",
        ),
        (
            &["bo", "--problem", "branin", "--budget", "-3"],
            "'--budget <BUDGET>'",
        ),
        (
            &[
                "fit",
                "--data",
                "d.csv",
                "--target",
                "y",
                "--out",
                "m.json",
                "--restarts",
                "-2",
            ],
            "'--restarts <RESTARTS>'",
        ),
    ];
    for (args, flag) in cases {
        let o = trustgp(args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("invalid value '-"), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
        assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
    }
}
#[test]
fn a_fit_that_cannot_fit_in_memory_is_refused_before_it_starts() {
    let dir = scratch("cost");
    // 200,000 rows: an exact GP would hold two 200,000² matrices (640 GB).
    let mut body = String::from("x,y\n");
    for i in 0..200_000 {
        body.push_str(&format!("{i},{}\n", i % 7));
    }
    let data = write(&dir, "big.csv", &body);
    let out = dir.join("m.json").display().to_string();
    let o = trustgp(&["fit", "--data", &data, "--target", "y", "--out", &out]);
    assert_fails(
        &o,
        &[
            "200000 rows",
            "GB of memory",
            "sgpr",
            "svgp",
            "cagp",
            "--force",
        ],
    );
    let o = trustgp(&[
        "evaluate", "--data", &data, "--target", "y", "--model", "mogp",
    ]);
    assert_fails(&o, &["mogp", "--force"]);
}

#[test]
fn out_is_checked_before_the_data_is_even_read() {
    let dir = scratch("out");
    let data = write(&dir, "d.csv", &csv(25, 1.0));
    for bad in ["/nonexistent/dir/m.json", dir.to_str().unwrap()] {
        // The data file does not exist either: the --out error comes first.
        let o = trustgp(&[
            "fit",
            "--data",
            "/nonexistent.csv",
            "--target",
            "y",
            "--out",
            bad,
        ]);
        assert_fails(&o, &["--out", bad]);
        assert!(!text(&o.stderr).contains("nonexistent.csv"));
    }
    // A writable path is left as it was when the fit then fails.
    let out = dir.join("fresh.json");
    let o = trustgp(&[
        "fit",
        "--data",
        &data,
        "--target",
        "y",
        "--kernel",
        "se(dims=[7])",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_fails(&o, &["--kernel 'se(dims=[7])'"]);
    assert!(!out.exists());
}

#[test]
fn kernel_errors_name_the_option() {
    let dir = scratch("kernel");
    let data = write(&dir, "d.csv", &csv(25, 1.0));
    let out = dir.join("m.json").display().to_string();
    let fit = |extra: &[&str]| {
        let mut a = vec![
            "fit", "--data", &data, "--target", "y,z", "--inputs", "x1,x2",
        ];
        a.extend_from_slice(extra);
        a.extend_from_slice(&["--out", &out]);
        trustgp(&a)
    };
    assert_fails(&fit(&["--kernel", "se + "]), &["--kernel 'se + '"]);
    assert_fails(
        &fit(&["--model", "mogp", "--kernel", "se; matern"]),
        &["--kernel ' matern'"],
    );
    assert_fails(&fit(&["--kernel", "se(ls=[1,2,3])"]), &["--kernel", "ls"]);
    let long = format!("se + {}", "q".repeat(100_000));
    let o = fit(&["--kernel", &long]);
    assert_fails(&o, &["--kernel 'se + qqq", "more characters"]);
    assert!(o.stderr.len() < 1000, "{} bytes of stderr", o.stderr.len());
}

#[test]
fn piped_fits_report_progress_on_stderr_and_keep_stdout_json() {
    let dir = scratch("progress");
    let data = write(&dir, "d.csv", &csv(200, 1.0));
    let out = dir.join("m.json").display().to_string();
    let o = run(
        &[
            "fit",
            "--data",
            &data,
            "--target",
            "y,z",
            "--inputs",
            "x1,x2",
            "--model",
            "mogp",
            "--restarts",
            "2",
            "--out",
            &out,
        ],
        &[("TRUSTGP_PROGRESS_SECONDS", "0.01")],
    );
    let v = json(&o);
    assert_eq!(v["model"], "mogp");
    let err = text(&o.stderr);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("fitting mogp to 200 rows"))
        .collect();
    assert!(!lines.is_empty(), "no progress line in: {err}");
    assert!(lines.iter().all(|l| l.ends_with(" s)")), "{lines:?}");
}

#[test]
fn tiny_and_huge_numbers_print_short_and_exact() {
    let dir = scratch("numbers");
    let data = write(&dir, "d.csv", &csv(25, 1e-300));
    let out = dir.join("m.json").display().to_string();
    let v = json(&trustgp(&[
        "fit", "--data", &data, "--target", "y", "--inputs", "x1,x2", "--out", &out,
    ]));
    assert!(v["noise"][0].as_f64().unwrap() > 0.0);
    let o = trustgp(&["predict", "--model", &out, "--data", &data]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let csv = text(&o.stdout);
    let cells: Vec<&str> = csv.lines().skip(1).flat_map(|l| l.split(',')).collect();
    assert_eq!(cells.len(), 50);
    for c in &cells {
        assert!(c.len() <= 24, "cell '{c}'");
        let v: f64 = c.parse().unwrap();
        assert!(v.is_finite());
    }
    // The means are on the data's scale of 1e-300, printed in scientific form.
    assert!(cells.iter().step_by(2).all(|c| c.contains("e-30")), "{csv}");
}

#[test]
fn non_finite_output_is_an_error_not_exit_zero() {
    let dir = scratch("finite");
    let data = write(&dir, "d.csv", &csv(25, 1.0));
    let out = dir.join("m.json");
    json(&trustgp(&[
        "fit",
        "--data",
        &data,
        "--target",
        "y",
        "--inputs",
        "x1,x2",
        "--out",
        out.to_str().unwrap(),
    ]));
    // A model file whose training target holds 1e308 predicts NaN or ±inf: refused, by name.
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    m["outputs"][0]["y_train"][0] = 1e308.into();
    let bad = write(&dir, "bad.json", &m.to_string());
    let o = trustgp(&["predict", "--model", &bad, "--data", &data]);
    assert_fails(&o, &["prediction mean_y of row", "not a finite number"]);
}

#[test]
fn every_model_reports_one_summary_schema() {
    let dir = scratch("schema");
    let data = write(&dir, "d.csv", &csv(40, 1.0));
    let out = dir.join("m.json").display().to_string();
    let quick: &[(&str, &[&str])] = &[
        ("gp", &[]),
        ("rcgp", &[]),
        ("mogp", &[]),
        ("mo-rcgp", &[]),
        ("sgpr", &["--inducing", "8", "--iterations", "10"]),
        ("svgp", &["--inducing", "8", "--iterations", "10"]),
        ("cagp", &["--actions", "4", "--iterations", "10"]),
    ];
    for (model, extra) in quick {
        let mut a = vec![
            "fit", "--data", &data, "--target", "y,z", "--inputs", "x1,x2", "--model", model,
            "--out", &out,
        ];
        a.extend_from_slice(extra);
        let v = json(&trustgp(&a));
        assert_eq!(v["model"], *model);
        assert_eq!((v["n"].as_u64(), v["d"].as_u64()), (Some(40), Some(2)));
        assert_eq!(v["outputs"], serde_json::json!(["y", "z"]));
        let noise = v["noise"].as_array().unwrap();
        assert_eq!(noise.len(), 2, "{model}: {v}");
        assert!(noise.iter().all(|n| n.as_f64().unwrap() > 0.0));
        assert!(v["objective"]["name"].is_string() && v["objective"]["value"].is_f64());
        assert!(v["kernel"].is_string() && v["jitter"].is_f64() && v["fit_seconds"].is_f64());
        assert!(v["warnings"].is_array());
        let exact_family = matches!(*model, "gp" | "mogp");
        assert_eq!(v.get("lml").is_some(), exact_family, "{model}");
        if exact_family {
            assert_eq!(v["lml"], v["objective"]["value"]);
        }
        let per_output = v["per_output"].as_array().unwrap();
        assert_eq!(per_output.len(), 2);
        for (o, n) in per_output.iter().zip(noise) {
            assert_eq!(&o["noise"], n, "{model}");
            assert!(
                o.get("lml").is_none() && o.get("jitter").is_none(),
                "{model}: {o}"
            );
        }
        if *model != "mogp" && *model != "mo-rcgp" {
            let total: f64 = per_output
                .iter()
                .map(|o| o["objective"]["value"].as_f64().unwrap())
                .sum();
            assert_eq!(total, v["objective"]["value"].as_f64().unwrap(), "{model}");
        }
    }
}

#[test]
fn sizes_beyond_the_training_rows_are_capped_and_said() {
    let dir = scratch("capped");
    let data = write(&dir, "d.csv", &csv(30, 1.0));
    for (model, flag) in [("sgpr", "--inducing"), ("cagp", "--actions")] {
        let out = json(&trustgp(&[
            "evaluate",
            "--data",
            &data,
            "--target",
            "y",
            "--model",
            model,
            flag,
            "1000",
            "--iterations",
            "3",
            "--seed",
            "0",
        ]));
        // 30 rows, 20% held out: 24 training rows.
        let expected = format!("{flag} 1000: only 24 training rows, so 24");
        let warnings = out["warnings"].as_array().unwrap();
        assert!(
            warnings
                .iter()
                .any(|w| w.as_str().unwrap().contains(&expected)),
            "{model}: expected '{expected}' in {warnings:?}"
        );
        let size = if model == "sgpr" {
            "inducing"
        } else {
            "actions"
        };
        assert_eq!(out["per_output"][0][size], 24, "{model}");
    }
}
