//! `experiments flash-crash`: the DJIA on the day of the hacked AP tweet (2013-04-23), fitted by
//! the GP and RCGP, and by the scalable models SVGP, CaGP, RCSVGP and RCaGP (RCaGP spec §5.4,
//! 100 inducing points; RCGP paper's flash-crash example).
//!
//! Every second minute of the opening prices (as the reference code), time in minutes since
//! 09:30 as the input, z-scored; `const * matern52` kernel, fitted by each model's objective.
//! The crash (13:08–13:12) leaves two outlying points. Reported: how far each model's mean moves
//! between 12:30 and 14:00 away from the mean of a GP fitted without the crash points (the
//! clean reference), and an SVG with both fits.

use std::path::PathBuf;

use faer::Mat;
use serde_json::json;
use trustgp::data::Dataset;
use trustgp::estimators::{ModelKind, OutputPrediction, Regressor, RegressorConfig};
use trustgp::models::approximate::ApproxOptions;

use crate::figure::{panels_svg, Curve, Panel};

/// Arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The BoTorch flash-crash CSV (index, Time, Price).
    #[arg(
        long,
        default_value = "../shared/data/timeseries_djia_flash_crash_2013_04_23/twitter_flash_crash.csv"
    )]
    data: PathBuf,
    /// Write the SVG figure of the exact models here.
    #[arg(long, default_value = "results/flash_crash.svg")]
    plot: PathBuf,
    /// Write the SVG figure of the scalable models here.
    #[arg(long, default_value = "results/flash_crash_scalable.svg")]
    plot_scalable: PathBuf,
}

type BoxError = Box<dyn std::error::Error>;

/// Minutes since 09:30 of an `HH:MM:SS` time stamp at the end of `s`.
fn minutes(s: &str) -> Option<f64> {
    let t = s.split_whitespace().last()?;
    let mut it = t.split(':').map(|v| v.parse::<f64>().ok());
    let (h, m) = (it.next()??, it.next()??);
    Some((h - 9.0) * 60.0 + m - 30.0)
}

fn fit(kind: ModelKind, x: &Mat<f64>, y: &[f64]) -> Result<Regressor, BoxError> {
    let data = Dataset {
        input_names: vec!["minute".into()],
        target_names: vec!["price".into()],
        x: x.clone(),
        y: Mat::from_fn(y.len(), 1, |i, _| y[i]),
    };
    let cfg = RegressorConfig {
        model: kind,
        kernel: Some("const * matern52".into()),
        fit: trustgp::fit::FitOptions {
            restarts: 2,
            ..Default::default()
        },
        mean: if kind.approximate().is_some() {
            "constant".into()
        } else {
            "zero".into()
        },
        approx: ApproxOptions {
            inducing: Some(100),
            ..ApproxOptions::default()
        },
        ..RegressorConfig::default()
    };
    Ok(Regressor::fit(&data, &cfg)?)
}

/// Run the experiment.
pub fn run(a: &Args) -> Result<(), BoxError> {
    // The file's first column is an unnamed index, so it is parsed here rather than as a
    // named-column data set.
    let raw = std::fs::read_to_string(&a.data).map_err(|e| format!("{}: {e}", a.data.display()))?;
    let mut t = Vec::new();
    let mut p = Vec::new();
    for (k, line) in raw.lines().skip(1).enumerate() {
        let f: Vec<&str> = line.split(',').collect();
        let (Some(m), Some(v)) = (
            f.get(1).and_then(|s| minutes(s)),
            f.get(2).and_then(|s| s.parse::<f64>().ok()),
        ) else {
            return Err(format!(
                "{}: line {}: expected index,time,price",
                a.data.display(),
                k + 2
            )
            .into());
        };
        // Every second minute, as the reference code ([1::2]).
        if k % 2 == 1 {
            t.push(m);
            p.push(v);
        }
    }
    let n = t.len();
    let crash: Vec<bool> = t.iter().map(|&m| (218.0..=222.0).contains(&m)).collect();
    let x = Mat::from_fn(n, 1, |i, _| t[i]);
    let gp = fit(ModelKind::Gp, &x, &p)?;
    let rcgp = fit(ModelKind::Rcgp, &x, &p)?;
    let keep: Vec<usize> = (0..n).filter(|&i| !crash[i]).collect();
    let clean = fit(
        ModelKind::Gp,
        &Mat::from_fn(keep.len(), 1, |i, _| t[keep[i]]),
        &keep.iter().map(|&i| p[i]).collect::<Vec<_>>(),
    )?;
    let grid: Vec<f64> = (0..=404).map(f64::from).collect();
    let xg = Mat::from_fn(grid.len(), 1, |i, _| grid[i]);
    let pred = |r: &Regressor| r.predict(xg.as_ref(), true).map(|v| v.into_iter().next());
    let (g, r, c) = (pred(&gp)?, pred(&rcgp)?, pred(&clean)?);
    let (Some(g), Some(r), Some(c)) = (g, r, c) else {
        return Err("no predictions".into());
    };
    let window: Vec<usize> = (0..grid.len())
        .filter(|&i| (180.0..=270.0).contains(&grid[i]))
        .collect();
    let dev = |m: &[f64]| {
        window
            .iter()
            .map(|&i| (m[i] - c.mean[i]).abs())
            .fold(0.0, f64::max)
    };
    let scalable = [
        (ModelKind::Svgp, "SVGP", "seagreen"),
        (ModelKind::Cagp, "CaGP", "purple"),
        (ModelKind::Rcsvgp, "RCSVGP", "firebrick"),
        (ModelKind::Rcagp, "RCaGP", "darkorange"),
    ];
    let mut deviations = json!({"gp": dev(&g.mean), "rcgp": dev(&r.mean)});
    let mut seconds = json!({"gp": gp.fit_seconds, "rcgp": rcgp.fit_seconds});
    let mut fitted: Vec<(&str, &'static str, OutputPrediction)> = Vec::new();
    for (kind, label, colour) in scalable {
        let model = fit(kind, &x, &p)?;
        let Some(m) = pred(&model)? else {
            return Err("no predictions".into());
        };
        deviations[kind.name()] = dev(&m.mean).into();
        seconds[kind.name()] = model.fit_seconds.into();
        fitted.push((label, colour, m));
    }
    let out = json!({
        "n": n,
        "crash_points": crash.iter().filter(|&&c| c).count(),
        "max_deviation_from_clean_gp_12_30_to_14_00": deviations,
        "fit_seconds": seconds,
    });
    println!("{out}");
    let curve = |label: &str, colour: &'static str, m: &OutputPrediction| Curve {
        label: label.into(),
        colour,
        x: grid.clone(),
        mean: m.mean.clone(),
        std: m.std.clone(),
    };
    let points: Vec<(f64, f64, bool)> = (0..n).map(|i| (t[i], p[i], crash[i])).collect();
    let panel = |label: &str, colour: &'static str, m: &OutputPrediction| Panel {
        title: format!("DJIA 2013-04-23: {label} ({colour}) vs GP without the crash points (grey)"),
        points: points.clone(),
        curves: vec![
            curve(label, colour, m),
            curve("GP, crash removed", "grey", &c),
        ],
    };
    let svg = panels_svg(&[
        panel("GP", "steelblue", &g),
        panel("RCGP", "darkorange", &r),
    ]);
    let scalable_svg = panels_svg(
        &fitted
            .iter()
            .map(|(label, colour, m)| panel(label, colour, m))
            .collect::<Vec<_>>(),
    );
    std::fs::write(&a.plot_scalable, scalable_svg)
        .map_err(|e| format!("{}: {e}", a.plot_scalable.display()))?;
    std::fs::write(&a.plot, svg).map_err(|e| format!("{}: {e}", a.plot.display()))?;
    eprintln!("wrote {}", a.plot.display());
    Ok(())
}
