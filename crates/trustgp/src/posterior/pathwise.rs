//! Pathwise posterior samples (Wilson et al., 2020): a random-feature prior path updated by
//! Matheron's rule, linear in the number of test points.
//!
//! For a posterior in linear-Gaussian form (`mean(x) = m(x) + k(x, Z)ᵀ t`,
//! `cov(x, x') = k(x, x') − k(x, Z)ᵀ S k(Z, x')`), a sample is
//!
//! ```text
//! f(x) = mean(x) + f̃(x) − k(x, Z)ᵀ u,     u = S f̃(Z) + e,   e ~ N(0, S − S K_ZZ S),
//! ```
//!
//! with `f̃` a zero-mean prior path ([`SpectralKernel`]). Its covariance is
//! `k − k_Z S k_Z − k_Z S k_Z + k_Z (S K_ZZ S + S − S K_ZZ S) k_Z = k − k_Z S k_Z`, the
//! posterior's, whenever `f̃` has the prior's covariance. For the exact GP and RCGP
//! (`S = (K + D)⁻¹`) this is Matheron's rule `f̃(x) + k(x, X)(K + D)⁻¹(y − m(X) − f̃(X) − ε)`,
//! `ε ~ N(0, D)`, since `S D S = S − S K S`; SGPR, RCSVGP and CaGP (where `S − S K S` is a
//! covariance too) get it from the same lines. An SVGP whose `q(u)` is wider than its prior
//! makes `S − S K S` indefinite: such a posterior is not reachable this way and the samples are
//! [`PathwiseSamples::Unsupported`].
//!
//! Each sample path draws its own frequencies, so the mean and covariance of the samples are
//! exactly the posterior's (the feature covariance averages to the kernel over frequencies);
//! the number of frequencies only decides how close to Gaussian each path is.

use faer::{Mat, MatRef, Side};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

use super::LinearGaussian;
use crate::kernels::{Covariance, SpectralKernel};
use crate::means::PriorMean;
use crate::models::ModelError;

/// Eigenvalues of `S − S K S` below `−NEGATIVE_EIGENVALUE·max(λ_max, max|S_ij|)` mean it is not
/// a covariance (above it, they are rounding and are set to zero; `S − S K S ⪯ S` when it is
/// one, so `S`'s size bounds its own).
const NEGATIVE_EIGENVALUE: f64 = 1e-6;

/// The result of [`Posterior::pathwise_sample`](super::Posterior::pathwise_sample).
#[derive(Clone, Debug, PartialEq)]
pub enum PathwiseSamples {
    /// The samples, one per column.
    Samples(Mat<f64>),
    /// Why this model or kernel has no pathwise samples (exact samples still work).
    Unsupported(String),
}

/// Pathwise samples of the posterior `form` (see the module documentation).
pub(super) fn samples<C: Covariance, M: PriorMean>(
    form: &LinearGaussian<'_, C, M>,
    xs: MatRef<'_, f64>,
    count: usize,
    frequencies: usize,
    seed: u64,
) -> Result<PathwiseSamples, ModelError> {
    let Some(kernel) = form.covariance().as_kernel() else {
        return Ok(PathwiseSamples::Unsupported(
            "the model's covariance is not a single-output kernel".into(),
        ));
    };
    let spectral = match SpectralKernel::new(kernel) {
        Ok(s) => s,
        Err(e) => return Ok(PathwiseSamples::Unsupported(e.to_string())),
    };
    form.covariance().check_inputs(xs)?;
    if frequencies == 0 {
        return Err(ModelError::Invalid(
            "pathwise samples need at least one random frequency, got 0".into(),
        ));
    }
    let z = form.support();
    let (m, n, d) = (xs.nrows(), z.nrows(), xs.ncols());
    let kxz = kernel.cross(xs, z);
    let mut mean = form.prior_mean().eval(xs);
    for (i, mi) in mean.iter_mut().enumerate() {
        *mi += (0..n).map(|b| kxz[(i, b)] * form.t()[b]).sum::<f64>();
    }
    let s = form.s_matrix();
    let update = &s - &s * kernel.matrix(z) * &s;
    let Some(root) = psd_root(&update, max_abs(&s))? else {
        return Ok(PathwiseSamples::Unsupported(
            "S − S K S of the posterior's linear-Gaussian form is not a covariance (an SVGP \
             whose q(u) is wider than its prior?)"
                .into(),
        ));
    };
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Mat::<f64>::zeros(m, count);
    for j in 0..count {
        let prior = spectral.sample(d, frequencies, &mut rng)?;
        let fx = prior.eval(xs)?;
        let fz = prior.eval(z)?;
        let fz = Mat::from_fn(n, 1, |b, _| fz[b]);
        let e = Mat::from_fn(n, 1, |_, _| rng.sample::<f64, _>(StandardNormal));
        let u = &s * &fz + &root * &e;
        let ku = &kxz * &u;
        for i in 0..m {
            out[(i, j)] = mean[i] + fx[i] - ku[(i, 0)];
        }
    }
    Ok(PathwiseSamples::Samples(out))
}

/// `R` with `R Rᵀ = a` for a symmetric positive semi-definite `a` (eigenvectors scaled by the
/// square roots of the eigenvalues, rounding-level negative ones set to zero); `None` if `a`
/// has an eigenvalue below `−NEGATIVE_EIGENVALUE·max(λ_max, scale)`.
fn psd_root(a: &Mat<f64>, scale: f64) -> Result<Option<Mat<f64>>, ModelError> {
    let n = a.nrows();
    if n == 0 {
        return Ok(Some(Mat::zeros(0, 0)));
    }
    let sym = Mat::from_fn(n, n, |i, j| 0.5 * (a[(i, j)] + a[(j, i)]));
    let eig = sym.self_adjoint_eigen(Side::Lower).map_err(|e| {
        ModelError::Invalid(format!(
            "pathwise samples: eigendecomposition of S − S K S failed: {e:?}"
        ))
    })?;
    let values: Vec<f64> = (0..n).map(|i| eig.S()[i]).collect();
    let largest = values.iter().fold(scale, |a, &v| a.max(v));
    if values.iter().any(|&v| v < -NEGATIVE_EIGENVALUE * largest) {
        return Ok(None);
    }
    let u = eig.U();
    Ok(Some(Mat::from_fn(n, n, |i, k| {
        u[(i, k)] * values[k].max(0.0).sqrt()
    })))
}

/// The largest absolute entry of `a`.
fn max_abs(a: &Mat<f64>) -> f64 {
    (0..a.ncols())
        .flat_map(|j| a.col(j).iter().map(|v| v.abs()).collect::<Vec<_>>())
        .fold(0.0, f64::max)
}
