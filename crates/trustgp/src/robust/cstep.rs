//! The concentration step (C-step) of FastMCD and the search over random starting subsets.
//!
//! For a support H of h rows with mean μ_H and scatter S_H (divisor h), the h rows with the
//! smallest Mahalanobis distances under (μ_H, S_H) form a support whose scatter has a
//! determinant no larger than det S_H (Rousseeuw & Van Driessen 1999, Theorem 1). Iterating
//! therefore descends to a local minimum of the MCD objective; random starts plus a short
//! refinement, followed by full iteration of the most promising ones, find the global
//! minimum with high probability.

use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::{Mat, MatRef, Par, Side};
use rand::rngs::StdRng;
use rand::SeedableRng;

/// Relative pivot below which a support scatter counts as singular. L_ii²/S_ii is the share
/// of variable i's variance left unexplained by the earlier variables (1 − R²), so the test
/// does not depend on the scale of the columns; on an exactly collinear support, roundoff
/// leaves values around 1e-15 there, far below this threshold.
const SINGULAR_PIVOT: f64 = 1e-12;

/// Cap on C-steps when iterating a candidate to convergence; FastMCD practice is that a few
/// tens suffice, so the cap only guards against cycling on ties.
pub(crate) const MAX_C_STEPS: usize = 100;

/// C-steps applied to every random start before the best candidates are selected.
const SHORT_C_STEPS: usize = 2;

/// The statistics of one support.
#[derive(Clone, Debug)]
pub(crate) struct SupportFit {
    /// The rows of the support, ascending.
    pub(crate) support: Vec<usize>,
    /// Mean of the support rows.
    pub(crate) location: Vec<f64>,
    /// Covariance of the support rows with divisor h (the MCD objective's scatter).
    pub(crate) scatter: Mat<f64>,
    /// ln det of `scatter`.
    pub(crate) log_det: f64,
    /// Squared Mahalanobis distance of every row (not only the support) under this fit.
    pub(crate) dist2: Vec<f64>,
}

/// A support whose scatter is singular: at least `size` rows lie on a hyperplane.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Singular {
    /// The support size h.
    pub(crate) size: usize,
}

/// Mean and covariance (divisor = number of rows) of the given rows of `z`; two passes, so
/// the scatter is accurate even when the mean is large relative to the spread.
pub(crate) fn mean_and_scatter(z: MatRef<'_, f64>, rows: &[usize]) -> (Vec<f64>, Mat<f64>) {
    let t = z.ncols();
    let m = rows.len().max(1) as f64;
    let mean: Vec<f64> = (0..t)
        .map(|c| rows.iter().map(|&j| z[(j, c)]).sum::<f64>() / m)
        .collect();
    let mut scatter = Mat::<f64>::zeros(t, t);
    for &j in rows {
        for a in 0..t {
            let da = z[(j, a)] - mean[a];
            for b in 0..=a {
                scatter[(a, b)] += da * (z[(j, b)] - mean[b]);
            }
        }
    }
    for a in 0..t {
        for b in 0..=a {
            scatter[(a, b)] /= m;
            scatter[(b, a)] = scatter[(a, b)];
        }
    }
    (mean, scatter)
}

/// Fit a support: mean, scatter, log-determinant and the distances of all rows.
///
/// The distances come from a Cholesky factor S = L Lᵀ and one triangular solve,
/// d_j² = ‖L⁻¹(z_j − μ)‖², never from an explicit inverse.
pub(crate) fn fit_support(z: MatRef<'_, f64>, support: Vec<usize>) -> Result<SupportFit, Singular> {
    let (n, t) = (z.nrows(), z.ncols());
    let singular = Singular {
        size: support.len(),
    };
    let (location, scatter) = mean_and_scatter(z, &support);
    let llt = scatter.llt(Side::Lower).map_err(|_| singular.clone())?;
    let l = llt.L();
    let mut log_det = 0.0;
    for i in 0..t {
        let (lii, sii) = (l[(i, i)], scatter[(i, i)]);
        if !(lii.is_finite() && sii > 0.0 && lii * lii > SINGULAR_PIVOT * sii) {
            return Err(singular);
        }
        log_det += 2.0 * lii.ln();
    }
    let mut centred = Mat::from_fn(t, n, |c, j| z[(j, c)] - location[c]);
    solve_lower_triangular_in_place(l, centred.as_mut(), Par::Seq);
    let dist2 = (0..n)
        .map(|j| (0..t).map(|c| centred[(c, j)].powi(2)).sum())
        .collect();
    Ok(SupportFit {
        support,
        location,
        scatter,
        log_det,
        dist2,
    })
}

/// The `h` rows with the smallest distances, ascending by row. Ties are broken by row index,
/// so the selected set is uniquely defined and the whole estimator deterministic.
pub(crate) fn smallest(dist2: &[f64], h: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..dist2.len()).collect();
    if h > 0 && h < idx.len() {
        idx.select_nth_unstable_by(h - 1, |&a, &b| {
            dist2[a].total_cmp(&dist2[b]).then(a.cmp(&b))
        });
    }
    idx.truncate(h);
    idx.sort_unstable();
    idx
}

/// Apply up to `max_steps` C-steps from `start`. Stops when the support no longer changes or
/// the determinant no longer decreases (then the previous, no worse, fit is kept).
pub(crate) fn c_steps(
    z: MatRef<'_, f64>,
    start: SupportFit,
    max_steps: usize,
) -> Result<SupportFit, Singular> {
    let h = start.support.len();
    let mut current = start;
    for _ in 0..max_steps {
        let next_support = smallest(&current.dist2, h);
        if next_support == current.support {
            break;
        }
        let next = fit_support(z, next_support)?;
        if next.log_det >= current.log_det {
            break;
        }
        current = next;
    }
    Ok(current)
}

/// The raw FastMCD fit: `n_trials` random h-subsets (seeded), each refined by two C-steps;
/// the `n_best` with the smallest determinant are iterated to convergence and the best wins
/// (the earliest drawn on an exact tie). Any singular support scatter is reported as an
/// error, because then the MCD optimum itself is singular (an exact fit).
pub(crate) fn raw_mcd(
    z: MatRef<'_, f64>,
    h: usize,
    n_trials: usize,
    n_best: usize,
    seed: u64,
) -> Result<SupportFit, Singular> {
    let n = z.nrows();
    let h = h.clamp(1, n.max(1));
    let mut rng = StdRng::seed_from_u64(seed);
    let mut candidates = Vec::with_capacity(n_trials.max(1));
    for _ in 0..n_trials.max(1) {
        let mut support = rand::seq::index::sample(&mut rng, n, h).into_vec();
        support.sort_unstable();
        let start = fit_support(z, support)?;
        candidates.push(c_steps(z, start, SHORT_C_STEPS)?);
    }
    // A stable sort keeps the draw order among equal determinants.
    candidates.sort_by(|a, b| a.log_det.total_cmp(&b.log_det));
    candidates.truncate(n_best.max(1));
    let mut best: Option<SupportFit> = None;
    for candidate in candidates {
        let refined = c_steps(z, candidate, MAX_C_STEPS)?;
        if best.as_ref().is_none_or(|b| refined.log_det < b.log_det) {
            best = Some(refined);
        }
    }
    // There is always at least one candidate; the error only avoids an unwrap.
    best.ok_or(Singular { size: h })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;
    use rand_distr::StandardNormal;

    /// n × t standard normal data with the first `n_out` rows shifted by `shift`.
    fn data(n: usize, t: usize, n_out: usize, shift: f64, seed: u64) -> Mat<f64> {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut z = Mat::from_fn(n, t, |_, _| rng.sample::<f64, _>(StandardNormal));
        for i in 0..n_out {
            for c in 0..t {
                z[(i, c)] += shift;
            }
        }
        z
    }

    #[test]
    fn c_step_never_increases_the_determinant() {
        let z = data(200, 3, 40, 6.0, 11);
        let mut rng = StdRng::seed_from_u64(5);
        for _ in 0..10 {
            let mut support = rand::seq::index::sample(&mut rng, 200, 110).into_vec();
            support.sort_unstable();
            let mut fit = fit_support(z.as_ref(), support).expect("regular support");
            for _ in 0..15 {
                let next = fit_support(z.as_ref(), smallest(&fit.dist2, 110)).expect("regular");
                assert!(
                    next.log_det <= fit.log_det + 1e-12 * fit.log_det.abs().max(1.0),
                    "ln det rose from {} to {}",
                    fit.log_det,
                    next.log_det
                );
                fit = next;
            }
        }
    }

    #[test]
    fn distances_match_an_explicit_quadratic_form() {
        let z = data(30, 2, 0, 0.0, 3);
        let fit = fit_support(z.as_ref(), (0..20).collect()).expect("regular");
        let s = &fit.scatter;
        let det = s[(0, 0)] * s[(1, 1)] - s[(0, 1)] * s[(1, 0)];
        assert!((fit.log_det - det.ln()).abs() < 1e-12);
        for j in 0..30 {
            let (a, b) = (z[(j, 0)] - fit.location[0], z[(j, 1)] - fit.location[1]);
            let q = (s[(1, 1)] * a * a - 2.0 * s[(0, 1)] * a * b + s[(0, 0)] * b * b) / det;
            assert!((fit.dist2[j] - q).abs() < 1e-12 * q.max(1.0));
        }
    }

    #[test]
    fn collinear_support_is_singular() {
        let z = Mat::from_fn(12, 2, |i, c| (i as f64) * (1.0 + c as f64));
        assert_eq!(
            fit_support(z.as_ref(), (0..8).collect()).unwrap_err(),
            Singular { size: 8 }
        );
    }

    /// Brute force: every h-subset of the rows, scatter with divisor h written out
    /// independently of `mean_and_scatter`, det of the 2 × 2 matrix in closed form. Returns
    /// the optimal rows, its scatter (xx, xy, yy) and the ratio of the runner-up det to it.
    fn brute_force(z: &Mat<f64>, h: usize) -> (Vec<usize>, [f64; 3], f64) {
        let n = z.nrows();
        let hf = h as f64;
        let mut all: Vec<(f64, Vec<usize>, [f64; 3])> = Vec::new();
        for mask in 0u32..(1 << n) {
            if mask.count_ones() as usize != h {
                continue;
            }
            let rows: Vec<usize> = (0..n).filter(|&i| mask & (1 << i) != 0).collect();
            let mx = rows.iter().map(|&i| z[(i, 0)]).sum::<f64>() / hf;
            let my = rows.iter().map(|&i| z[(i, 1)]).sum::<f64>() / hf;
            let dx = |i: usize| z[(i, 0)] - mx;
            let dy = |i: usize| z[(i, 1)] - my;
            let sxx = rows.iter().map(|&i| dx(i) * dx(i)).sum::<f64>() / hf;
            let syy = rows.iter().map(|&i| dy(i) * dy(i)).sum::<f64>() / hf;
            let sxy = rows.iter().map(|&i| dx(i) * dy(i)).sum::<f64>() / hf;
            all.push((sxx * syy - sxy * sxy, rows, [sxx, sxy, syy]));
        }
        let subsets = (0..h).fold(1usize, |acc, k| acc * (n - k) / (k + 1));
        assert_eq!(
            all.len(),
            subsets,
            "every {h}-subset of {n} rows enumerated"
        );
        all.sort_by(|a, b| a.0.total_cmp(&b.0));
        let gap = all[1].0 / all[0].0;
        let (_, rows, cov) = all.swap_remove(0);
        (rows, cov, gap)
    }

    #[test]
    fn fast_mcd_finds_the_brute_force_optimum() {
        // On 10 rows the C-step landscape has many local minima among the clean rows: with
        // the default 30 starts about one dataset in five ends at a local one (FastMCD is a
        // heuristic), so this exactness check uses 100 starts, all iterated to convergence.
        let opts = crate::robust::McdOptions {
            support_fraction: 0.6,
            n_trials: 100,
            n_best: 100,
            seed: 0,
        };
        for seed in 0..20u64 {
            let z = data(10, 2, 2, 4.0, 100 + seed);
            let (rows, cov, gap) = brute_force(&z, 6);
            // The optimum must be unique for the comparison to be meaningful.
            assert!(gap > 1.0 + 1e-9, "seed {seed}: optimum not unique");
            let raw = raw_mcd(z.as_ref(), 6, opts.n_trials, opts.n_best, 0).expect("regular");
            assert_eq!(raw.support, rows, "seed {seed}");
            // The public estimator reports the same raw support and the uncorrected scatter.
            let est = crate::robust::fast_mcd(z.as_ref(), &opts).expect("valid input");
            let raw_rows: Vec<usize> = (0..10).filter(|&i| est.raw_support[i]).collect();
            assert_eq!(raw_rows, rows, "seed {seed}");
            let s = &est.raw_covariance;
            let pairs = [
                (s[(0, 0)], cov[0]),
                (s[(1, 0)], cov[1]),
                (s[(0, 1)], cov[1]),
            ];
            for (got, want) in pairs.into_iter().chain([(s[(1, 1)], cov[2])]) {
                assert!((got - want).abs() < 1e-12, "seed {seed}: {got} vs {want}");
            }
        }
    }
}
