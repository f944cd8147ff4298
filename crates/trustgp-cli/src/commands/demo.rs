//! `trustgp demo`: what trustgp does, in a few seconds, on bundled data.
//!
//! Fits an exact GP (ARD squared exponential times a learnable scale) to 80% of the UCI Yacht
//! hydrodynamics data, then shows how far its test predictions are from the truth, how honest
//! its uncertainty is (coverage of the 95% intervals), and the closed-form leave-one-out check.

use serde_json::json;
use trustgp::data::{metrics, random_split, read_csv_str};
use trustgp::estimators::{FitSummary, ModelOptions, Regressor};

use super::{print_json, CliError};
use crate::args::DemoArgs;
use crate::plot::truth_vs_prediction;

/// The bundled data set (CC BY 4.0, see data/uci_yacht/SOURCE.txt).
const YACHT_CSV: &str = include_str!("../../../../data/uci_yacht/data.csv");
const TARGET: &str = "residuary_resistance";
const SEED: u64 = 0;

/// Run the subcommand.
pub fn run(a: &DemoArgs) -> Result<(), CliError> {
    eprintln!(
        "trustgp demo: exact Gaussian-process regression on UCI Yacht hydrodynamics (bundled)"
    );
    let data = read_csv_str(
        YACHT_CSV,
        "data/uci_yacht/data.csv",
        &[TARGET.to_string()],
        None,
    )?;
    let split = random_split(data.n(), 0.2, SEED)?;
    let (train, test) = (
        data.select_rows(&split.train),
        data.select_rows(&split.test),
    );
    let cfg = ModelOptions {
        restarts: 2,
        seed: SEED,
        ..ModelOptions::default()
    }
    .check()?;
    let model = Regressor::fit(&train, &cfg)?;
    let summary = FitSummary::of(&model, train.n());
    summary.check_finite()?;
    let p = &model.predict(test.x.as_ref(), false)?[0];
    let y: Vec<f64> = (0..test.n()).map(|i| test.y[(i, 0)]).collect();
    let rmse = metrics::rmse(&y, &p.mean)?;
    let nlpd = metrics::nlpd_mean(&y, &p.mean, &p.std)?;
    let train_mean = (0..train.n()).map(|i| train.y[(i, 0)]).sum::<f64>() / train.n() as f64;
    let baseline_rmse = metrics::rmse(&y, &vec![train_mean; y.len()])?;
    let covered = y
        .iter()
        .zip(p.mean.iter().zip(&p.std))
        .filter(|(yi, (m, s))| (*yi - *m).abs() <= 1.959964 * *s)
        .count();
    let coverage = covered as f64 / y.len() as f64;
    let Some(loo_rmse_std) = model.exact_loo_rmse().and_then(|v| v.first().copied()) else {
        return Err("the demo's model is not an exact GP".into());
    };

    eprintln!(
        "  trained on {} rows, tested on {} held-out rows (seed {SEED})",
        train.n(),
        test.n()
    );
    eprintln!("  fitted kernel: {}", summary.kernel);
    eprintln!(
        "  noise variance (standardised units): {:.3e}",
        summary.noise[0]
    );
    eprintln!("  fit time: {:.3} s", model.fit_seconds);
    eprintln!("  test RMSE {rmse:.3} (predicting the training mean: {baseline_rmse:.3})");
    eprintln!(
        "  test NLPD {nlpd:.3}; 95% intervals cover {:.0}% of the held-out targets",
        100.0 * coverage
    );
    eprintln!(
        "  leave-one-out RMSE on the training rows (closed form, standardised): {loo_rmse_std:.3}"
    );
    eprintln!("  first held-out rows:   truth   prediction ± 2 std");
    for (yi, (m, sd)) in y.iter().zip(p.mean.iter().zip(&p.std)).take(5) {
        eprintln!("    {yi:>22.2} {m:>12.2} ± {:.2}", 2.0 * sd);
    }
    if let Some(path) = &a.plot {
        let points: Vec<(f64, f64, f64)> = y
            .iter()
            .zip(p.mean.iter().zip(&p.std))
            .map(|(t, (m, s))| (*t, *m, 1.959964 * s))
            .collect();
        let svg = truth_vs_prediction(
            &points,
            &format!("UCI Yacht, {} held-out rows: GP prediction ± 95%", y.len()),
            "predicted residuary resistance",
        );
        std::fs::write(path, svg).map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!("  plot written to {}", path.display());
    }
    eprintln!("Try: cargo run --release -- fit --data data/uci_yacht/data.csv --target {TARGET} --out yacht.json");
    let mut summary = serde_json::to_value(&summary)?;
    if let serde_json::Value::Object(m) = &mut summary {
        m.insert(
            "demo".into(),
            json!({
                "data": "UCI Yacht (bundled, CC BY 4.0)",
                "n_train": train.n(),
                "n_test": test.n(),
                "test_rmse": rmse,
                "baseline_rmse": baseline_rmse,
                "test_nlpd": nlpd,
                "coverage_95": coverage,
                "loo_rmse_standardised": loo_rmse_std,
            }),
        );
    }
    print_json(&summary)
}
