//! Table 4's last refit, cold (the paper's protocol: the initial values, the previous optimum
//! and the random restarts) against warm (`TransferFitOptions::warm_restarts = Some(0)`: the
//! previous optimum and the initial values only), for EffTransHGP and SAL, on the data of a
//! stored EffTransHGP run (its initial points and queries, so both see the same data).
//!
//! Each (problem, seed, method, mode) is one [`replay_last_refit`]: the model is fitted at the
//! refit before the last, then its last refit is timed (one thread); printed are the seconds
//! of all outputs together and the log marginal likelihood each reaches (summed over the
//! outputs; EffTransHGP's is that of (sources, target), whose source part is the same for
//! both). Then, per method and mode, the spread max/min of the per-problem mean times. (The
//! like-for-like Table 4 of all five methods is `experiments safe-table4`.)
//!
//! ```text
//! cargo run --release -p trustgp --example safe_refit_replay -- ../shared/data results/safe 0,1,2
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use trustgp::sequential::safe::benchmarks::{safe_benchmark, BenchmarkOptions};
use trustgp::sequential::safe::replay::replay_last_refit;
use trustgp::sequential::safe::{function_model_with, TargetScaling, TransferMethod};

type BoxError = Box<dyn std::error::Error>;

const PROBLEMS: [&str; 6] = ["gp1d", "gp2d", "branin", "hartmann3", "pengine", "gengine"];

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [data_dir, runs_dir, seeds] = &args[..] else {
        return Err(
            "usage: safe_refit_replay DATA_DIR RUNS_DIR SEEDS (e.g. ../shared/data \
                    results/safe 0,1,2)"
                .into(),
        );
    };
    let seeds = seeds
        .split(',')
        .map(|s| s.parse::<u64>().map_err(|_| format!("bad seed '{s}'")))
        .collect::<Result<Vec<_>, _>>()?;
    let options = BenchmarkOptions {
        data_dir: Some(PathBuf::from(data_dir)),
        ..BenchmarkOptions::default()
    };
    // (method, mode) → per-problem mean seconds.
    let mut means: BTreeMap<(&str, &str), Vec<f64>> = BTreeMap::new();
    for problem in PROBLEMS {
        let mut times: BTreeMap<(&str, &str), Vec<f64>> = BTreeMap::new();
        for &seed in &seeds {
            let run = Path::new(runs_dir).join(format!("{problem}-efficient-hgp-seed{seed}.json"));
            let Ok(text) = std::fs::read_to_string(&run) else {
                continue;
            };
            let record: serde_json::Value = serde_json::from_str(&text)?;
            let queries: Vec<usize> = record["run"]["queries"]
                .as_array()
                .ok_or("no queries in the run")?
                .iter()
                .map(|q| q["index"].as_u64().map(|i| i as usize))
                .collect::<Option<_>>()
                .ok_or("a query without an index")?;
            let bench = safe_benchmark(problem, seed, &options)?;
            for (method, transfer) in [
                ("efficient-hgp", TransferMethod::EfficientHgp),
                ("sal", TransferMethod::None),
            ] {
                let mut line = format!("{problem} seed {seed} {method}:");
                let mut cold_seconds = 0.0;
                for (mode, warm) in [("cold", None), ("warm", Some(0))] {
                    // SAL as the runs fit it on this data set (GEngine: the engine scripts'),
                    // without the source data.
                    let factory = |_: usize, sources| {
                        let sources = if transfer == TransferMethod::None {
                            Vec::new()
                        } else {
                            sources
                        };
                        function_model_with(transfer, sources, warm, bench.sal_fit)
                    };
                    let r = replay_last_refit(
                        &bench,
                        &queries,
                        bench.refit_every,
                        TargetScaling::Identity,
                        &factory,
                        seed,
                    )?;
                    line += &format!(
                        " N {} last refit {mode} {:.4} s (lml {:.3}),",
                        r.n_target,
                        r.seconds,
                        r.log_evidence.unwrap_or(f64::NAN)
                    );
                    if warm.is_none() {
                        cold_seconds = r.seconds;
                    } else {
                        line += &format!(" {:.1}× faster", cold_seconds / r.seconds);
                    }
                    times.entry((method, mode)).or_default().push(r.seconds);
                }
                println!("{line}");
            }
        }
        for (key, v) in times {
            means
                .entry(key)
                .or_default()
                .push(v.iter().sum::<f64>() / v.len() as f64);
        }
    }
    for ((method, mode), v) in &means {
        let hi = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
        let list: Vec<String> = v.iter().map(|t| format!("{t:.4}")).collect();
        println!(
            "{method} {mode}: per-problem mean seconds [{}] ({}); spread {:.1}×",
            list.join(", "),
            PROBLEMS.join(", "),
            hi / lo.max(1e-3)
        );
    }
    Ok(())
}
