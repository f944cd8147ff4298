//! `experiments vbks-timing`: VBKS's training time per iteration against the number of
//! candidate kernels K and inducing points M (the VBKS paper's Fig. 5 scalability question),
//! on a simulated 1-D series of the paper's Swissgrid size (210,336 quarter-hours: a trend,
//! daily and weekly cycles and noise), and the one-pass estimate it implies.
//!
//! Each setting trains every kernel for a few minibatch iterations (B = 128) and reports the
//! training seconds per iteration (checkpoint work excluded). The cost of an iteration does
//! not depend on n, so one pass (⌈n/B⌉ iterations) takes that many times the per-iteration
//! time; the kernels of a setting are spread over K144 (every (144/K)-th), whose costs differ
//! with their number of base kernels. With natural gradients (VBKS's default) the pass that
//! closes the single stage reads `B` rows (`--final-q-rows`), i.e. one extra minibatch.
//!
//! `--full-pass` runs the speed criterion instead: one pass over the series
//! (⌈n/B⌉ iterations) with K144, M = 800, B = 128, natural gradients, 10 checkpoints, all 144
//! kernels training for the first `--first-stage` iterations, then only the top 10 (pruning,
//! spec §2.12: the others keep their model and `L*`, `q(g)` covers all 144), each stage closed
//! by the natural-gradient pass on `--final-q-rows` rows; a progress bar follows the
//! checkpoints, and the wall time, the seconds of every stage and the kernel posterior go to
//! `--out` (JSON).

use std::time::Instant;

use faer::Mat;
use indicatif::{ProgressBar, ProgressStyle};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use serde_json::json;
use trustgp::selection::{BeliefConfig, Checkpoint, KernelSpace, Vbks, VbksConfig};

/// Arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Rows of the simulated series.
    #[arg(long, default_value_t = 210_336)]
    n: usize,
    /// Numbers of kernels, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,12,144")]
    kernels: Vec<usize>,
    /// Numbers of inducing points, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "100,200,400,800")]
    inducing: Vec<usize>,
    /// Iterations timed per setting.
    #[arg(long, default_value_t = 3)]
    iterations: usize,
    /// Minibatch size.
    #[arg(long, default_value_t = 128)]
    batch_size: usize,
    /// Also time natural-gradient steps for q(u) (VBKS's default), which add a pass over the
    /// data at the end of every stage.
    #[arg(long)]
    natural_gradients: bool,
    /// Skip settings whose K·M³ exceeds this (to bound the run).
    #[arg(long, default_value_t = 1e11)]
    max_work: f64,
    /// Rows of the natural-gradient pass that closes each stage (`0`: all rows, exact).
    /// Grid mode defaults to the batch size, the full pass to 10,000.
    #[arg(long)]
    final_q_rows: Option<usize>,
    /// Run the full pass of the speed criterion (K144, M = 800, B = 128, pruning).
    #[arg(long)]
    full_pass: bool,
    /// Full pass: iterations of the first stage, in which all 144 kernels train.
    #[arg(long, default_value_t = 16)]
    first_stage: usize,
    /// Full pass: checkpoints (the first after `--first-stage` iterations).
    #[arg(long, default_value_t = 10)]
    checkpoints: usize,
    /// Full pass: inducing points.
    #[arg(long, default_value_t = 800)]
    pass_inducing: usize,
    /// Full pass: kernels kept after the first stage.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Full pass: where the JSON summary goes.
    #[arg(long, default_value = "results/vbks/timing_pass.json")]
    out: String,
}

type BoxError = Box<dyn std::error::Error>;

/// A standardised 1-D series: time in days, trend + daily + weekly cycles + noise.
fn series(n: usize) -> (Mat<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(1);
    let t: Vec<f64> = (0..n).map(|i| i as f64 / 96.0).collect();
    let y: Vec<f64> = t
        .iter()
        .map(|&d| {
            let e: f64 = StandardNormal.sample(&mut rng);
            0.001 * d
                + (2.0 * std::f64::consts::PI * d).sin()
                + 0.5 * (2.0 * std::f64::consts::PI * d / 7.0).cos()
                + 0.2 * e
        })
        .collect();
    let z = |v: &[f64]| {
        let m = v.iter().sum::<f64>() / v.len() as f64;
        let s = (v.iter().map(|a| (a - m).powi(2)).sum::<f64>() / v.len() as f64).sqrt();
        v.iter().map(|a| (a - m) / s).collect::<Vec<f64>>()
    };
    let tz = z(&t);
    (Mat::from_fn(n, 1, |i, _| tz[i]), z(&y))
}

/// `--final-q-rows`: `0` means every row (`None`), absent the mode's default.
fn final_rows(a: &Args, default: usize) -> Option<usize> {
    match a.final_q_rows.unwrap_or(default) {
        0 => None,
        r => Some(r),
    }
}

/// Run the experiment.
pub fn run(a: &Args) -> Result<(), BoxError> {
    if a.full_pass {
        return full_pass(a);
    }
    let (x, y) = series(a.n);
    let all = KernelSpace::k144();
    let passes = a.n.div_ceil(a.batch_size);
    for &m in &a.inducing {
        for &k in &a.kernels {
            let k = k.clamp(1, all.len());
            if k as f64 * (m as f64).powi(3) > a.max_work {
                println!(
                    "{}",
                    json!({"kernels": k, "inducing": m, "skipped": "max_work"})
                );
                continue;
            }
            let step = all.len() / k;
            let space =
                KernelSpace::new((0..k).map(|i| all.kernels()[i * step].clone()).collect())?;
            let config = VbksConfig {
                inducing: m,
                batch_size: a.batch_size,
                iterations: a.iterations,
                checkpoints: 1,
                natural_gradients: a.natural_gradients,
                final_q_rows: final_rows(a, a.batch_size),
                eval_size: 100,
                belief: BeliefConfig {
                    cold_steps: 10,
                    warm_steps: 10,
                    posterior_samples: 100,
                    ..BeliefConfig::default()
                },
                top: 1,
                ..VbksConfig::default()
            };
            let start = Instant::now();
            let run = Vbks::fit(x.as_ref(), &y, &space, &config, &mut |_| {})?;
            let train = run.history()[0].train_seconds;
            let per_iteration = train / a.iterations as f64;
            println!(
                "{}",
                json!({
                    "n": a.n,
                    "kernels": k,
                    "inducing": m,
                    "batch_size": a.batch_size,
                    "natural_gradients": a.natural_gradients,
                    "final_q_rows": final_rows(a, a.batch_size),
                    "iterations": a.iterations,
                    "seconds_per_iteration": per_iteration,
                    "one_pass_iterations": passes,
                    "one_pass_minutes_estimate": per_iteration * passes as f64 / 60.0,
                    "wall_seconds": start.elapsed().as_secs_f64(),
                    "threads": rayon::current_num_threads(),
                })
            );
        }
    }
    Ok(())
}

/// The speed criterion's single pass (see the module docs).
fn full_pass(a: &Args) -> Result<(), BoxError> {
    let (x, y) = series(a.n);
    let space = KernelSpace::k144();
    let iterations = a.n.div_ceil(a.batch_size);
    let config = VbksConfig {
        inducing: a.pass_inducing,
        batch_size: a.batch_size,
        iterations,
        checkpoints: a.checkpoints,
        first_checkpoint: Some(a.first_stage),
        prune_after: Some(1),
        top: a.top,
        final_q_rows: final_rows(a, 10_000),
        ..VbksConfig::default()
    };
    let bar = ProgressBar::new(iterations as u64);
    bar.set_style(ProgressStyle::with_template(
        "{elapsed_precise} [{bar:40}] {pos}/{len} iterations (eta {eta}) {msg}",
    )?);
    bar.set_message(format!("K = {} training", space.len()));
    let start = Instant::now();
    let mut stages: Vec<serde_json::Value> = Vec::new();
    let (mut last_train, mut last_iteration, mut last_wall) = (0.0, 0, 0.0);
    let names: Vec<String> = space.kernels().iter().map(|k| k.to_string()).collect();
    let mut observe = |c: &Checkpoint| {
        let wall = start.elapsed().as_secs_f64();
        let steps = c.iteration - last_iteration;
        let active = if stages.is_empty() {
            space.len()
        } else {
            a.top.min(space.len())
        };
        let best = (0..c.probabilities.len())
            .max_by(|&i, &j| c.probabilities[i].total_cmp(&c.probabilities[j]))
            .unwrap_or(0);
        stages.push(json!({
            "iteration": c.iteration,
            "data_fraction": c.data_fraction,
            "kernels_training": active,
            "train_seconds": c.train_seconds - last_train,
            "seconds_per_iteration": (c.train_seconds - last_train) / steps.max(1) as f64,
            "checkpoint_seconds": wall - last_wall - (c.train_seconds - last_train),
            "wall_seconds": wall,
            "leading": names[best],
            "leading_probability": c.probabilities[best],
        }));
        // Also as a line on stderr: the record survives where the bar is not drawn.
        bar.suspend(|| eprintln!("{}", stages[stages.len() - 1]));
        bar.set_position(c.iteration as u64);
        bar.set_message(format!(
            "K = {} next; leading {} ({:.2})",
            a.top.min(space.len()),
            names[best],
            c.probabilities[best]
        ));
        (last_train, last_iteration, last_wall) = (c.train_seconds, c.iteration, wall);
    };
    let run = Vbks::fit(x.as_ref(), &y, &space, &config, &mut observe)?;
    let wall = start.elapsed().as_secs_f64();
    bar.finish();
    let (top, weights) = run.top();
    let summary = json!({
        "n": a.n,
        "kernels": space.len(),
        "inducing": a.pass_inducing,
        "batch_size": a.batch_size,
        "iterations": iterations,
        "checkpoints": a.checkpoints,
        "first_stage_iterations": a.first_stage,
        "kept_after_first_stage": a.top,
        "final_q_rows": final_rows(a, 10_000),
        "eval_size": config.eval_size,
        "threads": rayon::current_num_threads(),
        "wall_seconds": wall,
        "train_seconds": run.history().last().map_or(0.0, |c| c.train_seconds),
        "stages": stages,
        "top": top.iter().zip(weights).map(|(&i, &w)| json!({"kernel": names[i], "weight": w})).collect::<Vec<_>>(),
    });
    let text = serde_json::to_string_pretty(&summary)?;
    if let Some(dir) = std::path::Path::new(&a.out).parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&a.out, &text)?;
    println!("{text}");
    Ok(())
}
