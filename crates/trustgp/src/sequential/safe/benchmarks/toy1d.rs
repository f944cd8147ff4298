//! `toy1d`: the 1-D functions of Figs. 2 and 3 (`safe-transfer.md` §2.11), `f = q`.
//!
//! Target `q(x) = sin(10x³ − 5x − 10) + x²/3 − 1/2`, source
//! `q_s(x) = sin(10x³ − 5x − 10) + sin(x²) − 1/2`, with `x = 1.9u − 1` for the benchmark's input
//! `u ∈ [0, 1]` \[code\], noise `N(0, 0.1²)`, constraint `q ≥ 0` (the source data satisfy
//! `q_s ≥ 0`), initial data from `u ∈ [0, 0.25]` \[code\]. The figures fix no sizes; this
//! benchmark takes GP1D's (`N_source` 100, `N_init` 10, `N_query` 50, `N_pool` 5000, 200 test
//! points).

use rand::rngs::StdRng;
use rand::SeedableRng;

use super::assemble::{assemble, Plan, ScalarTask, ScalarTasks};
use super::{BenchmarkError, BenchmarkOptions};
use crate::sequential::safe::{Constraint, SafeBenchmark};

/// The map from the benchmark's input `u ∈ [0, 1]` to the functions' `x ∈ [−1, 0.9]`.
pub fn x_of_u(u: f64) -> f64 {
    1.9 * u - 1.0
}

/// The target safety (and main) function `q(x)`.
pub fn target_q(x: f64) -> f64 {
    (10.0 * x.powi(3) - 5.0 * x - 10.0).sin() + x * x / 3.0 - 0.5
}

/// The source safety (and main) function `q_s(x)`.
pub fn source_q(x: f64) -> f64 {
    (10.0 * x.powi(3) - 5.0 * x - 10.0).sin() + (x * x).sin() - 0.5
}

/// The toy's oracle: one output, evaluated at `x_of_u(u)`.
/// One toy function, of the benchmark input `u` (mapped by [`x_of_u`]).
struct Toy(fn(f64) -> f64);

impl ScalarTask for Toy {
    const DIM: usize = 1;
    fn value(&self, u: &[f64]) -> f64 {
        (self.0)(x_of_u(u[0]))
    }
}

/// Builds `toy1d` from `seed`.
///
/// # Errors
/// Too few safe points found (not for these functions).
pub fn build(seed: u64, options: &BenchmarkOptions) -> Result<SafeBenchmark, BenchmarkError> {
    let lower_zero = vec![Constraint {
        output: 0,
        lower: Some(0.0),
        upper: None,
    }];
    let plan = Plan {
        name: "toy1d".into(),
        bounds: vec![(0.0, 1.0)],
        constraints: lower_zero.clone(),
        source_constraints: lower_zero,
        noise_std: 0.1,
        n_source: options.n_source.unwrap_or(100),
        n_init: 10,
        n_query: 50,
        n_pool: options.n_pool.unwrap_or(5000),
        n_test: options.n_test.unwrap_or(200),
        grid_per_dim: Some(options.grid_per_dim.unwrap_or(100)),
        initial_box: vec![(0.0, 0.25)],
    };
    let tasks = ScalarTasks {
        target: Toy(target_q),
        sources: vec![Toy(source_q)],
    };
    assemble(&plan, &tasks, |_| true, &mut StdRng::seed_from_u64(seed))
}
