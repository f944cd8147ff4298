//! `trustgp verify` on a fitted exact GP: the JSON contract, soundness of the bounds against
//! `predict` on a grid of the box, and clear errors for bad input.

mod common;

use common::{scratch, trustgp, write};
use serde_json::Value;

fn training_csv() -> String {
    let mut s = String::from("a,b,y\n");
    for i in 0..40 {
        let a = i as f64 * 0.25;
        let b = ((i * 7) % 13) as f64 * 0.3;
        let y = (a * 0.8).sin() + 0.5 * b + 0.01 * ((i * 3) % 5) as f64;
        s.push_str(&format!("{a},{b},{y}\n"));
    }
    s
}

fn fitted(dir: &std::path::Path) -> String {
    let data = write(dir, "train.csv", &training_csv());
    let model = dir.join("m.json").display().to_string();
    let out = trustgp(&[
        "fit", "--data", &data, "--target", "y", "--kernel", "se", "--out", &model,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    model
}

#[test]
fn bounds_contain_predictions_on_a_grid_of_the_box() {
    let dir = scratch("verify", "grid");
    let model = fitted(&dir);
    let points = write(&dir, "points.csv", "a,b\n2.0,1.5\n7.1,0.4\n");
    let gamma = 0.3;
    // The latent variance here is ~1e-4 with S's eigenvalues ~1/σ²: its closed-form relaxation
    // needs a looser tolerance to converge within the default iterations.
    for (quantity, tol) in [("mean", 1e-4), ("variance", 1e-3)] {
        let tol_s = tol.to_string();
        let out = trustgp(&[
            "verify",
            "--model",
            &model,
            "--data",
            &points,
            "--radius",
            "0.3",
            "--quantity",
            quantity,
            "--tolerance",
            &tol_s,
            "--delta",
            "0.5",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let pts = v["points"].as_array().unwrap();
        assert_eq!(pts.len(), 2);
        for (r, p) in pts.iter().enumerate() {
            let f = |k: &str| p[k].as_f64().unwrap_or_else(|| panic!("{k} missing"));
            let (lo, hi) = (f("lower"), f("upper"));
            // value (from predict) and the found values (from the form) agree to rounding.
            let rt = 1e-9 * (1.0 + f("value").abs());
            assert!(lo <= f("min_found") && f("min_found") <= f("value") + rt);
            assert!(f("value") - rt <= f("max_found") && f("max_found") <= hi);
            assert!(f("gap") <= tol + 1e-12, "gap {}", f("gap"));
            assert_eq!(p["exit"][0], "converged");
            assert!(p["certified"].is_boolean());
            assert_eq!(
                p["certified"].as_bool().unwrap(),
                (f("value") - lo).max(hi - f("value")) <= 0.5
            );
            let centre = if r == 0 { [2.0, 1.5] } else { [7.1, 0.4] };
            for (name, c) in ["a", "b"].iter().zip(centre) {
                let x = p["argmin_input"][name].as_f64().unwrap();
                assert!((x - c).abs() <= gamma + 1e-12);
            }
            // predict on a 21×21 grid of the box.
            let mut grid = String::from("a,b\n");
            for i in 0..21 {
                for j in 0..21 {
                    let a = centre[0] - gamma + 2.0 * gamma * i as f64 / 20.0;
                    let b = centre[1] - gamma + 2.0 * gamma * j as f64 / 20.0;
                    grid.push_str(&format!("{a},{b}\n"));
                }
            }
            let g = write(&dir, "grid.csv", &grid);
            let pred = trustgp(&["predict", "--model", &model, "--data", &g, "--latent"]);
            assert!(pred.status.success());
            for line in String::from_utf8_lossy(&pred.stdout).lines().skip(1) {
                let mut it = line.split(',').map(|s| s.parse::<f64>().unwrap());
                let (mean, std) = (it.next().unwrap(), it.next().unwrap());
                let val = if quantity == "mean" { mean } else { std * std };
                let tol = 1e-9 * (1.0 + val.abs());
                assert!(
                    lo - tol <= val && val <= hi + tol,
                    "{quantity}: {lo} ≤ {val} ≤ {hi}"
                );
            }
        }
    }
}

#[test]
fn features_row_and_attribution() {
    let dir = scratch("verify", "features");
    let model = fitted(&dir);
    let points = write(&dir, "points.csv", "a,b\n2.0,1.5\n7.1,0.4\n");
    let out = trustgp(&[
        "verify",
        "--model",
        &model,
        "--data",
        &points,
        "--row",
        "1",
        "--radius",
        "0.2",
        "--features",
        "b",
        "--attribution",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = &v["points"][0];
    assert_eq!(p["row"], 1);
    assert_eq!(p["argmin_input"]["a"].as_f64().unwrap(), 7.1, "a is fixed");
    assert!(p["certified"].is_null(), "no --delta: certified is null");
    // The mean rises with b (slope ≈ 0.5): a positive attribution of about 4·0.2·0.5.
    let d = p["attribution"]["b"].as_f64().unwrap();
    assert!(d > 0.1 && d < 0.8, "Δ_b = {d}");
}

#[test]
fn bad_input_is_a_clear_error() {
    let dir = scratch("verify", "errors");
    let model = fitted(&dir);
    let points = write(&dir, "points.csv", "a,b\n2.0,1.5\n");
    let cases: [(&[&str], &str); 8] = [
        (&["--radius", "-0.1"], "--radius"),
        // Squared distances of such a box overflow: an error, not a bound computed on inf.
        (&["--radius", "1e155"], "exceeds"),
        (&["--radius", "0.1", "--row", "5"], "--row 5"),
        (&["--radius", "0.1", "--features", "c"], "`c`"),
        (&["--radius", "0.1", "--features", "a,a"], "named twice"),
        (
            &["--radius", "0.1", "--quantity", "probability"],
            "classifier",
        ),
        (&["--radius", "0.1", "--quantity", "median"], "--quantity"),
        (&["--radius", "0.1", "--tolerance", "-1"], "--tolerance"),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["verify", "--model", &model, "--data", &points];
        args.extend_from_slice(extra);
        let out = trustgp(&args);
        assert!(!out.status.success(), "{extra:?} should fail");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{extra:?}: {err}");
    }
    let nan = write(&dir, "nan.csv", "a,b\nnan,1.5\n");
    let out = trustgp(&[
        "verify", "--model", &model, "--data", &nan, "--radius", "0.1",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains('a') && !err.is_empty(), "{err}");
}

/// Multi-output models (mogp, mo-rcgp): `--output T` bounds output T's latent mean and variance,
/// which contain `predict --latent`'s `mean_T`/`std_T²` on a 21×21 grid of each box.
#[test]
fn multi_output_models_are_verified_per_output() {
    let dir = scratch("verify", "multi-output");
    let mut csv = String::from("a,b,y1,y2\n");
    for i in 0..40 {
        let a = i as f64 * 0.25;
        let b = ((i * 7) % 13) as f64 * 0.3;
        let y1 = (a * 0.8).sin() + 0.5 * b + 0.01 * ((i * 3) % 5) as f64;
        // One gross outlier in the second output, for the robust weights to act on.
        let y2 = 0.7 * (a * 0.8).sin() - 0.3 * b + if i == 7 { 5.0 } else { 0.0 };
        csv.push_str(&format!("{a},{b},{y1},{y2}\n"));
    }
    let data = write(&dir, "train.csv", &csv);
    let points = write(&dir, "points.csv", "a,b\n2.0,1.5\n7.1,0.4\n");
    let gamma = 0.3;
    for model_name in ["mo-rcgp", "mogp"] {
        let model = dir.join(format!("{model_name}.json")).display().to_string();
        let out = trustgp(&[
            "fit", "--data", &data, "--target", "y1,y2", "--model", model_name, "--kernel", "se",
            "--out", &model,
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for (output, col) in [("y1", 0), ("y2", 2)] {
            for quantity in ["mean", "variance"] {
                let out = trustgp(&[
                    "verify",
                    "--model",
                    &model,
                    "--data",
                    &points,
                    "--radius",
                    "0.3",
                    "--quantity",
                    quantity,
                    "--output",
                    output,
                    "--tolerance",
                    "1e-3",
                    "--max-iterations",
                    "2000",
                ]);
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let v: Value = serde_json::from_slice(&out.stdout).unwrap();
                for (r, p) in v["points"].as_array().unwrap().iter().enumerate() {
                    let f = |k: &str| p[k].as_f64().unwrap_or_else(|| panic!("{k} missing"));
                    let (lo, hi) = (f("lower"), f("upper"));
                    let rt = 1e-9 * (1.0 + f("value").abs());
                    assert!(lo <= f("min_found") && f("min_found") <= f("value") + rt);
                    assert!(f("value") - rt <= f("max_found") && f("max_found") <= hi);
                    let centre = if r == 0 { [2.0, 1.5] } else { [7.1, 0.4] };
                    let mut grid = String::from("a,b\n");
                    for i in 0..21 {
                        for j in 0..21 {
                            let a = centre[0] - gamma + 2.0 * gamma * i as f64 / 20.0;
                            let b = centre[1] - gamma + 2.0 * gamma * j as f64 / 20.0;
                            grid.push_str(&format!("{a},{b}\n"));
                        }
                    }
                    let g = write(&dir, "grid.csv", &grid);
                    let pred = trustgp(&["predict", "--model", &model, "--data", &g, "--latent"]);
                    assert!(pred.status.success());
                    let text = String::from_utf8_lossy(&pred.stdout).to_string();
                    let mut lines = text.lines();
                    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
                    assert_eq!(header[col], format!("mean_{output}"));
                    for line in lines {
                        let row: Vec<f64> = line.split(',').map(|s| s.parse().unwrap()).collect();
                        let val = match quantity {
                            "mean" => row[col],
                            _ => row[col + 1] * row[col + 1],
                        };
                        let tol = 1e-9 * (1.0 + val.abs());
                        assert!(
                            lo - tol <= val && val <= hi + tol,
                            "{model_name} {output} {quantity}: {lo} ≤ {val} ≤ {hi}"
                        );
                    }
                }
            }
        }
    }
}
