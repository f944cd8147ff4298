//! `trustgp safe-al`: safe active learning on a built-in benchmark of `safe-transfer.md`
//! §5.2, with or without transfer from the benchmark's source tasks, reporting the paper's
//! metrics (RMSE on the true safe region, TP/FP safe areas, safe-query ratio, regions explored,
//! training time at the last refit).

use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::Path;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{json, Value};
use trustgp::estimators::format_number;
use trustgp::report::safe_map::safe_map;
use trustgp::sequential::safe::benchmarks::{safe_benchmark, BenchmarkOptions};
use trustgp::sequential::safe::{
    function_model_with, run_benchmark, SafeBenchmark, SafeRunOptions, SafeSetOptions,
    TargetScaling, TaskData, TransferMethod,
};

use super::{print_json, CliError};
use crate::args::SafeAlArgs;

/// Writes `task` as CSV: the inputs `x1…xd`, the outputs `y` (and `z1…` for constraints), and
/// `extra` columns.
fn write_task(path: &Path, task: &TaskData, extra: &[(&str, Vec<f64>)]) -> Result<(), CliError> {
    let d = task.x.ncols();
    let m = task.outputs.ncols();
    let mut header: Vec<String> = (1..=d).map(|c| format!("x{c}")).collect();
    header.push("y".into());
    header.extend((1..m).map(|j| format!("z{j}")));
    header.extend(extra.iter().map(|(n, _)| n.to_string()));
    let mut text = header.join(",") + "\n";
    for i in 0..task.n() {
        let mut row: Vec<String> = (0..d).map(|c| format_number(task.x[(i, c)])).collect();
        row.extend((0..m).map(|j| format_number(task.outputs[(i, j)])));
        row.extend(extra.iter().map(|(_, v)| format_number(v[i])));
        text.push_str(&row.join(","));
        text.push('\n');
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()).into())
}

/// The `suggest` flags that reproduce the benchmark's box and constraints.
fn suggest_flags(bench: &SafeBenchmark) -> Value {
    let bounds: Vec<String> = bench
        .bounds
        .iter()
        .enumerate()
        .map(|(c, (lo, hi))| format!("x{}={}:{}", c + 1, format_number(*lo), format_number(*hi)))
        .collect();
    let column = |j: usize| {
        if j == 0 {
            "y".to_string()
        } else {
            format!("z{j}")
        }
    };
    let constraints: Vec<String> = bench
        .constraints
        .iter()
        .flat_map(|c| {
            let lower = c
                .lower
                .map(|t| format!("{}>={}", column(c.output), format_number(t)));
            let upper = c
                .upper
                .map(|u| format!("{}<={}", column(c.output), format_number(u)));
            lower.into_iter().chain(upper)
        })
        .collect();
    json!({"bounds": bounds.join(","), "target": "y", "constraints": constraints})
}

/// `--export`: the benchmark as CSV files, for `suggest` or another tool.
fn export(dir: &Path, bench: &SafeBenchmark) -> Result<Value, CliError> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    write_task(&dir.join("initial.csv"), &bench.initial, &[])?;
    let truth: Vec<f64> = bench
        .candidate_safe
        .iter()
        .map(|&s| f64::from(u8::from(s)))
        .collect();
    write_task(
        &dir.join("pool.csv"),
        &bench.candidates,
        &[("truly_safe", truth)],
    )?;
    write_task(&dir.join("test.csv"), &bench.test, &[])?;
    for (s, task) in bench.sources.iter().enumerate() {
        write_task(&dir.join(format!("source{}.csv", s + 1)), task, &[])?;
    }
    Ok(json!({
        "problem": bench.name,
        "exported": dir.display().to_string(),
        "files": {
            "initial": "initial.csv",
            "pool": "pool.csv (the candidates, the outputs a query returns, and truly_safe)",
            "test": "test.csv (noise-free target values in the true safe region)",
            "sources": (1..=bench.sources.len()).map(|s| format!("source{s}.csv")).collect::<Vec<_>>(),
        },
        "suggest": suggest_flags(bench),
        "n_query": bench.n_query,
    }))
}

/// Run the subcommand.
pub fn run(a: &SafeAlArgs) -> Result<(), CliError> {
    let method = TransferMethod::parse(&a.method).ok_or_else(|| {
        format!(
            "unknown --method '{}' (expected sal, efficient-hgp, hgp, lmc or source-prior)",
            a.method
        )
    })?;
    let options = BenchmarkOptions {
        data_dir: Some(a.data_dir.clone()),
        n_sources: a.sources,
        n_source: a.source_points,
        ..BenchmarkOptions::default()
    };
    // The paper's name for the method without transfer.
    let label = match method {
        TransferMethod::None => "sal",
        m => m.name(),
    };
    let bench = safe_benchmark(&a.problem, a.seed, &options)?;
    if let Some(dir) = &a.export {
        return print_json(&export(dir, &bench)?);
    }
    let run_options = SafeRunOptions {
        safe_set: SafeSetOptions {
            beta: a.beta,
            ..SafeSetOptions::default()
        },
        // The benchmarks' outputs are already normalised, as in the paper (§5.2).
        target_scaling: TargetScaling::Identity,
        n_query: a.queries,
        ..SafeRunOptions::default()
    };
    let factory = |_output: usize, sources| {
        function_model_with(
            method,
            if method == TransferMethod::None {
                Vec::new()
            } else {
                sources
            },
            None,
            bench.sal_fit,
        )
    };
    let n_query = a.queries.unwrap_or(bench.n_query);
    let bar = if std::io::stderr().is_terminal() {
        ProgressBar::with_draw_target(Some(n_query as u64), ProgressDrawTarget::stderr())
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} queries ({elapsed})")
            .map_err(|e| e.to_string())?,
    );
    bar.set_message(format!("{} {label}", a.problem));
    let progress = |done: usize, _total: usize| bar.set_position(done as u64);
    let run = run_benchmark(&bench, &factory, &run_options, a.seed, Some(&progress))?;
    bar.finish_and_clear();

    if let Some(path) = &a.out {
        let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut w = BufWriter::new(file);
        serde_json::to_writer(&mut w, &run)?;
        w.flush().map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if let Some(path) = &a.plot {
        let queried: Vec<(Vec<f64>, bool)> =
            run.queries.iter().map(|q| (q.x.clone(), q.safe)).collect();
        let title = format!("{} — {label} (seed {})", bench.name, a.seed);
        std::fs::write(path, safe_map(&bench, &queried, &title)?)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let last = run.metrics.last();
    print_json(&json!({
        "problem": bench.name,
        "method": label,
        "seed": a.seed,
        "queries": run.queries.len(),
        "stop": run.stop,
        "safe_query_ratio": run.safe_query_ratio,
        "regions_explored": run.regions_explored,
        "rmse": last.map(|m| m.rmse),
        "tp_area": last.map(|m| m.tp_area),
        "fp_area": last.map(|m| m.fp_area),
        "training_seconds": run.training_seconds,
        "seconds": run.seconds,
        "out": a.out.as_ref().map(|p| p.display().to_string()),
        "plot": a.plot.as_ref().map(|p| p.display().to_string()),
    }))
}
