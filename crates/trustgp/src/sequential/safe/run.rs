//! The safe-learning loop on a [`SafeBenchmark`] (`safe-transfer.md` Algorithms 1–3): before
//! each query, every function's model is conditioned on the target data (its hyperparameters
//! refitted on the schedule), the pool is checked against the safe set, and the safe candidate
//! with the largest acquisition is queried (its stored noisy outputs are appended and it leaves
//! the pool). An empty safe set stops the run: no unsafe point is ever queried.
//!
//! Units (§6): inputs are scaled to the unit box of `bench.bounds`; each source task's outputs
//! are standardised by its own statistics, the target's by its initial data, and the
//! thresholds by the target's map. Metrics are in the benchmark's units.
//!
//! Reports: after `k` queries (`k = 0`, every `report_every` queries, and at the end) the
//! target's RMSE on `bench.test`, the TP/FP safe areas over that step's pool, and the
//! cumulative unsafe-query ratio `#unsafe / N_query` (Fig. 9/11's definition).

use std::time::Instant;

use faer::Mat;
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};

use super::acquisition::{AcquisitionOptions, PreparedAcquisition};
use super::error::{invalid, SafeError};
use super::metrics::{regions_explored, safe_areas, safe_query_ratio};
use super::propose::{check_inputs, evaluate_pool_unchecked, PoolEvaluation, DEFAULT_CHUNK};
use super::safe_set::{SafeSet, SafeSetOptions};
use super::scaling::{output_scaling, standardise_constraint, UnitBox};
use super::{FunctionModel, SafeBenchmark, SourceTask, TaskData};
use crate::data::metrics::rmse;
use crate::data::Standardizer;
use crate::models::ModelError;

/// Settings of [`run_benchmark`] beyond the benchmark's own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SafeRunOptions {
    /// The safe set's rule.
    pub safe_set: SafeSetOptions,
    /// The acquisition.
    pub acquisition: AcquisitionOptions,
    /// Pool rows predicted at once (at least 1). Default [`DEFAULT_CHUNK`].
    pub chunk_size: usize,
    /// The statistics the target's outputs (and thresholds) are standardised by. Default
    /// [`TargetScaling::InitialData`].
    pub target_scaling: TargetScaling,
    /// Overrides the benchmark's number of queries (for reduced runs). Default `None`.
    pub n_query: Option<usize>,
    /// Overrides the benchmark's refit schedule (at least 1). Default `None`.
    pub refit_every: Option<usize>,
    /// Metrics every this many queries (at least 1). Default `None`: every query when the
    /// models are refitted every query, else at every refit.
    pub report_every: Option<usize>,
}

impl Default for SafeRunOptions {
    fn default() -> Self {
        SafeRunOptions {
            safe_set: SafeSetOptions::default(),
            acquisition: AcquisitionOptions::default(),
            chunk_size: DEFAULT_CHUNK,
            target_scaling: TargetScaling::InitialData,
            n_query: None,
            refit_every: None,
            report_every: None,
        }
    }
}

/// Which statistics standardise the target task's outputs and thresholds (§6: "the target
/// from the initial target data or known ranges").
///
/// The initial data are few and clustered in one small safe region, so their spread can be
/// far below the function's: a threshold then maps to many standard deviations below the
/// standardised data (e.g. `T' ≈ −5`), and a unit-variance prior alone certifies the whole
/// unexplored space as safe. The source tasks' statistics describe the function's range
/// without looking at the target's oracle; they are the same for every method of a
/// benchmark, so comparisons stay fair.
///
/// With `Sources` or `Identity` the source tasks are mapped like the target, so that a
/// transfer model sees both tasks in the same units; with `InitialData` each source task is
/// standardised by its own statistics (§6 literally).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetScaling {
    /// Mean and std of the initial target data (per output column).
    #[default]
    InitialData,
    /// Mean and std of all source tasks' data stacked (per output column).
    Sources,
    /// None: the benchmark's outputs are already in model units.
    Identity,
}

/// One query of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueryRecord {
    /// The candidate's row in `bench.candidates`.
    pub index: usize,
    /// Its input, in the benchmark's units.
    pub x: Vec<f64>,
    /// Whether it is truly safe (`bench.candidate_safe`).
    pub safe: bool,
    /// The models' probability that each constraint holds there, in constraint order.
    pub safety_probability: Vec<f64>,
    /// The acquisition there.
    pub acquisition: f64,
    /// How many pool candidates were in the safe set.
    pub safe_set_size: usize,
    /// Seconds of hyperparameter fitting before this query (all models; 0 without a refit).
    pub fit_seconds: f64,
}

/// The metrics after some number of queries.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SafeMetrics {
    /// Queries made so far.
    pub queries: usize,
    /// RMSE of the target's posterior mean on `bench.test`, in the benchmark's units.
    pub rmse: f64,
    /// True-positive safe area over the pool.
    pub tp_area: f64,
    /// False-positive safe area over the pool.
    pub fp_area: f64,
    /// Unsafe queries so far over the planned number of queries.
    pub unsafe_query_ratio: f64,
    /// Candidates in the safe set.
    pub safe_set_size: usize,
    /// Candidates in the pool.
    pub pool_size: usize,
}

/// Why a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// Every planned query was made.
    Completed,
    /// The safe set was empty: the run stopped rather than query an uncertified point.
    EmptySafeSet,
    /// Every candidate had been queried.
    PoolExhausted,
}

/// The result of [`run_benchmark`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SafeRun {
    /// The benchmark's name.
    pub problem: String,
    /// The seed of the run.
    pub seed: u64,
    /// The planned number of queries.
    pub n_query: usize,
    /// Why the run ended.
    pub stop: StopReason,
    /// The queries, in order.
    pub queries: Vec<QueryRecord>,
    /// The metrics at each reporting step (the first after 0 queries, the last at the end).
    pub metrics: Vec<SafeMetrics>,
    /// The fraction of the queries made that were truly safe (`None` without queries).
    pub safe_query_ratio: Option<f64>,
    /// Disjoint true safe regions reached by the initial and queried points together (`None`
    /// without a safety grid).
    pub regions_explored: Option<usize>,
    /// Seconds of the last hyperparameter fit of each output's model (f, then each q).
    pub training_seconds: Vec<f64>,
    /// Their sum: the training time of f and q at the last refit.
    pub training_seconds_total: f64,
    /// Candidates never offered because one of their stored outputs is not finite (the data
    /// never take a NaN).
    pub excluded_candidates: Vec<usize>,
    /// Wall-clock seconds of the whole run.
    pub seconds: f64,
}

/// Builds the model of one output column from the source tasks' data for that column.
pub type ModelFactory<'a> =
    dyn Fn(usize, Vec<SourceTask>) -> Result<Box<dyn FunctionModel>, ModelError> + 'a;

/// The checked settings of a run.
struct Plan {
    n_query: usize,
    refit_every: usize,
    report_every: usize,
    n_outputs: usize,
}

fn plan(bench: &SafeBenchmark, options: &SafeRunOptions) -> Result<Plan, SafeError> {
    let n_query = options.n_query.unwrap_or(bench.n_query);
    let refit_every = options.refit_every.unwrap_or(bench.refit_every);
    if refit_every == 0 {
        return invalid("refit_every must be at least 1 (refit before the first query)");
    }
    let report_every =
        options
            .report_every
            .unwrap_or(if refit_every == 1 { 1 } else { refit_every });
    if report_every == 0 {
        return invalid("report_every must be at least 1");
    }
    if options.chunk_size == 0 {
        return invalid("chunk_size must be at least 1");
    }
    if bench.pool_size == Some(0) {
        return invalid("the benchmark's pool_size must be at least 1 when given");
    }
    let n_outputs = bench.initial.outputs.ncols();
    if n_outputs == 0 {
        return invalid("the initial data need at least one output column (the target f)");
    }
    let check_task = |task: &TaskData, what: &str| -> Result<(), SafeError> {
        if task.x.nrows() != task.outputs.nrows() || task.outputs.ncols() != n_outputs {
            return invalid(format!(
                "{what}: {} inputs and {}×{} outputs, expected one output row per input and \
                 {n_outputs} output columns (as the initial data)",
                task.x.nrows(),
                task.outputs.nrows(),
                task.outputs.ncols()
            ));
        }
        Ok(())
    };
    check_task(&bench.candidates, "candidates")?;
    for (s, source) in bench.sources.iter().enumerate() {
        check_task(source, &format!("source task {s}"))?;
    }
    if bench.candidate_safe.len() != bench.candidates.n() {
        return invalid(format!(
            "candidate_safe has {} flags for {} candidates",
            bench.candidate_safe.len(),
            bench.candidates.n()
        ));
    }
    if bench.test.n() == 0 || bench.test.outputs.ncols() == 0 {
        return invalid("the test data need at least one point and the target's column");
    }
    if bench.test.outputs.nrows() != bench.test.n() {
        return invalid("the test data need one output row per input row");
    }
    Ok(Plan {
        n_query,
        refit_every,
        report_every,
        n_outputs,
    })
}

/// A seed for the fit of output `j` after `k` queries: the run's seed mixed (SplitMix64's
/// finaliser) so that neighbouring runs and steps do not share streams.
pub(super) fn fit_seed(seed: u64, k: usize, j: usize) -> u64 {
    let mut z = seed
        .wrapping_add((k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add((j as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The target's data in model units, growing by one row per query.
struct TargetData {
    x: Vec<Vec<f64>>,
    y: Vec<Vec<f64>>,
}

impl TargetData {
    fn matrix(&self, d: usize) -> Mat<f64> {
        Mat::from_fn(self.x.len(), d, |i, c| self.x[i][c])
    }
}

/// Runs safe learning on `bench`: `make_model(j, sources)` builds the model of output column
/// `j` (0 the target `f`, then each safety output; a single model when `f` is the safety
/// function) from the source tasks' data for that column, in model units; `seed` drives every
/// random step (the models' fits, the pool subsets); `progress(done, total)` is told after each
/// query.
///
/// # Errors
/// [`SafeError::Invalid`] for an inconsistent benchmark or bad options (the message names the
/// part); [`SafeError::Model`] when a model cannot be built, fitted or asked.
pub fn run_benchmark(
    bench: &SafeBenchmark,
    make_model: &ModelFactory<'_>,
    options: &SafeRunOptions,
    seed: u64,
    progress: Option<&dyn Fn(usize, usize)>,
) -> Result<SafeRun, SafeError> {
    let started = Instant::now();
    let plan = plan(bench, options)?;
    let unit = UnitBox::new(&bench.bounds)?;
    let d = unit.dims();
    // Constraint columns are checked here, before any standardised column is looked up.
    for (i, c) in bench.constraints.iter().enumerate() {
        if c.output >= plan.n_outputs {
            return invalid(format!(
                "constraint {i} is on output column {}, but the benchmark has {} output columns",
                c.output, plan.n_outputs
            ));
        }
    }
    let initial_x = unit.to_unit(bench.initial.x.as_ref(), "initial target inputs")?;
    let target_scaling = target_map(bench, options.target_scaling, d, plan.n_outputs)?;
    let constraints = bench
        .constraints
        .iter()
        .map(|c| standardise_constraint(c, &target_scaling))
        .collect::<Vec<_>>();
    let safe_set = SafeSet::new(constraints, plan.n_outputs, &options.safe_set)?;
    let candidates = unit.to_unit(bench.candidates.x.as_ref(), "candidate inputs")?;
    let test_x = unit.to_unit(bench.test.x.as_ref(), "test inputs")?;
    let test_y = bench.test.output(0);

    let source_scaling = source_map(options.target_scaling, &target_scaling);
    let mut models = build_models(bench, &unit, plan.n_outputs, source_scaling, make_model)?;

    let initial_y = target_scaling.transform_y(bench.initial.outputs.as_ref());
    let mut data = TargetData {
        x: (0..initial_x.nrows())
            .map(|i| (0..d).map(|c| initial_x[(i, c)]).collect())
            .collect(),
        y: (0..plan.n_outputs)
            .map(|j| (0..initial_y.nrows()).map(|i| initial_y[(i, j)]).collect())
            .collect(),
    };
    // Candidates whose stored outputs are not finite could only add NaN to the data.
    let (mut pool, excluded): (Vec<usize>, Vec<usize>) = (0..bench.candidates.n())
        .partition(|&i| (0..plan.n_outputs).all(|j| bench.candidates.outputs[(i, j)].is_finite()));
    let mut rng = StdRng::seed_from_u64(fit_seed(seed, usize::MAX, usize::MAX));
    let mut queries: Vec<QueryRecord> = Vec::new();
    let mut metrics = Vec::new();
    let mut training_seconds = vec![0.0; plan.n_outputs];
    let mut unsafe_queries = 0usize;
    let mut stop = StopReason::Completed;

    for k in 0..=plan.n_query {
        let refit = k % plan.refit_every == 0;
        let x = data.matrix(d);
        let mut fit_seconds = 0.0;
        for (j, model) in models.iter_mut().enumerate() {
            model
                .update(x.as_ref(), &data.y[j], refit, fit_seed(seed, k, j))
                .map_err(SafeError::model(j))?;
            if refit {
                training_seconds[j] = model.fit_seconds();
                fit_seconds += model.fit_seconds();
            }
        }
        if pool.is_empty() {
            stop = StopReason::PoolExhausted;
            break;
        }
        let offered = offer(&pool, bench.pool_size, &mut rng);
        let pool_x = Mat::from_fn(offered.len(), d, |i, c| candidates[(offered[i], c)]);
        let refs: Vec<&dyn FunctionModel> = models.iter().map(|m| m.as_ref()).collect();
        check_inputs(&refs, &safe_set, pool_x.as_ref(), "pool")?;
        let acquisition = PreparedAcquisition::new(&options.acquisition, &refs, x.as_ref())?;
        let evaluation = evaluate_pool_unchecked(
            &refs,
            &safe_set,
            &acquisition,
            pool_x.as_ref(),
            options.chunk_size,
        )?;
        let last = k == plan.n_query || evaluation.best.is_none();
        if k % plan.report_every == 0 || last {
            metrics.push(report(
                k,
                &evaluation,
                &offered,
                bench,
                &refs,
                &target_scaling,
                test_x.as_ref(),
                &test_y,
                unsafe_queries as f64 / plan.n_query.max(1) as f64,
            )?);
        }
        if k == plan.n_query {
            break;
        }
        let Some(best) = evaluation.best else {
            stop = StopReason::EmptySafeSet;
            break;
        };
        let index = offered[best.index];
        let safe = bench.candidate_safe[index];
        unsafe_queries += usize::from(!safe);
        data.x.push(best.x.clone());
        for (j, y) in data.y.iter_mut().enumerate() {
            y.push(
                (bench.candidates.outputs[(index, j)] - target_scaling.y_mean[j])
                    / target_scaling.y_std[j],
            );
        }
        let position = pool.binary_search(&index).map_err(|_| {
            SafeError::Invalid(format!("internal: candidate {index} was not in the pool"))
        })?;
        pool.remove(position);
        queries.push(QueryRecord {
            index,
            x: (0..d).map(|c| bench.candidates.x[(index, c)]).collect(),
            safe,
            safety_probability: best.safety_probability,
            acquisition: best.acquisition,
            safe_set_size: best.safe_set_size,
            fit_seconds,
        });
        if let Some(p) = progress {
            p(queries.len(), plan.n_query);
        }
    }

    let regions = match &bench.grid {
        Some(grid) => {
            let n0 = bench.initial.n();
            let all = Mat::from_fn(n0 + queries.len(), d, |i, c| {
                if i < n0 {
                    bench.initial.x[(i, c)]
                } else {
                    queries[i - n0].x[c]
                }
            });
            Some(regions_explored(grid, &bench.bounds, all.as_ref())?)
        }
        None => None,
    };
    let truly_safe: Vec<bool> = queries.iter().map(|q| q.safe).collect();
    Ok(SafeRun {
        problem: bench.name.clone(),
        seed,
        n_query: plan.n_query,
        stop,
        safe_query_ratio: safe_query_ratio(&truly_safe),
        queries,
        metrics,
        regions_explored: regions,
        training_seconds_total: training_seconds.iter().sum(),
        training_seconds,
        excluded_candidates: excluded,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The map of the target's outputs (and thresholds) into model units under `scaling`.
pub(super) fn target_map(
    bench: &SafeBenchmark,
    scaling: TargetScaling,
    d: usize,
    n_outputs: usize,
) -> Result<Standardizer, SafeError> {
    Ok(match scaling {
        TargetScaling::InitialData => output_scaling(&bench.initial, "the initial target data")?,
        TargetScaling::Sources => output_scaling(&stacked_sources(bench)?, "the source tasks")?,
        TargetScaling::Identity => Standardizer::identity(d, n_outputs),
    })
}

/// The map of the source tasks' outputs: the target's unless the target is scaled by its own
/// initial data (`None`: each source by its own statistics). A transfer model relates source
/// and target values, so both must be in the same units (for the hierarchical GP the target is
/// the source plus a residual).
pub(super) fn source_map(scaling: TargetScaling, target: &Standardizer) -> Option<&Standardizer> {
    match scaling {
        TargetScaling::InitialData => None,
        TargetScaling::Sources | TargetScaling::Identity => Some(target),
    }
}

/// Every source task's outputs stacked into one task, for their statistics (the inputs are
/// zeros: only output statistics are used, and the inputs are checked where they are used).
fn stacked_sources(bench: &SafeBenchmark) -> Result<TaskData, SafeError> {
    let n: usize = bench.sources.iter().map(TaskData::n).sum();
    if n == 0 {
        return invalid("target_scaling = sources needs source data, but the benchmark has none");
    }
    let t = bench.initial.outputs.ncols();
    let mut outputs = Mat::zeros(n, t);
    let mut row = 0;
    for s in &bench.sources {
        for i in 0..s.n() {
            for j in 0..t {
                outputs[(row, j)] = s.outputs[(i, j)];
            }
            row += 1;
        }
    }
    Ok(TaskData {
        x: Mat::zeros(n, 1),
        outputs,
    })
}

/// One model per output column, each given the source tasks' data for its column (inputs in
/// the unit box, outputs standardised by the source's own statistics).
pub(super) fn build_models(
    bench: &SafeBenchmark,
    unit: &UnitBox,
    n_outputs: usize,
    shared: Option<&Standardizer>,
    make_model: &ModelFactory<'_>,
) -> Result<Vec<Box<dyn FunctionModel>>, SafeError> {
    let mut scaled = Vec::with_capacity(bench.sources.len());
    for (s, source) in bench.sources.iter().enumerate() {
        let what = format!("source task {s}");
        let x = unit.to_unit(source.x.as_ref(), &format!("{what} inputs"))?;
        let y = match shared {
            Some(map) => map.transform_y(source.outputs.as_ref()),
            None => output_scaling(source, &what)?.transform_y(source.outputs.as_ref()),
        };
        scaled.push((x, y));
    }
    (0..n_outputs)
        .map(|j| {
            let sources = scaled
                .iter()
                .map(|(x, y)| SourceTask {
                    x: x.clone(),
                    y: (0..y.nrows()).map(|i| y[(i, j)]).collect(),
                })
                .collect();
            make_model(j, sources).map_err(SafeError::model(j))
        })
        .collect()
}

/// The candidates offered at this step: the whole pool, or a fresh seeded subset of
/// `pool_size` of them (in candidate order, so that ties still go to the lowest index).
fn offer(pool: &[usize], pool_size: Option<usize>, rng: &mut StdRng) -> Vec<usize> {
    match pool_size {
        Some(m) if m < pool.len() => {
            let mut picked: Vec<usize> = rand::seq::index::sample(rng, pool.len(), m)
                .into_iter()
                .map(|i| pool[i])
                .collect();
            picked.sort_unstable();
            picked
        }
        _ => pool.to_vec(),
    }
}

/// The metrics after `k` queries.
#[allow(clippy::too_many_arguments)]
fn report(
    k: usize,
    evaluation: &PoolEvaluation,
    offered: &[usize],
    bench: &SafeBenchmark,
    models: &[&dyn FunctionModel],
    target_scaling: &Standardizer,
    test_x: faer::MatRef<'_, f64>,
    test_y: &[f64],
    unsafe_query_ratio: f64,
) -> Result<SafeMetrics, SafeError> {
    let predicted = evaluation.safe_mask();
    let truth: Vec<bool> = offered.iter().map(|&i| bench.candidate_safe[i]).collect();
    let areas = safe_areas(&predicted, &truth)?;
    let m = models[0].predict(test_x).map_err(SafeError::model(0))?;
    let mean: Vec<f64> = m
        .mean
        .iter()
        .map(|&mu| target_scaling.inverse_y_mean(0, mu))
        .collect();
    Ok(SafeMetrics {
        queries: k,
        rmse: rmse(test_y, &mean)?,
        tp_area: areas.true_positive,
        fp_area: areas.false_positive,
        unsafe_query_ratio,
        safe_set_size: predicted.iter().filter(|&&s| s).count(),
        pool_size: offered.len(),
    })
}
