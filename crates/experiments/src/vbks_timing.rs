//! `experiments vbks-timing`: VBKS's training time per iteration against the number of
//! candidate kernels K and inducing points M (the VBKS paper's Fig. 5 scalability question),
//! on a simulated 1-D series of the paper's Swissgrid size (210,336 quarter-hours: a trend,
//! daily and weekly cycles and noise), and the one-pass estimate it implies.
//!
//! Each setting trains every kernel for a few minibatch iterations (B = 128) and reports the
//! training seconds per iteration (checkpoint work excluded). The cost of an iteration does
//! not depend on n, so one pass (⌈n/B⌉ iterations) takes that many times the per-iteration
//! time; the kernels of a setting are spread over K144 (every (144/K)-th), whose costs differ
//! with their number of base kernels.

use std::time::Instant;

use faer::Mat;
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use serde_json::json;
use trustgp::selection::{BeliefConfig, KernelSpace, Vbks, VbksConfig};

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

/// Run the experiment.
pub fn run(a: &Args) -> Result<(), BoxError> {
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
