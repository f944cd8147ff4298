//! GEngine (`safe-transfer.md` §5.2): where SAL's unsafe queries are and why
//! (docs/decisions.md, "GEngine: SAL's unsafe queries"). For each seed given, from the stored
//! SAL run `DIR/gengine-sal-seed{S}.json`:
//!
//! * every unsafe query: its step, the temperature `T_EXM` there and the bound it breaks (by
//!   how much), the model's safety probability, and its unit-box distance to the nearest
//!   initial point and to the nearest earlier data point;
//! * SAL's temperature model fitted on the initial data alone (the fit before the first
//!   query, which stays until query 50) under the two fit settings of the authors' code
//!   (`single_task`: 10 restarts, initial noise std 0.01, the simulator scripts'; `engine`:
//!   5 restarts, initial noise std 0.1, the GEngine scripts'): log likelihood, noise,
//!   signal variance and lengthscales (bounds hit marked), and on all candidates the size of
//!   its safe set and its false positives split by the bound they break.
//!
//! ```text
//! cargo run --release -p trustgp --example safe_gengine_unsafe -- results/safe 0 1 2 3 4
//! ```

use std::path::PathBuf;

use faer::{Mat, MatRef};
use trustgp::kernels::Kernel;
use trustgp::models::transfer::{SingleTaskGp, TransferFitOptions};
use trustgp::sequential::safe::benchmarks::{safe_benchmark, BenchmarkOptions};
use trustgp::sequential::safe::scaling::UnitBox;
use trustgp::sequential::safe::{FunctionModel, SafeSet, SafeSetOptions, TwoSidedRule};

type BoxError = Box<dyn std::error::Error>;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// `name=value` for every kernel parameter, `[LO]`/`[HI]` where it sits on a bound.
fn show(k: &Kernel) -> String {
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
            format!("{n}={:.3}{hit}", v.exp())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Smallest Euclidean distance from row `i` of `a` to the first `n` rows of `b`.
fn nearest(a: MatRef<'_, f64>, i: usize, b: MatRef<'_, f64>, n: usize) -> f64 {
    (0..n)
        .map(|r| {
            (0..a.ncols())
                .map(|c| (a[(i, c)] - b[(r, c)]).powi(2))
                .sum::<f64>()
        })
        .fold(f64::INFINITY, f64::min)
        .sqrt()
}

fn run() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: safe_gengine_unsafe RUN_DIR SEED [SEED …]";
    let dir = PathBuf::from(args.first().ok_or(usage)?);
    let seeds = args[1..]
        .iter()
        .map(|a| a.parse::<u64>())
        .collect::<Result<Vec<_>, _>>()?;
    let options = BenchmarkOptions {
        data_dir: Some(PathBuf::from("../shared/data")),
        ..BenchmarkOptions::default()
    };
    let settings = [
        ("single_task", TransferFitOptions::single_task()),
        (
            "engine",
            TransferFitOptions {
                restarts: 5,
                initial_noise_std: 0.1,
                ..TransferFitOptions::single_task()
            },
        ),
        // The authors' initial lengthscale 0.2 is in the data's standardised units, whose
        // features span about 5 (ours: the unit box).
        (
            "short_ls",
            TransferFitOptions {
                initial_lengthscale: 0.04,
                ..TransferFitOptions::single_task()
            },
        ),
    ];
    for seed in seeds {
        let text = std::fs::read_to_string(dir.join(format!("gengine-sal-seed{seed}.json")))?;
        let record: serde_json::Value = serde_json::from_str(&text)?;
        let queries = record["run"]["queries"]
            .as_array()
            .ok_or("no queries in the run")?;
        let bench = safe_benchmark("gengine", seed, &options)?;
        let c = &bench.constraints[0];
        let (lo, hi) = (c.lower.ok_or("no lower")?, c.upper.ok_or("no upper")?);
        let unit = UnitBox::new(&bench.bounds)?;
        let xc = unit.to_unit(bench.candidates.x.as_ref(), "candidate inputs")?;
        let xi = unit.to_unit(bench.initial.x.as_ref(), "initial inputs")?;
        let n0 = xi.nrows();
        let index: Vec<usize> = queries
            .iter()
            .map(|q| q["index"].as_u64().map(|i| i as usize))
            .collect::<Option<_>>()
            .ok_or("a query without an index")?;
        // Data in query order: the initial points, then the queried candidates.
        let data = Mat::from_fn(n0 + index.len(), unit.dims(), |i, c| {
            if i < n0 {
                xi[(i, c)]
            } else {
                xc[(index[i - n0], c)]
            }
        });
        println!("=== seed {seed}: {} queries", index.len());
        let (mut above, mut below) = (0, 0);
        for (k, q) in queries.iter().enumerate() {
            if q["safe"].as_bool() != Some(false) {
                continue;
            }
            let t = bench.candidates.outputs[(index[k], 1)];
            let (bound, by) = if t > hi {
                above += 1;
                ("upper", t - hi)
            } else {
                below += 1;
                ("lower", lo - t)
            };
            println!(
                "unsafe query {k:3}: T = {t:+.3} breaks the {bound} bound by {by:.3}; \
                 P(safe) {:.3}; distance to initial {:.3}, to earlier data {:.3}",
                q["safety_probability"][0].as_f64().unwrap_or(f64::NAN),
                nearest(data.as_ref(), n0 + k, xi.as_ref(), n0),
                nearest(data.as_ref(), n0 + k, data.as_ref(), n0 + k),
            );
        }
        println!("unsafe above the upper bound {above}, below the lower bound {below}");
        let typical: Vec<f64> = (0..xc.nrows().min(2000))
            .map(|i| nearest(xc.as_ref(), i * (xc.nrows() / 2000).max(1), xi.as_ref(), n0))
            .collect();
        let mean_typical = typical.iter().sum::<f64>() / typical.len() as f64;
        println!("candidates' mean distance to the initial points: {mean_typical:.3}");
        // The candidates are the target trajectory's rows in time order (10 Hz) less the
        // initial ones: an initial point's nearest candidate dates it.
        let mut when: Vec<usize> = (0..n0)
            .map(|i| {
                (0..xc.nrows())
                    .min_by(|&a, &b| {
                        let d = |r: usize| {
                            (0..unit.dims())
                                .map(|c| (xc[(r, c)] - xi[(i, c)]).powi(2))
                                .sum::<f64>()
                        };
                        d(a).total_cmp(&d(b))
                    })
                    .unwrap_or(0)
            })
            .collect();
        when.sort_unstable();
        println!(
            "initial points' rows in the trajectory (of {}): {when:?}",
            xc.nrows() + n0
        );
        let widths: Vec<String> = bench
            .bounds
            .iter()
            .map(|(a, b)| format!("{:.2}", b - a))
            .collect();
        println!("feature widths: {}", widths.join(" "));
        let y = bench.initial.output(1);
        let safe_set = SafeSet::new(bench.constraints.clone(), 2, &SafeSetOptions::default())?;
        let joint = SafeSet::new(
            bench.constraints.clone(),
            2,
            &SafeSetOptions {
                two_sided: TwoSidedRule::Joint,
                ..SafeSetOptions::default()
            },
        )?;
        let truth = &bench.candidate_safe;
        for (name, fit) in &settings {
            let mut model = SingleTaskGp::new(fit.clone());
            model.update(xi.as_ref(), &y, true, 1000 + seed)?;
            let hyper = model.hyper().ok_or("no hyperparameters")?;
            let gp = model.exact().ok_or("no gp")?;
            let m = model.predict(xc.as_ref())?;
            let noise = model.noise_variance();
            let (mut size, mut fp_upper, mut fp_lower) = (0, 0, 0);
            let (mut joint_size, mut joint_fp) = (0, 0);
            for (i, ((&mean, &var), &safe)) in m.mean.iter().zip(&m.var).zip(truth).enumerate() {
                if joint.check(0, mean, var, noise).safe {
                    joint_size += 1;
                    joint_fp += usize::from(!safe);
                }
                // Constraint 0 is on output column 1 (T_EXM): only its model is needed.
                if safe_set.check(0, mean, var, noise).safe {
                    size += 1;
                    if !safe {
                        let t = bench.candidates.outputs[(i, 1)];
                        if t > hi {
                            fp_upper += 1;
                        } else {
                            fp_lower += 1;
                        }
                    }
                }
            }
            println!(
                "{name:11}: T model on the {n0} initial points: log likelihood {:.2}, noise std \
                 {:.4}; safe set {size} of {} candidates, false positives {} ({fp_upper} above \
                 the upper bound, {fp_lower} below the lower); joint rule: safe set \
                 {joint_size}, false positives {joint_fp}\n    {}",
                gp.lml(),
                noise.sqrt(),
                xc.nrows(),
                fp_upper + fp_lower,
                show(&hyper.kernel)
            );
        }
    }
    Ok(())
}
