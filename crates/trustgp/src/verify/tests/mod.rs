//! Tests of the verification layer (spec §4): every bound against sampled points of its box,
//! exactness of the separable minimisation against grids, convergence of branch and bound.

mod bnb;
mod bounds;
mod classification;
mod primitives;
mod probability;
mod regression;
mod softmax;
mod variance_qp;

use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::form::LatentForm;
use super::region::Region;
use crate::kernels::Kernel;

/// Kernel expressions of every supported shape (1- to 3-D inputs use the first columns).
pub(super) fn kernels(d: usize) -> Vec<Kernel> {
    let ard = |v: &[f64]| {
        format!(
            "[{}]",
            v[..d]
                .iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(",")
        )
    };
    let exprs = vec![
        format!("se(var=1.7, ls={})", ard(&[0.6, 1.1, 0.8])),
        "matern12(var=0.9, ls=0.7)".to_string(),
        format!("matern32(var=1.2, ls={})", ard(&[0.5, 0.9, 1.3])),
        "matern52(var=0.8, ls=0.6)".to_string(),
        "rq(var=1.1, ls=0.8, alpha=0.7)".to_string(),
        "per(var=1.3, ls=0.9, period=1.7)".to_string(),
        "se(var=0.8, ls=0.9) + matern32(var=0.5, ls=0.4)".to_string(),
        "se(var=1.4, ls=1.2) * per(var=1.0, ls=1.1, period=2.3)".to_string(),
        "const(0.6) * matern52(var=1.0, ls=0.8) + const(0.3)".to_string(),
        "se(var=1.0, ls=0.7, dims=[0]) * rq(var=0.9, ls=1.0, alpha=2.0)".to_string(),
    ];
    exprs
        .iter()
        .map(|e| Kernel::parse(e).unwrap_or_else(|err| panic!("{e}: {err}")))
        .collect()
}

/// A random form: `n` support points in [−1.5, 1.5]^d, `t` in [−2, 2], `S = A Aᵀ/n` scaled so
/// that the variance stays positive-ish, a random affine mean.
pub(super) fn random_form(kernel: Kernel, n: usize, d: usize, seed: u64) -> LatentForm {
    let mut rng = StdRng::seed_from_u64(seed);
    let z = Mat::from_fn(n, d, |_, _| rng.random_range(-1.5..1.5));
    let t: Vec<f64> = (0..n).map(|_| rng.random_range(-2.0..2.0)).collect();
    let a = Mat::from_fn(n, n, |_, _| rng.random_range(-1.0..1.0));
    let s = (&a * a.transpose()) * (0.3 / n as f64);
    let w: Vec<f64> = (0..d).map(|_| rng.random_range(-0.5..0.5)).collect();
    LatentForm::new(kernel, z, t, s, rng.random_range(-1.0..1.0), w).expect("valid form")
}

/// A random box inside [−2, 2]^d of half-width up to `radius`.
pub(super) fn random_box(d: usize, radius: f64, rng: &mut StdRng) -> Region {
    let c: Vec<f64> = (0..d).map(|_| rng.random_range(-1.8..1.8)).collect();
    let h: Vec<f64> = (0..d).map(|_| rng.random_range(0.0..radius)).collect();
    Region::new(
        c.iter().zip(&h).map(|(c, h)| c - h).collect(),
        c.iter().zip(&h).map(|(c, h)| c + h).collect(),
    )
    .expect("valid box")
}

/// `count` uniform points of the box, plus its corners and centre (one per row).
pub(super) fn samples(region: &Region, count: usize, seed: u64) -> Mat<f64> {
    let d = region.dim();
    let mut rng = StdRng::seed_from_u64(seed);
    let corners = 1usize << d;
    let mut x = Mat::zeros(count + corners + 1, d);
    for i in 0..count {
        for j in 0..d {
            x[(i, j)] = if region.lower[j] == region.upper[j] {
                region.lower[j]
            } else {
                rng.random_range(region.lower[j]..=region.upper[j])
            };
        }
    }
    for c in 0..corners {
        for j in 0..d {
            x[(count + c, j)] = if c >> j & 1 == 1 {
                region.upper[j]
            } else {
                region.lower[j]
            };
        }
    }
    let centre = region.centre();
    for j in 0..d {
        x[(count + corners, j)] = centre[j];
    }
    x
}
