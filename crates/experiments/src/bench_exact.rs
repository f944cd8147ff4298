//! `experiments bench-exact`: the exact-GP speed benchmark.
//!
//! On the first N rows of a shuffled copy of a CSV (last column the target; kin8nm by default),
//! inputs and target z-scored with population statistics, it times one log-marginal-likelihood
//! plus gradient evaluation at the start point (`const(1) * se(ls = 1, ARD)`, noise 0.1) and one
//! full fit from that start (L-BFGS, one start), and prints one JSON line per N — the same
//! protocol as `../shared/bench/sklearn_anchor.py`, so the two can be run side by side.
//!
//! The row order is a seeded shuffle, or, with `--order FILE` (one 0-based row index per line),
//! exactly the order another tool used, e.g. NumPy's
//! `np.random.default_rng(0).permutation(n)` in the scikit-learn anchor, so that both fit the
//! very same rows.

use std::path::PathBuf;
use std::time::Instant;

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde_json::json;
use trustgp::data::{read_csv, Dataset, Standardizer};
use trustgp::fit::FitOptions;
use trustgp::kernels::Kernel;
use trustgp::linalg::parallelism_for;
use trustgp::means::Mean;
use trustgp::models::exact::{log_marginal_likelihood, ExactGp};
use trustgp::models::hyper::GpHyper;

/// Arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// CSV with a header; the last column is the target.
    #[arg(long, default_value = "../shared/data/uci_kin8nm/data.csv")]
    data: PathBuf,
    /// Subset sizes.
    #[arg(long, value_delimiter = ',', default_value = "500,1000,2000,4000")]
    sizes: Vec<usize>,
    /// Seed of the shuffle (ignored with --order).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// File with the row order to use (one 0-based index per line).
    #[arg(long)]
    order: Option<PathBuf>,
    /// Repetitions of the single-evaluation timing (the median is reported).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Also write the first max(sizes) rows, in the order used and original units, to this CSV
    /// (for timing `trustgp fit` on the same rows).
    #[arg(long)]
    write_csv: Option<PathBuf>,
}

type BenchError = Box<dyn std::error::Error>;

/// Run the benchmark.
pub fn run(a: &Args) -> Result<(), BenchError> {
    let header = std::fs::read_to_string(&a.data)
        .map_err(|e| format!("{}: {e}", a.data.display()))?
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    let cols: Vec<String> = header.split(',').map(|s| s.trim().to_string()).collect();
    let target = cols.last().ok_or("empty header")?.clone();
    let data = read_csv(&a.data, std::slice::from_ref(&target), None)?;
    let order = row_order(a, data.n())?;
    let max_n = a.sizes.iter().copied().max().unwrap_or(0);
    if max_n > data.n() {
        return Err(format!("size {max_n} exceeds the {} rows of the data", data.n()).into());
    }
    for &n in &a.sizes {
        let sub = data.select_rows(&order[..n]);
        let (st, _) = Standardizer::fit(sub.x.as_ref(), sub.y.as_ref())?;
        let x = st.transform_x(sub.x.as_ref());
        let ys = st.transform_y(sub.y.as_ref());
        let y: Vec<f64> = (0..n).map(|i| ys[(i, 0)]).collect();
        if n == max_n {
            if let Some(path) = &a.write_csv {
                write_csv(path, &sub)?;
            }
        }
        let d = x.ncols();
        let ls = vec!["1"; d].join(",");
        let mut kernel = Kernel::parse(&format!("const(var=1) * se(ls=[{ls}])"))?;
        kernel.initialize(x.as_ref())?;
        let h = GpHyper {
            kernel,
            mean: Mean::Zero,
            noise: 0.1,
        };
        let par = parallelism_for(n);
        // Warm up (thread pool, page faults), then time.
        let start_lml = log_marginal_likelihood(&h, x.as_ref(), &y, 0.0, par, true)?.value;
        let mut times: Vec<f64> = (0..a.reps)
            .map(|_| {
                let t = Instant::now();
                let r = log_marginal_likelihood(&h, x.as_ref(), &y, 0.0, par, true);
                let s = t.elapsed().as_secs_f64();
                r.map(|_| s)
            })
            .collect::<Result<_, _>>()?;
        times.sort_by(f64::total_cmp);
        let per_eval = times[times.len() / 2];
        let t = Instant::now();
        let gp = ExactGp::fit(x.as_ref(), &y, h.clone(), &FitOptions::default())?;
        let fit_s = t.elapsed().as_secs_f64();
        let start = &gp.starts()[0];
        println!(
            "{}",
            json!({
                "n": n, "d": d,
                "sec_per_lml_grad": per_eval,
                "fit_s": fit_s,
                "evals": start.evaluations,
                "iterations": start.iterations,
                "converged": start.converged,
                "start_lml": start_lml,
                "lml": gp.lml(),
                "kernel": gp.hyper().kernel.to_expr(),
                "noise": gp.hyper().noise,
                "jitter": gp.jitter(),
            })
        );
    }
    Ok(())
}

fn row_order(a: &Args, n: usize) -> Result<Vec<usize>, BenchError> {
    match &a.order {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let order: Vec<usize> = text
                .split_whitespace()
                .enumerate()
                .map(|(i, s)| {
                    s.parse::<usize>().ok().filter(|&r| r < n).ok_or_else(|| {
                        format!(
                            "{}: entry {} ('{s}') is not a row index below {n}",
                            path.display(),
                            i + 1
                        )
                    })
                })
                .collect::<Result<_, _>>()?;
            Ok(order)
        }
        None => {
            let mut order: Vec<usize> = (0..n).collect();
            order.shuffle(&mut StdRng::seed_from_u64(a.seed));
            Ok(order)
        }
    }
}

/// The selected rows in their original units, for timing `trustgp fit` on exactly these rows.
fn write_csv(path: &PathBuf, sub: &Dataset) -> Result<(), BenchError> {
    let mut text = format!(
        "{},{}\n",
        sub.input_names.join(","),
        sub.target_names.join(",")
    );
    for i in 0..sub.n() {
        let row: Vec<String> = (0..sub.d())
            .map(|j| sub.x[(i, j)].to_string())
            .chain(std::iter::once(sub.y[(i, 0)].to_string()))
            .collect();
        text.push_str(&row.join(","));
        text.push('\n');
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}
