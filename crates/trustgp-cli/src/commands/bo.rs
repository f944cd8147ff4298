//! `trustgp bo`: Bayesian optimisation of a built-in benchmark through the library's ask/tell
//! [`BayesOpt`] run, reporting the best clean value after every evaluation.
//!
//! With `--outliers`, the surrogate sees corrupted values (`rcagp.md` §3.5, steps 2 and 10):
//! each evaluation, standardised with the initial design's mean and standard deviation (fixed
//! for the run), becomes an outlier with the given probability, shifted by `U(1σ̄, 2σ̄)`; the
//! trust region and the reported best follow the clean values. With `--expert-mean simulated`
//! the paper's simulated expert corrects every injected outlier seen so far each
//! [`EXPERT_EVERY`] evaluations after the initial design (`rcagp.md` §2.12, §3.5 step 11).

use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::Path;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{json, Value};
use trustgp::data::read_inputs;
use trustgp::report::svg::{line_plot, Series};
use trustgp::sequential::bayes_opt::{
    simulated_correction, BayesOpt, BoSettings, ExpertPrior, Method, RobustCentre, CENTRED_MODELS,
    EXPERT_EVERY,
};
use trustgp::sequential::problems::outliers::ObservationOutliers;
use trustgp::sequential::problems::Problem;
use trustgp::sequential::suggest::{Bound, SuggestAcquisition};

use super::{print_json, CliError};
use crate::args::BoArgs;

/// The fixed standardisation of a run with outliers: the initial design's mean `μ_y` and
/// standard deviation `s_y`, and σ̄, the standard deviation of the standardised design values.
struct Scale {
    mean: f64,
    std: f64,
    sigma_bar: f64,
}

/// Mean and (population) standard deviation.
fn mean_std(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    (
        mean,
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt(),
    )
}

impl Scale {
    fn of(design: &[f64]) -> Result<Scale, CliError> {
        let (mean, std) = mean_std(design);
        if !(std > 0.0 && std.is_finite()) {
            return Err(
                "--outliers: the initial design's values do not vary, so outlier \
                        shifts have no scale; use a larger --init"
                    .into(),
            );
        }
        let standardised: Vec<f64> = design.iter().map(|y| (y - mean) / std).collect();
        Ok(Scale {
            mean,
            std,
            sigma_bar: mean_std(&standardised).1,
        })
    }
}

/// The initial design of `--init-points`: its rows of the problem's inputs, inside the box.
fn initial_points(path: &Path, problem: Problem) -> Result<Vec<Vec<f64>>, CliError> {
    let names: Vec<String> = (1..=problem.dim()).map(|c| format!("x{c}")).collect();
    let x = read_inputs(path, &names)?;
    let (lo, hi) = problem.bounds();
    (0..x.nrows())
        .map(|i| {
            let row: Vec<f64> = (0..x.ncols()).map(|c| x[(i, c)]).collect();
            match (0..row.len()).find(|&c| !(lo[c] <= row[c] && row[c] <= hi[c])) {
                Some(c) => Err(format!(
                    "{}: row {}, column x{}: {} is outside the box [{}, {}]",
                    path.display(),
                    i + 1,
                    c + 1,
                    row[c],
                    lo[c],
                    hi[c]
                )
                .into()),
                None => Ok(row),
            }
        })
        .collect()
}

/// The settings of the flags, after checking the budget; `init` is the initial design's size.
fn settings(a: &BoArgs, problem: Problem, init: usize) -> Result<BoSettings, CliError> {
    if a.budget == 0 || init == 0 || a.batch == 0 {
        return Err("--budget, --init and --batch must be at least 1".into());
    }
    if init > a.budget {
        let design = match a.init_points {
            Some(_) => format!("--init-points has {init} rows, which"),
            None => format!("--init {init}"),
        };
        return Err(format!(
            "{design} exceeds --budget {}: the initial design is part of the budget",
            a.budget
        )
        .into());
    }
    let (lo, hi) = problem.bounds();
    let bounds = (0..problem.dim())
        .map(|c| Bound {
            name: format!("x{}", c + 1),
            lo: lo[c],
            hi: hi[c],
        })
        .collect();
    let mut s = BoSettings::new(bounds);
    s.model.clone_from(&a.model);
    s.acquisition = SuggestAcquisition::parse(&a.acquisition)?;
    s.method = Method::parse(&a.method)?;
    s.robust_centre = robust_centre(a.robust_centre.as_deref(), &a.model)?;
    s.expert_mean = match a.expert_mean.as_str() {
        "simulated" if a.outliers.is_none() => {
            return Err(
                "--expert-mean simulated corrects injected outliers: give --outliers".into(),
            )
        }
        "simulated" => ExpertPrior::Corrections,
        "corrections" => {
            return Err(
                "trustgp bo's expert is simulated: use --expert-mean simulated (corrections \
                 come from suggest's --expert-mean corrections:COLUMN)"
                    .into(),
            )
        }
        other => ExpertPrior::parse(other)?,
    };
    s.n_init = init;
    s.seed = a.seed;
    s.check()?;
    Ok(s)
}

/// The `--robust-centre` of a run with surrogate `model`: the default when not given; given,
/// it must name a centre and the model must be one whose weights it places.
pub(crate) fn robust_centre(flag: Option<&str>, model: &str) -> Result<RobustCentre, CliError> {
    let Some(name) = flag else {
        return Ok(RobustCentre::default());
    };
    let centre = RobustCentre::parse(name)?;
    if !CENTRED_MODELS.contains(&model) {
        return Err(format!(
            "--robust-centre applies to the robust models {} (got --model {model})",
            CENTRED_MODELS.join(", ")
        )
        .into());
    }
    Ok(centre)
}

/// A bar of evaluations on a terminal's stderr; hidden otherwise.
fn progress_bar(budget: usize) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(budget as u64), ProgressDrawTarget::stderr());
    pb.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} evaluations, {msg} [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb
}

/// Run the subcommand.
pub fn run(a: &BoArgs) -> Result<(), CliError> {
    let start = Instant::now();
    let problem = Problem::parse(&a.problem)?;
    let outliers = a
        .outliers
        .as_deref()
        .map(ObservationOutliers::parse)
        .transpose()?;
    let design = a
        .init_points
        .as_deref()
        .map(|p| initial_points(p, problem))
        .transpose()?;
    let init = design.as_ref().map_or(a.init, Vec::len);
    let mut run = BayesOpt::new(settings(a, problem, init)?)?;
    let mut out = match &a.out {
        Some(p) => Some(BufWriter::new(
            File::create(p).map_err(|e| format!("{}: {e}", p.display()))?,
        )),
        None => None,
    };
    let optimum = problem.optimum();
    let pb = progress_bar(a.budget);
    let mut scale: Option<Scale> = None;
    let (mut best, mut best_x) = (f64::NEG_INFINITY, Vec::new());
    let mut trace = Vec::with_capacity(a.budget);
    let mut n_outliers = 0;
    // The simulated expert's queue: injected outliers not corrected yet, with their clean value.
    let simulated = a.expert_mean == "simulated";
    let mut uncorrected: Vec<(usize, f64)> = Vec::new();
    let mut n_corrections = 0;
    while trace.len() < a.budget {
        let done = trace.len();
        let q = if done < init {
            init - done
        } else {
            a.batch.min(a.budget - done)
        };
        let points = match (&design, done) {
            (Some(rows), 0) => rows.clone(),
            _ => run.ask(q)?.points,
        };
        let clean = points
            .iter()
            .map(|x| problem.evaluate(x))
            .collect::<Result<Vec<f64>, _>>()?;
        let (observed, is_outlier) = match &outliers {
            None => (clean.clone(), vec![false; q]),
            Some(o) => {
                let sc = match scale.take() {
                    Some(sc) => sc,
                    None => Scale::of(&clean)?,
                };
                let standardised: Vec<f64> = clean.iter().map(|y| (y - sc.mean) / sc.std).collect();
                let c = o.corrupt(&standardised, sc.sigma_bar, u64::from(a.seed), done as u64)?;
                // Values that are not outliers stay exactly the clean ones.
                let observed = (0..q)
                    .map(|k| {
                        if c.is_outlier[k] {
                            sc.mean + sc.std * c.y[k]
                        } else {
                            clean[k]
                        }
                    })
                    .collect();
                scale = Some(sc);
                (observed, c.is_outlier)
            }
        };
        run.tell_corrupted(&points, &observed, &clean)?;
        if simulated {
            uncorrected.extend(
                (0..q)
                    .filter(|&k| is_outlier[k])
                    .map(|k| (done + k, clean[k])),
            );
            // Asked every EXPERT_EVERY evaluations after the design: when this batch crosses a
            // multiple, every outlier seen so far is corrected.
            let after = |n: usize| n.saturating_sub(init) / EXPERT_EVERY;
            if let (Some(sc), true) = (&scale, after(done + q) > after(done)) {
                for (i, y) in uncorrected.drain(..) {
                    run.correct(i, simulated_correction(y, sc.std, u64::from(a.seed), i))?;
                    n_corrections += 1;
                }
            }
        }
        for k in 0..q {
            if clean[k] > best {
                best = clean[k];
                best_x.clone_from(&points[k]);
            }
            n_outliers += usize::from(is_outlier[k]);
            trace.push(best);
            if let Some(w) = out.as_mut() {
                let line = json!({
                    "iteration": done + k + 1,
                    "x": points[k],
                    "y_observed": observed[k],
                    "y_clean": clean[k],
                    "is_outlier": is_outlier[k],
                    "best_clean": best,
                    "regret": optimum.map(|o| o - best),
                    "seconds": start.elapsed().as_secs_f64(),
                });
                writeln!(w, "{line}")?;
            }
        }
        pb.set_position(trace.len() as u64);
        pb.set_message(format!("best {best:.6}"));
    }
    pb.finish_and_clear();
    if let Some(mut w) = out {
        w.flush()?;
    }
    let s = run.settings();
    if let Some(path) = &a.plot {
        let label = format!(
            "{} + {} ({})",
            s.model,
            s.acquisition.name(),
            s.method.name()
        );
        let svg = line_plot(
            &format!("{problem}: best clean value"),
            "evaluations",
            "best clean value",
            &[Series {
                label,
                runs: vec![trace.clone()],
            }],
        )?;
        std::fs::write(path, svg).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    print_json(&json!({
        "problem": problem.to_string(),
        "best": best,
        "best_x": best_x,
        "optimum": optimum,
        "regret": optimum.map(|o| o - best),
        "evaluations": trace.len(),
        "outliers": n_outliers,
        "corrections": n_corrections,
        "seconds": start.elapsed().as_secs_f64(),
        "settings": {
            "budget": a.budget,
            "init": init,
            "init_points": a.init_points.as_ref().map(|p| p.display().to_string()),
            "batch": a.batch,
            "acquisition": s.acquisition.name(),
            "model": s.model,
            "method": s.method.name(),
            "robust_centre": s.robust_centre.name(),
            "expert_mean": a.expert_mean,
            "outliers": outliers.map(|o| Value::from(o.to_string())),
            "seed": a.seed,
        },
    }))
}
