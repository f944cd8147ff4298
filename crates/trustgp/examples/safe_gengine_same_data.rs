//! GEngine (`safe-transfer.md` §5.2): EffTransHGP, FullTransHGP and SAL refitted on the same
//! data, to tell a model difference from a difference of query paths (docs/decisions.md,
//! "GEngine: EffTransHGP against FullTransHGP"). The data are the initial points and the first
//! `m` queries of a stored run, for each `m` given (in increasing order; every model refits at
//! each, warm from the previous, as in a run). Printed for the main output (HC) at each `m`:
//! each model's test RMSE, its joint log likelihood and fitted hyperparameters (bounds hit
//! marked), and EffTransHGP's likelihood and RMSE at FullTransHGP's target group (its own
//! frozen source group kept):
//!
//! ```text
//! cargo run --release -p trustgp --example safe_gengine_same_data -- \
//!     0 results/safe/gengine-efficient-hgp-seed0.json 0 50 100 150
//! ```

use std::path::PathBuf;

use faer::Mat;
use trustgp::kernels::{HierarchicalKernel, Kernel};
use trustgp::models::transfer::{EfficientHgp, HgpTransfer, SingleTaskGp, TransferFitOptions};
use trustgp::sequential::safe::benchmarks::{safe_benchmark, BenchmarkOptions};
use trustgp::sequential::safe::scaling::UnitBox;
use trustgp::sequential::safe::{FunctionModel, SourceTask};

type BoxError = Box<dyn std::error::Error>;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// `name.param=value` for every parameter, `[LO]`/`[HI]` where it sits on a bound.
fn show(name: &str, k: &Kernel) -> String {
    let (names, values, bounds) = (k.param_names(), k.log_params(), k.log_bounds());
    (names.iter().zip(&values).zip(&bounds))
        .map(|((n, v), (lo, hi))| {
            let hit = if (v - lo).abs() < 1e-6 {
                "[LO]"
            } else if (v - hi).abs() < 1e-6 {
                "[HI]"
            } else {
                ""
            };
            format!("{name}.{n}={:.3}{hit}", v.exp())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn run() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: safe_gengine_same_data SEED RUN_JSON M [M …]";
    let seed: u64 = args.first().ok_or(usage)?.parse()?;
    let text = std::fs::read_to_string(args.get(1).ok_or(usage)?)?;
    let ms = args[2..]
        .iter()
        .map(|a| a.parse::<usize>())
        .collect::<Result<Vec<_>, _>>()?;
    let record: serde_json::Value = serde_json::from_str(&text)?;
    let queries: Vec<usize> = record["run"]["queries"]
        .as_array()
        .ok_or("no queries in the run")?
        .iter()
        .map(|q| q["index"].as_u64().map(|i| i as usize))
        .collect::<Option<_>>()
        .ok_or("a query without an index")?;
    let options = BenchmarkOptions {
        data_dir: Some(PathBuf::from("../shared/data")),
        ..BenchmarkOptions::default()
    };
    let bench = safe_benchmark("gengine", seed, &options)?;
    let unit = UnitBox::new(&bench.bounds)?;
    let xs = unit.to_unit(bench.sources[0].x.as_ref(), "source inputs")?;
    let xc = unit.to_unit(bench.candidates.x.as_ref(), "candidate inputs")?;
    let xi = unit.to_unit(bench.initial.x.as_ref(), "initial inputs")?;
    let xt = unit.to_unit(bench.test.x.as_ref(), "test inputs")?;
    let yt = bench.test.output(0);
    let (n0, d) = (xi.nrows(), unit.dims());
    let rmse = |mu: &[f64]| {
        let sq: f64 = mu.iter().zip(&yt).map(|(a, b)| (a - b) * (a - b)).sum();
        (sq / yt.len() as f64).sqrt()
    };
    let source = SourceTask {
        x: xs,
        y: bench.sources[0].output(0),
    };
    let mut eff = EfficientHgp::new(vec![source.clone()], TransferFitOptions::default())?;
    let mut full = HgpTransfer::new(vec![source], TransferFitOptions::default())?;
    let mut sal = SingleTaskGp::new(TransferFitOptions::single_task());
    for &m in &ms {
        if m > queries.len() {
            return Err(format!("the run has {} queries, asked for {m}", queries.len()).into());
        }
        let n = n0 + m;
        let row = |i: usize| if i < n0 { None } else { Some(queries[i - n0]) };
        let x = Mat::from_fn(n, d, |i, c| match row(i) {
            None => xi[(i, c)],
            Some(q) => xc[(q, c)],
        });
        let y: Vec<f64> = (0..n)
            .map(|i| match row(i) {
                None => bench.initial.outputs[(i, 0)],
                Some(q) => bench.candidates.outputs[(q, 0)],
            })
            .collect();
        let fit_seed = 100 + m as u64;
        eff.update(x.as_ref(), &y, true, fit_seed)?;
        full.update(x.as_ref(), &y, true, fit_seed)?;
        sal.update(x.as_ref(), &y, true, fit_seed)?;
        let (ke, kf) = (
            eff.kernel().ok_or("no kernel")?,
            full.kernel().ok_or("no kernel")?,
        );
        println!("--- {m} queries (N = {n})");
        for (name, k, noise, lml, mu) in [
            (
                "EffTransHGP ",
                ke,
                eff.noise(),
                eff.lml(),
                eff.predict(xt.as_ref())?.mean,
            ),
            (
                "FullTransHGP",
                kf,
                full.noise(),
                full.lml(),
                full.predict(xt.as_ref())?.mean,
            ),
        ] {
            println!(
                "{name}: RMSE {:.4}, log likelihood {:.2}, noise {noise:?}\n    {}\n    {}",
                rmse(&mu),
                lml.unwrap_or(f64::NAN),
                show("source", &k.levels()[0]),
                show("target", &k.levels()[1])
            );
        }
        let mut probe = eff.clone();
        let mixed = HierarchicalKernel::new(vec![ke.levels()[0].clone(), kf.levels()[1].clone()])?;
        probe.set_hyperparameters(mixed, vec![eff.noise()[0], full.noise()[1]])?;
        println!(
            "EffTransHGP at FullTransHGP's target group: log likelihood {:.2}, RMSE {:.4}",
            probe.lml().unwrap_or(f64::NAN),
            rmse(&probe.predict(xt.as_ref())?.mean)
        );
        println!("SAL: RMSE {:.4}", rmse(&sal.predict(xt.as_ref())?.mean));
    }
    Ok(())
}
