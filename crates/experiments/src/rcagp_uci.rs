//! `experiments rcagp-uci`: Table 1 and Tables S1–S2 of the RCaGP paper (Boston, Energy,
//! Yacht, Parkinsons; SVGP, CaGP, RCSVGP, RCaGP, Student-t SVGP and SGPR with relevance pursuit
//! (RRP) under asymmetric, uniform, focused or no outliers).
//!
//! Protocol (RCaGP spec §5.2): 20 random 80/20 splits (seeds 0…19); inputs z-scored with the
//! statistics of all rows, targets with those of the clean full target column; 10% of the
//! training targets contaminated (test targets stay clean); MAE and Gaussian NLL (latent
//! variance plus the model's observation noise) on the test rows in standardised units;
//! seconds = training time. `--protocol paper` trains as the paper (50 Adam steps at learning
//! rate 0.01, 5 block actions, 100 inducing points at the first training rows, GPyTorch's
//! initial values); `--protocol defaults` uses trustgp's defaults.

use std::path::{Path, PathBuf};

use serde_json::json;
use trustgp::data::{contaminate, random_split, read_csv, ContaminationSpec, Dataset, Protocol};

use crate::rcagp_models::{fit_predict, TrainingProtocol, UciModel};
use crate::rcagp_paper::PAPER;

/// Arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Folder holding the shared data sets.
    #[arg(long, default_value = "../shared/data")]
    data_dir: PathBuf,
    /// Data sets to run.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "boston,energy,yacht,parkinsons"
    )]
    datasets: Vec<String>,
    /// Outlier scenarios: asymmetric, none, uniform, focused.
    #[arg(long, value_delimiter = ',', default_value = "asymmetric,none")]
    scenarios: Vec<String>,
    /// Models: svgp, cagp, rcsvgp, rcagp, student-t, rrp.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "svgp,cagp,rcsvgp,rcagp,student-t"
    )]
    models: Vec<String>,
    /// Number of random splits (seeds offset, offset + 1, …).
    #[arg(long, default_value_t = 20)]
    splits: u64,
    /// Seed of the first split.
    #[arg(long, default_value_t = 0)]
    split_offset: u64,
    /// Training protocol: `paper` or `defaults`.
    #[arg(long, default_value = "paper")]
    protocol: String,
    /// Write the Markdown tables here.
    #[arg(long)]
    out: Option<PathBuf>,
}

type BoxError = Box<dyn std::error::Error>;

/// A data set of the paper: short name, file (relative to the data folder), target column,
/// and columns that are neither inputs nor the target.
struct UciSet {
    name: &'static str,
    file: &'static str,
    target: &'static str,
    drop: &'static [&'static str],
}

const SETS: &[UciSet] = &[
    UciSet {
        name: "boston",
        file: "uci_boston_housing/data.csv",
        target: "MEDV",
        drop: &[],
    },
    UciSet {
        name: "energy",
        file: "uci_energy_heating_hl/data.csv",
        target: "Y1_heating_load",
        drop: &[],
    },
    UciSet {
        name: "yacht",
        file: "uci_yacht/data.csv",
        target: "residuary_resistance",
        drop: &[],
    },
    UciSet {
        name: "parkinsons",
        file: "uci_parkinsons_voice/parkinsons.csv",
        target: "PPE",
        drop: &["name", "status"],
    },
];

/// Reads a data set with its inputs (every column but the target and the dropped ones).
fn load(dir: &Path, set: &UciSet) -> Result<Dataset, BoxError> {
    let path = dir.join(set.file);
    let header = std::fs::read_to_string(&path)?
        .lines()
        .next()
        .ok_or_else(|| format!("{}: empty file", path.display()))?
        .to_string();
    let inputs: Vec<String> = header
        .split(',')
        .map(|c| c.trim().trim_matches('"').to_string())
        .filter(|c| c != set.target && !set.drop.contains(&c.as_str()))
        .collect();
    Ok(read_csv(&path, &[set.target.to_string()], Some(&inputs))?)
}

/// Population mean and standard deviation (1 when the column is constant).
fn moments(v: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let n = v.clone().count() as f64;
    let m = v.clone().sum::<f64>() / n;
    let s = (v.map(|x| (x - m).powi(2)).sum::<f64>() / n).sqrt();
    (m, if s > 0.0 { s } else { 1.0 })
}

/// Z-scores every input column and the target with the statistics of all (clean) rows.
fn standardise(d: &Dataset) -> Dataset {
    let mut out = d.clone();
    for c in 0..d.d() {
        let (m, s) = moments((0..d.n()).map(|i| d.x[(i, c)]));
        (0..d.n()).for_each(|i| out.x[(i, c)] = (d.x[(i, c)] - m) / s);
    }
    let (m, s) = moments((0..d.n()).map(|i| d.y[(i, 0)]));
    (0..d.n()).for_each(|i| out.y[(i, 0)] = (d.y[(i, 0)] - m) / s);
    out
}

fn mean_std(v: &[f64]) -> (f64, f64) {
    let m = v.iter().sum::<f64>() / v.len() as f64;
    let s = (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len() as f64).sqrt();
    (m, s)
}

/// One scenario's results: per model, per data set, the (MAE, NLL, seconds) of every split.
type Cells = Vec<Vec<Vec<(f64, f64, f64)>>>;

/// Run the experiment.
pub fn run(a: &Args) -> Result<(), BoxError> {
    let protocol = TrainingProtocol::parse(&a.protocol)?;
    let models = (a.models.iter())
        .map(|m| UciModel::parse(m))
        .collect::<Result<Vec<_>, _>>()?;
    let sets = (a.datasets.iter())
        .map(|n| {
            SETS.iter()
                .find(|s| s.name == n.as_str())
                .ok_or_else(|| format!("unknown data set {n}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut markdown = String::new();
    for scenario in &a.scenarios {
        // ε = 0.2 with asymmetric or no outliers (Table 1), 0.1 otherwise (Tables S1, S2).
        let epsilon = if matches!(scenario.as_str(), "asymmetric" | "none") {
            0.2
        } else {
            0.1
        };
        let mut cells: Cells = vec![vec![Vec::new(); sets.len()]; models.len()];
        for (si, set) in sets.iter().enumerate() {
            let data = standardise(&load(&a.data_dir, set)?);
            for seed in a.split_offset..a.split_offset + a.splits {
                for (mi, model) in models.iter().enumerate() {
                    let (mae, nll, secs) =
                        match one_split(&data, scenario, seed, *model, protocol, epsilon) {
                            Ok(r) => r,
                            Err(e) => {
                                eprintln!(
                                    "{} {scenario} split {seed} {}: {e}",
                                    set.name,
                                    model.name()
                                );
                                continue;
                            }
                        };
                    cells[mi][si].push((mae, nll, secs));
                    println!(
                        "{}",
                        json!({"dataset": set.name, "scenario": scenario, "model": model.name(),
                               "protocol": a.protocol, "split": seed, "mae": mae, "nll": nll,
                               "fit_seconds": secs})
                    );
                }
            }
            eprintln!("{scenario}: {} done", set.name);
        }
        markdown += &table(scenario, &sets, &models, &cells);
    }
    eprintln!("{markdown}");
    if let Some(path) = &a.out {
        let title = format!(
            "RCaGP paper, Table 1 / S1 / S2 ({} protocol): ours vs paper, mean ± std over splits \
             (standardised units; MAE and NLL on clean test targets)",
            a.protocol
        );
        std::fs::write(path, crate::provenance::header(&title) + &markdown)?;
    }
    Ok(())
}

/// One split of a (standardised) data set: contaminate the training rows (unless `scenario` is
/// `none`), fit `model`, and score the clean test rows: (MAE, NLL, training seconds).
fn one_split(
    data: &Dataset,
    scenario: &str,
    seed: u64,
    model: UciModel,
    protocol: TrainingProtocol,
    epsilon: f64,
) -> Result<(f64, f64, f64), BoxError> {
    let split = random_split(data.n(), 0.2, seed)?;
    let mut d = data.clone();
    if scenario != "none" {
        let spec = ContaminationSpec::parse(&format!("{scenario}:0.1"))?;
        contaminate(&mut d, &split.train, &spec, Protocol::Rcagp, 1000 + seed)?;
    }
    let (tr, te) = (d.select_rows(&split.train), d.select_rows(&split.test));
    let ytr: Vec<f64> = (0..tr.n()).map(|i| tr.y[(i, 0)]).collect();
    let yte: Vec<f64> = (0..te.n()).map(|i| te.y[(i, 0)]).collect();
    let (mean, var, secs) = fit_predict(model, protocol, &tr.x, &ytr, &te.x, epsilon, seed)?;
    let (mae, nll) = score(&mean, &var, &yte);
    Ok((mae, nll, secs))
}

/// MAE and mean Gaussian NLL of the test targets under the predictive (mean, observation
/// variance).
fn score(mean: &[f64], var: &[f64], y: &[f64]) -> (f64, f64) {
    let n = y.len() as f64;
    let mae = y.iter().zip(mean).map(|(y, m)| (y - m).abs()).sum::<f64>() / n;
    let nll = (y.iter().zip(mean).zip(var))
        .map(|((y, m), v)| {
            let v = v.max(1e-10);
            0.5 * (2.0 * std::f64::consts::PI * v).ln() + (y - m).powi(2) / (2.0 * v)
        })
        .sum::<f64>()
        / n;
    (mae, nll)
}

/// The Markdown table of one scenario: a row per model and metric, a column per data set with
/// ours and the paper's mean ± std; the best MAE per data set in bold.
fn table(scenario: &str, sets: &[&UciSet], models: &[UciModel], cells: &Cells) -> String {
    let mut s = format!(
        "\n## Outliers: {scenario}\n\n| model | metric | {} |\n|---|---|{}\n",
        sets.iter()
            .map(|s| format!("{} (ours) | {} (paper)", s.name, s.name))
            .collect::<Vec<_>>()
            .join(" | "),
        "---|---|".repeat(sets.len())
    );
    let best_mae: Vec<f64> = (0..sets.len())
        .map(|si| {
            (0..models.len())
                .filter(|&mi| !cells[mi][si].is_empty())
                .map(|mi| mean_std(&cells[mi][si].iter().map(|c| c.0).collect::<Vec<_>>()).0)
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    for (mi, model) in models.iter().enumerate() {
        for (metric, pick) in [("MAE", 0), ("NLL", 1), ("seconds", 2)] {
            let mut row = format!("| {} | {metric} |", model.name());
            for (si, set) in sets.iter().enumerate() {
                let v: Vec<f64> = cells[mi][si]
                    .iter()
                    .map(|c| [c.0, c.1, c.2][pick])
                    .collect();
                let ours = if v.is_empty() {
                    "failed".to_string()
                } else {
                    let (m, sd) = mean_std(&v);
                    let text = format!("{m:.3} ± {sd:.3} ({})", v.len());
                    if pick == 0 && m == best_mae[si] {
                        format!("**{text}**")
                    } else {
                        text
                    }
                };
                let paper = PAPER
                    .iter()
                    .find(|p| p.0 == scenario && p.1 == model.paper_name() && p.2 == metric)
                    .map(|p| {
                        let col = ["boston", "energy", "yacht", "parkinsons"]
                            .iter()
                            .position(|n| *n == set.name)
                            .unwrap_or(0);
                        format!("{:.3} ± {:.3}", p.3[col].0, p.3[col].1)
                    })
                    .unwrap_or_else(|| "–".into());
                row += &format!(" {ours} | {paper} |");
            }
            s += &row;
            s.push('\n');
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reduced reproduction CI runs, on the Yacht copy bundled with the repository and 3
    /// splits with asymmetric outliers: under the paper's protocol RCaGP's MAE is well below
    /// SVGP's and CaGP's (Table 1's ordering), and under trustgp's defaults it is at most 0.8×
    /// both (the target).
    #[test]
    fn reduced_table1_keeps_the_papers_ordering_on_yacht() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data");
        let yacht = SETS.iter().find(|s| s.name == "yacht").unwrap();
        let data = standardise(&load(&dir, yacht).unwrap());
        let mae = |model, protocol| -> f64 {
            (0..3)
                .map(|seed| {
                    one_split(&data, "asymmetric", seed, model, protocol, 0.2)
                        .unwrap()
                        .0
                })
                .sum::<f64>()
                / 3.0
        };
        for protocol in [TrainingProtocol::Paper, TrainingProtocol::Defaults] {
            let rcagp = mae(UciModel::Rcagp, protocol);
            let cagp = mae(UciModel::Cagp, protocol);
            let svgp = mae(UciModel::Svgp, protocol);
            assert!(
                rcagp < 0.8 * cagp && rcagp < 0.8 * svgp,
                "{protocol:?}: RCaGP {rcagp}, CaGP {cagp}, SVGP {svgp}"
            );
        }
    }

    /// Table 1's one exception to RCaGP's lead under asymmetric outliers: on Yacht, RRP's MAE
    /// is lower (paper: 0.356 against 0.435), reduced to 3 splits of the paper's protocol.
    #[test]
    fn reduced_table1_rrp_beats_rcagp_on_yacht() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data");
        let yacht = SETS.iter().find(|s| s.name == "yacht").unwrap();
        let data = standardise(&load(&dir, yacht).unwrap());
        let mae = |model| -> f64 {
            (0..3)
                .map(|seed| {
                    one_split(
                        &data,
                        "asymmetric",
                        seed,
                        model,
                        TrainingProtocol::Paper,
                        0.2,
                    )
                    .unwrap()
                    .0
                })
                .sum::<f64>()
                / 3.0
        };
        let (rrp, rcagp) = (mae(UciModel::Rrp), mae(UciModel::Rcagp));
        assert!(rrp < rcagp, "RRP {rrp}, RCaGP {rcagp}");
    }
}
