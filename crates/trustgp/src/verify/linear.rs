//! Bounds of `m(x) + Σᵢ cᵢ k(x, zᵢ)` over a box for an affine `m` (spec §2.5, Proposition 2 with
//! errata 1): each `cᵢ k(x, zᵢ)` is replaced by the bounding function of `k(·, zᵢ)` chosen by the
//! sign of `cᵢ` (Lemma 15), which leaves a separable function of `x` ([`super::separable`]).

use faer::MatRef;

use super::decomposition::{KernelDecomposition, PointSandwiches};
use super::region::Region;
use super::{rounding, separable};

/// An affine prior mean `m(x) = m0 + wᵀx`.
#[derive(Clone, Debug, PartialEq)]
pub struct AffineMean {
    /// The constant.
    pub m0: f64,
    /// One weight per input column (empty: none).
    pub w: Vec<f64>,
}

/// A sound lower bound of `min_{x ∈ region} mean.m0 + mean.wᵀx + Σᵢ cᵢ k(x, zᵢ)` and a candidate
/// minimiser, given the sandwiches of `k(·, zᵢ)` over `region`.
pub fn lower(
    dec: &KernelDecomposition,
    z: MatRef<'_, f64>,
    sw: &PointSandwiches,
    c: &[f64],
    mean: &AffineMean,
    region: &Region,
) -> (f64, Vec<f64>) {
    let (n, nb) = (sw.n, dec.bases.len());
    let mut coef = vec![0.0; nb * n];
    let mut constant = 0.0;
    let mut scale = 0.0;
    for (i, &ci) in c.iter().enumerate() {
        if ci == 0.0 {
            continue;
        }
        let (a, slopes) = if ci >= 0.0 {
            (sw.low_a[i], &sw.low_b)
        } else {
            (sw.up_a[i], &sw.up_b)
        };
        constant += ci * a;
        scale += (ci * a).abs();
        for b in 0..nb {
            coef[b * n + i] = ci * slopes[b * n + i];
            scale += (coef[b * n + i] * sw.phi_hi[b * n + i]).abs();
        }
    }
    let (sep, x) = separable::minimise(dec, z, &coef, &mean.w, region);
    let total = mean.m0 + constant + sep;
    // The margin covers recursive summation of n terms (n·ε_mach relative) for any n.
    let scale = (scale + mean.m0.abs() + constant.abs() + sep.abs()) * (n as f64 / 2000.0).max(1.0);
    (rounding::down(total, scale), x)
}

/// The upper counterpart of [`lower`].
pub fn upper(
    dec: &KernelDecomposition,
    z: MatRef<'_, f64>,
    sw: &PointSandwiches,
    c: &[f64],
    mean: &AffineMean,
    region: &Region,
) -> (f64, Vec<f64>) {
    let neg: Vec<f64> = c.iter().map(|v| -v).collect();
    let neg_mean = AffineMean {
        m0: -mean.m0,
        w: mean.w.iter().map(|v| -v).collect(),
    };
    let (v, x) = lower(dec, z, sw, &neg, &neg_mean, region);
    (-v, x)
}
