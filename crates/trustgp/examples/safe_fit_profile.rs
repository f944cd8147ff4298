//! Where EffTransHGP's refit time goes on GEngine (Table 4): for each output (HC emission, then
//! temperature) the source group is fitted once on the 500 source points, then the target group
//! is refitted on `N` target rows (the 20 initial points and every 37th candidate); printed are
//! the refit's seconds (best of 3), the median seconds of one evaluation of the fitting
//! objective `log p(y_t | y_s)` with its gradient, and their ratio (≈ the evaluations the fit
//! made, over all its starts):
//!
//! ```text
//! cargo run --release -p trustgp --example safe_fit_profile -- ../shared/data 70 120 170 220
//! ```

use std::path::PathBuf;
use std::time::Instant;

use faer::Mat;
use trustgp::models::transfer::{EfficientHgp, TransferFitOptions};
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

fn run() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let data_dir = args
        .first()
        .ok_or("usage: safe_fit_profile DATA_DIR N [N …] (DATA_DIR: ../shared/data)")?;
    let sizes = args[1..]
        .iter()
        .map(|a| {
            a.parse::<usize>()
                .map_err(|_| format!("N must be a whole number, got '{a}'"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let options = BenchmarkOptions {
        data_dir: Some(PathBuf::from(data_dir)),
        ..BenchmarkOptions::default()
    };
    let bench = safe_benchmark("gengine", 0, &options)?;
    let unit = UnitBox::new(&bench.bounds)?;
    let xs = unit.to_unit(bench.sources[0].x.as_ref(), "source inputs")?;
    let xc = unit.to_unit(bench.candidates.x.as_ref(), "candidate inputs")?;
    let xi = unit.to_unit(bench.initial.x.as_ref(), "initial inputs")?;
    let (n0, d) = (xi.nrows(), unit.dims());
    for &n in &sizes {
        if n <= n0 {
            return Err(format!("N must exceed the {n0} initial points, got {n}").into());
        }
        // The initial rows, then every 37th candidate (a spread-out stand-in for the queries).
        let rows: Vec<usize> = (0..n - n0).map(|i| (i * 37) % xc.nrows()).collect();
        let x = Mat::from_fn(n, d, |i, c| {
            if i < n0 {
                xi[(i, c)]
            } else {
                xc[(rows[i - n0], c)]
            }
        });
        for j in 0..bench.initial.outputs.ncols() {
            let y: Vec<f64> = (0..n)
                .map(|i| {
                    if i < n0 {
                        bench.initial.outputs[(i, j)]
                    } else {
                        bench.candidates.outputs[(rows[i - n0], j)]
                    }
                })
                .collect();
            let source = SourceTask {
                x: xs.clone(),
                y: bench.sources[0].output(j),
            };
            let mut model = EfficientHgp::new(vec![source], TransferFitOptions::default())?;
            // The first update fits the source group (once); the refits below do not.
            model.update(x.subrows(0, n0), &y[..n0], true, 1)?;
            let mut refit = f64::INFINITY;
            for seed in 0..3 {
                let clock = Instant::now();
                model.update(x.as_ref(), &y, true, 2 + seed)?;
                refit = refit.min(clock.elapsed().as_secs_f64());
            }
            let kernel = model.kernel().ok_or("no kernel after an update")?;
            let target = &kernel.levels()[1];
            let v: Vec<f64> = (target.log_params().into_iter())
                .chain([model.noise()[1].ln()])
                .collect();
            let mut times = Vec::with_capacity(41);
            for _ in 0..41 {
                let clock = Instant::now();
                model.conditional_log_likelihood(&v)?;
                times.push(clock.elapsed().as_secs_f64());
            }
            times.sort_by(f64::total_cmp);
            let one = times[times.len() / 2];
            println!(
                "output {j}: N_source {} N {n} D {d}: refit {refit:.3} s, one evaluation {:.2} ms, \
                 ≈ {:.0} evaluations; source factorisations {}",
                xs.nrows(),
                one * 1e3,
                refit / one,
                model.source_factorisations()
            );
        }
    }
    Ok(())
}
