//! `hartmann3`: the 3-D Hartmann function with random source tasks (`safe-transfer.md` §5.2),
//! `f = q`.
//!
//! `f(x) = −Σᵢ aᵢ exp(−Σⱼ Aᵢⱼ (xⱼ − Pᵢⱼ)²)` on `[0, 1]³`; the target has
//! `a = (1, 1.2, 3, 3.2)`, each source draws `a₁ ~ U(1, 1.02)`, `a₂ ~ U(1.18, 1.2)`,
//! `a₃ ~ U(2.8, 3)`, `a₄ ~ U(3.2, 3.4)`. Every source is standardised by the mean and
//! (population) standard deviation of its noise-free values on a 20³ grid of the box; the
//! target by the fixed constants of the authors' oracle, [`TARGET_MEAN`] and [`TARGET_STD`]
//! \[code\] (as Branin's), not by its own grid statistics (−0.8945, 0.9368), so that the
//! threshold `f ≥ 0` sits at the raw value −0.9266 of the paper's runs. Safety
//! is `f ≥ 0`, noise `N(0, 0.01²)`; no disjoint-region requirement, so source and initial data
//! are random safe points \[code\]; no safety grid (`D = 3`).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::assemble::{assemble, Plan, ScalarTask, ScalarTasks};
use super::grid::Grid;
use super::{BenchmarkError, BenchmarkOptions};
use crate::sequential::problems::hartmann;
use crate::sequential::safe::{Constraint, SafeBenchmark};

/// Hartmann3's matrix `A`.
pub const H3_A: [[f64; 3]; 4] = [
    [3.0, 10.0, 30.0],
    [0.1, 10.0, 35.0],
    [3.0, 10.0, 30.0],
    [0.1, 10.0, 35.0],
];
/// Hartmann3's matrix `P`, times 10⁴.
pub const H3_P: [[f64; 3]; 4] = [
    [3689.0, 1170.0, 2673.0],
    [4699.0, 4387.0, 7470.0],
    [1091.0, 8732.0, 5547.0],
    [381.0, 5743.0, 8828.0],
];
/// The target's weights `a`.
pub const H3_TARGET_WEIGHTS: [f64; 4] = [1.0, 1.2, 3.0, 3.2];
/// Grid points per input of the normalisation statistics.
const STATS_PER_DIM: usize = 20;
/// The mean the target is standardised by: the constant the authors' `OracleLoader` sets
/// for the Hartmann3 target of every experiment (`set_normalization_manually`) \[code\].
pub const TARGET_MEAN: f64 = -0.926_643_250_173_570_7;
/// The standard deviation the target is standardised by (the same call, \[code\]).
pub const TARGET_STD: f64 = 0.935_144_296_026_814_6;

/// The unstandardised Hartmann3 value with weights `a` at `x ∈ [0, 1]³`.
pub fn raw(a: &[f64; 4], x: &[f64]) -> f64 {
    hartmann(a, &H3_A, &H3_P, x)
}

/// One Hartmann3 task: its weights and the statistics it is standardised by.
#[derive(Clone, Debug, PartialEq)]
pub struct Hartmann3Task {
    /// The weights `a`.
    pub weights: [f64; 4],
    /// The mean it is standardised by (a source: of its noise-free values over the box).
    pub mean: f64,
    /// The standard deviation it is standardised by (a source: of its noise-free values).
    pub std: f64,
}

impl Hartmann3Task {
    /// The task with `weights`, standardised over the box.
    pub fn new(weights: [f64; 4]) -> Hartmann3Task {
        let grid = Grid::new(&[(0.0, 1.0); 3], STATS_PER_DIM).expect("a valid box");
        let p = grid.points();
        let v: Vec<f64> = (0..grid.len())
            .map(|i| raw(&weights, &[p[(i, 0)], p[(i, 1)], p[(i, 2)]]))
            .collect();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64;
        Hartmann3Task {
            weights,
            mean,
            std: var.sqrt(),
        }
    }

    /// The target task: the weights [`H3_TARGET_WEIGHTS`], standardised by [`TARGET_MEAN`] and
    /// [`TARGET_STD`].
    pub fn target() -> Hartmann3Task {
        Hartmann3Task {
            weights: H3_TARGET_WEIGHTS,
            mean: TARGET_MEAN,
            std: TARGET_STD,
        }
    }

    /// A source task with weights drawn from the ranges of the module documentation.
    pub fn random(rng: &mut impl Rng) -> Hartmann3Task {
        Hartmann3Task::new([
            rng.random_range(1.0..1.02),
            rng.random_range(1.18..1.2),
            rng.random_range(2.8..3.0),
            rng.random_range(3.2..3.4),
        ])
    }

    /// The standardised value at `x`.
    pub fn value(&self, x: &[f64]) -> f64 {
        (raw(&self.weights, x) - self.mean) / self.std
    }
}

impl ScalarTask for Hartmann3Task {
    const DIM: usize = 3;
    fn value(&self, x: &[f64]) -> f64 {
        Hartmann3Task::value(self, x)
    }
}

/// The target and its sources.
pub type Hartmann3Tasks = ScalarTasks<Hartmann3Task>;

/// Builds `hartmann3` from `seed`.
///
/// # Errors
/// `n_sources` of 0, or too few safe points.
pub fn build(seed: u64, options: &BenchmarkOptions) -> Result<SafeBenchmark, BenchmarkError> {
    let name = "hartmann3";
    if options.n_sources == 0 {
        return Err(BenchmarkError::BadOption {
            benchmark: name.into(),
            option: "n_sources",
            value: "0".into(),
            expected: "at least 1".into(),
        });
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let tasks = Hartmann3Tasks {
        target: Hartmann3Task::target(),
        sources: (0..options.n_sources)
            .map(|_| Hartmann3Task::random(&mut rng))
            .collect(),
    };
    let lower_zero = vec![Constraint {
        output: 0,
        lower: Some(0.0),
        upper: None,
    }];
    let bounds = vec![(0.0, 1.0); 3];
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
        grid_per_dim: None,
        initial_box: bounds,
    };
    assemble(&plan, &tasks, |_| true, &mut rng)
}
