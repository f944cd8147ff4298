//! Tests of the SVGP against dense references computed here, independently of the blocked
//! and whitened library code.

mod bound;
mod gradients;
mod joint;
mod natural;
mod threads;
mod training;
mod unwhitened;

use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::state::{State, KUU_JITTER};
use super::SvgpLikelihood;
use crate::kernels::Kernel;
use crate::linalg::{Cholesky, Parallelism};
use crate::means::Mean;

/// A smooth function of the first two inputs.
fn truth(x: MatRef<'_, f64>, i: usize) -> f64 {
    (2.0 * x[(i, 0)]).sin() + 0.5 * x[(i, 1)] * x[(i, 0)]
}

/// `n` seeded rows in [−2, 2]² with `y = truth + N(0, noise_sd²)`.
fn data(n: usize, noise_sd: f64, seed: u64) -> (Mat<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let x = Mat::from_fn(n, 2, |_, _| rng.random_range(-2.0..2.0));
    let y = (0..n)
        .map(|i| truth(x.as_ref(), i) + noise_sd * normal(&mut rng))
        .collect();
    (x, y)
}

fn normal(rng: &mut StdRng) -> f64 {
    rng.sample::<f64, _>(rand_distr::StandardNormal)
}

/// A composite ARD kernel with a non-stationary term (so that `∂k(z, z)/∂z ≠ 0`).
fn kernel() -> Kernel {
    Kernel::parse("se(var=1.3, ls=[0.8, 1.4]) * lin(var=0.5) + matern52(var=0.6, ls=[0.9, 1.2])")
        .unwrap()
}

/// A state with generic (non-optimal) variational parameters.
fn state(
    likelihood: SvgpLikelihood,
    lik_params: Vec<f64>,
    mean: Mean,
    m: usize,
    seed: u64,
) -> State {
    let mut rng = StdRng::seed_from_u64(seed);
    let z = Mat::from_fn(m, 2, |_, _| rng.random_range(-2.0..2.0));
    let m_tilde = (0..m).map(|_| normal(&mut rng)).collect();
    let l_tilde = Mat::from_fn(m, m, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Greater => 0.3 * normal(&mut rng),
        std::cmp::Ordering::Equal => rng.random_range(0.3..1.2),
        std::cmp::Ordering::Less => 0.0,
    });
    State {
        kernel: kernel(),
        mean,
        likelihood,
        lik_params,
        z,
        m_tilde,
        l_tilde,
    }
}

/// Dense `K_uu + jitter·I` and its Cholesky factor.
fn kuu(k: &Kernel, z: MatRef<'_, f64>) -> (Mat<f64>, Cholesky) {
    let mut kuu = k.matrix(z);
    (0..z.nrows()).for_each(|i| kuu[(i, i)] += KUU_JITTER);
    let chol = Cholesky::factor(&kuu, "test K_uu", Parallelism::Sequential).unwrap();
    (kuu, chol)
}

/// The lower factor with zeros above the diagonal.
fn lower_of(c: &Cholesky) -> Mat<f64> {
    let l = c.l();
    Mat::from_fn(
        l.nrows(),
        l.ncols(),
        |i, j| if i >= j { l[(i, j)] } else { 0.0 },
    )
}

fn max_rel(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(p, q)| (p - q).abs() / q.abs().max(1e-3))
        .fold(0.0, f64::max)
}
