//! `experiments bench-gpc`: fitting binary Laplace GP classification (logit), trustgp against
//! scikit-learn's `GaussianProcessClassifier`, in the same run on the same rows.
//!
//! The data are Synthetic2D-like (`adversarial-bounds.md` §5): half the rows from
//! `N((2, 0), I)` (class 1), half from `N((0, 2), I)` (class 0), drawn from `--seed`. Both fit
//! from `c · RBF(ℓ₁, ℓ₂)` with `c = ℓ = 1` by L-BFGS-B from that one start on the raw inputs
//! (no standardisation). trustgp's fit is timed in-process (`BinaryLaplace::fit`); then the
//! rows go to a CSV and `peers/gpc_sklearn_speed.py` (run with `--python`) fits and times
//! scikit-learn; one JSON line per size gives both times, both log marginal likelihoods and
//! the speed-up.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use faer::Mat;
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use serde_json::{json, Value};
use trustgp::fit::FitOptions;
use trustgp::kernels::Kernel;
use trustgp::likelihoods::Link;
use trustgp::models::classification::BinaryLaplace;

/// Arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Training set sizes.
    #[arg(long, value_delimiter = ',', default_value = "2000")]
    sizes: Vec<usize>,
    /// Seed of the data.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Python with scikit-learn; without it only trustgp is timed.
    #[arg(long)]
    python: Option<PathBuf>,
    /// The peer script.
    #[arg(long, default_value = "crates/experiments/peers/gpc_sklearn_speed.py")]
    peer: PathBuf,
    /// Scratch folder for the CSV handed to the peer.
    #[arg(long, default_value = "target/bench-gpc")]
    scratch: PathBuf,
}

type BenchError = Box<dyn std::error::Error>;

/// `n` Synthetic2D-like rows and their labels `±1`.
fn synthetic(n: usize, seed: u64) -> (Mat<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let y: Vec<f64> = (0..n)
        .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
        .collect();
    let x = Mat::from_fn(n, 2, |i, c| {
        let z: f64 = StandardNormal.sample(&mut rng);
        let shifted = (y[i] > 0.0) == (c == 0);
        z + if shifted { 2.0 } else { 0.0 }
    });
    (x, y)
}

/// Run the benchmark.
pub fn run(a: &Args) -> Result<(), BenchError> {
    std::fs::create_dir_all(&a.scratch)?;
    for &n in &a.sizes {
        let (x, y) = synthetic(n, a.seed);
        let kernel = Kernel::parse("const(var=1) * se(ls=[1, 1])")?;
        let clock = Instant::now();
        let model =
            BinaryLaplace::fit(x.as_ref(), &y, kernel, Link::Logit, &FitOptions::default())?;
        let seconds = clock.elapsed().as_secs_f64();
        let evals: usize = model.starts().iter().map(|s| s.evaluations).sum();
        let mut line = json!({
            "n": n,
            "trustgp": {
                "fit_seconds": seconds,
                "lml": model.lml(),
                "kernel": model.kernel().to_expr(),
                "evaluations": evals,
            },
        });
        if let Some(python) = &a.python {
            let csv = a.scratch.join(format!("synthetic2d_{n}.csv"));
            let mut text = String::from("x1,x2,y\n");
            for i in 0..n {
                text.push_str(&format!(
                    "{},{},{}\n",
                    x[(i, 0)],
                    x[(i, 1)],
                    u8::from(y[i] > 0.0)
                ));
            }
            std::fs::write(&csv, text)?;
            let out = Command::new(python).arg(&a.peer).arg(&csv).output()?;
            if !out.status.success() {
                return Err(
                    format!("the peer failed: {}", String::from_utf8_lossy(&out.stderr)).into(),
                );
            }
            let peer: Value = serde_json::from_slice(&out.stdout)?;
            let sk = peer["fit_seconds"].as_f64().unwrap_or(f64::NAN);
            line["sklearn"] = peer;
            line["speedup"] = json!(sk / seconds);
        }
        println!("{line}");
    }
    Ok(())
}
