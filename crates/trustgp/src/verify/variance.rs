//! Variance bounds over a box without a solver (a closed-form relaxation in the spirit of spec
//! §2.6's "cheap variance bound", valid for every supported kernel and any symmetric `S`).
//!
//! With `r = k(x, Z)ᵀ`, `rᵢ ∈ [loᵢ, hiᵢ]` over the box (the sandwiches' ranges), `m` the centre
//! and `h` the half-width of that range, and `δ = r − m`:
//!
//! ```text
//! q(x) = rᵀ S r = 2 (S m)ᵀ r − mᵀ S m + δᵀ S δ,
//! max(min(λ_min, 0) ‖h‖², −hᵀ|S|h) ≤ δᵀ S δ ≤ min(max(λ_max, 0) ‖h‖², hᵀ|S|h),
//! ```
//!
//! and the linear term is a weighted sum of kernels ([`super::linear`]). So `var = k(x,x) − q`
//! is bounded by two separable minimisations and two `O(N²)` products per box. As the box
//! shrinks `h → 0` and the sandwiches become exact, so the bounds converge (Proposition 7's
//! role); for PSD `S` the lower bound of `q` is its tangent plane at `m`.

use super::decomposition::PointSandwiches;
use super::form::LatentForm;
use super::linear::{self, AffineMean};
use super::region::Region;
use super::rounding;

/// Bounds of the latent variance over a box, with candidate points.
#[derive(Clone, Debug, PartialEq)]
pub struct VarianceBounds {
    /// A lower bound of the variance over the box (≥ 0).
    pub lower: f64,
    /// Where the bounding function of the lower bound is smallest.
    pub x_lower: Vec<f64>,
    /// An upper bound of the variance over the box.
    pub upper: f64,
    /// Where the bounding function of the upper bound is largest.
    pub x_upper: Vec<f64>,
}

/// The variance bounds of `form` over `region`, given its sandwiches there.
pub fn bounds(form: &LatentForm, sw: &PointSandwiches, region: &Region) -> VarianceBounds {
    let n = form.n();
    let m = faer::Mat::from_fn(n, 2, |i, c| {
        if c == 0 {
            0.5 * (sw.lo[i] + sw.hi[i])
        } else {
            0.5 * (sw.hi[i] - sw.lo[i])
        }
    });
    let g = form.s() * m.as_ref().subcols(0, 1);
    let abs_m = faer::Mat::from_fn(n, 2, |i, c| m[(i, c)].abs());
    let ag = form.abs_s() * &abs_m;
    let (mut mg, mut mam, mut hah, mut hh) = (0.0, 0.0, 0.0, 0.0);
    for i in 0..n {
        mg += m[(i, 0)] * g[(i, 0)];
        mam += abs_m[(i, 0)] * ag[(i, 0)];
        hah += m[(i, 1)] * ag[(i, 1)];
        hh += m[(i, 1)] * m[(i, 1)];
    }
    let slack = (n as f64 / 2000.0).max(1.0);
    // The rounding of hᵀ|S|h and λ‖h‖² only matters upward (for the remainder's bound).
    let hah = rounding::up(hah, hah * slack);
    let (lmin, lmax) = form.eigen_bounds();
    // δᵀSδ ≥ λ_min ‖δ‖² with 0 ≤ ‖δ‖² ≤ ‖h‖²: the bound is λ_min ‖h‖² only when λ_min < 0
    // (δ = 0 is allowed, so a positive λ_min gives 0, not λ_min ‖h‖²); the same for λ_max.
    let rem_lo = (lmin.min(0.0) * hh).max(-hah);
    let rem_hi = (lmax.max(0.0) * hh).min(hah);
    let c: Vec<f64> = (0..n).map(|i| 2.0 * g[(i, 0)]).collect();
    let none = AffineMean {
        m0: 0.0,
        w: Vec::new(),
    };
    let dec = form.decomposition();
    let z = form.support();
    let (lin_lo, x_max) = linear::lower(dec, z, sw, &c, &none, region);
    let (lin_hi, x_min) = linear::upper(dec, z, sw, &c, &none, region);
    let scale =
        (mam + lin_lo.abs() + lin_hi.abs() + rem_lo.abs() + rem_hi.abs() + form.prior_var())
            * slack;
    let q_lo = lin_lo - mg + rem_lo;
    let q_hi = lin_hi - mg + rem_hi;
    let upper = rounding::up(form.prior_var() - q_lo, scale).max(0.0);
    let lower = rounding::down(form.prior_var() - q_hi, scale).max(0.0);
    VarianceBounds {
        lower,
        x_lower: x_min,
        upper,
        x_upper: x_max,
    }
}
