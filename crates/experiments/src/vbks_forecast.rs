//! `experiments vbks-forecast`: does VBKS, with the CLI's defaults, put its top posterior mass
//! on a kernel with the structure a person would name (trend and periodic parts), and does its
//! model average forecast held-out future rows better than the exact GP with `const * se`?
//!
//! Every series ([`crate::vbks_forecast_data`]) is split in time: the first 80 % of the rows
//! train, the last 20 % are the future. VBKS runs exactly as `trustgp fit --model vbks
//! [--kernels K]` does (the regressor's z-scoring, `VbksOptions::config` with the default
//! M = 50, B = 128, 1000 iterations, seed 0), with the PER periods started as `--period-init`
//! says; the baseline is `trustgp fit --model gp --kernel "const * se"` (the regressor, L-BFGS,
//! no restarts). Scores on the future rows, in the data's units: RMSE and the mean Gaussian
//! NLPD of a new observation (the mixture's first two moments for VBKS). One JSON line per
//! series and space is appended to `forecast.jsonl` in `--out`, a Markdown row printed, and
//! `--plot NAME` draws that series' forecasts to `forecast_<NAME>_<space>_<label>.svg`.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use faer::Mat;
use serde_json::json;
use trustgp::data::metrics::{nlpd_mean, rmse};
use trustgp::data::{Dataset, Standardizer};
use trustgp::estimators::regressor::VbksOptions;
use trustgp::estimators::{ModelKind, Regressor, RegressorConfig, DEFAULT_NOISE};
use trustgp::kernels::BaseKind;
use trustgp::models::approximate::ApproxOptions;
use trustgp::selection::{KernelSpace, Mixture, PeriodInit, Structure, Vbks};

use crate::figure::{panels_svg, Curve, Panel};
use crate::vbks_forecast_data::{intel, swissgrid, synthetic_series, Series};

/// Arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Candidate space: k144 (the CLI's default), k12 or a list of expressions.
    #[arg(long, default_value = "k144")]
    kernels: String,
    /// How PER periods start: data (periodogram peaks, the default) or unit (the spec's 1).
    #[arg(long, default_value = "data")]
    period_init: String,
    /// Only these series (comma-separated names; default: all).
    #[arg(long)]
    series: Option<String>,
    /// A label for the records (default: the period init).
    #[arg(long)]
    label: Option<String>,
    /// Draw this series' forecasts to an SVG.
    #[arg(long)]
    plot: Option<String>,
    /// Data directory holding the Swissgrid and Intel-lab folders.
    #[arg(long, default_value = "../shared/data")]
    data: PathBuf,
    /// Output directory.
    #[arg(long, default_value = "results/vbks")]
    out: PathBuf,
}

type BoxError = Box<dyn std::error::Error>;

/// Scores of one predictor on the future rows.
struct Score {
    rmse: f64,
    nlpd: f64,
}

fn score(y: &[f64], mean: &[f64], std: &[f64]) -> Result<Score, BoxError> {
    Ok(Score {
        rmse: rmse(y, mean)?,
        nlpd: nlpd_mean(y, mean, std)?,
    })
}

fn column(v: &[f64]) -> Mat<f64> {
    Mat::from_fn(v.len(), 1, |i, _| v[i])
}

/// A mixture's predictive of new observations at raw times `t`, in the data's units.
fn mixture_forecast(
    m: &Mixture,
    st: &Standardizer,
    t: &[f64],
) -> Result<(Vec<f64>, Vec<f64>), BoxError> {
    let p = m.predict(st.transform_x(column(t).as_ref()).as_ref(), false)?;
    let mean = p.mean.iter().map(|&v| st.inverse_y_mean(0, v)).collect();
    let std = p
        .var
        .iter()
        .map(|&v| st.inverse_y_std(0, v.max(0.0).sqrt()))
        .collect();
    Ok((mean, std))
}

/// Whether a structure has a part a person would call a trend: a summand without PER, or a
/// LIN factor anywhere (a growing level or amplitude).
fn has_trend(s: &Structure) -> bool {
    fn has_lin(s: &Structure) -> bool {
        match s {
            Structure::Base(k) => *k == BaseKind::Lin,
            Structure::Sum(c) | Structure::Product(c) => c.iter().any(has_lin),
        }
    }
    let aperiodic_summand = match s {
        Structure::Sum(terms) => terms.iter().any(|t| t.period_count() == 0),
        other => other.period_count() == 0,
    };
    aperiodic_summand || has_lin(s)
}

/// The `period=` values of a fitted kernel's expression.
fn fitted_periods(expr: &str) -> Vec<f64> {
    expr.split("period=")
        .skip(1)
        .filter_map(|rest| {
            let end = rest.find([',', ')']).unwrap_or(rest.len());
            rest[..end].trim().parse::<f64>().ok()
        })
        .collect()
}

/// The exact GP with `const * se` through the regressor, as `trustgp fit --model gp`.
fn gp_forecast(train: (&[f64], &[f64]), t: &[f64]) -> Result<(Vec<f64>, Vec<f64>, f64), BoxError> {
    let data = Dataset::from_matrices(
        column(train.0),
        column(train.1),
        vec!["t".into()],
        vec!["y".into()],
    )?;
    let cfg = RegressorConfig {
        model: ModelKind::Gp,
        kernel: Some("const * se".into()),
        ..RegressorConfig::default()
    };
    let start = Instant::now();
    let fitted = Regressor::fit(&data, &cfg)?;
    let seconds = start.elapsed().as_secs_f64();
    let p = fitted.predict(column(t).as_ref(), false)?.remove(0);
    Ok((p.mean, p.std, seconds))
}

/// Runs one series: VBKS, VBKS-s and the GP; returns the record and the Markdown row.
fn run_series(
    s: &Series,
    space: &KernelSpace,
    a: &Args,
    init: PeriodInit,
    label: &str,
) -> Result<(serde_json::Value, String), BoxError> {
    let n = s.t.len();
    let n_train = n * 4 / 5;
    let (t_train, t_future) = s.t.split_at(n_train);
    let (y_train, y_future) = s.y.split_at(n_train);
    let (st, _) = Standardizer::fit(column(t_train).as_ref(), column(y_train).as_ref())?;
    let xs = st.transform_x(column(t_train).as_ref());
    let ys: Vec<f64> = st
        .transform_y(column(y_train).as_ref())
        .col(0)
        .iter()
        .copied()
        .collect();
    let options = VbksOptions {
        kernels: a.kernels.clone(),
        ..VbksOptions::default()
    };
    let mut config = options.config(n_train, &ApproxOptions::default(), DEFAULT_NOISE, 0);
    config.period_init = init;
    let start = Instant::now();
    let run = Vbks::fit(xs.as_ref(), &ys, space, &config, &mut |_| {})?;
    let vbks_seconds = start.elapsed().as_secs_f64();
    let average = run.mixture()?;
    let single = run.single_best()?;
    let (vm, vs) = mixture_forecast(&average, &st, t_future)?;
    let (sm, ss) = mixture_forecast(&single, &st, t_future)?;
    let (gm, gs, gp_seconds) = gp_forecast((t_train, y_train), t_future)?;
    let (v, b, g) = (
        score(y_future, &vm, &vs)?,
        score(y_future, &sm, &ss)?,
        score(y_future, &gm, &gs)?,
    );
    let (top, weights) = run.top();
    let q = run.probabilities();
    let lead = &space.kernels()[top[0]];
    let fitted = average.components()[0].model.kernel().to_string();
    let periods: Vec<f64> = fitted_periods(&fitted)
        .iter()
        .map(|p| p * st.x_std[0])
        .collect();
    let (periodic, trend) = (lead.period_count() > 0, has_trend(lead));
    let record = json!({
        "label": label, "series": s.name, "about": s.about, "kernels": a.kernels,
        "period_init": a.period_init, "n_train": n_train, "n_future": n - n_train,
        "true_periods": s.periods, "true_trend": s.trend,
        "top_kernel": lead.to_string(), "q_top": q[top[0]], "q_tilde_top": weights[0],
        "top5": top.iter().zip(weights).take(5).map(|(&i, &w)| json!({
            "kernel": space.kernels()[i].to_string(), "q": q[i], "q_tilde": w,
            "local_elbo": run.local_elbos()[i]})).collect::<Vec<_>>(),
        "top_has_periodic": periodic, "top_has_trend": trend,
        "fitted_top": fitted, "fitted_periods_raw": periods,
        "rmse": {"vbks": v.rmse, "vbks_s": b.rmse, "gp_const_se": g.rmse},
        "nlpd": {"vbks": v.nlpd, "vbks_s": b.nlpd, "gp_const_se": g.nlpd},
        "seconds": {"vbks": vbks_seconds, "gp": gp_seconds},
    });
    let yes = |b: bool| if b { "yes" } else { "no" };
    let row = format!(
        "| {} | {} | {} | `{}` ({:.3}) | {} | {} | {} | {:.4} | {:.4} | {:.4} | {:.3} | {:.3} | {:.3} | {:.0} |",
        s.name,
        a.kernels,
        label,
        lead,
        q[top[0]],
        yes(periodic),
        yes(trend),
        periods
            .iter()
            .map(|p| format!("{p:.2}"))
            .collect::<Vec<_>>()
            .join(", "),
        v.rmse,
        b.rmse,
        g.rmse,
        v.nlpd,
        b.nlpd,
        g.nlpd,
        vbks_seconds
    );
    if a.plot.as_deref() == Some(s.name.as_str()) {
        let (pm, ps) = mixture_forecast(&average, &st, &s.t)?;
        let (gm, gs, _) = gp_forecast((t_train, y_train), &s.t)?;
        let curve = |label: &str, colour: &'static str, mean: Vec<f64>, std: Vec<f64>| Curve {
            label: label.into(),
            colour,
            x: s.t.clone(),
            mean,
            std,
        };
        let panel = Panel {
            title: format!(
                "{}: VBKS ({}, {label}) vs const * se; future from t = {}",
                s.name, a.kernels, t_future[0]
            ),
            points: s
                .t
                .iter()
                .zip(&s.y)
                .enumerate()
                .map(|(i, (&t, &y))| (t, y, i >= n_train))
                .collect(),
            curves: vec![
                curve("VBKS model average", "#1f77b4", pm, ps),
                curve("GP const * se", "#2ca02c", gm, gs),
            ],
        };
        std::fs::write(
            a.out.join(format!(
                "forecast_{}_{}_{label}.svg",
                s.name,
                space_tag(&a.kernels)
            )),
            panels_svg(&[panel]),
        )?;
    }
    Ok((record, row))
}

/// The space's name in file names: `k12`, `k144`, or `list` for a list of expressions.
fn space_tag(kernels: &str) -> &str {
    match kernels.trim() {
        "k12" | "K12" => "k12",
        "k144" | "K144" => "k144",
        _ => "list",
    }
}

/// Run the experiment.
pub fn run(a: &Args) -> Result<(), BoxError> {
    let init: PeriodInit = a.period_init.parse()?;
    let label = a.label.clone().unwrap_or_else(|| a.period_init.clone());
    let space = KernelSpace::parse(&a.kernels)?;
    let mut all = synthetic_series();
    all.extend(swissgrid(
        &a.data.join("timeseries_swissgrid_enduser_energy_15min"),
    )?);
    all.push(intel(&a.data.join("timeseries_intel_lab_sensors_30min"))?);
    let wanted: Option<Vec<&str>> = a.series.as_deref().map(|s| s.split(',').collect());
    if let Some(w) = &wanted {
        if let Some(unknown) = w.iter().find(|n| !all.iter().any(|s| s.name == **n)) {
            let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
            return Err(format!("series: unknown {unknown:?}, expected one of {names:?}").into());
        }
    }
    std::fs::create_dir_all(&a.out)?;
    println!(
        "| series | space | init | top kernel (q) | periodic | trend | fitted periods (raw) | RMSE VBKS | VBKS-s | GP const·se | NLPD VBKS | VBKS-s | GP | VBKS s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for s in &all {
        if wanted
            .as_ref()
            .is_some_and(|w| !w.contains(&s.name.as_str()))
        {
            continue;
        }
        let (record, row) = run_series(s, &space, a, init, &label)?;
        println!("{row}");
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(a.out.join("forecast.jsonl"))?;
        writeln!(file, "{record}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trend_and_periods_are_read_off_structures_and_expressions() {
        let t = |e: &str| has_trend(&Structure::parse(e).unwrap());
        assert!(t("se + per"));
        assert!(t("per * lin"));
        assert!(t("rq"));
        assert!(!t("per"));
        assert!(!t("se * per + per"));
        assert_eq!(
            fitted_periods("se(var=1, ls=2) * per(var=1, ls=0.5, period=0.25) + per(period=3)"),
            vec![0.25, 3.0]
        );
    }
}
