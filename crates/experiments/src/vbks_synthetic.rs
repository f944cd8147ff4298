//! `experiments vbks-synthetic`: the VBKS paper's Fig. 2 (spec `vbks.md` §6.1): the posterior
//! probability of the true kernel against the share of data used, for both true kernels.
//!
//! Data (spec §6.1): 256 inputs uniform on [−10, 10], outputs drawn from the GP prior with the
//! true kernel (plus 10⁻⁶·mean diag K noise); 1000 new inputs get the predictive mean as
//! outputs (noise-free). Inputs and outputs are divided by their std, not centred (LIN is
//! origin-dependent). VBKS over K144 (or K12) with M = 16, B = 32, point-estimate or full-θ
//! hyperparameters (`--mode`; the spec chooses full for these runs, A5), checkpoints evenly
//! spaced. Output files `synthetic_<space>[_full].{json,svg}` (or `--name`).

use std::path::PathBuf;
use std::time::Instant;

use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, StandardNormal};
use serde_json::json;
use trustgp::kernels::{Kernel, ProductVariance};
use trustgp::linalg::{Cholesky, Parallelism};
use trustgp::selection::{KernelSpace, Settle, Structure, Vbks, VbksConfig, VbksMode};

use crate::figure::{panels_svg, Curve, Panel};
use crate::vbks_synthetic_exact;

/// Arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Candidate space: k144 or k12.
    #[arg(long, default_value = "k144")]
    space: String,
    /// SGA iterations of every kernel.
    #[arg(long, default_value_t = 5000)]
    iterations: usize,
    /// Checkpoints (q(k) refits), evenly spaced.
    #[arg(long, default_value_t = 20)]
    checkpoints: usize,
    /// Inducing points.
    #[arg(long, default_value_t = 16)]
    inducing: usize,
    /// Minibatch size.
    #[arg(long, default_value_t = 32)]
    batch_size: usize,
    /// Seed of the data and of VBKS.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Hyperparameters: point or full (a Gaussian q(θ) per kernel).
    #[arg(long, default_value = "point")]
    mode: String,
    /// Settle over this final share of the iterations (learning rate decayed on a cosine to
    /// `--lr-floor` times the base rate; iterate averaging with `--average`); off by default.
    #[arg(long)]
    settle: Option<f64>,
    /// With `--settle`: the final learning rate as a multiple of the base rate.
    #[arg(long, default_value_t = 0.01)]
    lr_floor: f64,
    /// With `--settle` (full mode): average each final-stretch stage's iterates.
    #[arg(long)]
    average: bool,
    /// Full mode: θ-samples per training step.
    #[arg(long, default_value_t = 1)]
    theta_samples: usize,
    /// Only this true kernel (its index, 0 = per * lin * rq, 1 = (per + rq) * lin); both by
    /// default.
    #[arg(long)]
    only: Option<usize>,
    /// Stem of the output files (default `synthetic_<space>`, `_full` added in full mode).
    #[arg(long)]
    name: Option<String>,
    /// Output directory (JSON and SVG).
    #[arg(long, default_value = "results/vbks")]
    out: PathBuf,
    /// Instead of VBKS: fit every kernel of the space as an exact GP by maximum likelihood
    /// (spec start, periodogram start, the true hyperparameters for the truth) and print one
    /// JSON line per kernel: does exact type-II ML pick the generating kernel?
    #[arg(long)]
    exact_evidence: bool,
    /// With `--exact-evidence`: seeded random restarts per start.
    #[arg(long, default_value_t = 4)]
    restarts: usize,
}

type BoxError = Box<dyn std::error::Error>;

/// The two true kernels of spec §3.5 (period 2π), as expressions.
pub(crate) const TRUE_KERNELS: [(&str, &str); 2] = [
    (
        "per * lin * rq",
        "per(var=0.01, ls=1, period=6.283185307179586) * lin(var=0.1111111111111111) \
         * rq(var=0.01, ls=8, alpha=1)",
    ),
    (
        "(per + rq) * lin",
        "(per(var=0.01, ls=2, period=6.283185307179586) + rq(var=0.01, ls=3, alpha=1)) \
         * lin(var=0.04)",
    ),
];

/// The synthetic data set of spec §6.1 for `kernel`, divided by its stds, with the noise
/// variance of its generation and the two stds (input, output).
fn generate(kernel: &Kernel, seed: u64) -> Result<Synthetic, BoxError> {
    let mut rng = StdRng::seed_from_u64(seed);
    let x0 = Mat::from_fn(256, 1, |_, _| rng.random_range(-10.0..10.0));
    let x1 = Mat::from_fn(1000, 1, |_, _| rng.random_range(-10.0..10.0));
    let mut k00 = kernel.matrix(x0.as_ref());
    let mean_diag = (0..256).map(|i| k00[(i, i)]).sum::<f64>() / 256.0;
    for i in 0..256 {
        k00[(i, i)] += 1e-6 * mean_diag;
    }
    let chol = Cholesky::factor(&k00, "the generating covariance", Parallelism::Sequential)?;
    let z: Vec<f64> = (0..256).map(|_| StandardNormal.sample(&mut rng)).collect();
    let l = chol.l();
    let y0: Vec<f64> = (0..256)
        .map(|i| (0..=i).map(|j| l[(i, j)] * z[j]).sum())
        .collect();
    let alpha = chol.solve_vec(&y0);
    let k10 = kernel.cross(x1.as_ref(), x0.as_ref());
    let y1: Vec<f64> = (0..1000)
        .map(|i| (0..256).map(|j| k10[(i, j)] * alpha[j]).sum())
        .collect();
    let std = |v: &mut dyn Iterator<Item = f64>| -> f64 {
        let v: Vec<f64> = v.collect();
        let m = v.iter().sum::<f64>() / v.len() as f64;
        (v.iter().map(|a| (a - m).powi(2)).sum::<f64>() / v.len() as f64).sqrt()
    };
    let sx = std(&mut (0..1000).map(|i| x1[(i, 0)]));
    let sy = std(&mut y1.iter().copied());
    Ok(Synthetic {
        x: Mat::from_fn(1000, 1, |i, _| x1[(i, 0)] / sx),
        y: y1.iter().map(|v| v / sy).collect(),
        noise: 1e-6 * mean_diag / (sy * sy),
        sx,
        sy,
    })
}

/// A synthetic data set in the units VBKS sees.
struct Synthetic {
    /// Inputs divided by their std.
    x: Mat<f64>,
    /// Outputs divided by their std.
    y: Vec<f64>,
    /// The generating noise variance, in the output's standardised units.
    noise: f64,
    /// Std of the raw inputs.
    sx: f64,
    /// Std of the raw outputs.
    sy: f64,
}

/// Run the experiment.
pub fn run(a: &Args) -> Result<(), BoxError> {
    let space = KernelSpace::parse(&a.space)?;
    let mode: VbksMode = a.mode.parse()?;
    std::fs::create_dir_all(&a.out)?;
    let mut panels = Vec::new();
    let mut results = Vec::new();
    for (t, (name, expr)) in TRUE_KERNELS.iter().enumerate() {
        if a.only.is_some_and(|o| o != t) {
            continue;
        }
        let kernel = Kernel::parse_with(expr, ProductVariance::EveryFactor)?;
        let Synthetic {
            x,
            y,
            noise,
            sx,
            sy,
        } = generate(&kernel, a.seed + t as u64)?;
        if a.exact_evidence {
            let data = vbks_synthetic_exact::Standardised {
                name,
                x: x.as_ref(),
                y: &y,
                truth: vbks_synthetic_exact::standardised_truth(t, sx, sy)?,
                truth_noise: noise,
                truth_period: std::f64::consts::TAU / sx,
            };
            vbks_synthetic_exact::run(&space, &data, a.restarts, a.seed)?;
            continue;
        }
        let truth = space
            .position(&Structure::parse(name)?)
            .ok_or("the true kernel is not in the space")?;
        let config = VbksConfig {
            inducing: a.inducing,
            batch_size: a.batch_size,
            iterations: a.iterations,
            checkpoints: a.checkpoints,
            seed: a.seed,
            mode,
            settle: a.settle.map(|fraction| Settle {
                fraction,
                lr_floor: a.lr_floor,
                average: a.average,
            }),
            theta_samples: a.theta_samples,
            ..VbksConfig::default()
        };
        let start = Instant::now();
        let mut curve = Vec::new();
        let run = Vbks::fit(x.as_ref(), &y, &space, &config, &mut |c| {
            let q = &c.probabilities;
            let mut order: Vec<usize> = (0..q.len()).collect();
            order.sort_by(|&i, &j| q[j].total_cmp(&q[i]));
            let rank = order.iter().position(|&i| i == truth).unwrap_or(q.len()) + 1;
            let line = json!({
                "true_kernel": name,
                "iteration": c.iteration,
                "data_fraction": c.data_fraction,
                "q_true": q[truth],
                "rank_true": rank,
                "local_elbo_true": c.local_elbos[truth],
                "top": order.iter().take(3).map(|&i| json!({
                    "kernel": space.kernels()[i].to_string(),
                    "q": q[i],
                    "local_elbo": c.local_elbos[i],
                })).collect::<Vec<_>>(),
                "train_seconds": c.train_seconds,
            });
            println!("{line}");
            curve.push((c.data_fraction, q[truth]));
        })?;
        let q = run.probabilities();
        let best = (0..q.len())
            .max_by(|&i, &j| q[i].total_cmp(&q[j]))
            .unwrap_or(0);
        let summary = json!({
            "true_kernel": name,
            "space": a.space,
            "final_q_true": q[truth],
            "true_is_largest": best == truth,
            "largest": space.kernels()[best].to_string(),
            "largest_q": q[best],
            "seconds": start.elapsed().as_secs_f64(),
            "settings": {"iterations": a.iterations, "checkpoints": a.checkpoints,
                          "inducing": a.inducing, "batch_size": a.batch_size, "seed": a.seed,
                          "mode": a.mode, "settle": a.settle, "lr_floor": a.lr_floor,
                          "average": a.average, "theta_samples": a.theta_samples},
        });
        println!("{summary}");
        results.push(summary);
        panels.push(Panel {
            title: format!("q({name}) vs share of data used ({})", a.space),
            points: Vec::new(),
            curves: vec![Curve {
                label: format!("q({name})"),
                colour: "#1f77b4",
                x: curve.iter().map(|c| c.0).collect(),
                mean: curve.iter().map(|c| c.1).collect(),
                std: vec![0.0; curve.len()],
            }],
        });
    }
    if a.exact_evidence {
        return Ok(());
    }
    let suffix = if mode == VbksMode::Full { "_full" } else { "" };
    let stem = a
        .name
        .clone()
        .unwrap_or_else(|| format!("synthetic_{}{suffix}", a.space));
    std::fs::write(
        a.out.join(format!("{stem}.json")),
        serde_json::to_string_pretty(&results)?,
    )?;
    std::fs::write(a.out.join(format!("{stem}.svg")), panels_svg(&panels))?;
    Ok(())
}
