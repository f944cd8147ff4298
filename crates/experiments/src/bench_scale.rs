//! `experiments bench-scale`: the scalable models on kin40k (36k training rows) and SVGP on a
//! million synthetic rows.
//!
//! Each model runs in a child process of its own (this binary, `bench-scale --one …`), so that
//! the peak resident memory it reports (`VmHWM` from `/proc/self/status`) is that model's alone.
//!
//! * `kin40k`: split 0 of `gpbench_kin40k` (`test_mask.csv` column 0), inputs and target
//!   z-scored with the training statistics; fit seconds, peak memory and test RMSE in units of
//!   the target's standard deviation.
//! * `million`: SVGP on n synthetic rows (default 10⁶; y = sin(3x₁) + cos(2x₂) + noise), timed
//!   per epoch, at several n, to show time linear in epochs and memory independent of n beyond
//!   the data themselves.

use std::path::{Path, PathBuf};
use std::time::Instant;

use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;
use serde_json::{json, Value};

use crate::scale_models::{fit_scale_model, ScaleModel, ScaleSettings};

/// Arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// kin40k folder (data.csv without header, last column the target; test_mask.csv).
    #[arg(long, default_value = "../shared/data/gpbench_kin40k")]
    kin40k: PathBuf,
    /// Models to run on kin40k: sgpr, svgp, cagp, rcagp.
    #[arg(long, value_delimiter = ',', default_value = "sgpr,svgp,cagp,rcagp")]
    models: Vec<String>,
    /// Row counts of the synthetic SVGP runs (0: skip them).
    #[arg(long, value_delimiter = ',', default_value = "250000,1000000")]
    million: Vec<usize>,
    /// Epochs of each synthetic SVGP run.
    #[arg(long, default_value_t = 2)]
    epochs: usize,
    /// Inducing points of SGPR and SVGP.
    #[arg(long, default_value_t = 500)]
    inducing: usize,
    /// Actions of CaGP and RCaGP.
    #[arg(long, default_value_t = 25)]
    actions: usize,
    /// L-BFGS iterations of the deterministic objectives (SGPR, CaGP, RCaGP); SVGP on kin40k
    /// takes at most ten times as many Adam steps.
    #[arg(long, default_value_t = 100)]
    iterations: usize,
    /// SVGP minibatch size.
    #[arg(long, default_value_t = 4096)]
    batch_size: usize,
    /// Internal: run one model in this process and print its JSON line.
    #[arg(long, hide = true)]
    one: Option<String>,
}

type BoxError = Box<dyn std::error::Error>;

/// Peak resident set size of this process in MiB (Linux), or NaN where unavailable.
fn peak_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

/// Reads a headerless numeric CSV.
fn read_plain(path: &Path) -> Result<Vec<Vec<f64>>, BoxError> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            l.split(',')
                .map(|v| v.trim().parse::<f64>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("{} line {}: {e}", path.display(), i + 1).into())
        })
        .collect()
}

/// Training and test inputs and targets.
type Split = (Mat<f64>, Vec<f64>, Mat<f64>, Vec<f64>);

/// kin40k split 0, z-scored with training statistics: (x_train, y_train, x_test, y_test).
fn kin40k(dir: &Path) -> Result<Split, BoxError> {
    let data = read_plain(&dir.join("data.csv"))?;
    let mask = read_plain(&dir.join("test_mask.csv"))?;
    let d = data[0].len() - 1;
    let (test, train): (Vec<usize>, Vec<usize>) = (0..data.len()).partition(|&i| mask[i][0] > 0.5);
    let stats = |c: usize| {
        let n = train.len() as f64;
        let m = train.iter().map(|&i| data[i][c]).sum::<f64>() / n;
        let s = (train.iter().map(|&i| (data[i][c] - m).powi(2)).sum::<f64>() / n).sqrt();
        (m, if s > 0.0 { s } else { 1.0 })
    };
    let st: Vec<(f64, f64)> = (0..=d).map(stats).collect();
    let x =
        |rows: &[usize]| Mat::from_fn(rows.len(), d, |i, c| (data[rows[i]][c] - st[c].0) / st[c].1);
    let y = |rows: &[usize]| -> Vec<f64> {
        rows.iter()
            .map(|&i| (data[i][d] - st[d].0) / st[d].1)
            .collect()
    };
    Ok((x(&train), y(&train), x(&test), y(&test)))
}

/// n synthetic rows with two inputs uniform on [−2, 2]: y = sin(3x₁) + cos(2x₂) + N(0, 0.1²).
fn synthetic(n: usize, seed: u64) -> (Mat<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let x = Mat::from_fn(n, 2, |_, _| rng.random_range(-2.0f64..2.0));
    let y = (0..n)
        .map(|i| {
            let e: f64 = rng.sample(StandardNormal);
            (3.0 * x[(i, 0)]).sin() + (2.0 * x[(i, 1)]).cos() + 0.1 * e
        })
        .collect();
    (x, y)
}

fn rmse(a: &[f64], b: &[f64]) -> f64 {
    (a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum::<f64>() / a.len() as f64).sqrt()
}

/// Runs one job in this process and prints its JSON line.
fn run_one(a: &Args, job: &str) -> Result<(), BoxError> {
    let settings = ScaleSettings {
        inducing: a.inducing,
        actions: a.actions,
        iterations: a.iterations,
        batch_size: a.batch_size,
    };
    let line = if let Some(n) = job.strip_prefix("million:") {
        let n: usize = n.parse()?;
        let (x, y) = synthetic(n, 7);
        let data_mib = (x.nrows() * x.ncols() + y.len()) as f64 * 8.0 / (1024.0 * 1024.0);
        let (xt, yt) = synthetic(2000, 8);
        let r = fit_scale_model(ScaleModel::SvgpEpochs(a.epochs), &x, &y, &xt, &settings)?;
        json!({"job": "svgp-synthetic", "n": n, "epochs": a.epochs, "fit_seconds": r.seconds,
               "seconds_per_epoch": r.seconds / a.epochs as f64, "test_rmse": rmse(&r.mean, &yt),
               "peak_mib": peak_mib(), "data_mib": data_mib, "detail": r.detail})
    } else {
        let model = ScaleModel::parse(job)?;
        let (x, y, xt, yt) = kin40k(&a.kin40k)?;
        let t0 = Instant::now();
        let r = fit_scale_model(model, &x, &y, &xt, &settings)?;
        json!({"job": "kin40k", "model": job, "n_train": x.nrows(), "n_test": xt.nrows(),
               "fit_seconds": r.seconds, "total_seconds": t0.elapsed().as_secs_f64(),
               "test_rmse_sd": rmse(&r.mean, &yt), "peak_mib": peak_mib(), "detail": r.detail})
    };
    println!("{line}");
    Ok(())
}

/// Run the benchmark: each job in a child process; the JSON lines are echoed.
pub fn run(a: &Args) -> Result<(), BoxError> {
    if let Some(job) = &a.one {
        return run_one(a, job);
    }
    let exe = std::env::current_exe()?;
    let jobs = (a.models.iter().cloned())
        .chain(
            a.million
                .iter()
                .filter(|&&n| n > 0)
                .map(|n| format!("million:{n}")),
        )
        .collect::<Vec<_>>();
    for job in jobs {
        let out = std::process::Command::new(&exe)
            .args(["bench-scale", "--kin40k"])
            .arg(&a.kin40k)
            .args(["--epochs", &a.epochs.to_string(), "--one", &job])
            .args(["--inducing", &a.inducing.to_string()])
            .args(["--actions", &a.actions.to_string()])
            .args(["--iterations", &a.iterations.to_string()])
            .args(["--batch-size", &a.batch_size.to_string()])
            .stderr(std::process::Stdio::inherit())
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        match text.lines().last().map(serde_json::from_str::<Value>) {
            Some(Ok(v)) if out.status.success() => println!("{v}"),
            _ => eprintln!("{job}: failed ({})", out.status),
        }
    }
    Ok(())
}
