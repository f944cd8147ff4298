//! Bounds over a box of a bilinear form `q(x) = k_c(x, Z)ᵀ A k_d(x, Z)` of two latents' kernel
//! vectors, for any (not necessarily symmetric) `A`: the cross-covariance
//! `Σ_cd(x) = −q(x)` of two classes of a multi-class posterior (spec §2.2, §2.8).
//!
//! The same relaxation as the variance bounds ([`super::variance`]): with `r = m + δ`, `m` the
//! centre and `h` the half-width of the kernel ranges over the box,
//!
//! ```text
//! q = (A m_d)ᵀ r_c + (Aᵀ m_c)ᵀ r_d − m_cᵀ A m_d + δ_cᵀ A δ_d,   |δ_cᵀ A δ_d| ≤ h_cᵀ |A| h_d,
//! ```
//!
//! and the two linear terms are weighted kernel sums ([`super::linear`]): one sum when both
//! latents share a kernel, else one per kernel (the sum of the two minima is a lower bound of
//! the minimum of the sum). As the box shrinks `h → 0` and the sandwiches become exact, so the
//! bounds converge.

use faer::{Mat, MatRef};

use super::decomposition::PointSandwiches;
use super::form::LatentForm;
use super::linear::{self, AffineMean};
use super::region::Region;
use super::rounding;

/// A sound enclosure `[lo, hi]` of `k_c(x, Z)ᵀ A k_d(x, Z)` over `region`, given both latents'
/// forms (for their kernels' decompositions and support) and sandwiches there; `shared` when
/// the two kernels are the same (the linear terms are then bounded together).
pub fn bilinear_bounds(
    a: MatRef<'_, f64>,
    abs_a: MatRef<'_, f64>,
    (fc, swc): (&LatentForm, &PointSandwiches),
    (fd, swd): (&LatentForm, &PointSandwiches),
    shared: bool,
    region: &Region,
) -> (f64, f64) {
    let n = fc.n();
    let centre_half = |sw: &PointSandwiches| {
        Mat::from_fn(n, 2, |i, k| {
            if k == 0 {
                0.5 * (sw.lo[i] + sw.hi[i])
            } else {
                0.5 * (sw.hi[i] - sw.lo[i])
            }
        })
    };
    let mc = centre_half(swc);
    let md = centre_half(swd);
    let gc = a * md.as_ref().subcols(0, 1);
    let gd = a.transpose() * mc.as_ref().subcols(0, 1);
    let hd = abs_a * md.as_ref().subcols(1, 1);
    let abs_md = Mat::from_fn(n, 1, |i, _| md[(i, 0)].abs());
    let amd = abs_a * &abs_md;
    let (mut constant, mut const_scale, mut rem) = (0.0, 0.0, 0.0);
    for i in 0..n {
        constant += mc[(i, 0)] * gc[(i, 0)];
        const_scale += mc[(i, 0)].abs() * amd[(i, 0)];
        rem += mc[(i, 1)] * hd[(i, 0)];
    }
    let slack = (n as f64 / 2000.0).max(1.0);
    let rem = rounding::up(rem, rem * slack);
    let none = AffineMean {
        m0: 0.0,
        w: Vec::new(),
    };
    let bound = |f: &LatentForm, sw: &PointSandwiches, c: &[f64]| {
        let (lo, _) = linear::lower(f.decomposition(), f.support(), sw, c, &none, region);
        let (hi, _) = linear::upper(f.decomposition(), f.support(), sw, c, &none, region);
        (lo, hi)
    };
    let col = |g: &Mat<f64>| (0..n).map(|i| g[(i, 0)]).collect::<Vec<f64>>();
    let (lin_lo, lin_hi) = if shared {
        let c: Vec<f64> = (0..n).map(|i| gc[(i, 0)] + gd[(i, 0)]).collect();
        bound(fc, swc, &c)
    } else {
        let (l1, h1) = bound(fc, swc, &col(&gc));
        let (l2, h2) = bound(fd, swd, &col(&gd));
        (l1 + l2, h1 + h2)
    };
    let scale = (const_scale + lin_lo.abs() + lin_hi.abs() + rem) * slack;
    (
        rounding::down(lin_lo - constant - rem, scale),
        rounding::up(lin_hi - constant + rem, scale),
    )
}

/// `k_cᵀ A k_d` at a point from the two kernel vectors, with a bracket half-width for rounding.
pub fn bilinear_at(
    a: MatRef<'_, f64>,
    abs_a: MatRef<'_, f64>,
    kc: &[f64],
    kd: &[f64],
) -> (f64, f64) {
    let n = kc.len();
    let (mut q, mut scale) = (0.0, 0.0);
    for i in 0..n {
        let (mut row, mut abs_row) = (0.0, 0.0);
        for j in 0..n {
            row += a[(i, j)] * kd[j];
            abs_row += abs_a[(i, j)] * kd[j].abs();
        }
        q += kc[i] * row;
        scale += kc[i].abs() * abs_row;
    }
    let slack = rounding::REL * (n as f64 / 2000.0).max(1.0);
    (q, slack * scale + 1e-300)
}
