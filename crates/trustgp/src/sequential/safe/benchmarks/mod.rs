//! The safe-learning benchmark problems of `safe-transfer.md` §5.2 (and the Fig. 2/3 toy of
//! §2.11), built as seeded [`SafeBenchmark`]s: [`safe_benchmark`] is the one entry point.
//!
//! | name | file | what |
//! |---|---|---|
//! | `toy1d` | [`toy1d`] | the Fig. 2/3 functions, `f = q` |
//! | `gp1d`, `gp2d` | [`gp`] | a 2-output LMC draw on a regular grid, interpolated, `f ≠ q` |
//! | `branin` | [`branin`] | Branin with random source constants, `f = q` |
//! | `hartmann3` | [`hartmann3`] | Hartmann3 with random source weights, `f = q` |
//! | `pengine` | [`pengine`] | the PEngine simulator (a fitted MOGP per output), `f ≠ q` |
//! | `gengine` | [`gengine`] | the GEngine measurements with NX history features, `f ≠ q` |
//!
//! The synthetic problems share one assembly ([`assemble`]): an oracle gives the noise-free
//! outputs of the target and of each source; the pool, source data, initial data, test points
//! and safety grid are drawn from it in a fixed order from one seeded RNG, so that the same
//! seed gives the same benchmark. The engine loaders read `../shared/data` (see
//! [`BenchmarkOptions::data_dir`]).

pub mod assemble;
pub mod branin;
pub mod gengine;
pub mod gp;
pub mod grid;
pub mod hartmann3;
pub mod lmc_draw;
pub mod nx;
pub mod pengine;
pub mod regions;
#[cfg(test)]
mod tests;
pub mod toy1d;

use std::path::PathBuf;

use crate::data::DataError;
use crate::linalg::LinalgError;
use crate::models::ModelError;

use super::SafeBenchmark;

/// Every benchmark name [`safe_benchmark`] knows.
pub const BENCHMARK_NAMES: [&str; 7] = [
    "toy1d",
    "gp1d",
    "gp2d",
    "branin",
    "hartmann3",
    "pengine",
    "gengine",
];

/// Settings of a benchmark build; the defaults are the paper's (Table 2).
#[derive(Clone, Debug, PartialEq)]
pub struct BenchmarkOptions {
    /// The data folder holding `engine_bosch_pengines/` and `engine_bosch_gengines_sample/`
    /// (`../shared/data`); needed by `pengine` and `gengine` only.
    pub data_dir: Option<PathBuf>,
    /// Source points per source task (`None`: Table 2's `N_source`).
    pub n_source: Option<usize>,
    /// Number of source tasks (Branin and Hartmann3 only; 1 elsewhere). The first Branin
    /// source obeys the rejection rules; further ones do not (Fig. 10's setting).
    pub n_sources: usize,
    /// Grid points per dimension of the GP draws and of the safety grid (`None`: 100). Smaller
    /// grids make the GP benchmarks cheap (tests); the paper uses 100.
    pub grid_per_dim: Option<usize>,
    /// Candidate pool size (`None`: Table 2's `N_pool`; GEngine's candidates are the whole
    /// target training set and its per-query subset stays 10 000).
    pub n_pool: Option<usize>,
    /// Test points in the true safe region (`None`: 200 for 1-D, 500 for GP2D, Branin and
    /// Hartmann3, 1000 for PEngine and GEngine).
    pub n_test: Option<usize>,
    /// The most draws the rejection rules may reject before the build fails (GP and Branin).
    pub max_draws: usize,
    /// PEngine: the most rows per engine the simulator is fitted on (`None`: all rows).
    pub simulator_rows: Option<usize>,
    /// GEngine: keep every `stride`-th row of each 10 Hz trajectory (after the history
    /// features are formed, so the lags stay 0.1 s apart).
    pub stride: usize,
}

impl Default for BenchmarkOptions {
    fn default() -> Self {
        BenchmarkOptions {
            data_dir: None,
            n_source: None,
            n_sources: 1,
            grid_per_dim: None,
            n_pool: None,
            n_test: None,
            max_draws: 200,
            simulator_rows: None,
            stride: 1,
        }
    }
}

/// Why a benchmark could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BenchmarkError {
    /// The name is not a known benchmark.
    #[error("unknown safe-learning benchmark \"{name}\"; expected one of {}", BENCHMARK_NAMES.join(", "))]
    UnknownName {
        /// The name given.
        name: String,
    },
    /// An option is out of range for this benchmark.
    #[error("{benchmark}: option {option} = {value}: expected {expected}")]
    BadOption {
        /// The benchmark.
        benchmark: String,
        /// The option's name.
        option: &'static str,
        /// The value given.
        value: String,
        /// What is accepted.
        expected: String,
    },
    /// A data-backed benchmark was asked for without a data folder.
    #[error(
        "{benchmark} needs its data: set BenchmarkOptions::data_dir (e.g. ../shared/data) to \
         the folder holding {expected}"
    )]
    NoDataDir {
        /// The benchmark.
        benchmark: String,
        /// The files expected under the folder.
        expected: String,
    },
    /// A data file is missing.
    #[error("{benchmark}: {path} not found (expected {expected})")]
    MissingFile {
        /// The benchmark.
        benchmark: String,
        /// The path looked for.
        path: String,
        /// What the file should be.
        expected: String,
    },
    /// A data file could not be read or lacks a column.
    #[error("{benchmark}: {source}")]
    Data {
        /// The benchmark.
        benchmark: String,
        /// The reader's error.
        #[source]
        source: Box<DataError>,
    },
    /// The rejection rules never accepted a draw.
    #[error(
        "{benchmark}: no draw out of {draws} met the rejection rules ({rule}); raise \
         max_draws or try another seed"
    )]
    NoAcceptedDraw {
        /// The benchmark.
        benchmark: String,
        /// How many draws were tried.
        draws: usize,
        /// The rules.
        rule: String,
    },
    /// Too few points satisfy a requirement (a safe region too small, a box without safe data).
    #[error("{benchmark}: found only {found} of the {needed} {what}")]
    TooFewPoints {
        /// The benchmark.
        benchmark: String,
        /// What was looked for.
        what: String,
        /// How many were found.
        found: usize,
        /// How many are needed.
        needed: usize,
    },
    /// A factorisation failed.
    #[error("{benchmark}: {source}")]
    Linalg {
        /// The benchmark.
        benchmark: String,
        /// The error.
        #[source]
        source: Box<LinalgError>,
    },
    /// A simulator fit failed.
    #[error("{benchmark}: {source}")]
    Model {
        /// The benchmark.
        benchmark: String,
        /// The error.
        #[source]
        source: Box<ModelError>,
    },
}

/// The most grid nodes of a GP benchmark: its LMC terms hold one dense `n × n` factor each
/// (`100²` nodes: 800 MB per term).
pub const MAX_GP_GRID: usize = 16_384;
/// The most grid nodes of the other benchmarks' safety grids.
pub const MAX_GRID: usize = 4_000_000;

/// Rejects sizes of 0 (an empty pool or test set is no benchmark) and grids too large to hold.
fn check_sizes(name: &str, options: &BenchmarkOptions) -> Result<(), BenchmarkError> {
    let bad = |option: &'static str, value: String, expected: String| BenchmarkError::BadOption {
        benchmark: name.to_string(),
        option,
        value,
        expected,
    };
    for (option, value) in [
        ("n_source", options.n_source),
        ("n_pool", options.n_pool),
        ("n_test", options.n_test),
    ] {
        if value == Some(0) {
            return Err(bad(option, "0".into(), "at least 1".into()));
        }
    }
    if options.max_draws == 0 {
        return Err(bad("max_draws", "0".into(), "at least 1".into()));
    }
    let dim = match name {
        "gp2d" | "branin" => 2,
        _ => 1,
    };
    let cap = if name.starts_with("gp") {
        MAX_GP_GRID
    } else {
        MAX_GRID
    };
    if let Some(m) = options.grid_per_dim {
        if m.checked_pow(dim).is_none_or(|n| n > cap) {
            return Err(bad(
                "grid_per_dim",
                m.to_string(),
                format!("at most {cap} grid nodes in all ({dim}-D)"),
            ));
        }
    }
    Ok(())
}

/// Builds the benchmark `name` (one of [`BENCHMARK_NAMES`]) from `seed`: the same name, seed
/// and options always give the same benchmark.
///
/// # Errors
/// An unknown name, an option out of range, missing or unreadable data (`pengine`,
/// `gengine`), rejection rules that accept none of `options.max_draws` draws, or a failed
/// factorisation or simulator fit.
pub fn safe_benchmark(
    name: &str,
    seed: u64,
    options: &BenchmarkOptions,
) -> Result<SafeBenchmark, BenchmarkError> {
    check_sizes(name, options)?;
    let single_source = |name: &str| {
        if options.n_sources != 1 {
            return Err(BenchmarkError::BadOption {
                benchmark: name.to_string(),
                option: "n_sources",
                value: options.n_sources.to_string(),
                expected: "1 (only branin and hartmann3 have several source tasks)".into(),
            });
        }
        Ok(())
    };
    match name {
        "toy1d" => {
            single_source(name)?;
            toy1d::build(seed, options)
        }
        "gp1d" => {
            single_source(name)?;
            gp::build(1, seed, options)
        }
        "gp2d" => {
            single_source(name)?;
            gp::build(2, seed, options)
        }
        "branin" => branin::build(seed, options),
        "hartmann3" => hartmann3::build(seed, options),
        "pengine" => {
            single_source(name)?;
            pengine::build(seed, options)
        }
        "gengine" => {
            single_source(name)?;
            gengine::build(seed, options)
        }
        _ => Err(BenchmarkError::UnknownName {
            name: name.to_string(),
        }),
    }
}
