//! Builds safe-learning benchmarks and prints, per benchmark, the build time, the sizes and the
//! true safe fraction of the candidates (and PEngine's simulator test RMSE):
//!
//! ```text
//! cargo run --release -p trustgp --example safe_benchmarks -- [DATA_DIR] [NAME…]
//! ```
//!
//! `DATA_DIR` is `../shared/data` for `pengine` and `gengine`; with no names, every benchmark.

use std::path::PathBuf;
use std::time::Instant;

use trustgp::sequential::safe::benchmarks::gengine;
use trustgp::sequential::safe::benchmarks::pengine::{files, fit_simulator, load, OUTPUTS};
use trustgp::sequential::safe::benchmarks::{safe_benchmark, BenchmarkOptions, BENCHMARK_NAMES};
use trustgp::sequential::safe::metrics::connected_components;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = BenchmarkOptions {
        data_dir: args.first().map(PathBuf::from),
        ..BenchmarkOptions::default()
    };
    let names: Vec<String> = if args.len() > 1 {
        args[1..].to_vec()
    } else {
        BENCHMARK_NAMES.iter().map(|s| s.to_string()).collect()
    };
    for name in &names {
        if name == "pengine-simulator" {
            let t = Instant::now();
            let result = files(&options).and_then(|[a, b]| {
                let data = [load(&a)?, load(&b)?];
                fit_simulator(&data, options.simulator_rows)
            });
            match result {
                Ok(sim) => {
                    for (o, r) in OUTPUTS.iter().zip(&sim.test_rmse) {
                        println!(
                            "pengine simulator {o}: test RMSE source {:.4}, target {:.4}",
                            r[0], r[1]
                        );
                    }
                    println!("pengine simulator fit: {:.1} s", t.elapsed().as_secs_f64());
                }
                Err(e) => println!("pengine simulator: error: {e}"),
            }
            continue;
        }
        if name == "gengine-data" {
            let dir = options
                .data_dir
                .clone()
                .unwrap_or_default()
                .join(gengine::FOLDER);
            for (engine, role) in [
                (gengine::GENGINE1, gengine::Role::Train),
                (gengine::GENGINE2, gengine::Role::Train),
                (gengine::GENGINE2, gengine::Role::Test),
            ] {
                let paths = gengine::find_files(&dir, engine, role);
                match gengine::load_set(&paths, engine, 1) {
                    Ok(set) => {
                        let safe = set
                            .outputs
                            .iter()
                            .filter(|o| {
                                o[1] >= gengine::TARGET_RANGE.0 && o[1] <= gengine::TARGET_RANGE.1
                            })
                            .count();
                        println!(
                            "gengine{} {role:?}: {} files, {} rows after outlier removal, target-safe fraction {:.4}",
                            engine.id,
                            paths.len(),
                            set.len(),
                            safe as f64 / set.len() as f64
                        );
                    }
                    Err(e) => println!("gengine{} {role:?}: error: {e}", engine.id),
                }
            }
            continue;
        }
        let t = Instant::now();
        match safe_benchmark(name, 0, &options) {
            Ok(b) => {
                let secs = t.elapsed().as_secs_f64();
                let safe = b.candidate_safe.iter().filter(|&&s| s).count();
                let regions = b
                    .grid
                    .as_ref()
                    // A built grid is consistent, so labelling cannot fail.
                    .and_then(|g| connected_components(&g.shape, &g.safe).ok())
                    .map(|c| c.count);
                println!(
                    "{name}: {secs:.2} s; d = {}, sources {:?}, initial {}, candidates {}, \
                     test {}, safe fraction {:.4}, grid regions {regions:?}",
                    b.bounds.len(),
                    b.sources.iter().map(|s| s.n()).collect::<Vec<_>>(),
                    b.initial.n(),
                    b.candidates.n(),
                    b.test.n(),
                    safe as f64 / b.candidates.n() as f64,
                );
            }
            Err(e) => println!("{name}: error: {e}"),
        }
    }
}
