//! `experiments safe-table4`: Table 4's training times measured like for like (issue 23). For
//! every stored run of `experiments safe-transfer` (problem, method, seed), the last
//! hyperparameter refit is replayed on the run's own final data
//! ([`replay_last_refit`]: the model rebuilt by the runs' factory, brought to the refit before
//! the last, the last refit timed cold as in the runs, on one thread, one fit at a time, in
//! this one process). GEngine's FullTransLMC has no stored run (a full run takes hours): its
//! last refit is replayed on the final data of the GEngine EffTransHGP run of the same seed
//! (same N_source, N_target, D and refit schedule; only the queries would differ) and labelled
//! so. One JSON line per fit goes to `--out` (lines of other keys already there are kept, so a
//! filtered rerun updates only what it measured), and a progress line per fit to stderr.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use trustgp::sequential::safe::benchmarks::{safe_benchmark, BenchmarkOptions};
use trustgp::sequential::safe::replay::replay_last_refit;
use trustgp::sequential::safe::{SafeBenchmark, TargetScaling, TransferMethod};

use crate::safe_tables::{METHODS, PROBLEMS};
use crate::safe_transfer::{method_factory, stored_run_with_stem, RunRecord};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The `data` label of a fit on the run's own data.
pub const OWN_RUN: &str = "own run";
/// The `data` label of GEngine FullTransLMC's stand-in fits.
pub const ON_EFFICIENT_HGP: &str = "EffTransHGP's final data";

/// Arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Problems, comma-separated (gp1d, gp2d, branin, hartmann3, pengine, gengine).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "gp1d,gp2d,branin,hartmann3,pengine,gengine"
    )]
    problems: Vec<String>,
    /// Methods, comma-separated (efficient-hgp, hgp, lmc, source-prior, sal).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "efficient-hgp,hgp,lmc,source-prior,sal"
    )]
    methods: Vec<String>,
    /// Seeds 0..seeds (a seed without a stored run is skipped).
    #[arg(long, default_value_t = 5)]
    seeds: u64,
    /// GEngine FullTransLMC (no stored run): replay on the GEngine EffTransHGP runs' data of
    /// seeds 0..this (0: none).
    #[arg(long, default_value_t = 2)]
    lmc_stand_in_seeds: u64,
    /// The engine data folder.
    #[arg(long, default_value = "../shared/data")]
    data_dir: PathBuf,
    /// The stored runs of `experiments safe-transfer`.
    #[arg(long, default_value = "results/safe")]
    runs_dir: PathBuf,
    /// The JSON-lines output (updated in place, one line per problem, method and seed).
    #[arg(long, default_value = "results/safe/table4_replay.jsonl")]
    out: PathBuf,
}

/// One replayed last refit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplayRecord {
    /// The problem.
    pub problem: String,
    /// The method (command-line name).
    pub method: String,
    /// The seed (of the run and of its benchmark).
    pub seed: u64,
    /// Whose data: [`OWN_RUN`] or [`ON_EFFICIENT_HGP`].
    pub data: String,
    /// The stored run whose queries were replayed.
    pub run_file: String,
    /// The refit interval of that run (queries).
    pub refit_every: usize,
    /// Source observations.
    pub n_source: usize,
    /// Target observations at the last refit.
    pub n_target: usize,
    /// Input dimensions.
    pub d: usize,
    /// Output models (f and each q), whose fit times are summed.
    pub outputs: usize,
    /// Seconds of the last refit (all outputs).
    pub seconds: f64,
    /// Log marginal likelihood reached, summed over the outputs (`None`: frozen model).
    pub log_evidence: Option<f64>,
    /// Objective evaluations of the last refit.
    pub evaluations: u64,
    /// CPU seconds of the thread that ran the last refit (fit and conditioning; not inflated
    /// by other processes; `None`: not recorded).
    #[serde(default)]
    pub cpu_seconds: Option<f64>,
    /// 1-minute load average at the start of the fit (/proc/loadavg; `None` if unreadable).
    pub load_start: Option<f64>,
    /// 1-minute load average at its end.
    pub load_end: Option<f64>,
}

/// The 1-minute load average: the first field of `/proc/loadavg`'s `text`.
pub fn parse_loadavg(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

fn load_now() -> Option<f64> {
    parse_loadavg(&std::fs::read_to_string("/proc/loadavg").ok()?)
}

/// Reads the JSON lines `text` (blank lines skipped); an unreadable line is an error naming
/// its line number.
pub fn parse_records(text: &str) -> Result<Vec<ReplayRecord>, BoxError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1).into()))
        .collect()
}

/// `old` with every record of `new` put in place of the one with the same (problem, method,
/// seed), in the order of the paper's tables (problem, method), then seed.
pub fn merge(old: Vec<ReplayRecord>, new: Vec<ReplayRecord>) -> Vec<ReplayRecord> {
    let rank = |r: &ReplayRecord| {
        (
            PROBLEMS
                .iter()
                .position(|p| *p == r.problem)
                .unwrap_or(usize::MAX),
            METHODS
                .iter()
                .position(|m| *m == r.method)
                .unwrap_or(usize::MAX),
            r.problem.clone(),
            r.method.clone(),
            r.seed,
        )
    };
    let mut all: BTreeMap<_, ReplayRecord> = BTreeMap::new();
    for r in old.into_iter().chain(new) {
        all.insert(rank(&r), r);
    }
    all.into_values().collect()
}

/// Reads the records of `path` (none if it does not exist).
pub fn read_records(path: &Path) -> Result<Vec<ReplayRecord>, BoxError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse_records(&text).map_err(|e| format!("{}: {e}", path.display()).into()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

fn write_records(path: &Path, records: &[ReplayRecord]) -> Result<(), BoxError> {
    let mut text = String::new();
    for r in records {
        text += &serde_json::to_string(r)?;
        text.push('\n');
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, text)?;
    Ok(())
}

/// The stored run of (problem, method, seed) in the campaign's default setting, read.
fn stored(
    args: &Args,
    p: &str,
    m: &str,
    seed: u64,
) -> Result<Option<(PathBuf, RunRecord)>, BoxError> {
    let Some(path) = stored_run_with_stem(&args.runs_dir, &format!("{p}-{m}-seed{seed}"))? else {
        return Ok(None);
    };
    let record: RunRecord = serde_json::from_str(&std::fs::read_to_string(&path)?)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Some((path, record)))
}

/// Entry point.
pub fn run(args: &Args) -> Result<(), BoxError> {
    for p in &args.problems {
        if !PROBLEMS.contains(&p.as_str()) {
            return Err(
                format!("--problems: unknown problem '{p}', expected one of {PROBLEMS:?}").into(),
            );
        }
    }
    for m in &args.methods {
        if !METHODS.contains(&m.as_str()) {
            return Err(
                format!("--methods: unknown method '{m}', expected one of {METHODS:?}").into(),
            );
        }
    }
    let options = BenchmarkOptions {
        data_dir: Some(args.data_dir.clone()),
        ..BenchmarkOptions::default()
    };
    for p in &args.problems {
        for seed in 0..args.seeds {
            let mut bench: Option<SafeBenchmark> = None;
            for m in &args.methods {
                let (data, found) = match stored(args, p, m, seed)? {
                    Some(f) => (OWN_RUN, f),
                    None if m == "lmc" && p == "gengine" && seed < args.lmc_stand_in_seeds => {
                        match stored(args, p, "efficient-hgp", seed)? {
                            Some(f) => (ON_EFFICIENT_HGP, f),
                            None => continue,
                        }
                    }
                    None => continue,
                };
                let (path, record) = found;
                if bench.is_none() {
                    let t0 = Instant::now();
                    bench = Some(safe_benchmark(p, seed, &options)?);
                    eprintln!(
                        "{p} seed {seed}: benchmark built in {:.1} s",
                        t0.elapsed().as_secs_f64()
                    );
                }
                let bench = bench.as_ref().ok_or("no benchmark")?;
                let queries: Vec<usize> = record.run.queries.iter().map(|q| q.index).collect();
                let refit_every = record.refit_every.unwrap_or(bench.refit_every);
                let transfer = TransferMethod::parse(m).ok_or("unknown method")?;
                let factory = method_factory(transfer, None, bench.sal_fit);
                let load_start = load_now();
                let t0 = Instant::now();
                let r = replay_last_refit(
                    bench,
                    &queries,
                    refit_every,
                    TargetScaling::Identity,
                    &factory,
                    seed,
                )
                .map_err(|e| format!("{p} {m} seed {seed}: {e}"))?;
                let out = ReplayRecord {
                    problem: p.clone(),
                    method: m.clone(),
                    seed,
                    data: data.into(),
                    run_file: path
                        .file_name()
                        .map_or(String::new(), |n| n.to_string_lossy().into()),
                    refit_every,
                    n_source: r.n_source,
                    n_target: r.n_target,
                    d: r.d,
                    outputs: r.outputs,
                    seconds: r.seconds,
                    log_evidence: r.log_evidence,
                    evaluations: r.evaluations,
                    cpu_seconds: r.cpu_seconds,
                    load_start,
                    load_end: load_now(),
                };
                eprintln!(
                    "{p} {m} seed {seed} ({data}): N_source {} N_target {} D {}: last refit {:.4} s \
                     (thread CPU {} s), {} evaluations, log evidence {}, load {} → {} (replay {:.1} s \
                     with the refit before)",
                    out.n_source,
                    out.n_target,
                    out.d,
                    out.seconds,
                    out.cpu_seconds.map_or("?".into(), |v| format!("{v:.4}")),
                    out.evaluations,
                    out.log_evidence.map_or("–".into(), |v| format!("{v:.3}")),
                    out.load_start.map_or("?".into(), |v| format!("{v:.2}")),
                    out.load_end.map_or("?".into(), |v| format!("{v:.2}")),
                    t0.elapsed().as_secs_f64()
                );
                // Written after every fit, so an interrupted replay keeps what it measured.
                write_records(&args.out, &merge(read_records(&args.out)?, vec![out]))?;
            }
        }
    }
    eprintln!("wrote {}", args.out.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(problem: &str, method: &str, seed: u64, seconds: f64) -> ReplayRecord {
        ReplayRecord {
            problem: problem.into(),
            method: method.into(),
            seed,
            data: OWN_RUN.into(),
            run_file: format!("{problem}-{method}-seed{seed}.json"),
            refit_every: 1,
            n_source: 100,
            n_target: 60,
            d: 1,
            outputs: 1,
            seconds,
            log_evidence: Some(-1.5),
            evaluations: 42,
            cpu_seconds: Some(0.2),
            load_start: Some(0.5),
            load_end: None,
        }
    }

    #[test]
    fn loadavg_takes_the_first_field() {
        assert_eq!(parse_loadavg("7.49 7.57 6.27 3/512 12345\n"), Some(7.49));
        assert_eq!(parse_loadavg(""), None);
        assert_eq!(parse_loadavg("x 1 2"), None);
    }

    #[test]
    fn records_round_trip_and_bad_lines_are_named() {
        let rs = vec![rec("gp1d", "sal", 0, 0.25), rec("gengine", "lmc", 1, 12.0)];
        let text: String = rs
            .iter()
            .map(|r| serde_json::to_string(r).unwrap() + "\n\n")
            .collect();
        assert_eq!(parse_records(&text).unwrap(), rs);
        let err = parse_records(&format!("{text}{{\"problem\": 3}}\n")).unwrap_err();
        assert!(err.to_string().starts_with("line 5:"), "{err}");
    }

    #[test]
    fn merge_replaces_by_key_and_orders_as_the_paper() {
        let old = vec![
            rec("gengine", "sal", 0, 1.0),
            rec("gp1d", "sal", 1, 2.0),
            rec("gp1d", "efficient-hgp", 0, 3.0),
        ];
        let new = vec![rec("gp1d", "sal", 1, 9.0), rec("gp1d", "sal", 0, 4.0)];
        let merged = merge(old, new);
        let keys: Vec<(&str, &str, u64, f64)> = merged
            .iter()
            .map(|r| (r.problem.as_str(), r.method.as_str(), r.seed, r.seconds))
            .collect();
        assert_eq!(
            keys,
            vec![
                ("gp1d", "efficient-hgp", 0, 3.0),
                ("gp1d", "sal", 0, 4.0),
                ("gp1d", "sal", 1, 9.0),
                ("gengine", "sal", 0, 1.0),
            ]
        );
    }
}
