//! `L(c) = inf_{x ∈ T} Σ_b Σ_i c_{b,i} φ_b(x, zᵢ) + wᵀx` by coordinates (spec §2.3, §2.5): for
//! the radial kernels a parabola per coordinate, minimised exactly; for the periodic kernel a
//! sum of per-term `sin²` bounds (valid, not exact). Each coordinate works centred on the box
//! (spec §6.5) and evaluates the parabola directly at its candidates, never through its
//! expanded coefficients.

use faer::MatRef;

use super::decomposition::{sin2_range, KernelDecomposition};
use super::psi::Profile;
use super::region::Region;
use super::rounding;

/// A sound lower bound of `min_{x ∈ region} Σ_b Σ_i coef[b·n + i] φ_b(x, zᵢ) + wᵀx`, and a point
/// of the box where the radial part attains its minimum.
pub fn minimise(
    dec: &KernelDecomposition,
    z: MatRef<'_, f64>,
    coef: &[f64],
    w: &[f64],
    region: &Region,
) -> (f64, Vec<f64>) {
    let (n, d) = (z.nrows(), region.dim());
    let centre = region.centre();
    let mut x = centre.clone();
    let mut total = 0.0;
    let mut total_scale = 0.0;
    // Radial terms of one coordinate: (c θ, z − centre).
    let mut quad: Vec<(f64, f64)> = Vec::with_capacity(n);
    for j in 0..d {
        let h = 0.5 * (region.upper[j] - region.lower[j]);
        let cj = centre[j];
        quad.clear();
        let mut value = 0.0;
        let mut scale = 0.0;
        for (b, base) in dec.bases.iter().enumerate() {
            let Some(p) = base.dims.iter().position(|&k| k == j) else {
                continue;
            };
            let th = base.theta[p];
            let cb = &coef[b * n..(b + 1) * n];
            match base.profile {
                Profile::Periodic => {
                    let (l, u) = (region.lower[j], region.upper[j]);
                    for (i, &c) in cb.iter().enumerate() {
                        if c == 0.0 {
                            continue;
                        }
                        let zi = z[(i, j)];
                        let (lo, hi) = sin2_range(base.omega * (l - zi), base.omega * (u - zi));
                        let ct = c * th;
                        value += if ct >= 0.0 { ct * lo } else { ct * hi };
                        scale += ct.abs();
                    }
                }
                _ => {
                    for (i, &c) in cb.iter().enumerate() {
                        if c != 0.0 {
                            quad.push((c * th, z[(i, j)] - cj));
                        }
                    }
                }
            }
        }
        let wj = w.get(j).copied().unwrap_or(0.0);
        if !quad.is_empty() || wj != 0.0 {
            let f = |u: f64| -> f64 {
                quad.iter()
                    .map(|(c, zz)| c * (u - zz) * (u - zz))
                    .sum::<f64>()
                    + wj * (u + cj)
            };
            let df =
                |u: f64| -> f64 { quad.iter().map(|(c, zz)| 2.0 * c * (u - zz)).sum::<f64>() + wj };
            let a: f64 = quad.iter().map(|(c, _)| c).sum();
            let (u0, best) = if a > 0.0 {
                // Convex: a point near the vertex, then the tangent there bounds f below on
                // the whole interval even if the vertex was computed inaccurately.
                let bcoef: f64 = quad.iter().map(|(c, zz)| -2.0 * c * zz).sum::<f64>() + wj;
                let u0 = (-bcoef / (2.0 * a)).clamp(-h, h);
                let g = df(u0);
                (u0, f(u0) + (g * (-h - u0)).min(g * (h - u0)))
            } else {
                // Concave or linear: the minimum is at an end.
                let (fl, fh) = (f(-h), f(h));
                if fl <= fh {
                    (-h, fl)
                } else {
                    (h, fh)
                }
            };
            value += best;
            scale += quad
                .iter()
                .map(|(c, zz)| c.abs() * (h + zz.abs()) * (h + zz.abs()))
                .sum::<f64>()
                + wj.abs() * (h + cj.abs());
            x[j] = (cj + u0).clamp(region.lower[j], region.upper[j]);
        }
        total += value;
        total_scale += scale + value.abs();
    }
    (rounding::down(total, total_scale), x)
}

/// The maximum counterpart of [`minimise`]: a sound upper bound and a maximising point.
pub fn maximise(
    dec: &KernelDecomposition,
    z: MatRef<'_, f64>,
    coef: &[f64],
    w: &[f64],
    region: &Region,
) -> (f64, Vec<f64>) {
    let neg: Vec<f64> = coef.iter().map(|c| -c).collect();
    let negw: Vec<f64> = w.iter().map(|c| -c).collect();
    let (v, x) = minimise(dec, z, &neg, &negw, region);
    (-v, x)
}
