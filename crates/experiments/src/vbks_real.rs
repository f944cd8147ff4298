//! `experiments vbks-real`: the VBKS paper's real-world comparison (spec `vbks.md` §6.2,
//! Tables 2–3) at a reduced size: per run (seed r) VBKS in point mode, its single best kernel
//! (VBKS-s), the Random baseline (one kernel of the space drawn with the seed, trained alone)
//! and the BO baseline (Bayesian optimisation over the kernels, Malkomes et al. 2016: `--bo-budget`
//! single-kernel evidences, the first `--bo-initial` at random), each scored by test RMSE in the
//! data's units, with wall-clock times.
//!
//! Protocols (see [`crate::vbks_real_data`]): Swissgrid, `--test-points` random test rows per
//! run, the rest trains; IEQ, the provided 3-day/2-day files, the same split in every run (the
//! runs differ by the seed: inducing inputs, minibatches, Random's kernel). Inputs and targets
//! are z-scored with the training statistics (spec §3.6). Writes `real_<dataset>.json` (one
//! record per run and a summary) and `real_<dataset>.svg` (RMSE per run) into `--out`;
//! `--curve` gives RMSE against training time instead.

use std::path::PathBuf;
use std::time::Instant;

use faer::Mat;
use serde_json::json;
use trustgp::data::metrics::rmse;
use trustgp::data::Standardizer;
use trustgp::selection::{
    random_baseline, KernelBo, KernelBoConfig, KernelSpace, Mixture, Vbks, VbksConfig, VbksMode,
};

use crate::figure::{panels_svg, Curve, Panel};
use crate::vbks_real_data::{ieq, swissgrid, RealSplit};

/// Arguments; the defaults are the reduced settings of the reported runs.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// swissgrid or ieq.
    #[arg(long)]
    dataset: String,
    /// Independent runs (seeds 0..runs).
    #[arg(long, default_value_t = 10)]
    runs: usize,
    /// Candidate space: k12, k144 or a list of expressions.
    #[arg(long, default_value = "k12")]
    kernels: String,
    /// Inducing points.
    #[arg(long, default_value_t = 50)]
    inducing: usize,
    /// SGA iterations of every kernel.
    #[arg(long, default_value_t = 600)]
    iterations: usize,
    /// Minibatch size.
    #[arg(long, default_value_t = 128)]
    batch_size: usize,
    /// Checkpoints (q(k) refits).
    #[arg(long, default_value_t = 5)]
    checkpoints: usize,
    /// Swissgrid: random test rows per run (IEQ always uses its whole test file).
    #[arg(long, default_value_t = 2000)]
    test_points: usize,
    /// Data directory (default: ../shared/data/<the data set's folder>).
    #[arg(long)]
    data: Option<PathBuf>,
    /// Instead of the runs: RMSE against training time for run 1, one fit per iteration count
    /// of this comma-separated list (e.g. "100,200,400,600").
    #[arg(long)]
    curve: Option<String>,
    /// BO baseline: evidence evaluations per run (at most the number of kernels).
    #[arg(long, default_value_t = 6)]
    bo_budget: usize,
    /// BO baseline: of these, the first ones drawn at random.
    #[arg(long, default_value_t = 3)]
    bo_initial: usize,
    /// BO baseline: rows of the subset the kernel distances are computed on.
    #[arg(long, default_value_t = 200)]
    bo_subset: usize,
    /// BO baseline: hyperprior draws averaged in each kernel distance.
    #[arg(long, default_value_t = 4)]
    bo_draws: usize,
    /// Output directory.
    #[arg(long, default_value = "results/vbks")]
    out: PathBuf,
}

type BoxError = Box<dyn std::error::Error>;

/// A split z-scored with its training statistics; test targets stay in the data's units.
struct Scaled {
    x_train: Mat<f64>,
    y_train: Vec<f64>,
    x_test: Mat<f64>,
    y_test: Vec<f64>,
    scaler: Standardizer,
}

fn scale(s: &RealSplit) -> Result<Scaled, BoxError> {
    let y = Mat::from_fn(s.y_train.len(), 1, |i, _| s.y_train[i]);
    let (scaler, _) = Standardizer::fit(s.x_train.as_ref(), y.as_ref())?;
    let y_scaled = scaler.transform_y(y.as_ref());
    Ok(Scaled {
        x_train: scaler.transform_x(s.x_train.as_ref()),
        y_train: (0..y_scaled.nrows()).map(|i| y_scaled[(i, 0)]).collect(),
        x_test: scaler.transform_x(s.x_test.as_ref()),
        y_test: s.y_test.clone(),
        scaler,
    })
}

/// Test RMSE of a model in the data's units.
fn test_rmse(model: &Mixture, d: &Scaled) -> Result<f64, BoxError> {
    let m = model.predict(d.x_test.as_ref(), true)?;
    let mean: Vec<f64> = m
        .mean
        .iter()
        .map(|&v| d.scaler.inverse_y_mean(0, v))
        .collect();
    Ok(rmse(&d.y_test, &mean)?)
}

/// One comparison: test RMSEs of VBKS, VBKS-s, Random and BO with their training times.
struct Outcome {
    vbks: f64,
    single: f64,
    random: f64,
    random_kernel: usize,
    vbks_seconds: f64,
    random_seconds: f64,
    bo: f64,
    bo_kernel: usize,
    bo_seconds: f64,
    /// BO's evaluations: (kernel, evidence), in order.
    bo_steps: Vec<(usize, f64)>,
    top: Vec<(usize, f64)>,
}

impl Outcome {
    fn to_json(&self, space: &KernelSpace) -> serde_json::Value {
        json!({
            "rmse_vbks": self.vbks,
            "rmse_vbks_s": self.single,
            "rmse_random": self.random,
            "random_kernel": space.kernels()[self.random_kernel].to_string(),
            "vbks_seconds": self.vbks_seconds,
            "random_seconds": self.random_seconds,
            "rmse_bo": self.bo,
            "bo_kernel": space.kernels()[self.bo_kernel].to_string(),
            "bo_seconds": self.bo_seconds,
            "bo_evaluations": self.bo_steps.iter().map(|&(i, e)| json!({
                "kernel": space.kernels()[i].to_string(), "evidence": e,
            })).collect::<Vec<_>>(),
            "top": self.top.iter().take(5).map(|&(i, w)| json!({
                "kernel": space.kernels()[i].to_string(), "weight": w,
            })).collect::<Vec<_>>(),
        })
    }
}

/// Fits VBKS and the Random and BO baselines with `config` on `d` and scores all four
/// predictors.
fn compare(
    d: &Scaled,
    space: &KernelSpace,
    config: &VbksConfig,
    bo: &KernelBoConfig,
) -> Result<Outcome, BoxError> {
    let start = Instant::now();
    let run = Vbks::fit(d.x_train.as_ref(), &d.y_train, space, config, &mut |_| {})?;
    let vbks_seconds = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let (random_kernel, baseline) = random_baseline(d.x_train.as_ref(), &d.y_train, space, config)?;
    let random_seconds = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let bo_run = KernelBo::fit(
        d.x_train.as_ref(),
        &d.y_train,
        space,
        config,
        bo,
        &mut |_| {},
    )?;
    let bo_seconds = start.elapsed().as_secs_f64();
    let (top, weights) = run.top();
    Ok(Outcome {
        vbks: test_rmse(&run.mixture()?, d)?,
        single: test_rmse(&run.single_best()?, d)?,
        random: test_rmse(&baseline.single_best()?, d)?,
        random_kernel,
        vbks_seconds,
        random_seconds,
        bo: test_rmse(&bo_run.model()?, d)?,
        bo_kernel: bo_run.selected(),
        bo_seconds,
        bo_steps: bo_run
            .steps()
            .iter()
            .map(|s| (s.kernel, s.evidence))
            .collect(),
        top: top.iter().copied().zip(weights.iter().copied()).collect(),
    })
}

/// RMSE against wall-clock training time for run 1 (seed 0): one fresh fit per iteration
/// count in `list` (the library reports no models at checkpoints, so each point is its own
/// run of that length). Writes `real_<dataset>_curve.{json,svg}`.
fn curve(
    a: &Args,
    space: &KernelSpace,
    d: &Scaled,
    list: &str,
    config: &dyn Fn(u64, usize) -> VbksConfig,
    bo: &KernelBoConfig,
) -> Result<(), BoxError> {
    let counts = list
        .split(',')
        .map(|t| {
            t.trim()
                .parse::<usize>()
                .ok()
                .filter(|&c| c > 0)
                .ok_or_else(|| format!("curve: expected positive iteration counts, got {t:?}"))
        })
        .collect::<Result<Vec<usize>, String>>()?;
    let mut points = Vec::new();
    for &t in &counts {
        let o = compare(d, space, &config(0, t), bo)?;
        let mut record = o.to_json(space);
        record["iterations"] = json!(t);
        println!("{record}");
        points.push((o, record));
    }
    let stem = format!("real_{}_curve", a.dataset);
    let records: Vec<_> = points.iter().map(|p| p.1.clone()).collect();
    std::fs::write(
        a.out.join(format!("{stem}.json")),
        serde_json::to_string_pretty(&records)?,
    )?;
    let line = |label: &str, colour: &'static str, f: &dyn Fn(&Outcome) -> (f64, f64)| Curve {
        label: label.to_string(),
        colour,
        x: points.iter().map(|p| f(&p.0).0).collect(),
        mean: points.iter().map(|p| f(&p.0).1).collect(),
        std: vec![0.0; points.len()],
    };
    let panel = Panel {
        title: format!(
            "{}: test RMSE vs training seconds, run 1 ({})",
            a.dataset, a.kernels
        ),
        points: Vec::new(),
        curves: vec![
            line("VBKS", "#1f77b4", &|o| (o.vbks_seconds, o.vbks)),
            line("VBKS-s", "#ff7f0e", &|o| (o.vbks_seconds, o.single)),
            line("Random", "#2ca02c", &|o| (o.random_seconds, o.random)),
            line("BO", "#d62728", &|o| (o.bo_seconds, o.bo)),
        ],
    };
    std::fs::write(a.out.join(format!("{stem}.svg")), panels_svg(&[panel]))?;
    Ok(())
}

/// Run the experiment.
pub fn run(a: &Args) -> Result<(), BoxError> {
    let load = |seed: u64| -> Result<RealSplit, BoxError> {
        let shared = PathBuf::from("../shared/data");
        match a.dataset.as_str() {
            "swissgrid" => swissgrid(
                &a.data
                    .clone()
                    .unwrap_or_else(|| shared.join("timeseries_swissgrid_enduser_energy_15min")),
                a.test_points,
                seed,
            ),
            "ieq" => ieq(&a
                .data
                .clone()
                .unwrap_or_else(|| shared.join("timeseries_intel_lab_sensors_30min"))),
            other => Err(format!("dataset: expected swissgrid or ieq, got {other:?}").into()),
        }
    };
    if a.runs == 0 {
        return Err("runs: expected at least 1, got 0".into());
    }
    let space = KernelSpace::parse(&a.kernels)?;
    std::fs::create_dir_all(&a.out)?;
    let config = |seed: u64, iterations: usize| VbksConfig {
        inducing: a.inducing,
        batch_size: a.batch_size,
        iterations,
        checkpoints: a.checkpoints.min(iterations),
        seed,
        mode: VbksMode::Point,
        ..VbksConfig::default()
    };
    let bo = KernelBoConfig {
        budget: a.bo_budget,
        initial: a.bo_initial,
        subset: a.bo_subset,
        draws: a.bo_draws,
    };
    if let Some(list) = &a.curve {
        return curve(a, &space, &scale(&load(0)?)?, list, &config, &bo);
    }
    let mut records = Vec::new();
    let (mut vbks_r, mut single_r, mut random_r, mut bo_r) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for r in 0..a.runs {
        let seed = r as u64;
        let d = scale(&load(seed)?)?;
        let o = compare(&d, &space, &config(seed, a.iterations), &bo)?;
        let mut record = o.to_json(&space);
        record["run"] = json!(r + 1);
        record["seed"] = json!(seed);
        record["n_train"] = json!(d.y_train.len());
        record["n_test"] = json!(d.y_test.len());
        println!("{record}");
        records.push(record);
        vbks_r.push(o.vbks);
        single_r.push(o.single);
        random_r.push(o.random);
        bo_r.push(o.bo);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let wins = vbks_r.iter().zip(&single_r).filter(|(v, s)| v < s).count();
    let summary = json!({
        "dataset": a.dataset,
        "runs": a.runs,
        "mean_vbks": mean(&vbks_r),
        "mean_vbks_s": mean(&single_r),
        "mean_random": mean(&random_r),
        "mean_bo": mean(&bo_r),
        "vbks_below_vbks_s": wins,
        "vbks_mean_below_random_mean": mean(&vbks_r) < mean(&random_r),
        "settings": {"kernels": a.kernels, "inducing": a.inducing, "iterations": a.iterations,
                      "batch_size": a.batch_size, "checkpoints": a.checkpoints,
                      "test_points": a.test_points, "mode": "point",
                      "bo_budget": a.bo_budget, "bo_initial": a.bo_initial,
                      "bo_subset": a.bo_subset, "bo_draws": a.bo_draws},
    });
    println!("{summary}");
    let stem = format!("real_{}", a.dataset);
    std::fs::write(
        a.out.join(format!("{stem}.json")),
        serde_json::to_string_pretty(&json!({"runs": records, "summary": summary}))?,
    )?;
    let runs: Vec<f64> = (1..=a.runs).map(|r| r as f64).collect();
    let curve = |label: &str, colour: &'static str, v: &[f64]| Curve {
        label: label.to_string(),
        colour,
        x: runs.clone(),
        mean: v.to_vec(),
        std: vec![0.0; v.len()],
    };
    let panel = Panel {
        title: format!("{}: test RMSE per run ({})", a.dataset, a.kernels),
        points: Vec::new(),
        curves: vec![
            curve("VBKS", "#1f77b4", &vbks_r),
            curve("VBKS-s", "#ff7f0e", &single_r),
            curve("Random", "#2ca02c", &random_r),
            curve("BO", "#d62728", &bo_r),
        ],
    };
    std::fs::write(a.out.join(format!("{stem}.svg")), panels_svg(&[panel]))?;
    Ok(())
}
