//! `trustgp verify` on fitted GP classifiers (Laplace/logit, EP/probit): the certified /
//! not-certified answers against exhaustive search of a 41×41 grid of each 2-D box with
//! `predict`, and the probability bounds against the grid.

mod common;

use common::{scratch, trustgp, write};
use serde_json::Value;

fn training_csv() -> String {
    let mut s = String::from("x1,x2,kind\n");
    for i in 0..60 {
        let (a, b) = ((i % 10) as f64 / 3.0 - 1.5, (i / 10) as f64 / 2.0 - 1.2);
        let v = (1.3 * a).sin() + 0.6 * b;
        s.push_str(&format!(
            "{a},{b},{}\n",
            if v > 0.0 { "spam" } else { "ham" }
        ));
    }
    s
}

/// `prob_<class>` of `class_col` at every row of `grid` (CSV with header `x1,x2`).
fn predict(dir: &std::path::Path, model: &str, rows: &[[f64; 2]], class_col: usize) -> Vec<f64> {
    let mut grid = String::from("x1,x2\n");
    for r in rows {
        grid.push_str(&format!("{},{}\n", r[0], r[1]));
    }
    let g = write(dir, "grid.csv", &grid);
    let o = trustgp(&["predict", "--model", model, "--data", &g]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(class_col).unwrap().parse().unwrap())
        .collect()
}

#[test]
fn certified_answers_agree_with_exhaustive_grid_search() {
    let dir = scratch("verify-gpc", "grid");
    let data = write(&dir, "train.csv", &training_csv());
    // Points far from and near the decision boundary.
    let centres = [
        [-1.2, -1.0],
        [1.2, 1.2],
        [0.0, 0.0],
        [0.4, -0.3],
        [-0.6, 0.9],
    ];
    let mut points = String::from("x1,x2\n");
    for c in &centres {
        points.push_str(&format!("{},{}\n", c[0], c[1]));
    }
    let points = write(&dir, "points.csv", &points);
    let gamma = 0.25;
    let (mut yes, mut no) = (0, 0);
    for (inference, likelihood) in [("laplace", "logit"), ("ep", "probit")] {
        let model = dir.join(format!("{inference}.json")).display().to_string();
        let o = trustgp(&[
            "fit",
            "--data",
            &data,
            "--target",
            "kind",
            "--model",
            "gpc",
            "--inference",
            inference,
            "--likelihood",
            likelihood,
            "--out",
            &model,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        for (class, col) in [(None, 1), (Some("ham"), 0)] {
            let mut args = vec![
                "verify",
                "--model",
                &model,
                "--data",
                &points,
                "--radius",
                "0.25",
                "--tolerance",
                "1e-4",
            ];
            if let Some(c) = class {
                args.extend(["--class", c]);
            }
            let o = trustgp(&args);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let v: Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(v["class"], class.unwrap_or("spam"));
            for (r, p) in v["points"].as_array().unwrap().iter().enumerate() {
                let f = |k: &str| p[k].as_f64().unwrap_or_else(|| panic!("{k} missing"));
                let (lo, hi, p_star) = (f("lower"), f("upper"), f("probability"));
                let c = centres[r];
                let grid: Vec<[f64; 2]> = (0..41 * 41)
                    .map(|k| {
                        let (i, j) = (k / 41, k % 41);
                        [
                            c[0] - gamma + 2.0 * gamma * i as f64 / 40.0,
                            c[1] - gamma + 2.0 * gamma * j as f64 / 40.0,
                        ]
                    })
                    .collect();
                let probs = predict(&dir, &model, &grid, col);
                let at = |k: &str| [p[k]["x1"].as_f64().unwrap(), p[k]["x2"].as_f64().unwrap()];
                let worst = predict(&dir, &model, &[at("argmin_input"), at("argmax_input")], col);
                // The model's own predict at the centre: the decision whose flip is asked.
                assert!((predict(&dir, &model, &[c], col)[0] - p_star).abs() < 1e-12);
                for q in &probs {
                    // Gauss–Hermite vs the certified logistic bracket: 1e-9.
                    assert!(
                        lo - 1e-9 <= *q && *q <= hi + 1e-9,
                        "{inference} {r}: {lo} ≤ {q} ≤ {hi}"
                    );
                }
                let flips_on_grid = probs.iter().any(|q| (*q > 0.5) != (p_star > 0.5));
                let certified = p["certified"].as_bool().unwrap();
                if certified {
                    assert!(
                        !flips_on_grid,
                        "{inference} {r}: certified but the grid flips"
                    );
                    yes += 1;
                } else {
                    // Not certified: a concrete flip within the tolerance is returned.
                    let w = if p_star > 0.5 { worst[0] } else { worst[1] };
                    assert!(
                        (w > 0.5) != (p_star > 0.5) || (w - 0.5).abs() <= 2e-4,
                        "{inference} {r}: not certified, but the worst case found is {w}"
                    );
                    no += 1;
                }
            }
        }
    }
    assert!(
        yes > 0 && no > 0,
        "certified {yes}, not {no}: both must occur"
    );
}

#[test]
fn latent_quantities_attribution_and_errors() {
    let dir = scratch("verify-gpc", "latent");
    let data = write(&dir, "train.csv", &training_csv());
    let model = dir.join("m.json").display().to_string();
    let o = trustgp(&[
        "fit", "--data", &data, "--target", "kind", "--model", "gpc", "--out", &model,
    ]);
    assert!(o.status.success());
    let points = write(&dir, "points.csv", "x1,x2\n0.3,0.2\n");
    for q in ["mean", "variance"] {
        let o = trustgp(&[
            "verify",
            "--model",
            &model,
            "--data",
            &points,
            "--radius",
            "0.2",
            "--quantity",
            q,
            "--attribution",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let p = &v["points"][0];
        assert!(p["certified"].is_null());
        assert!(p["lower"].as_f64().unwrap() <= p["upper"].as_f64().unwrap());
        assert!(p["attribution"]["x1"].as_f64().unwrap().is_finite());
    }
    for (args, expect) in [
        (vec!["--class", "eggs"], "is not a class of the model"),
        (vec!["--quantity", "median"], "--quantity must be"),
        (vec!["--delta", "0.1"], "--delta applies to regression"),
        (vec!["--output", "kind"], "--output applies to regression"),
    ] {
        let mut a = vec![
            "verify", "--model", &model, "--data", &points, "--radius", "0.2",
        ];
        a.extend(args);
        let o = trustgp(&a);
        assert!(!o.status.success());
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains(expect), "{e}");
    }
}
