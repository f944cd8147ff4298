//! `gengine`: the real GEngine benchmark (`safe-transfer.md` §5.2): dynamic measurements of two
//! gasoline engines (gengine1 = source, gengine2 = target), `D = 13`.
//!
//! Data (`engine_bosch_gengines_sample/`, see its `SOURCE.txt`): headerless 10 Hz trajectories,
//! standardised; gengine1 has 13 columns (Speed, Load, Lambda, Ignition angle, Fuel cutoff, then
//! PAR, CO, CO2, HC, NOx, O2, T_EXM, T_CAT1), gengine2 9 (the 4 inputs, then PAR, HC, NOx, T_EXM,
//! T_CAT1). Files are `gengine{1,2}__raw_0000NN_measurement_000000.csv`; the upstream split
//! decides their role: gengine1 measurements 10–19 and 30–39 are training (the source data
//! come from them), gengine2 0–15 training (the candidates), 16–21 test (RMSE and safe truth).
//! Every file of a role found in the folder is used.
//!
//! Pre-processing as the authors' code ([`nx`](super::nx)): PT1-filtered inputs, the 13 NX
//! history features, outputs HC (main) and T_EXM (safety) at the current time; then the code's
//! outlier masks on each loaded set — gengine1: features 8–13 inside their 2.5 %/97.5 %
//! quantiles, HC below its 95 % quantile, T_EXM above its 2.5 % quantile; gengine2: features
//! 8–10 (the lagged Lambdas) above their 5 % quantiles, HC below its 97.5 % quantile. With
//! `stride > 1` every `stride`-th row of each trajectory is kept (after the features are
//! formed, so the lags stay 0.1 s apart).
//!
//! Benchmark: the target constraint `−1.5 ≤ T_EXM ≤ 0.5`, the source data 500 random gengine1
//! rows with `−2 ≤ T_EXM ≤ 0.5`; the candidates are every gengine2 training row (noisy labels;
//! safe truth from them), of which a fresh random 10 000 form the pool before each query; 20
//! initial rows are drawn from the safe training rows whose current raw inputs lie in
//! `[−1, −0.7] × (−∞, −0.5] × [0, 0.5] × [0, 0.2]` (Speed, Load, Lambda, Ignition) and are
//! removed from the candidates; the test points are up to `n_test` (default 1000) random safe
//! rows of the test files; 200 queries, refits every 50; SAL fitted with the GEngine
//! scripts' settings ([`SalFit::Engine`]).

use std::path::{Path, PathBuf};

use ::csv::{ReaderBuilder, Trim};
use faer::Mat;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::assemble::satisfies;
use super::nx::{nx_features, pt1, quantile, MAX_LAG, PT1};
use super::{BenchmarkError, BenchmarkOptions};
use crate::data::DataError;
use crate::sequential::safe::{Constraint, SafeBenchmark, SalFit, TaskData};

/// The folder under the data directory.
pub const FOLDER: &str = "engine_bosch_gengines_sample";
/// The target's safe temperature range.
pub const TARGET_RANGE: (f64, f64) = (-1.5, 0.5);
/// The source data's temperature range.
pub const SOURCE_RANGE: (f64, f64) = (-2.0, 0.5);
/// The initial box on the current raw inputs (Speed, Load, Lambda, Ignition).
pub const INITIAL_BOX: [(f64, f64); 4] = [
    (-1.0, -0.7),
    (f64::NEG_INFINITY, -0.5),
    (0.0, 0.5),
    (0.0, 0.2),
];

/// One engine's file layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Engine {
    /// 1 or 2.
    pub id: u8,
    /// Columns per row.
    pub columns: usize,
    /// Column of HC.
    pub hc: usize,
    /// Column of the exhaust-manifold temperature.
    pub temperature: usize,
}

/// gengine1 (the source).
pub const GENGINE1: Engine = Engine {
    id: 1,
    columns: 13,
    hc: 8,
    temperature: 11,
};
/// gengine2 (the target).
pub const GENGINE2: Engine = Engine {
    id: 2,
    columns: 9,
    hc: 5,
    temperature: 7,
};

/// Which upstream split a measurement belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Training measurements.
    Train,
    /// Test measurements.
    Test,
}

/// The upstream role of measurement `m` of `engine`, `None` if it is in neither list.
pub fn role(engine: Engine, m: u32) -> Option<Role> {
    match (engine.id, m) {
        (1, 10..=19 | 30..=39) | (2, 0..=15) => Some(Role::Train),
        (1, 53..=65) | (2, 16..=21) => Some(Role::Test),
        _ => None,
    }
}

/// The file name of measurement `m` of `engine`.
pub fn file_name(engine: Engine, m: u32) -> String {
    format!("gengine{}__raw_{m:06}_measurement_000000.csv", engine.id)
}

/// The files of `engine` with `role` present in `dir`, in measurement order.
pub fn find_files(dir: &Path, engine: Engine, wanted: Role) -> Vec<PathBuf> {
    (0..100)
        .filter(|&m| role(engine, m) == Some(wanted))
        .map(|m| dir.join(file_name(engine, m)))
        .filter(|p| p.is_file())
        .collect()
}

fn data_error(source: DataError) -> BenchmarkError {
    BenchmarkError::Data {
        benchmark: "gengine".into(),
        source: Box::new(source),
    }
}

/// Parses a headerless numeric CSV of `columns` columns (one row per line); `source_name`
/// names it in errors.
///
/// # Errors
/// Malformed CSV, a row with another number of fields, a cell that is not a finite number,
/// or no rows, naming the line (and the column, 1-based).
pub fn parse_headerless(
    text: &str,
    source_name: &str,
    columns: usize,
) -> Result<Vec<Vec<f64>>, BenchmarkError> {
    let mut reader = ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(Trim::All)
        .from_reader(text.as_bytes());
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            data_error(DataError::Csv {
                source_name: source_name.into(),
                line: e.position().map_or(0, |p| p.line()),
                message: e.to_string(),
            })
        })?;
        let line = record.position().map_or(0, |p| p.line());
        if record.len() != columns {
            return Err(data_error(DataError::RaggedRow {
                source_name: source_name.into(),
                line,
                expected: columns,
                found: record.len(),
            }));
        }
        let row = record
            .iter()
            .enumerate()
            .map(|(j, cell)| {
                cell.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| {
                        data_error(DataError::BadCell {
                            source_name: source_name.into(),
                            line,
                            column: format!("{}", j + 1),
                            expected: "a finite number",
                            found: cell.into(),
                        })
                    })
            })
            .collect::<Result<Vec<f64>, _>>()?;
        rows.push(row);
    }
    if rows.is_empty() {
        return Err(data_error(DataError::NoDataRows {
            source_name: source_name.into(),
        }));
    }
    Ok(rows)
}

/// The pre-processed rows of a set of trajectories.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Processed {
    /// The 13 NX features per row.
    pub features: Vec<Vec<f64>>,
    /// The current raw (unfiltered) inputs per row.
    pub raw_inputs: Vec<[f64; 4]>,
    /// `[HC, T_EXM]` per row.
    pub outputs: Vec<[f64; 2]>,
}

impl Processed {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.outputs.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.outputs.is_empty()
    }

    fn keep(&mut self, mask: &[bool]) {
        let mut k = 0;
        self.features.retain(|_| (mask[k], k += 1).0);
        k = 0;
        self.raw_inputs.retain(|_| (mask[k], k += 1).0);
        k = 0;
        self.outputs.retain(|_| (mask[k], k += 1).0);
    }
}

/// Pre-processes one trajectory (rows of `engine`'s columns): PT1-filtered NX features, raw
/// current inputs and `[HC, T_EXM]`, keeping every `stride`-th row.
pub fn process_trajectory(rows: &[Vec<f64>], engine: Engine, stride: usize) -> Processed {
    let filtered: Vec<Vec<f64>> = (0..4)
        .map(|j| {
            let col: Vec<f64> = rows.iter().map(|r| r[j]).collect();
            pt1(&col, PT1[j])
        })
        .collect();
    let u = nx_features(&filtered);
    let mut out = Processed::default();
    for r in (0..u.nrows()).step_by(stride.max(1)) {
        let t = r + MAX_LAG;
        out.features
            .push((0..u.ncols()).map(|j| u[(r, j)]).collect());
        out.raw_inputs
            .push([rows[t][0], rows[t][1], rows[t][2], rows[t][3]]);
        out.outputs
            .push([rows[t][engine.hc], rows[t][engine.temperature]]);
    }
    out
}

/// Applies the authors' outlier masks to a loaded set of `engine` (see the module doc).
pub fn remove_outliers(set: &mut Processed, engine: Engine) {
    let n = set.len();
    let col = |j: usize| -> Vec<f64> { set.features.iter().map(|f| f[j]).collect() };
    let hc: Vec<f64> = set.outputs.iter().map(|o| o[0]).collect();
    let temp: Vec<f64> = set.outputs.iter().map(|o| o[1]).collect();
    let mut mask = vec![true; n];
    if engine.id == 1 {
        for j in 7..13 {
            let c = col(j);
            let (lo, hi) = (quantile(&c, 0.025), quantile(&c, 0.975));
            c.iter()
                .zip(mask.iter_mut())
                .for_each(|(v, m)| *m &= *v > lo && *v < hi);
        }
        let hi = quantile(&hc, 0.95);
        let lo = quantile(&temp, 0.025);
        for i in 0..n {
            mask[i] &= hc[i] < hi && temp[i] > lo;
        }
    } else {
        for j in 7..10 {
            let c = col(j);
            let lo = quantile(&c, 0.05);
            c.iter()
                .zip(mask.iter_mut())
                .for_each(|(v, m)| *m &= *v > lo);
        }
        let hi = quantile(&hc, 0.975);
        for i in 0..n {
            mask[i] &= hc[i] < hi;
        }
    }
    set.keep(&mask);
}

/// Loads and pre-processes every file of `paths` as `engine`, then removes its outliers.
///
/// # Errors
/// An unreadable file or bad content, naming the file.
pub fn load_set(
    paths: &[PathBuf],
    engine: Engine,
    stride: usize,
) -> Result<Processed, BenchmarkError> {
    let mut set = Processed::default();
    for p in paths {
        let text = std::fs::read_to_string(p).map_err(|source| {
            data_error(DataError::Io {
                path: p.display().to_string(),
                source,
            })
        })?;
        let rows = parse_headerless(&text, &p.display().to_string(), engine.columns)?;
        let t = process_trajectory(&rows, engine, stride);
        set.features.extend(t.features);
        set.raw_inputs.extend(t.raw_inputs);
        set.outputs.extend(t.outputs);
    }
    remove_outliers(&mut set, engine);
    Ok(set)
}

fn in_range(v: f64, (lo, hi): (f64, f64)) -> bool {
    v >= lo && v <= hi
}

fn task_data(set: &Processed, rows: &[usize]) -> TaskData {
    TaskData {
        x: Mat::from_fn(rows.len(), 13, |i, j| set.features[rows[i]][j]),
        outputs: Mat::from_fn(rows.len(), 2, |i, j| set.outputs[rows[i]][j]),
    }
}

/// Builds `gengine` from the three loaded sets (source training, target training, target
/// test) and `seed`.
///
/// # Errors
/// Fewer source rows, initial rows or safe test rows than needed.
pub fn build_from(
    source: &Processed,
    target: &Processed,
    test: &Processed,
    seed: u64,
    options: &BenchmarkOptions,
) -> Result<SafeBenchmark, BenchmarkError> {
    let too_few = |what: &str, found: usize, needed: usize| BenchmarkError::TooFewPoints {
        benchmark: "gengine".into(),
        what: what.into(),
        found,
        needed,
    };
    let mut rng = StdRng::seed_from_u64(seed);
    let n_source = options.n_source.unwrap_or(500);
    // The same truth check as every benchmark's, on the temperature column.
    let within = |(lo, hi): (f64, f64)| {
        [Constraint {
            output: 1,
            lower: Some(lo),
            upper: Some(hi),
        }]
    };
    let (target_constraints, source_constraints) = (within(TARGET_RANGE), within(SOURCE_RANGE));
    let mut src: Vec<usize> = (0..source.len())
        .filter(|&i| satisfies(&source_constraints, &source.outputs[i]))
        .collect();
    if src.len() < n_source {
        return Err(too_few(
            "gengine1 rows with −2 ≤ T ≤ 0.5",
            src.len(),
            n_source,
        ));
    }
    src.shuffle(&mut rng);
    src.truncate(n_source);
    let safe = |o: &[f64; 2]| satisfies(&target_constraints, o);
    let mut init: Vec<usize> = (0..target.len())
        .filter(|&i| {
            safe(&target.outputs[i])
                && (0..4).all(|j| in_range(target.raw_inputs[i][j], INITIAL_BOX[j]))
        })
        .collect();
    let n_init = 20;
    if init.len() < n_init {
        return Err(too_few(
            "safe gengine2 training rows in the initial box",
            init.len(),
            n_init,
        ));
    }
    init.shuffle(&mut rng);
    init.truncate(n_init);
    let mut is_init = vec![false; target.len()];
    init.iter().for_each(|&i| is_init[i] = true);
    let cand: Vec<usize> = (0..target.len()).filter(|&i| !is_init[i]).collect();
    let mut tst: Vec<usize> = (0..test.len())
        .filter(|&i| safe(&test.outputs[i]))
        .collect();
    if tst.is_empty() {
        return Err(too_few("safe gengine2 test rows", 0, 1));
    }
    tst.shuffle(&mut rng);
    tst.truncate(options.n_test.unwrap_or(1000));
    let bounds = (0..13)
        .map(|j| {
            [source, target, test]
                .iter()
                .flat_map(|s| s.features.iter().map(move |f| f[j]))
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(v), hi.max(v))
                })
        })
        .collect();
    Ok(SafeBenchmark {
        name: "gengine".into(),
        bounds,
        constraints: target_constraints.to_vec(),
        sources: vec![task_data(source, &src)],
        initial: task_data(target, &init),
        candidate_safe: cand.iter().map(|&i| safe(&target.outputs[i])).collect(),
        candidates: task_data(target, &cand),
        pool_size: Some(options.n_pool.unwrap_or(10_000)),
        test: task_data(test, &tst),
        grid: None,
        n_query: 200,
        refit_every: 50,
        sal_fit: SalFit::Engine,
    })
}

/// Builds `gengine` from `seed`: finds and loads the files under `options.data_dir`.
///
/// # Errors
/// Missing data folder or files, bad data, too few rows.
pub fn build(seed: u64, options: &BenchmarkOptions) -> Result<SafeBenchmark, BenchmarkError> {
    let expected = format!(
        "{FOLDER}/ with at least one gengine1 training file (e.g. {}), one gengine2 training \
         file (e.g. {}) and one gengine2 test file (e.g. {})",
        file_name(GENGINE1, 10),
        file_name(GENGINE2, 1),
        file_name(GENGINE2, 17)
    );
    let dir = options
        .data_dir
        .as_ref()
        .ok_or_else(|| BenchmarkError::NoDataDir {
            benchmark: "gengine".into(),
            expected: expected.clone(),
        })?
        .join(FOLDER);
    let stride = options.stride;
    if stride == 0 {
        return Err(BenchmarkError::BadOption {
            benchmark: "gengine".into(),
            option: "stride",
            value: "0".into(),
            expected: "at least 1".into(),
        });
    }
    let mut sets = Vec::new();
    for (engine, role, what) in [
        (GENGINE1, Role::Train, "a gengine1 training file"),
        (GENGINE2, Role::Train, "a gengine2 training file"),
        (GENGINE2, Role::Test, "a gengine2 test file"),
    ] {
        let paths = find_files(&dir, engine, role);
        if paths.is_empty() {
            return Err(BenchmarkError::MissingFile {
                benchmark: "gengine".into(),
                path: format!("{} ({what})", dir.display()),
                expected: expected.clone(),
            });
        }
        sets.push(load_set(&paths, engine, stride)?);
    }
    build_from(&sets[0], &sets[1], &sets[2], seed, options)
}
