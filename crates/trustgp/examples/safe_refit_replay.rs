//! Table 4's last refit, cold (the paper's protocol: the initial values, the previous optimum
//! and the random restarts) against warm (`TransferFitOptions::warm_restarts = Some(0)`: the
//! previous optimum and the initial values only), for EffTransHGP and SAL, on the data of a
//! stored EffTransHGP run (its initial points and queries, so both see the same data).
//!
//! For each problem and seed, each model is fitted (cold) at the refit before the last, then
//! its last refit is timed (best of 3, from the same state) cold and warm; printed are the
//! seconds of both outputs together and the log marginal likelihood each reaches (summed over
//! the outputs; EffTransHGP's is that of (sources, target), whose source part is the same for
//! both). Then, per method and mode, the spread max/min of the per-problem mean times:
//!
//! ```text
//! cargo run --release -p trustgp --example safe_refit_replay -- ../shared/data results/safe 0,1,2
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use faer::Mat;
use trustgp::models::transfer::{EfficientHgp, SingleTaskGp, TransferFitOptions};
use trustgp::sequential::safe::benchmarks::{safe_benchmark, BenchmarkOptions};
use trustgp::sequential::safe::scaling::UnitBox;
use trustgp::sequential::safe::{sal_fit_options, FunctionModel, SafeBenchmark, SourceTask};

type BoxError = Box<dyn std::error::Error>;

const PROBLEMS: [&str; 6] = ["gp1d", "gp2d", "branin", "hartmann3", "pengine", "gengine"];

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// The two models compared, each with what it reaches.
trait Timed: FunctionModel + Clone {
    fn objective(&self) -> f64;
}

impl Timed for EfficientHgp {
    fn objective(&self) -> f64 {
        self.lml().unwrap_or(f64::NAN)
    }
}

impl Timed for SingleTaskGp {
    fn objective(&self) -> f64 {
        self.exact().map_or(f64::NAN, |g| g.lml())
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
            let data = Replay::new(&bench, &queries)?;
            for (method, cold, warm) in [
                ("efficient-hgp", TransferFitOptions::default(), None),
                // SAL as the runs fit it on this data set (GEngine: the engine scripts').
                ("sal", sal_fit_options(bench.sal_fit), None),
            ]
            .map(|(m, o, _): (&str, TransferFitOptions, Option<()>)| {
                let w = TransferFitOptions {
                    warm_restarts: Some(0),
                    ..o.clone()
                };
                (m, o, w)
            }) {
                let (tc, lc, tw, lw) = if method == "sal" {
                    data.compare(
                        |_| SingleTaskGp::new(cold.clone()),
                        |_| SingleTaskGp::new(warm.clone()),
                    )?
                } else {
                    data.compare(
                        |s: SourceTask| EfficientHgp::new(vec![s], cold.clone()).unwrap(),
                        |s: SourceTask| EfficientHgp::new(vec![s], warm.clone()).unwrap(),
                    )?
                };
                println!(
                    "{problem} seed {seed} {method}: N {} last refit cold {tc:.4} s (lml {lc:.3}), \
                     warm {tw:.4} s (lml {lw:.3}), {:.1}× faster",
                    data.n_last,
                    tc / tw
                );
                times.entry((method, "cold")).or_default().push(tc);
                times.entry((method, "warm")).or_default().push(tw);
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

/// A stored run's data in model units: the unit-box inputs of the initial points and queries,
/// each output's values, its source tasks, and the last two refit sizes.
struct Replay {
    x: Mat<f64>,
    y: Vec<Vec<f64>>,
    sources: Vec<SourceTask>,
    n_previous: usize,
    n_last: usize,
}

impl Replay {
    fn new(bench: &SafeBenchmark, queries: &[usize]) -> Result<Self, BoxError> {
        let unit = UnitBox::new(&bench.bounds)?;
        let xc = unit.to_unit(bench.candidates.x.as_ref(), "candidates")?;
        let xi = unit.to_unit(bench.initial.x.as_ref(), "initial")?;
        let (n0, d) = (xi.nrows(), unit.dims());
        let n = n0 + queries.len();
        let x = Mat::from_fn(n, d, |i, c| {
            if i < n0 {
                xi[(i, c)]
            } else {
                xc[(queries[i - n0], c)]
            }
        });
        let outputs = bench.initial.outputs.ncols();
        let y = (0..outputs)
            .map(|j| {
                (0..n)
                    .map(|i| {
                        if i < n0 {
                            bench.initial.outputs[(i, j)]
                        } else {
                            bench.candidates.outputs[(queries[i - n0], j)]
                        }
                    })
                    .collect()
            })
            .collect();
        let source = &bench.sources[0];
        let xs = unit.to_unit(source.x.as_ref(), "sources")?;
        let sources = (0..outputs)
            .map(|j| SourceTask {
                x: xs.clone(),
                y: source.output(j),
            })
            .collect();
        // The run refits before queries 0, k, 2k, …: its last refit saw n0 + k·⌊q/k⌋ points.
        let k = bench.refit_every;
        let last = queries.len() / k * k;
        Ok(Replay {
            x,
            y,
            sources,
            n_previous: n0 + last.saturating_sub(k),
            n_last: n0 + last,
        })
    }

    /// The last refit's seconds (best of 3) and objective, cold then warm, summed over the
    /// outputs; both models are first fitted at the previous refit (cold either way).
    fn compare<M: Timed>(
        &self,
        cold: impl Fn(SourceTask) -> M,
        warm: impl Fn(SourceTask) -> M,
    ) -> Result<(f64, f64, f64, f64), BoxError> {
        let mut out = (0.0, 0.0, 0.0, 0.0);
        for (j, y) in self.y.iter().enumerate() {
            let x_prev = self.x.subrows(0, self.n_previous);
            let x_last = self.x.subrows(0, self.n_last);
            let mut models = [cold(self.sources[j].clone()), warm(self.sources[j].clone())];
            for m in &mut models {
                m.update(x_prev, &y[..self.n_previous], true, 7)?;
            }
            let mut result = [(f64::INFINITY, 0.0); 2];
            for (m, r) in models.iter().zip(&mut result) {
                for _ in 0..3 {
                    // The model's own fit time, as Table 4 (not the conditioning after it).
                    let mut fresh = m.clone();
                    fresh.update(x_last, &y[..self.n_last], true, 8)?;
                    r.0 = r.0.min(fresh.fit_seconds());
                    r.1 = fresh.objective();
                }
            }
            out.0 += result[0].0;
            out.1 += result[0].1;
            out.2 += result[1].0;
            out.3 += result[1].1;
        }
        Ok(out)
    }
}
