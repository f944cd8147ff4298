//! Distances between candidate kernels for the BO baseline's kernel-between-kernels (Malkomes,
//! Schaff & Garnett 2016): two kernels are close when the models they define predict alike on
//! the data before seeing the targets.
//!
//! On a subset `X_s` of the training inputs (the paper's 200 rows), kernel `k` with
//! log-hyperparameters `θ` defines the prior predictive `N(0, K_θ(X_s, X_s) + σ_n² I)`. The
//! distance between kernels `a` and `b` is the Hellinger distance between their prior
//! predictives, averaged over `S` draws from the hyperprior: `d(a, b) = (1/S) Σ_s
//! H(N(0, Σ_a(θ_a^s)), N(0, Σ_b(θ_b^s)))`.
//!
//! Choices (the paper's hyperpriors belong to its own kernel library):
//! * the hyperprior of every kernel is `N(θ₀, I)` on its log-hyperparameters, `θ₀` VBKS's
//!   initial values (standardised units, periods from the periodogram), the unit standard
//!   deviation of VBKS's full-θ prior; draws are clamped to the kernel's log-bounds;
//! * the draws are common random numbers: draw `s` of every kernel uses the same standard
//!   normals `η^s` (the first `p_k` of them), so `d(a, a) = 0` exactly;
//! * the noise `σ_n²` is fixed at VBKS's initial noise variance (it is shared by all models and
//!   is not part of the kernel).

use faer::{Mat, MatRef};
use rayon::prelude::*;

use crate::kernels::Kernel;

use super::full_theta::{standard_normals, THETA_PRIOR_SD};
use super::hellinger::Gaussian;
use super::SelectionError;

/// Prior predictives of one kernel at the hyperprior draws, on the subset.
fn prior_predictives(
    kernel: &Kernel,
    x: MatRef<'_, f64>,
    etas: &[Vec<f64>],
    noise: f64,
) -> Result<Vec<Gaussian>, SelectionError> {
    let start = kernel.log_params();
    let bounds = kernel.log_bounds();
    etas.iter()
        .map(|eta| {
            let theta: Vec<f64> = start
                .iter()
                .zip(&bounds)
                .zip(eta)
                .map(|((&t, &(lo, hi)), &e)| (t + THETA_PRIOR_SD * e).clamp(lo, hi))
                .collect();
            let mut k = kernel.clone();
            k.set_log_params(&theta)
                .map_err(|source| SelectionError::Kernel {
                    expr: kernel.to_string(),
                    source,
                })?;
            let mut cov = k.matrix(x);
            for i in 0..cov.nrows() {
                cov[(i, i)] += noise;
            }
            Gaussian::new(vec![0.0; x.nrows()], cov)
        })
        .collect()
}

/// The symmetric `K × K` matrix of averaged Hellinger distances between `kernels` (each
/// initialised for the columns of `x`) on the rows of `x`, over `draws` hyperprior draws from
/// `seed`, with noise variance `noise` (module notes). Pairs are computed in parallel.
///
/// # Errors
/// [`SelectionError::Invalid`] for no kernels, no rows, zero draws or a non-positive noise;
/// [`SelectionError::Kernel`] or [`SelectionError::Model`] if a prior predictive cannot be
/// built or factorised.
pub fn kernel_distances(
    kernels: &[Kernel],
    x: MatRef<'_, f64>,
    draws: usize,
    noise: f64,
    seed: u64,
) -> Result<Mat<f64>, SelectionError> {
    if kernels.is_empty() || x.nrows() == 0 {
        return Err(SelectionError::Invalid(format!(
            "kernel distances: expected at least one kernel and one row, got {} and {}",
            kernels.len(),
            x.nrows()
        )));
    }
    if draws == 0 {
        return Err(SelectionError::Invalid(
            "kernel distances: expected at least 1 hyperparameter draw, got 0".into(),
        ));
    }
    if !(noise.is_finite() && noise > 0.0) {
        return Err(SelectionError::Invalid(format!(
            "kernel distances: expected a positive noise variance, got {noise}"
        )));
    }
    let most = kernels.iter().map(Kernel::n_params).max().unwrap_or(0);
    let etas = standard_normals(draws, most, seed);
    let predictives = kernels
        .par_iter()
        .map(|k| prior_predictives(k, x, &etas, noise))
        .collect::<Result<Vec<_>, _>>()?;
    let k = kernels.len();
    let pairs: Vec<(usize, usize)> = (0..k)
        .flat_map(|a| (a + 1..k).map(move |b| (a, b)))
        .collect();
    let values = pairs
        .par_iter()
        .map(|&(a, b)| {
            let mut sum = 0.0;
            for (p, q) in predictives[a].iter().zip(&predictives[b]) {
                sum += p.hellinger(q)?;
            }
            Ok(sum / draws as f64)
        })
        .collect::<Result<Vec<f64>, SelectionError>>()?;
    let mut d = Mat::zeros(k, k);
    for (&(a, b), &v) in pairs.iter().zip(&values) {
        d[(a, b)] = v;
        d[(b, a)] = v;
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selection::Structure;

    fn kernel(expr: &str, x: MatRef<'_, f64>) -> Kernel {
        let mut k = Structure::parse(expr).unwrap().instantiate(1).unwrap();
        k.initialize(x).unwrap();
        k
    }

    #[test]
    fn distances_are_pairwise_hellinger_averages() {
        let x = Mat::from_fn(12, 1, |i, _| i as f64 / 4.0 - 1.3);
        let kernels: Vec<Kernel> = ["se", "per", "lin", "se * per"]
            .iter()
            .map(|e| kernel(e, x.as_ref()))
            .collect();
        let (draws, noise, seed) = (3, 0.1, 7);
        let d = kernel_distances(&kernels, x.as_ref(), draws, noise, seed).unwrap();
        // Independent assembly of one entry: the draws written out, each kernel's covariance
        // built from its own parameters.
        let most = kernels.iter().map(Kernel::n_params).max().unwrap();
        let etas = standard_normals(draws, most, seed);
        let predictive = |k: &Kernel, eta: &[f64]| {
            let mut k = k.clone();
            let theta: Vec<f64> = k
                .log_params()
                .iter()
                .zip(k.log_bounds())
                .zip(eta)
                .map(|((t, (lo, hi)), e)| (t + e).clamp(lo, hi))
                .collect();
            k.set_log_params(&theta).unwrap();
            let c = Mat::from_fn(12, 12, |i, j| {
                k.matrix(x.as_ref())[(i, j)] + if i == j { noise } else { 0.0 }
            });
            Gaussian::new(vec![0.0; 12], c).unwrap()
        };
        let expected: f64 = etas
            .iter()
            .map(|e| {
                predictive(&kernels[0], e)
                    .hellinger(&predictive(&kernels[3], e))
                    .unwrap()
            })
            .sum::<f64>()
            / draws as f64;
        assert!((d[(0, 3)] - expected).abs() < 1e-14);
        for a in 0..4 {
            assert_eq!(d[(a, a)], 0.0);
            for b in 0..4 {
                assert_eq!(d[(a, b)], d[(b, a)]);
                assert!((0.0..=1.0).contains(&d[(a, b)]));
                if a != b {
                    assert!(d[(a, b)] > 0.0);
                }
            }
        }
        // Seeded: the same numbers again.
        let again = kernel_distances(&kernels, x.as_ref(), draws, noise, seed).unwrap();
        assert_eq!(d, again);
    }

    #[test]
    fn bad_settings_are_reported() {
        let x = Mat::from_fn(5, 1, |i, _| i as f64);
        let k = vec![kernel("se", x.as_ref())];
        let e = kernel_distances(&k, x.as_ref(), 0, 0.1, 0).unwrap_err();
        assert!(e.to_string().contains("draw"), "{e}");
        let e = kernel_distances(&k, x.as_ref(), 2, -1.0, 0).unwrap_err();
        assert!(e.to_string().contains("noise"), "{e}");
        let e = kernel_distances(&[], x.as_ref(), 2, 0.1, 0).unwrap_err();
        assert!(e.to_string().contains("at least one kernel"), "{e}");
    }
}
