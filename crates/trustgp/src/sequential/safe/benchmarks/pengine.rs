//! `pengine`: the semi-real PEngine benchmark (`safe-transfer.md` §5.2): a simulator fitted on
//! two measurement campaigns of one engine (engine1 = source, engine2 = target).
//!
//! Data (`engine_bosch_pengines/`, see its `SOURCE.txt`): every column standardised; inputs
//! `engine_speed`, `engine_load` (the paper's "relative cylinder air charge"),
//! `intake_valve_opening`, `air_fuel_ratio`; main output `engine_roughness_s`, safety output
//! `temperature_exhaust_manifold` with the target constraint `z ≤ 1`; the source is
//! unconstrained (the code's bounds ±100).
//!
//! Simulator: per output channel one two-task multi-output GP (source, target) on the four
//! inputs — the repository's MOGP with an LMC of two Matérn-5/2 terms, each with a full-rank
//! coregionalisation, fitted by the log marginal likelihood on a seeded 60 % of the rows of
//! both campaigns (its RMSE on the other 40 % is reported, [`Simulator::test_rmse`]) and then
//! conditioned on all rows with the fitted hyperparameters. The simulator is fitted with a
//! fixed seed, so every benchmark seed shares it. Its predictive mean is the noise-free oracle
//! (\[code\]: queries are noise-free) on the 2-D rectangle of engine speed and load spanned by both
//! campaigns, with the contextual inputs fixed at 0 \[code\]. Initial target points are drawn in
//! the sub-box speed ∈ [−0.5, 0.5], load ∈ [0.5, 1.5] (\[code\]: `target_box_a`/`target_box_width`).

use std::path::{Path, PathBuf};

use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::assemble::{assemble, Oracle, Plan};
use super::{BenchmarkError, BenchmarkOptions};
use crate::data::{random_split, read_csv, Dataset};
use crate::fit::FitOptions;
use crate::kernels::Kernel;
use crate::models::robust::mogp::MultiOutputGp;
use crate::models::robust::multi_output::{
    MultiOutputConfig, MultiOutputKind, MultiOutputModel, MultiOutputStart,
};
use crate::sequential::safe::{Constraint, SafeBenchmark};

/// The folder under the data directory.
pub const FOLDER: &str = "engine_bosch_pengines";
/// The source and target campaigns' files.
pub const FILES: [&str; 2] = [
    "engine1_normalized__data.csv",
    "engine2_normalized__data.csv",
];
/// The input columns; the last two are the contextual inputs, fixed at 0.
pub const INPUTS: [&str; 4] = [
    "engine_speed",
    "engine_load",
    "intake_valve_opening",
    "air_fuel_ratio",
];
/// The main output (roughness) and the safety output (temperature).
pub const OUTPUTS: [&str; 2] = ["engine_roughness_s", "temperature_exhaust_manifold"];
/// The target's upper temperature bound.
pub const TEMPERATURE_MAX: f64 = 1.0;
/// The seed of the simulator's split and fit (shared by every benchmark seed).
const SIMULATOR_SEED: u64 = 2024;

/// Reads one campaign: the [`INPUTS`] and [`OUTPUTS`] columns of `path`.
///
/// # Errors
/// A missing file, a missing column or a bad cell, naming the file.
pub fn load(path: &Path) -> Result<Dataset, BenchmarkError> {
    if !path.is_file() {
        return Err(BenchmarkError::MissingFile {
            benchmark: "pengine".into(),
            path: path.display().to_string(),
            expected: format!(
                "a PEngine campaign CSV with columns {} and {}",
                INPUTS.join(", "),
                OUTPUTS.join(", ")
            ),
        });
    }
    let names = |c: &[&str]| c.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    read_csv(path, &names(&OUTPUTS), Some(&names(&INPUTS))).map_err(|source| BenchmarkError::Data {
        benchmark: "pengine".into(),
        source: Box::new(source),
    })
}

/// The two campaigns' files under `data_dir`.
///
/// # Errors
/// No data folder given, or a file missing.
pub fn files(options: &BenchmarkOptions) -> Result<[PathBuf; 2], BenchmarkError> {
    let dir = options
        .data_dir
        .as_ref()
        .ok_or_else(|| BenchmarkError::NoDataDir {
            benchmark: "pengine".into(),
            expected: format!("{FOLDER}/{} and {FOLDER}/{}", FILES[0], FILES[1]),
        })?;
    Ok(FILES.map(|f| dir.join(FOLDER).join(f)))
}

/// One simulator per output channel, and their test errors.
#[derive(Clone, Debug)]
pub struct Simulator {
    /// Per output channel ([`OUTPUTS`]): the two-task MOGP conditioned on all rows.
    pub models: Vec<MultiOutputModel>,
    /// Per output channel: the RMSE on the held-out 40 % of the source rows and of the target
    /// rows, `[source, target]`, of the model fitted on the other 60 %.
    pub test_rmse: Vec<[f64; 2]>,
    /// The rectangle of engine speed and load spanned by both campaigns.
    pub bounds: Vec<(f64, f64)>,
}

/// Stacks the campaigns: inputs of both, one target column per campaign (NaN elsewhere), for
/// output channel `out`, over the rows `rows[c]` of campaign `c`.
fn stacked(data: &[Dataset; 2], rows: &[Vec<usize>; 2], out: usize) -> (Mat<f64>, Mat<f64>) {
    let all: Vec<(usize, usize)> = (0..2)
        .flat_map(|c| rows[c].iter().map(move |&i| (c, i)))
        .collect();
    let x = Mat::from_fn(all.len(), INPUTS.len(), |k, j| {
        let (c, i) = all[k];
        data[c].x[(i, j)]
    });
    let y = Mat::from_fn(all.len(), 2, |k, t| {
        let (c, i) = all[k];
        if t == c {
            data[c].y[(i, out)]
        } else {
            f64::NAN
        }
    });
    (x, y)
}

fn model_error(source: crate::models::ModelError) -> BenchmarkError {
    BenchmarkError::Model {
        benchmark: "pengine".into(),
        source: Box::new(source),
    }
}

/// Fits the simulators on the two campaigns (at most `max_rows` seeded random rows of each).
///
/// # Errors
/// A failed fit.
pub fn fit_simulator(
    data: &[Dataset; 2],
    max_rows: Option<usize>,
) -> Result<Simulator, BenchmarkError> {
    let mut rng = StdRng::seed_from_u64(SIMULATOR_SEED);
    let rows: [Vec<usize>; 2] = [0, 1].map(|c| {
        let mut r: Vec<usize> = (0..data[c].n()).collect();
        if let Some(m) = max_rows.filter(|&m| m < r.len()) {
            r.shuffle(&mut rng);
            r.truncate(m);
            r.sort_unstable();
        }
        r
    });
    let split =
        |c: usize| random_split(rows[c].len(), 0.4, SIMULATOR_SEED + c as u64).map_err(data_error);
    let (s0, s1) = (split(0)?, split(1)?);
    let pick = |r: &Vec<usize>, idx: &[usize]| idx.iter().map(|&k| r[k]).collect::<Vec<_>>();
    let train = [pick(&rows[0], &s0.train), pick(&rows[1], &s1.train)];
    let test = [pick(&rows[0], &s0.test), pick(&rows[1], &s1.test)];
    let cfg = MultiOutputConfig {
        kind: MultiOutputKind::Mogp,
        kernels: vec![Kernel::parse("matern52").expect("a valid kernel"); 2],
        rank: None,
        shared_noise: false,
        noise: 0.1,
        epsilon: Vec::new(),
        mcd_support: None,
        task_means: None,
        fit: FitOptions {
            seed: SIMULATOR_SEED,
            ..FitOptions::default()
        },
    };
    let mut models = Vec::new();
    let mut test_rmse = Vec::new();
    for out in 0..OUTPUTS.len() {
        let (x, y) = stacked(data, &train, out);
        let fitted = MultiOutputModel::fit(x.as_ref(), y.as_ref(), &cfg).map_err(model_error)?;
        let rmse = [0, 1].map(|c| {
            let (xt, yt) = stacked(data, &[test[0].clone(), test[1].clone()], out);
            let rows_c: Vec<usize> = (0..yt.nrows())
                .filter(|&i| yt[(i, c)].is_finite())
                .collect();
            let xc = Mat::from_fn(rows_c.len(), xt.ncols(), |k, j| xt[(rows_c[k], j)]);
            let pred = &fitted.predict(xc.as_ref())[c];
            let se: f64 = rows_c
                .iter()
                .zip(&pred.mean)
                .map(|(&i, m)| (yt[(i, c)] - m).powi(2))
                .sum();
            (se / rows_c.len().max(1) as f64).sqrt()
        });
        test_rmse.push(rmse);
        // Condition on every row with the fitted hyperparameters.
        let (xa, ya) = stacked(data, &rows, out);
        let start = MultiOutputStart::new(xa.as_ref(), ya.as_ref(), &cfg).map_err(model_error)?;
        let noise = fitted.noise().to_vec();
        let gp = MultiOutputGp::at(
            fitted.covariance().clone(),
            start.mean,
            start.entries.x.as_ref(),
            &start.entries.y,
            &start.group,
            &noise,
        )
        .map_err(model_error)?;
        models.push(MultiOutputModel::Mogp(Box::new(gp)));
    }
    let bounds = (0..2)
        .map(|j| {
            let v = data
                .iter()
                .flat_map(|d| (0..d.n()).map(move |i| d.x[(i, j)]));
            v.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), a| {
                (lo.min(a), hi.max(a))
            })
        })
        .collect();
    Ok(Simulator {
        models,
        test_rmse,
        bounds,
    })
}

fn data_error(source: crate::data::DataError) -> BenchmarkError {
    BenchmarkError::Data {
        benchmark: "pengine".into(),
        source: Box::new(source),
    }
}

impl Simulator {
    /// The predictive means of task `t` (0 source, 1 target) of both channels at the 2-D
    /// points `x` (speed, load; contextual inputs 0).
    fn outputs(&self, t: usize, x: MatRef<'_, f64>) -> Mat<f64> {
        let full = Mat::from_fn(
            x.nrows(),
            INPUTS.len(),
            |i, j| {
                if j < 2 {
                    x[(i, j)]
                } else {
                    0.0
                }
            },
        );
        let means: Vec<Vec<f64>> = self
            .models
            .iter()
            .map(|m| m.predict(full.as_ref())[t].mean.clone())
            .collect();
        Mat::from_fn(x.nrows(), self.models.len(), |i, j| means[j][i])
    }
}

impl Oracle for Simulator {
    fn dim(&self) -> usize {
        2
    }
    fn n_sources(&self) -> usize {
        1
    }
    fn target(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        self.outputs(1, x)
    }
    fn source(&self, _: usize, x: MatRef<'_, f64>) -> Mat<f64> {
        self.outputs(0, x)
    }
}

/// Builds `pengine` from `seed` with an already fitted simulator.
///
/// # Errors
/// Too few safe points (e.g. no safe point in the initial sub-box).
pub fn build_with(
    simulator: &Simulator,
    seed: u64,
    options: &BenchmarkOptions,
) -> Result<SafeBenchmark, BenchmarkError> {
    let bounds = simulator.bounds.clone();
    let sub: [(f64, f64); 2] = [(-0.5, 0.5), (0.5, 1.5)];
    let initial_box = (0..2)
        .map(|j| (sub[j].0.max(bounds[j].0), sub[j].1.min(bounds[j].1)))
        .collect();
    let plan = Plan {
        name: "pengine".into(),
        bounds,
        constraints: vec![Constraint {
            output: 1,
            lower: None,
            upper: Some(TEMPERATURE_MAX),
        }],
        source_constraints: Vec::new(),
        noise_std: 0.0,
        n_source: options.n_source.unwrap_or(500),
        n_init: 20,
        n_query: 100,
        n_pool: options.n_pool.unwrap_or(3000),
        n_test: options.n_test.unwrap_or(1000),
        grid_per_dim: None,
        initial_box,
    };
    assemble(&plan, simulator, |_| true, &mut StdRng::seed_from_u64(seed))
}

/// Builds `pengine` from `seed`: reads the campaigns under `options.data_dir`, fits the
/// simulator, assembles the benchmark.
///
/// # Errors
/// Missing data folder or files, bad data, a failed fit, too few safe points.
pub fn build(seed: u64, options: &BenchmarkOptions) -> Result<SafeBenchmark, BenchmarkError> {
    let [a, b] = files(options)?;
    let data = [load(&a)?, load(&b)?];
    let simulator = fit_simulator(&data, options.simulator_rows)?;
    build_with(&simulator, seed, options)
}
