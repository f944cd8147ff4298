//! `experiments safe-ablation`: the safe-transfer paper's Fig. 9 (Branin, one source task,
//! varied `N_source`) and Fig. 10 (Branin, 1, 3 or 4 source tasks of 20 or 30 points each) as
//! reduced studies (`safe-transfer.md` §5.4). Every (setting, method, seed) is one run of
//! `safe-transfer` with `--n-source` / `--n-sources` (stored, and read back, like its other
//! runs); this module only picks the settings and summarises them.
//!
//! The paper gives these figures as plots only, so the summary compares trends: each run is
//! reduced to its curve-average RMSE and TP area (the mean over its report steps, as the Fig. 4
//! checks do), and the verdicts test the paper's statements. SAL, which sees no source data, is
//! the baseline: its runs of Table 2's setting (Branin's initial data, pool and test points do
//! not depend on `N_source`, and for more sources only the target's random draws move).

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::Parser;
use trustgp::report::svg::{line_plot, Series};
use trustgp::sequential::safe::SafeRun;

use crate::safe_tables::{cell, mean_se, paper_name, verdict};
use crate::safe_transfer;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Branin's `N_source` in Table 2: runs of this value are the main campaign's.
const BRANIN_N_SOURCE: usize = 100;

/// Arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Which figure: 9 (`N_source` ablation) or 10 (multi-source study).
    #[arg(long)]
    figure: u8,
    /// Seeds 0..seeds of every (setting, method).
    #[arg(long, default_value_t = 3)]
    seeds: u64,
    /// Transfer methods, comma-separated (efficient-hgp, hgp, lmc); SAL is always the baseline.
    #[arg(long, value_delimiter = ',', default_value = "efficient-hgp,hgp")]
    methods: Vec<String>,
    /// Fig. 9: the `N_source` values (the paper does not state its grid).
    #[arg(long, value_delimiter = ',', default_value = "10,25,50,100,200")]
    n_source_grid: Vec<usize>,
    /// Fig. 10: the numbers of source tasks.
    #[arg(long, value_delimiter = ',', default_value = "1,3,4")]
    source_counts: Vec<usize>,
    /// Fig. 10: the points per source task.
    #[arg(long, value_delimiter = ',', default_value = "20,30")]
    per_source: Vec<usize>,
    /// FullTransHGP and FullTransLMC refit every this many queries (a reduced protocol).
    #[arg(long, default_value_t = 10)]
    refit_every: usize,
    /// Runs at once.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// One JSON per run here (read back when present).
    #[arg(long, default_value = "results/safe")]
    runs_dir: PathBuf,
    /// Only summarise the runs already stored; run nothing.
    #[arg(long)]
    summarise_only: bool,
    /// The Markdown results file (the SVGs go to `--runs-dir`).
    #[arg(long)]
    out: PathBuf,
}

/// One point of a study: the source tasks' number and size.
#[derive(Clone, Debug)]
struct Setting {
    /// Points per source task (`None`: Table 2's).
    n_source: Option<usize>,
    /// Source tasks.
    n_sources: usize,
}

impl Setting {
    fn label(&self) -> String {
        let n = self.n_source.unwrap_or(BRANIN_N_SOURCE);
        if self.n_sources == 1 {
            format!("N_source={n}")
        } else {
            format!("{}×{n}", self.n_sources)
        }
    }
}

/// Lets `safe-transfer`'s arguments be built from a command line, with its defaults.
#[derive(Parser)]
struct TransferCommand {
    #[command(flatten)]
    args: safe_transfer::Args,
}

/// `safe-transfer`'s arguments for Branin in `setting` with `methods`.
fn transfer_args(
    a: &Args,
    setting: &Setting,
    methods: &[String],
) -> Result<safe_transfer::Args, BoxError> {
    let mut argv: Vec<String> = [
        "safe-transfer",
        "--problems",
        "branin",
        "--out",
        "/dev/null",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    argv.extend([
        "--methods".into(),
        methods.join(","),
        "--seeds".into(),
        a.seeds.to_string(),
        "--hgp-refit-every".into(),
        a.refit_every.to_string(),
        "--lmc-refit-every".into(),
        a.refit_every.to_string(),
        "--threads".into(),
        a.threads.to_string(),
        "--runs-dir".into(),
        a.runs_dir.display().to_string(),
        "--n-sources".into(),
        setting.n_sources.to_string(),
    ]);
    if let Some(n) = setting.n_source {
        argv.extend(["--n-source".into(), n.to_string()]);
    }
    Ok(TransferCommand::try_parse_from(argv)?.args)
}

/// The settings of the figure, and how the x axis of its plots reads.
fn settings(a: &Args) -> Result<(Vec<Setting>, String), BoxError> {
    match a.figure {
        9 => {
            let s = a
                .n_source_grid
                .iter()
                .map(|&n| Setting {
                    n_source: (n != BRANIN_N_SOURCE).then_some(n),
                    n_sources: 1,
                })
                .collect();
            let x = format!(
                "N_source = {:?} (steps 1–{})",
                a.n_source_grid,
                a.n_source_grid.len()
            );
            Ok((s, x))
        }
        10 => {
            let mut s = Vec::new();
            for &n in &a.per_source {
                for &p in &a.source_counts {
                    s.push(Setting {
                        n_source: Some(n),
                        n_sources: p,
                    });
                }
            }
            let x = format!(
                "source tasks = {:?} (steps 1–{})",
                a.source_counts,
                a.source_counts.len()
            );
            Ok((s, x))
        }
        f => Err(format!("--figure: expected 9 or 10, got {f}").into()),
    }
}

/// A run reduced to the numbers the study compares.
#[derive(Clone, Copy, Debug)]
struct Summary {
    seed: u64,
    rmse: f64,
    tp: f64,
    safe_ratio: Option<f64>,
}

fn summary(r: &SafeRun) -> Option<Summary> {
    let n = r.metrics.len() as f64;
    (n > 0.0).then(|| Summary {
        seed: r.seed,
        rmse: r.metrics.iter().map(|m| m.rmse).sum::<f64>() / n,
        tp: r.metrics.iter().map(|m| m.tp_area).sum::<f64>() / n,
        safe_ratio: r.safe_query_ratio,
    })
}

/// The stored runs of `method` in `setting`, summarised.
fn load(a: &Args, setting: &Setting, method: &str) -> Result<Vec<Summary>, BoxError> {
    let targs = transfer_args(a, setting, &[method.to_string()])?;
    let (runs, _) = safe_transfer::load_runs(&targs)?;
    Ok(runs
        .get(&("branin".to_string(), method.to_string()))
        .map(|v| v.iter().filter_map(summary).collect())
        .unwrap_or_default())
}

/// Entry point.
pub fn run(a: &Args) -> Result<(), BoxError> {
    let (settings, x_label) = settings(a)?;
    for m in &a.methods {
        if !["efficient-hgp", "hgp", "lmc"].contains(&m.as_str()) {
            return Err(format!("--methods: '{m}' is not a transfer method").into());
        }
    }
    let baseline = Setting {
        n_source: None,
        n_sources: 1,
    };
    if !a.summarise_only {
        safe_transfer::run_missing(&transfer_args(a, &baseline, &["sal".into()])?)?;
        for s in &settings {
            safe_transfer::run_missing(&transfer_args(a, s, &a.methods)?)?;
        }
    }
    let sal = load(a, &baseline, "sal")?;
    // (method, setting index) → summaries.
    let mut table: BTreeMap<(String, usize), Vec<Summary>> = BTreeMap::new();
    for m in &a.methods {
        for (i, s) in settings.iter().enumerate() {
            table.insert((m.clone(), i), load(a, s, m)?);
        }
    }
    let mut md = crate::provenance::header(&format!(
        "Safe transfer: Fig. {} ({}) — reduced study",
        a.figure,
        if a.figure == 9 {
            "N_source ablation on Branin"
        } else {
            "multi-source study on Branin"
        }
    ));
    md += &format!(
        "Reduced protocol: Branin only, seeds 0..{} per setting and method (the paper: 5 data \
         sets × 5 repetitions), FullTransHGP/FullTransLMC refit every {} queries (EffTransHGP \
         and SAL: every query, as the paper). Each run is reduced to its curve-average RMSE and \
         TP area (mean over the report steps). SAL (no source data) is the baseline: its runs of \
         Table 2's setting. Runs: `--runs-dir {}` (file names carry `-ns<N>` / `-src<P>`).\n\n",
        a.seeds,
        a.refit_every,
        a.runs_dir.display()
    );
    let labels: Vec<String> = settings.iter().map(Setting::label).collect();
    for (name, get, digits) in [
        (
            "curve-average RMSE",
            (|s: &Summary| s.rmse) as fn(&Summary) -> f64,
            4,
        ),
        ("curve-average TP area", |s: &Summary| s.tp, 4),
        (
            "safe-query ratio",
            |s: &Summary| s.safe_ratio.unwrap_or(f64::NAN),
            3,
        ),
    ] {
        md += &format!("### {name} (mean ± s.e.)\n\n| Method |");
        for l in &labels {
            md += &format!(" {l} |");
        }
        md += "\n|---|";
        md += &"---|".repeat(labels.len());
        md += "\n";
        for m in &a.methods {
            md += &format!("| {} |", paper_name(m));
            for i in 0..settings.len() {
                let v: Vec<f64> = table[&(m.clone(), i)]
                    .iter()
                    .map(get)
                    .filter(|v| v.is_finite())
                    .collect();
                md += &format!(" {} |", cell(&v, digits));
            }
            md += "\n";
        }
        let v: Vec<f64> = sal.iter().map(get).filter(|v| v.is_finite()).collect();
        md += &format!(
            "| SAL (baseline, every setting) | {} |\n\n",
            cell(&v, digits)
        );
    }
    md += &plots(a, &settings, &table, &sal, &x_label)?;
    md += &verdicts(a, &settings, &table, &sal);
    if let Some(dir) = a.out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&a.out, md)?;
    eprintln!("wrote {}", a.out.display());
    Ok(())
}

/// Mean curve-average RMSE of `method` in setting `i` (`None` without runs).
fn mean_rmse(table: &BTreeMap<(String, usize), Vec<Summary>>, m: &str, i: usize) -> Option<f64> {
    let v: Vec<f64> = table
        .get(&(m.to_string(), i))?
        .iter()
        .map(|s| s.rmse)
        .collect();
    mean_se(&v).map(|x| x.0)
}

/// One SVG per metric: x = the setting, one series per method (and per source size in Fig.
/// 10), ±1 s.e. bands over the seeds present in every setting of the series.
fn plots(
    a: &Args,
    settings: &[Setting],
    table: &BTreeMap<(String, usize), Vec<Summary>>,
    sal: &[Summary],
    x_label: &str,
) -> Result<String, BoxError> {
    // Groups of setting indices drawn as one series each (Fig. 10: one per source size).
    let groups: Vec<(String, Vec<usize>)> = if a.figure == 9 {
        vec![(String::new(), (0..settings.len()).collect())]
    } else {
        let k = a.source_counts.len();
        a.per_source
            .iter()
            .enumerate()
            .map(|(g, n)| (format!(" ({n}/source)"), (g * k..(g + 1) * k).collect()))
            .collect()
    };
    let len = groups.first().map_or(0, |g| g.1.len());
    let mut s = String::new();
    for (metric, get) in [
        ("rmse", (|x: &Summary| x.rmse) as fn(&Summary) -> f64),
        ("tp_area", |x: &Summary| x.tp),
    ] {
        let mut series = Vec::new();
        for m in &a.methods {
            for (suffix, idx) in &groups {
                let seeds: Vec<u64> = (0..a.seeds)
                    .filter(|seed| {
                        idx.iter()
                            .all(|i| table[&(m.clone(), *i)].iter().any(|r| r.seed == *seed))
                    })
                    .collect();
                if seeds.is_empty() {
                    continue;
                }
                let runs: Vec<Vec<f64>> = seeds
                    .iter()
                    .map(|seed| {
                        idx.iter()
                            .map(|i| {
                                table[&(m.clone(), *i)]
                                    .iter()
                                    .find(|r| r.seed == *seed)
                                    .map_or(f64::NAN, get)
                            })
                            .collect()
                    })
                    .collect();
                let name = paper_name(m).split(' ').next().unwrap_or(m).to_string();
                series.push(Series {
                    label: format!("{name}{suffix}"),
                    runs: safe_transfer::standard_error_band(&runs),
                });
            }
        }
        if !sal.is_empty() {
            let flat: Vec<Vec<f64>> = sal.iter().map(|r| vec![get(r); len]).collect();
            series.push(Series {
                label: "SAL".into(),
                runs: safe_transfer::standard_error_band(&flat),
            });
        }
        if series.is_empty() || len < 2 {
            continue;
        }
        let svg = line_plot(
            &format!(
                "Branin Fig. {}: curve-average {metric} (mean ± 1 s.e.)",
                a.figure
            ),
            x_label,
            metric,
            &series,
        )?;
        let file = format!("fig{}-branin-{metric}.svg", a.figure);
        std::fs::write(a.runs_dir.join(&file), svg)?;
        s += &format!(
            "* {metric}: [{file}]({})\n",
            safe_transfer::rel(&a.runs_dir.join(&file), &a.out)
        );
    }
    Ok(s + "\n")
}

/// The paper's statements about the figure, checked on the mean curve-average RMSE.
fn verdicts(
    a: &Args,
    settings: &[Setting],
    table: &BTreeMap<(String, usize), Vec<Summary>>,
    sal: &[Summary],
) -> String {
    let sal_rmse = mean_se(&sal.iter().map(|s| s.rmse).collect::<Vec<_>>()).map(|x| x.0);
    let mut s = String::from("## Paper's statements and ours\n\n");
    let Some(sal_rmse) = sal_rmse else {
        return s + "* no SAL runs: nothing checked\n";
    };
    let find = |n: usize, p: usize| {
        settings
            .iter()
            .position(|x| x.n_source.unwrap_or(BRANIN_N_SOURCE) == n && x.n_sources == p)
    };
    for m in &a.methods {
        let name = paper_name(m);
        let means: Vec<Option<f64>> = (0..settings.len())
            .map(|i| mean_rmse(table, m, i))
            .collect();
        let run: Vec<(usize, f64)> = means
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| (i, v)))
            .collect();
        if run.is_empty() {
            s += &format!("* {name}: no runs\n");
            continue;
        }
        let beaten: Vec<String> = run
            .iter()
            .filter(|(_, v)| *v >= sal_rmse)
            .map(|(i, _)| settings[*i].label())
            .collect();
        s += &format!(
            "* \"all transfer methods beat SAL\" — {name}: lower curve-average RMSE than SAL \
             ({sal_rmse:.4}) in every setting run: **{}**{}\n",
            verdict(beaten.is_empty()),
            if beaten.is_empty() {
                String::new()
            } else {
                format!(" (not in {})", beaten.join(", "))
            }
        );
        if a.figure == 9 {
            let (first, last) = (run[0], run[run.len() - 1]);
            s += &format!(
                "* \"more source data helps\" — {name}: RMSE {:.4} at {} vs {:.4} at {}: **{}**\n",
                first.1,
                settings[first.0].label(),
                last.1,
                settings[last.0].label(),
                verdict(last.1 < first.1)
            );
            if let (Some(i100), Some(&(il, vl))) = (find(BRANIN_N_SOURCE, 1), run.last()) {
                if let (Some(v100), true) = (means[i100], il > i100) {
                    let (v0, gain_to_100, gain_after) = (first.1, first.1 - v100, v100 - vl);
                    s += &format!(
                        "* \"saturating at about N_source = 100\" — {name}: RMSE gain {gain_to_100:.4} \
                         from {} to 100, {gain_after:.4} from 100 to {} (start {v0:.4}): **{}**\n",
                        settings[first.0].label(),
                        settings[il].label(),
                        verdict(gain_after.abs() < gain_to_100.abs())
                    );
                }
            }
        } else {
            for &n in &a.per_source {
                if let (Some(i1), Some(i3)) = (find(n, 1), find(n, 3)) {
                    if let (Some(v1), Some(v3)) = (means[i1], means[i3]) {
                        s += &format!(
                            "* \"3 sources clearly beat 1\" — {name}, {n}/source: RMSE {v3:.4} vs \
                             {v1:.4}: **{}**\n",
                            verdict(v3 < v1)
                        );
                    }
                }
            }
            if let (Some(i330), Some(i420)) = (find(30, 3), find(20, 4)) {
                if let (Some(v330), Some(v420)) = (means[i330], means[i420]) {
                    s += &format!(
                        "* \"10 more points per source help more than one more source\" — {name}: \
                         RMSE 3×30 {v330:.4} vs 4×20 {v420:.4}: **{}**\n",
                        verdict(v330 < v420)
                    );
                }
            }
        }
    }
    s
}
