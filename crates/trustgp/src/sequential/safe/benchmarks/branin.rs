//! `branin`: the Branin function with random source tasks (`safe-transfer.md` §5.2), `f = q`.
//!
//! `f(x₁, x₂) = a(x₂ − b x₁² + c x₁ − r)² + s(1 − t) cos x₁ + s` on `[−5, 10] × [0, 15]`,
//! reached from the benchmark's inputs `u ∈ [0, 1]²` by `x₁ = −5 + 15u₁`, `x₂ = 15u₂` \[code\].
//! The target has the standard constants; each source draws `a ~ U(0.5, 1.5)`,
//! `b ~ U(0.1, 0.15)`, `c ~ U(1, 2)`, `r ~ U(5, 7)`, `s ~ U(8, 12)`, `t ~ U(0.03, 0.05)`. Every
//! source is standardised by the mean and (population) standard deviation of its noise-free
//! values on a 100×100 grid of the box (the generator uses 5000 uniform samples; the grid makes
//! the statistics independent of the seed). The target is standardised by the fixed constants
//! of the authors' oracle, [`TARGET_MEAN`] and [`TARGET_STD`] \[code\], not by its own
//! statistics (54.98 and 52.21): the threshold `f ≥ 0` then sits at the raw value 60.09 as in
//! the paper's experiments, instead of 54.98, where the target is flat along the lower edge of
//! the box (values within a few noise standard deviations of the threshold over a wide strip,
//! where EffTransHGP, FullTransHGP and FullTransLMC all made their unsafe queries).
//! Safety is `f ≥ 0`, noise `N(0, 0.01²)`.
//!
//! The first source is redrawn until the rejection rules hold with the Branin generator's 5 %
//! \[code\]; further sources (`n_sources > 1`, Fig. 10) are drawn without the region
//! requirement. Initial data come from the target region with the largest shared area and are
//! safe for the first source too \[code\].

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::assemble::{assemble, Plan, ScalarTask, ScalarTasks};
use super::grid::Grid;
use super::regions::{accept_draw, grid_regions};
use super::{BenchmarkError, BenchmarkOptions};
use crate::sequential::problems::{branin_with, BRANIN_CONSTANTS};
use crate::sequential::safe::{Constraint, SafeBenchmark};

/// The mean the target is standardised by: the default `normalize_mean` of the authors'
/// `BraninHoo` oracle, which their transfer experiments use for the target task \[code\].
pub const TARGET_MEAN: f64 = 60.088767740805736;
/// The standard deviation the target is standardised by (`normalize_scale`, \[code\]).
pub const TARGET_STD: f64 = 62.34134408167649;

/// Least fraction of the space each of two target regions must share with the source \[code\].
pub const MIN_SHARED: f64 = 0.05;
/// Grid points per input of the normalisation statistics.
const STATS_PER_DIM: usize = 100;

/// One Branin task: its constants and the statistics it is standardised by.
#[derive(Clone, Debug, PartialEq)]
pub struct BraninTask {
    /// `[a, b, c, r, s, t]`.
    pub constants: [f64; 6],
    /// The mean it is standardised by (a source: of its noise-free values over the box).
    pub mean: f64,
    /// The standard deviation it is standardised by (a source: of its noise-free values).
    pub std: f64,
}

impl BraninTask {
    /// The task with `constants`, standardised over the box.
    pub fn new(constants: [f64; 6]) -> BraninTask {
        let grid = Grid::new(&[(0.0, 1.0), (0.0, 1.0)], STATS_PER_DIM).expect("a valid box");
        let p = grid.points();
        let v: Vec<f64> = (0..grid.len())
            .map(|i| raw(&constants, p[(i, 0)], p[(i, 1)]))
            .collect();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64;
        BraninTask {
            constants,
            mean,
            std: var.sqrt(),
        }
    }

    /// The target task: the standard constants, standardised by [`TARGET_MEAN`] and
    /// [`TARGET_STD`].
    pub fn target() -> BraninTask {
        BraninTask {
            constants: BRANIN_CONSTANTS,
            mean: TARGET_MEAN,
            std: TARGET_STD,
        }
    }

    /// A source task with constants drawn from the ranges of the module documentation.
    pub fn random(rng: &mut impl Rng) -> BraninTask {
        BraninTask::new([
            rng.random_range(0.5..1.5),
            rng.random_range(0.1..0.15),
            rng.random_range(1.0..2.0),
            rng.random_range(5.0..7.0),
            rng.random_range(8.0..12.0),
            rng.random_range(0.03..0.05),
        ])
    }

    /// The standardised value at `u ∈ [0, 1]²`.
    pub fn value(&self, u: &[f64]) -> f64 {
        (raw(&self.constants, u[0], u[1]) - self.mean) / self.std
    }
}

/// The unstandardised Branin value at `u ∈ [0, 1]²`.
pub fn raw(constants: &[f64; 6], u1: f64, u2: f64) -> f64 {
    branin_with(constants, -5.0 + 15.0 * u1, 15.0 * u2)
}

impl ScalarTask for BraninTask {
    const DIM: usize = 2;
    fn value(&self, u: &[f64]) -> f64 {
        BraninTask::value(self, u)
    }
}

/// The target (standard constants) and its sources.
pub type BraninTasks = ScalarTasks<BraninTask>;

/// Whether each node of `grid` is safe (`f ≥ 0`) for `task`.
pub fn safe_on_grid(grid: &Grid, task: &BraninTask) -> Vec<bool> {
    let points = grid.points();
    (0..grid.len())
        .map(|i| task.value(&[points[(i, 0)], points[(i, 1)]]) >= 0.0)
        .collect()
}

/// Draws the sources: the first until the rejection rules hold on `grid` (at most `max_draws`
/// draws), then `n_sources − 1` more without them. Returns the tasks and the label of the
/// target region with the largest area shared with the first source.
///
/// # Errors
/// No accepted first source.
pub fn draw_tasks(
    grid: &Grid,
    n_sources: usize,
    max_draws: usize,
    rng: &mut StdRng,
) -> Result<(BraninTasks, usize), BenchmarkError> {
    let target = BraninTask::target();
    let target_regions = grid_regions("branin", grid, &safe_on_grid(grid, &target))?;
    for _ in 0..max_draws {
        let source = BraninTask::random(rng);
        let accepted = accept_draw(&target_regions, &safe_on_grid(grid, &source), MIN_SHARED);
        if let Some(label) = accepted {
            let mut sources = vec![source];
            sources.extend((1..n_sources).map(|_| BraninTask::random(rng)));
            return Ok((BraninTasks { target, sources }, label));
        }
    }
    Err(BenchmarkError::NoAcceptedDraw {
        benchmark: "branin".into(),
        draws: max_draws,
        rule: format!(
            "at least 2 disjoint target safe regions, 2 of them each sharing ≥ {MIN_SHARED} of \
             the space with the source's safe set"
        ),
    })
}

/// Builds `branin` from `seed`.
///
/// # Errors
/// `n_sources` of 0, a grid of fewer than 2 points per input, no accepted source within
/// `options.max_draws`, or too few safe points.
pub fn build(seed: u64, options: &BenchmarkOptions) -> Result<SafeBenchmark, BenchmarkError> {
    let name = "branin";
    if options.n_sources == 0 {
        return Err(BenchmarkError::BadOption {
            benchmark: name.into(),
            option: "n_sources",
            value: "0".into(),
            expected: "at least 1".into(),
        });
    }
    let per_dim = options.grid_per_dim.unwrap_or(100);
    let bounds = vec![(0.0, 1.0); 2];
    let grid = Grid::new(&bounds, per_dim).ok_or_else(|| BenchmarkError::BadOption {
        benchmark: name.into(),
        option: "grid_per_dim",
        value: per_dim.to_string(),
        expected: "at least 2".into(),
    })?;
    let mut rng = StdRng::seed_from_u64(seed);
    let (tasks, label) = draw_tasks(&grid, options.n_sources, options.max_draws, &mut rng)?;
    let regions = grid_regions(name, &grid, &safe_on_grid(&grid, &tasks.target))?;
    let lower_zero = vec![Constraint {
        output: 0,
        lower: Some(0.0),
        upper: None,
    }];
    let plan = Plan {
        name: name.into(),
        bounds: bounds.clone(),
        constraints: lower_zero.clone(),
        source_constraints: lower_zero,
        noise_std: 0.01,
        n_source: options.n_source.unwrap_or(100),
        n_init: 20,
        n_query: 100,
        n_pool: options.n_pool.unwrap_or(5000),
        n_test: options.n_test.unwrap_or(500),
        grid_per_dim: Some(per_dim),
        initial_box: bounds,
    };
    let in_region = |x: &[f64]| {
        regions.labels[grid.nearest(x)] == Some(label) && tasks.sources[0].value(x) >= 0.0
    };
    assemble(&plan, &tasks, in_region, &mut rng)
}
