//! The one assembly of a synthetic benchmark from an [`Oracle`]: candidate pool, source data,
//! initial data, test points and safety grid, drawn in that order from one seeded RNG.
//!
//! Choices (\[code\] where the authors' generators do the same):
//! * the pool is `N_pool` i.i.d. uniform points in the box, observed with Gaussian noise;
//!   `candidate_safe` is the noise-free truth;
//! * each source's data are uniform points whose **noisy** observations satisfy the source
//!   constraints (\[code\]: `get_random_constrained_data(noisy=True)`); they are drawn apart from
//!   the pool so that no source input coincides with a candidate (§6's Schur-complement
//!   pitfall);
//! * initial data are uniform points in the initial box that are truly (noise-free) safe and
//!   pass the benchmark's own test (e.g. the region of the largest shared safe area);
//! * test points are uniform points in the true safe region, with noise-free outputs.

use faer::{Mat, MatRef};
use rand::Rng;
use rand_distr::StandardNormal;

use super::grid::Grid;
use super::BenchmarkError;
use crate::sequential::safe::{Constraint, SafeBenchmark, SafetyGrid, SalFit, TaskData};

/// Candidates drawn per batch while rejection sampling.
const BATCH: usize = 1024;
/// The most batches drawn for one set of points before the build fails.
const MAX_BATCHES: usize = 400;

/// The noise-free outputs `[f, q¹, …]` (or `[f]` when `f` is the safety function) of a
/// synthetic benchmark's target and source tasks.
pub trait Oracle {
    /// Number of inputs.
    fn dim(&self) -> usize;
    /// Number of source tasks.
    fn n_sources(&self) -> usize;
    /// The target's outputs at the rows of `x` (n×d), one row per point.
    fn target(&self, x: MatRef<'_, f64>) -> Mat<f64>;
    /// Source `k`'s outputs at the rows of `x`, one row per point.
    fn source(&self, k: usize, x: MatRef<'_, f64>) -> Mat<f64>;
}

/// One function of the inputs: the target or a source of a benchmark whose one output is also
/// its safety function (`f = q`).
pub trait ScalarTask {
    /// Number of inputs.
    const DIM: usize;
    /// The value at `x`.
    fn value(&self, x: &[f64]) -> f64;
}

/// The target and its sources of a one-output benchmark, as an [`Oracle`].
#[derive(Clone, Debug)]
pub struct ScalarTasks<T> {
    /// The target.
    pub target: T,
    /// The sources.
    pub sources: Vec<T>,
}

impl<T: ScalarTask> ScalarTasks<T> {
    fn column(task: &T, x: MatRef<'_, f64>) -> Mat<f64> {
        Mat::from_fn(x.nrows(), 1, |i, _| task.value(&row(x, i)))
    }
}

impl<T: ScalarTask> Oracle for ScalarTasks<T> {
    fn dim(&self) -> usize {
        T::DIM
    }
    fn n_sources(&self) -> usize {
        self.sources.len()
    }
    fn target(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        Self::column(&self.target, x)
    }
    fn source(&self, k: usize, x: MatRef<'_, f64>) -> Mat<f64> {
        Self::column(&self.sources[k], x)
    }
}

/// Whether output row `z` satisfies every constraint (thresholds inclusive).
pub fn satisfies(constraints: &[Constraint], z: &[f64]) -> bool {
    constraints.iter().all(|c| {
        let v = z[c.output];
        c.lower.is_none_or(|t| v >= t) && c.upper.is_none_or(|u| v <= u)
    })
}

/// What to assemble; sizes as in Table 2.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The benchmark's name.
    pub name: String,
    /// The input box.
    pub bounds: Vec<(f64, f64)>,
    /// The target's constraints.
    pub constraints: Vec<Constraint>,
    /// The constraints the source data were collected under.
    pub source_constraints: Vec<Constraint>,
    /// Standard deviation of the observation noise of every output (0: noise-free queries).
    pub noise_std: f64,
    /// Points per source task.
    pub n_source: usize,
    /// Initial target points.
    pub n_init: usize,
    /// Queries after the initial data.
    pub n_query: usize,
    /// Candidate pool size.
    pub n_pool: usize,
    /// Test points in the true safe region.
    pub n_test: usize,
    /// Points per input of the safety grid (`None`: no grid).
    pub grid_per_dim: Option<usize>,
    /// The box the initial points are drawn from (inside `bounds`).
    pub initial_box: Vec<(f64, f64)>,
}

/// Uniform points in `bounds`, one per row.
pub fn uniform_points(rng: &mut impl Rng, bounds: &[(f64, f64)], n: usize) -> Mat<f64> {
    let mut x = Mat::<f64>::zeros(n, bounds.len());
    for i in 0..n {
        for (j, &(lo, hi)) in bounds.iter().enumerate() {
            x[(i, j)] = lo + (hi - lo) * rng.random::<f64>();
        }
    }
    x
}

/// Adds independent `N(0, std²)` noise to every entry (nothing when `std` is 0).
pub fn add_noise(rng: &mut impl Rng, m: &mut Mat<f64>, std: f64) {
    if std > 0.0 {
        for i in 0..m.nrows() {
            for j in 0..m.ncols() {
                m[(i, j)] += std * rng.sample::<f64, _>(StandardNormal);
            }
        }
    }
}

/// Row `i` of `m`.
pub fn row(m: MatRef<'_, f64>, i: usize) -> Vec<f64> {
    (0..m.ncols()).map(|j| m[(i, j)]).collect()
}

/// Stacks rows into a matrix with `ncols` columns.
pub fn from_rows(rows: &[Vec<f64>], ncols: usize) -> Mat<f64> {
    Mat::from_fn(rows.len(), ncols, |i, j| rows[i][j])
}

/// Rejection sampling: draws batches of uniform points in `bounds`; `keep(rng, x)` returns,
/// per row of the batch, the outputs to record for a kept point (`None`: rejected). Stops at
/// `n` points.
///
/// # Errors
/// [`BenchmarkError::TooFewPoints`] after `MAX_BATCHES` (400) batches of 1024 draws.
pub fn sample_where<R: Rng>(
    rng: &mut R,
    benchmark: &str,
    what: &str,
    bounds: &[(f64, f64)],
    n: usize,
    mut keep: impl FnMut(&mut R, MatRef<'_, f64>) -> Vec<Option<Vec<f64>>>,
) -> Result<TaskData, BenchmarkError> {
    let mut xs: Vec<Vec<f64>> = Vec::with_capacity(n);
    let mut outs: Vec<Vec<f64>> = Vec::with_capacity(n);
    let mut batches = 0;
    while xs.len() < n {
        if batches == MAX_BATCHES {
            return Err(BenchmarkError::TooFewPoints {
                benchmark: benchmark.to_string(),
                what: format!("{what} (out of {} uniform draws)", BATCH * MAX_BATCHES),
                found: xs.len(),
                needed: n,
            });
        }
        batches += 1;
        let x = uniform_points(rng, bounds, BATCH);
        for (i, kept) in keep(rng, x.as_ref()).into_iter().enumerate() {
            if let (Some(z), true) = (kept, xs.len() < n) {
                xs.push(row(x.as_ref(), i));
                outs.push(z);
            }
        }
    }
    let n_out = outs.first().map_or(0, Vec::len);
    Ok(TaskData {
        x: from_rows(&xs, bounds.len()),
        outputs: from_rows(&outs, n_out),
    })
}

/// Assembles the benchmark of `plan` from `oracle`; `initial_ok(x)` is the benchmark's own
/// extra test of an initial point (besides true safety).
///
/// # Errors
/// Too few points found for the sources, the initial data or the test set.
pub fn assemble<R: Rng>(
    plan: &Plan,
    oracle: &dyn Oracle,
    initial_ok: impl Fn(&[f64]) -> bool,
    rng: &mut R,
) -> Result<SafeBenchmark, BenchmarkError> {
    let name = plan.name.as_str();
    // Pool: noisy outputs, noise-free truth.
    let x_pool = uniform_points(rng, &plan.bounds, plan.n_pool);
    let truth = oracle.target(x_pool.as_ref());
    let candidate_safe = (0..plan.n_pool)
        .map(|i| satisfies(&plan.constraints, &row(truth.as_ref(), i)))
        .collect();
    let mut observed = truth;
    add_noise(rng, &mut observed, plan.noise_std);
    let candidates = TaskData {
        x: x_pool,
        outputs: observed,
    };
    // Sources: noisy observations that satisfy the source constraints.
    let sources = (0..oracle.n_sources())
        .map(|k| {
            sample_where(
                rng,
                name,
                &format!("source-{k} points satisfying the source constraints"),
                &plan.bounds,
                plan.n_source,
                |rng, x| {
                    let mut z = oracle.source(k, x);
                    add_noise(rng, &mut z, plan.noise_std);
                    (0..x.nrows())
                        .map(|i| {
                            let zi = row(z.as_ref(), i);
                            satisfies(&plan.source_constraints, &zi).then_some(zi)
                        })
                        .collect()
                },
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Initial data: truly safe points in the initial box that pass the benchmark's test.
    let initial = sample_where(
        rng,
        name,
        "truly safe initial points",
        &plan.initial_box,
        plan.n_init,
        |rng, x| {
            let mut z = oracle.target(x);
            let safe: Vec<bool> = (0..x.nrows())
                .map(|i| {
                    satisfies(&plan.constraints, &row(z.as_ref(), i)) && initial_ok(&row(x, i))
                })
                .collect();
            add_noise(rng, &mut z, plan.noise_std);
            (0..x.nrows())
                .map(|i| safe[i].then(|| row(z.as_ref(), i)))
                .collect()
        },
    )?;
    // Test points: the true safe region, noise-free.
    let test = sample_where(
        rng,
        name,
        "test points in the true safe region",
        &plan.bounds,
        plan.n_test,
        |_, x| {
            let z = oracle.target(x);
            (0..x.nrows())
                .map(|i| {
                    let zi = row(z.as_ref(), i);
                    satisfies(&plan.constraints, &zi).then_some(zi)
                })
                .collect()
        },
    )?;
    let grid = plan
        .grid_per_dim
        .filter(|_| plan.bounds.len() <= 2)
        .and_then(|m| Grid::new(&plan.bounds, m))
        .map(|g| {
            let points = g.points();
            let z = oracle.target(points.as_ref());
            let safe = (0..g.len())
                .map(|i| satisfies(&plan.constraints, &row(z.as_ref(), i)))
                .collect();
            SafetyGrid {
                shape: g.shape(),
                points,
                safe,
            }
        });
    Ok(SafeBenchmark {
        name: plan.name.clone(),
        bounds: plan.bounds.clone(),
        constraints: plan.constraints.clone(),
        sources,
        initial,
        candidates,
        candidate_safe,
        pool_size: None,
        test,
        grid,
        n_query: plan.n_query,
        refit_every: 1,
        sal_fit: SalFit::Simulator,
    })
}
