//! Tests of CaGP/RCaGP against dense reference implementations written here (spec §4).
//!
//! The references form every n×n matrix explicitly and take the spec's formulas at face
//! value, so that agreement checks the streamed block code path.

mod dense;
mod elbo;
mod fit;
mod gradients;
mod inducing_actions;
mod invariants;
mod joint;

use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

use super::CaGp;
use crate::kernels::Kernel;

/// A 2-d problem with n rows: smooth targets plus noise, and a few outliers when asked.
pub(super) fn problem(n: usize, seed: u64, outliers: bool) -> (Mat<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let x = Mat::<f64>::from_fn(n, 2, |_, _| rng.random_range(-1.5..1.5));
    let y = (0..n)
        .map(|j| {
            let f = (2.0 * x[(j, 0)]).sin() + 0.5 * x[(j, 1)];
            let out = if outliers && j % 7 == 3 { 6.0 } else { 0.0 };
            f + 0.1 * rng.sample::<f64, _>(StandardNormal) + out
        })
        .collect();
    (x, y)
}

/// Test inputs.
pub(super) fn test_inputs(m: usize, seed: u64) -> Mat<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    Mat::<f64>::from_fn(m, 2, |_, _| rng.random_range(-1.5..1.5))
}

/// The composite ARD kernel used throughout.
pub(super) fn kernel() -> Kernel {
    Kernel::parse("const(var=1.3) * matern52(ls=[0.7, 1.1])").unwrap()
}

/// Random block vectors for `n` rows in `i` blocks (unequal when i ∤ n).
pub(super) fn random_blocks(n: usize, i: usize, seed: u64) -> Vec<Vec<f64>> {
    super::actions::BlockActions::random(n, i, seed)
        .blocks()
        .to_vec()
}

/// A model at fixed parameters: noise 0.2, mean 0.3, β = 1 and the soft threshold `c`.
pub(super) fn model(x: &Mat<f64>, y: &[f64], blocks: Vec<Vec<f64>>, robust: bool, c: f64) -> CaGp {
    model_with(x, y, super::Actions::Blocks(blocks), robust, c)
}

/// [`model`] with any actions.
pub(super) fn model_with(
    x: &Mat<f64>,
    y: &[f64],
    actions: super::Actions,
    robust: bool,
    c: f64,
) -> CaGp {
    CaGp::from_parts(
        x.clone(),
        y.to_vec(),
        kernel(),
        0.2,
        0.3,
        actions,
        c,
        1.0,
        robust,
    )
    .unwrap()
}

/// `gp` rebuilt by [`CaGp::from_parts`] from its own parameters and data.
pub(super) fn rebuilt(gp: &CaGp) -> CaGp {
    CaGp::from_parts(
        gp.x().to_owned(),
        gp.y().to_vec(),
        gp.kernel().clone(),
        gp.noise(),
        gp.mean(),
        gp.actions(),
        gp.threshold(),
        gp.beta(),
        gp.robust(),
    )
    .unwrap()
}

/// Relative error `|a − b| / max(|b|, 1)`, elementwise maximum.
pub(super) fn rel_err(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / y.abs().max(1.0))
        .fold(0.0, f64::max)
}

/// The entries of a matrix, column-major.
pub(super) fn entries(m: &Mat<f64>) -> Vec<f64> {
    (0..m.ncols())
        .flat_map(|c| (0..m.nrows()).map(move |r| (r, c)))
        .map(|(r, c)| m[(r, c)])
        .collect()
}

/// The smallest eigenvalue of a symmetric matrix.
pub(super) fn min_eigenvalue(m: &Mat<f64>) -> f64 {
    m.self_adjoint_eigenvalues(faer::Side::Lower).unwrap()[0]
}
