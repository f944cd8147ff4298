//! `trustgp verify` on a fitted three-class (softmax, multi-class Laplace) GP classifier: the
//! certified / not-certified decisions and the class-probability bounds against exhaustive
//! search of a 21×21 grid of each 2-D box with `predict`.
//!
//! `predict` estimates multi-class probabilities by Monte Carlo with 10⁴ antithetic draws
//! (standard error below 0.5/√10⁴ = 0.005 per probability); comparisons with it allow 0.025
//! (five standard errors). The certified bounds themselves are compared with the bracket the
//! verify JSON reports at each point, which is deterministic.

mod common;

use common::{scratch, trustgp, write};
use serde_json::Value;

/// Monte Carlo allowance for `predict`'s probabilities (five standard errors).
const MC: f64 = 0.025;

fn training_csv() -> String {
    let mut s = String::from("x1,x2,kind\n");
    for i in 0..60 {
        let (a, b) = ((i % 10) as f64 / 3.0 - 1.5, (i / 10) as f64 / 2.0 - 1.2);
        let label = if a < -0.4 {
            "red"
        } else if b > 0.1 {
            "green"
        } else {
            "blue"
        };
        s.push_str(&format!("{a},{b},{label}\n"));
    }
    s
}

/// `predict`'s `prob_<class>` columns (in the order of `classes`) at every row of `rows`.
fn predict(dir: &std::path::Path, model: &str, rows: &[[f64; 2]]) -> Vec<Vec<f64>> {
    let mut grid = String::from("x1,x2\n");
    for r in rows {
        grid.push_str(&format!("{},{}\n", r[0], r[1]));
    }
    let g = write(dir, "grid.csv", &grid);
    let o = trustgp(&["predict", "--model", model, "--data", &g]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let cols: Vec<usize> = ["blue", "green", "red"]
        .iter()
        .map(|c| {
            header
                .iter()
                .position(|h| *h == format!("prob_{c}"))
                .unwrap_or_else(|| panic!("no prob_{c} in {header:?}"))
        })
        .collect();
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            cols.iter().map(|&c| f[c].parse().unwrap()).collect()
        })
        .collect()
}

#[test]
fn multiclass_decisions_and_bounds_agree_with_exhaustive_grid_search() {
    let dir = scratch("verify-multiclass", "grid");
    let data = write(&dir, "train.csv", &training_csv());
    let model = dir.join("m.json").display().to_string();
    let o = trustgp(&[
        "fit", "--data", &data, "--target", "kind", "--model", "gpc", "--out", &model,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Deep inside each class region, and on the borders between them.
    let centres = [
        [-1.3, 0.0],
        [1.0, 0.9],
        [1.0, -1.0],
        [-0.4, 0.5],
        [0.6, 0.1],
    ];
    let mut points = String::from("x1,x2\n");
    for c in &centres {
        points.push_str(&format!("{},{}\n", c[0], c[1]));
    }
    let points = write(&dir, "points.csv", &points);
    let gamma = 0.05;
    let classes = ["blue", "green", "red"];
    let o = trustgp(&[
        "verify",
        "--model",
        &model,
        "--data",
        &points,
        "--radius",
        "0.05",
        "--class",
        "green",
        "--tolerance",
        "0.02",
        // A short search keeps the test fast; every answer is sound at any iteration.
        "--max-iterations",
        "8",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["class"], "green");
    let (mut yes, mut no) = (0, 0);
    for (r, p) in v["points"].as_array().unwrap().iter().enumerate() {
        let f = |k: &str| p[k].as_f64().unwrap_or_else(|| panic!("{k} missing"));
        let (lo, hi) = (f("lower"), f("upper"));
        let bracket: Vec<f64> = p["probability_bracket"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let c = centres[r];
        let grid: Vec<[f64; 2]> = (0..21 * 21)
            .map(|k| {
                let (i, j) = (k / 21, k % 21);
                [
                    c[0] - gamma + 2.0 * gamma * i as f64 / 20.0,
                    c[1] - gamma + 2.0 * gamma * j as f64 / 20.0,
                ]
            })
            .collect();
        let probs = predict(&dir, &model, &grid);
        let at_centre = &predict(&dir, &model, &[c])[0];
        // The bracket at the point holds predict's estimate up to its Monte Carlo error, and
        // the box bounds contain it.
        assert!(bracket[0] - MC <= at_centre[1] && at_centre[1] <= bracket[1] + MC);
        // The searches evaluate the point itself: its bracket meets the bounds.
        assert!(lo <= bracket[1] + 1e-9 && bracket[0] <= hi + 1e-9);
        assert!(
            (p["probability"].as_f64().unwrap() - at_centre[1]).abs() < 1e-12,
            "the reported probability is predict's"
        );
        for q in &probs {
            assert!(
                lo - MC <= q[1] && q[1] <= hi + MC,
                "{r}: {lo} ≤ {} ≤ {hi}",
                q[1]
            );
        }
        // The found extrema are values at points of the box.
        let at = |k: &str| [p[k]["x1"].as_f64().unwrap(), p[k]["x2"].as_f64().unwrap()];
        for (k, name) in [("argmin_input", "min_found"), ("argmax_input", "max_found")] {
            let x = at(k);
            assert!((0..2).all(|j| (x[j] - c[j]).abs() <= gamma + 1e-9));
            let q = predict(&dir, &model, &[x])[0][1];
            assert!(
                (q - f(name)).abs() <= MC,
                "{r}: {name} {} vs predict {q}",
                f(name)
            );
        }
        let decision = &p["decision"];
        let predicted = decision["predicted"].as_str().unwrap();
        let yhat = classes.iter().position(|k| *k == predicted).unwrap();
        let argmax = |q: &Vec<f64>| (0..3).max_by(|&a, &b| q[a].total_cmp(&q[b])).unwrap();
        // The predicted class is the argmax at the point, unless two are within MC error.
        let top = at_centre[argmax(at_centre)];
        assert!(
            at_centre[yhat] >= top - 2.0 * MC,
            "{r}: {predicted} vs {at_centre:?}"
        );
        let certified = p["certified"].as_bool().unwrap();
        let d_lower = decision["lower"].as_f64().unwrap();
        if certified {
            // Sound: every grid point keeps the decision; predict's probability of ŷ stays above
            // the certified lower bound and every other above none of it (up to MC error).
            for q in &probs {
                assert!(q[yhat] >= d_lower - MC, "{r}: {} < {d_lower}", q[yhat]);
                for k in (0..3).filter(|k| *k != yhat) {
                    assert!(q[k] < q[yhat] + 2.0 * MC, "{r}: certified, but {q:?} flips");
                    let up = decision["others_upper"][classes[k]].as_f64().unwrap();
                    assert!(q[k] <= up + MC && up < d_lower);
                }
            }
            yes += 1;
        } else {
            no += 1;
        }
        // Where the grid search finds a flip (clear of MC error), verify must not certify.
        let flips = probs
            .iter()
            .any(|q| (0..3).any(|k| k != yhat && q[k] > q[yhat] + 2.0 * MC));
        assert!(!(flips && certified), "{r}: the grid flips");
        if flips {
            assert!(!certified);
        }
    }
    assert!(
        yes > 0 && no > 0,
        "certified {yes}, not {no}: both must occur"
    );
}

#[test]
fn multiclass_latent_quantities() {
    let dir = scratch("verify-multiclass", "latent");
    let data = write(&dir, "train.csv", &training_csv());
    let model = dir.join("m.json").display().to_string();
    let o = trustgp(&[
        "fit", "--data", &data, "--target", "kind", "--model", "gpc", "--out", &model,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let points = write(&dir, "points.csv", "x1,x2\n0.3,0.2\n");
    for q in ["mean", "variance"] {
        let o = trustgp(&[
            "verify",
            "--model",
            &model,
            "--data",
            &points,
            "--radius",
            "0.1",
            "--quantity",
            q,
            "--class",
            "red",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let p = &v["points"][0];
        assert!(p["certified"].is_null());
        let (lo, hi) = (p["lower"].as_f64().unwrap(), p["upper"].as_f64().unwrap());
        let (a, b) = (
            p["min_found"].as_f64().unwrap(),
            p["max_found"].as_f64().unwrap(),
        );
        assert!(lo <= a && a <= b && b <= hi, "{q}: {lo} {a} {b} {hi}");
        if q == "variance" {
            assert!(lo >= 0.0);
        }
    }
}
