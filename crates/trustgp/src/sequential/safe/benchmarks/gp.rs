//! `gp1d`, `gp2d`: functions drawn from a 2-output LMC on a regular grid (`safe-transfer.md`
//! §5.2, GP1D/GP2D steps 1–10), `f ≠ q`.
//!
//! Per draw: two LMC terms with random `W` and lengthscales ([`sample_terms`]), factorised on
//! the grid of `per_dim^D` points in `[−2, 2]^D` (100 per input by default); the safety function
//! `q` is drawn first, then — once the draw is accepted — the main function `f`, independently
//! with the same hyperparameters; each output column (source, target) is standardised. The
//! oracle interpolates the grid (linear in 1-D, bilinear in 2-D); observations have noise
//! `N(0, 0.01²)`; constraints `z ≥ 0` and `z_s ≥ 0`.
//!
//! Rejection ([`accept_draw`]): the target's safe set has at least two regions, two of which
//! each share at least 10 % of the space with the source's safe set — the GP generator's
//! threshold \[code\] (the paper's text says 5 %). Every rejected draw redraws the
//! hyperparameters too, as the generator does; after `max_draws` rejections the build fails.
//! Initial data come from the region with the largest shared area and are safe for the source
//! too \[code\].

use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::SeedableRng;

use super::assemble::{assemble, Oracle, Plan};
use super::grid::Grid;
use super::lmc_draw::{sample_terms, standardize_columns, LmcFactors};
use super::regions::{accept_draw, grid_regions};
use super::{BenchmarkError, BenchmarkOptions};
use crate::sequential::safe::{Constraint, SafeBenchmark};

/// Least fraction of the space each of two target regions must share with the source \[code\].
pub const MIN_SHARED: f64 = 0.1;

/// The grid draws of one benchmark: column 0 is the source, column 1 the target.
#[derive(Clone, Debug)]
pub struct GpDraw {
    /// The grid.
    pub grid: Grid,
    /// Main function on the grid, `per_dim^D × 2`.
    pub f: Mat<f64>,
    /// Safety function on the grid, `per_dim^D × 2`.
    pub q: Mat<f64>,
}

impl GpDraw {
    /// `[f, q]` of task `t` (0 source, 1 target) at the rows of `x`, by interpolation.
    fn outputs(&self, t: usize, x: MatRef<'_, f64>) -> Mat<f64> {
        let fc: Vec<f64> = (0..self.f.nrows()).map(|i| self.f[(i, t)]).collect();
        let qc: Vec<f64> = (0..self.q.nrows()).map(|i| self.q[(i, t)]).collect();
        Mat::from_fn(x.nrows(), 2, |i, j| {
            let xi: Vec<f64> = (0..x.ncols()).map(|d| x[(i, d)]).collect();
            self.grid.interpolate(if j == 0 { &fc } else { &qc }, &xi)
        })
    }

    /// Whether each grid node is safe (`q ≥ 0`) for task `t`.
    pub fn safe(&self, t: usize) -> Vec<bool> {
        (0..self.q.nrows()).map(|i| self.q[(i, t)] >= 0.0).collect()
    }
}

impl Oracle for GpDraw {
    fn dim(&self) -> usize {
        self.grid.dim()
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

/// Draws until the rejection rules accept (at most `max_draws` draws); returns the draw and the
/// label ([`grid_regions`]) of its largest shared target region.
///
/// # Errors
/// No accepted draw, or a failed factorisation.
pub fn draw_accepted(
    name: &str,
    grid: &Grid,
    max_draws: usize,
    rng: &mut StdRng,
) -> Result<(GpDraw, usize), BenchmarkError> {
    let linalg = |source| BenchmarkError::Linalg {
        benchmark: name.to_string(),
        source: Box::new(source),
    };
    let points = grid.points();
    for _ in 0..max_draws {
        let terms = sample_terms(rng, 2, 2, grid.dim());
        let factors = LmcFactors::new(&terms, points.as_ref()).map_err(linalg)?;
        let mut q = factors.draw(&factors.normals(rng));
        standardize_columns(&mut q);
        let safe = |t: usize| -> Vec<bool> { (0..q.nrows()).map(|i| q[(i, t)] >= 0.0).collect() };
        let target = grid_regions(name, grid, &safe(1))?;
        if let Some(label) = accept_draw(&target, &safe(0), MIN_SHARED) {
            let mut f = factors.draw(&factors.normals(rng));
            standardize_columns(&mut f);
            let draw = GpDraw {
                grid: grid.clone(),
                f,
                q,
            };
            return Ok((draw, label));
        }
    }
    Err(BenchmarkError::NoAcceptedDraw {
        benchmark: name.to_string(),
        draws: max_draws,
        rule: format!(
            "at least 2 disjoint target safe regions, 2 of them each sharing ≥ {MIN_SHARED} of \
             the space with the source's safe set"
        ),
    })
}

/// Builds `gp1d` (`dim` 1) or `gp2d` (`dim` 2) from `seed`.
///
/// # Errors
/// A grid of fewer than 2 points per input, no accepted draw within `options.max_draws`, a
/// failed factorisation, or too few safe points in the chosen region.
pub fn build(
    dim: usize,
    seed: u64,
    options: &BenchmarkOptions,
) -> Result<SafeBenchmark, BenchmarkError> {
    let name = format!("gp{dim}d");
    let per_dim = options.grid_per_dim.unwrap_or(100);
    let bounds = vec![(-2.0, 2.0); dim];
    let grid = Grid::new(&bounds, per_dim).ok_or_else(|| BenchmarkError::BadOption {
        benchmark: name.clone(),
        option: "grid_per_dim",
        value: per_dim.to_string(),
        expected: "at least 2".into(),
    })?;
    let mut rng = StdRng::seed_from_u64(seed);
    let (draw, label) = draw_accepted(&name, &grid, options.max_draws, &mut rng)?;
    let regions = grid_regions(&name, &grid, &draw.safe(1))?;
    let lower_zero = vec![Constraint {
        output: 1,
        lower: Some(0.0),
        upper: None,
    }];
    let (n_source, n_init, n_query, n_test) = if dim == 1 {
        (100, 10, 50, 200)
    } else {
        (250, 20, 100, 500)
    };
    let plan = Plan {
        name,
        bounds: bounds.clone(),
        constraints: lower_zero.clone(),
        source_constraints: lower_zero,
        noise_std: 0.01,
        n_source: options.n_source.unwrap_or(n_source),
        n_init,
        n_query,
        n_pool: options.n_pool.unwrap_or(5000),
        n_test: options.n_test.unwrap_or(n_test),
        grid_per_dim: Some(per_dim),
        initial_box: bounds,
    };
    // Initial points: in the largest shared region, safe for the source as well [code].
    let in_region = |x: &[f64]| {
        regions.labels[grid.nearest(x)] == Some(label)
            && draw.source(0, MatRef::from_row_major_slice(x, 1, x.len()))[(0, 1)] >= 0.0
    };
    assemble(&plan, &draw, in_region, &mut rng)
}
