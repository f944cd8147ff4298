//! The minimum covariance determinant (MCD) estimator, FastMCD algorithm.
//!
//! Semantics follow scikit-learn's `MinCovDet` (Rousseeuw & Van Driessen 1999):
//!
//! 1. **Raw MCD.** Among all h-row subsets, find (approximately, by random starts and
//!    C-steps) the one whose covariance (divisor h) has the smallest determinant; its mean and
//!    covariance are the raw location and scatter.
//! 2. **Consistency correction.** At the normal model the raw scatter is too small (it is
//!    built from the most central rows), so it is scaled by median_j(d_j²)/χ²_{T,0.5}, which
//!    makes the median squared distance equal its normal-model value; the distances are
//!    divided by the same factor.
//! 3. **Reweighting.** Rows with corrected d_j² < χ²_{T,0.975} are kept, and the final
//!    estimate is their mean and covariance (divisor = their count). This recovers most of
//!    the efficiency lost by using only h rows.
//!
//! As in scikit-learn, the reported raw covariance is the *uncorrected* scatter, and (as in
//! scikit-learn up to 1.7) no consistency factor is applied after the reweighting: at the
//! normal model the reweighted covariance estimates κ_T Σ, where
//! κ_T = P(χ²_{T+2} < χ²_{T,0.975}) / 0.975 is the variance kept by truncating to the
//! 97.5 % ellipsoid (κ₁ ≈ 0.851, κ₃ ≈ 0.927, κ_T → 1 as T grows).

use faer::{Mat, MatRef};

use super::chi_squared::chi_squared_quantile;
use super::cstep::{mean_and_scatter, raw_mcd};
use super::error::{check_input, McdError};
use super::univariate::{fallback, median_in_place};

/// Options of [`fast_mcd`].
#[derive(Clone, Debug, PartialEq)]
pub struct McdOptions {
    /// Fraction of the rows in the raw MCD support, in (0, 1]. The support size is
    /// h = ⌈fraction · n⌉, clamped to [⌊(n + T + 1)/2⌋, n]; the default 0.5 therefore gives
    /// the smallest allowed h, which has the highest breakdown point (scikit-learn's default
    /// of no fraction gives ⌈(n + T + 1)/2⌉, one more when n + T is even).
    pub support_fraction: f64,
    /// Number of random starting subsets.
    pub n_trials: usize,
    /// Number of the best starts (after two C-steps) that are iterated to convergence.
    pub n_best: usize,
    /// Seed of the random starts; the estimate is a deterministic function of data and seed.
    pub seed: u64,
}

impl Default for McdOptions {
    fn default() -> Self {
        McdOptions {
            support_fraction: 0.5,
            n_trials: 30,
            n_best: 10,
            seed: 0,
        }
    }
}

/// Result of [`fast_mcd`].
#[derive(Clone, Debug)]
pub struct McdEstimate {
    /// Reweighted robust location (mean of the rows in `support`).
    pub location: Vec<f64>,
    /// Reweighted robust covariance (covariance of the rows in `support`, divisor = count).
    pub covariance: Mat<f64>,
    /// Raw MCD location: the mean of the best h-subset.
    pub raw_location: Vec<f64>,
    /// Raw MCD scatter: covariance of the best h-subset with divisor h, *before* the
    /// consistency correction (as scikit-learn's `raw_covariance_`).
    pub raw_covariance: Mat<f64>,
    /// Rows in the best h-subset (the raw MCD support).
    pub raw_support: Vec<bool>,
    /// Rows kept by the reweighting step.
    pub support: Vec<bool>,
    /// `Some(reason)` if the data were too few or degenerate for MCD and the MAD-diagonal
    /// fallback was returned instead (see [`fast_mcd`]).
    pub fallback: Option<String>,
}

/// The support size h = ⌈fraction · n⌉ clamped to [⌊(n + T + 1)/2⌋, n].
///
/// The product is shrunk by a relative 1e-12 before rounding up, so that a fraction like 0.07
/// of 100 rows (0.07 · 100 = 7.000000000000001 in floating point) gives 7 rather than 8.
pub(crate) fn support_size(n: usize, t: usize, fraction: f64) -> usize {
    let wanted = (fraction * n as f64 * (1.0 - 1e-12)).ceil();
    let wanted = if wanted.is_finite() && wanted > 0.0 {
        wanted as usize
    } else {
        0
    };
    // ⌊(n + T + 1)/2⌋ = ⌈(n + T)/2⌉.
    wanted.clamp((n + t).div_ceil(2).min(n), n)
}

/// Robust location and covariance of the rows of `z` (n_c × T, one complete observation per
/// row) by the FastMCD minimum covariance determinant estimator; see the module docs for
/// the three stages.
///
/// **Fallback.** If n_c ≤ T + 1 (too few rows for a nonsingular h-subset scatter), or some
/// support scatter is singular (at least h rows on a hyperplane, e.g. a constant or
/// collinear column: then the MCD optimum itself is singular), the estimate is instead the
/// column medians with the diagonal covariance diag((1.4826 · MAD_t)²); a zero MAD is
/// replaced by the column's population variance, and a zero variance by 1.0, so the result
/// is always positive definite. `fallback` then says why, all rows are marked as support,
/// and the raw fields equal the final ones.
///
/// # Errors
/// [`McdError`] for an empty input, no columns, a non-finite value (naming its row and
/// column), a support fraction outside (0, 1], or zero `n_trials`/`n_best`.
pub fn fast_mcd(z: MatRef<'_, f64>, opts: &McdOptions) -> Result<McdEstimate, McdError> {
    let (n, t) = (z.nrows(), z.ncols());
    check_input(z, opts)?;
    if n <= t + 1 {
        return Ok(fallback(
            z,
            format!(
                "only {n} observations for {t} columns; MCD needs at least T + 2 = {}",
                t + 2
            ),
        ));
    }
    let h = support_size(n, t, opts.support_fraction);
    let raw = match raw_mcd(z, h, opts.n_trials, opts.n_best, opts.seed) {
        Ok(raw) => raw,
        Err(s) => {
            return Ok(fallback(
                z,
                format!(
                    "the scatter of a {}-row support is singular: at least that many rows lie \
                     on a hyperplane (e.g. a constant or collinear column), or the values are \
                     so extreme that their squares over- or underflow",
                    s.size
                ),
            ))
        }
    };
    let mut sorted = raw.dist2.clone();
    let correction = median_in_place(&mut sorted) / chi_squared_quantile(t, 0.5);
    if !(correction.is_finite() && correction > 0.0) {
        return Ok(fallback(
            z,
            format!("the median squared distance is degenerate (correction factor {correction})"),
        ));
    }
    // Corrected d² < χ²_{T,0.975}; at least half the rows pass (their corrected distance is
    // at most χ²_{T,0.5}), so the kept set is never empty.
    let cutoff = chi_squared_quantile(t, 0.975);
    let support: Vec<bool> = raw.dist2.iter().map(|d| d / correction < cutoff).collect();
    let kept: Vec<usize> = (0..n).filter(|&j| support[j]).collect();
    let (location, covariance) = mean_and_scatter(z, &kept);
    let mut raw_support = vec![false; n];
    for &j in &raw.support {
        raw_support[j] = true;
    }
    Ok(McdEstimate {
        location,
        covariance,
        raw_location: raw.location,
        raw_covariance: raw.scatter,
        raw_support,
        support,
        fallback: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use rand_distr::StandardNormal;

    /// Lower Cholesky factor of the test covariance Σ = L Lᵀ.
    const L: [[f64; 3]; 3] = [[1.4, 0.0, 0.0], [0.4, 0.9, 0.0], [-0.3, 0.3, 0.6]];

    fn sigma() -> Mat<f64> {
        Mat::from_fn(3, 3, |a, b| (0..3).map(|k| L[a][k] * L[b][k]).sum())
    }

    /// n rows of N(0, Σ); every 5th row (20 %) shifted by `shift` in every column.
    fn gaussian(n: usize, shift: f64, seed: u64) -> Mat<f64> {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut z = Mat::zeros(n, 3);
        for i in 0..n {
            let e: [f64; 3] = std::array::from_fn(|_| rng.sample(StandardNormal));
            for a in 0..3 {
                let off = if i % 5 == 0 { shift } else { 0.0 };
                z[(i, a)] = (0..3).map(|k| L[a][k] * e[k]).sum::<f64>() + off;
            }
        }
        z
    }

    /// Largest |Ŝ_ab − Σ_ab| / √(Σ_aa Σ_bb): the error relative to the diagonal scale.
    fn scaled_error(s: &Mat<f64>, sigma: &Mat<f64>) -> f64 {
        let mut worst: f64 = 0.0;
        for a in 0..sigma.nrows() {
            for b in 0..sigma.ncols() {
                let scale = (sigma[(a, a)] * sigma[(b, b)]).sqrt();
                worst = worst.max((s[(a, b)] - sigma[(a, b)]).abs() / scale);
            }
        }
        worst
    }

    /// E[reweighted covariance] = κ Σ at the normal model: the kept rows are those inside
    /// the χ²_{T,0.975} ellipsoid, and E[‖Y‖² 1{‖Y‖² < c}] = T P(χ²_{T+2} < c) for Y ~ N(0, I).
    fn reweighting_bias(t: usize) -> f64 {
        use crate::robust::{chi_squared_cdf, chi_squared_quantile};
        chi_squared_cdf(t + 2, chi_squared_quantile(t, 0.975)) / 0.975
    }

    #[test]
    fn recovers_the_covariance_of_clean_gaussian_data() {
        let z = gaussian(2000, 0.0, 1);
        let est = fast_mcd(z.as_ref(), &McdOptions::default()).expect("valid input");
        assert!(est.fallback.is_none());
        let err = scaled_error(&est.covariance, &sigma());
        assert!(err < 0.10, "scaled covariance error {err}");
        // Most of that error is the documented truncation bias of the reweighted estimate.
        let kappa = reweighting_bias(3);
        let shrunk = Mat::from_fn(3, 3, |a, b| kappa * sigma()[(a, b)]);
        let err_kappa = scaled_error(&est.covariance, &shrunk);
        assert!(err_kappa < 0.06, "scaled error against κΣ {err_kappa}");
        for (a, m) in est.location.iter().enumerate() {
            assert!(m.abs() < 0.1 * sigma()[(a, a)].sqrt(), "location {m}");
        }
        // Reweighting keeps about 97.5 % of clean data.
        let kept = est.support.iter().filter(|&&s| s).count();
        assert!((1900..=2000).contains(&kept), "kept {kept}");
    }

    #[test]
    fn resists_twenty_percent_gross_outliers() {
        let z = gaussian(2000, 20.0, 2);
        let est = fast_mcd(z.as_ref(), &McdOptions::default()).expect("valid input");
        let err = scaled_error(&est.covariance, &sigma());
        assert!(err < 0.15, "MCD scaled covariance error {err}");
        assert!((0..2000)
            .step_by(5)
            .all(|i| !est.support[i] && !est.raw_support[i]));
        let all: Vec<usize> = (0..2000).collect();
        let (_, classical) = mean_and_scatter(z.as_ref(), &all);
        let classical_err = scaled_error(&classical, &sigma());
        assert!(classical_err > 10.0, "classical error only {classical_err}");
    }

    #[test]
    fn support_fraction_one_gives_the_classical_raw_estimate() {
        let z = gaussian(50, 3.0, 3);
        let opts = McdOptions {
            support_fraction: 1.0,
            ..Default::default()
        };
        let est = fast_mcd(z.as_ref(), &opts).expect("valid input");
        assert!(est.raw_support.iter().all(|&s| s));
        for a in 0..3 {
            let mean = (0..50).map(|i| z[(i, a)]).sum::<f64>() / 50.0;
            assert!((est.raw_location[a] - mean).abs() < 1e-12);
            for b in 0..3 {
                let mb = (0..50).map(|i| z[(i, b)]).sum::<f64>() / 50.0;
                let cov = (0..50)
                    .map(|i| (z[(i, a)] - mean) * (z[(i, b)] - mb))
                    .sum::<f64>()
                    / 50.0;
                assert!((est.raw_covariance[(a, b)] - cov).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn same_seed_gives_an_identical_result() {
        let z = gaussian(300, 8.0, 4);
        let opts = McdOptions {
            seed: 42,
            ..Default::default()
        };
        let a = fast_mcd(z.as_ref(), &opts).expect("valid input");
        let b = fast_mcd(z.as_ref(), &opts).expect("valid input");
        assert_eq!(a.location, b.location);
        assert_eq!(a.raw_location, b.raw_location);
        assert_eq!(a.support, b.support);
        assert_eq!(a.raw_support, b.raw_support);
        assert!(a.covariance == b.covariance && a.raw_covariance == b.raw_covariance);
    }

    #[test]
    fn one_column_works() {
        // Clean N(0, 1) with 10 % of the rows moved to +50.
        let mut rng = StdRng::seed_from_u64(5);
        let z = Mat::from_fn(4000, 1, |i, _| {
            rng.sample::<f64, _>(StandardNormal) + if i % 10 == 0 { 50.0 } else { 0.0 }
        });
        let est = fast_mcd(z.as_ref(), &McdOptions::default()).expect("valid input");
        assert!(est.fallback.is_none());
        assert_eq!((est.covariance.nrows(), est.covariance.ncols()), (1, 1));
        assert!((0..4000).step_by(10).all(|i| !est.support[i]));
        assert!(est.location[0].abs() < 0.05, "location {}", est.location[0]);
        let v = est.covariance[(0, 0)];
        assert!((v - 1.0).abs() < 0.15, "variance {v}");
    }

    #[test]
    fn reweighted_variance_has_the_documented_truncation_bias() {
        // T = 1, clean N(0, 1): the reweighted variance estimates κ = 0.851, not 1.
        let kappa = reweighting_bias(1);
        assert!((kappa - 0.851_224_192_047_11).abs() < 1e-12, "κ = {kappa}");
        let mut mean = 0.0;
        for seed in 0..5 {
            let mut rng = StdRng::seed_from_u64(50 + seed);
            let z = Mat::from_fn(4000, 1, |_, _| rng.sample::<f64, _>(StandardNormal));
            let est = fast_mcd(z.as_ref(), &McdOptions::default()).expect("valid input");
            mean += est.covariance[(0, 0)] / 5.0;
        }
        assert!(
            (mean - kappa).abs() < 0.03,
            "mean reweighted variance {mean}, κ {kappa}"
        );
        assert!(mean < 0.9, "the bias is real: {mean}");
    }

    #[test]
    fn too_few_rows_fall_back_to_the_mad_diagonal() {
        let z = Mat::from_fn(4, 3, |i, c| ((i * 7 + c * 3) % 5) as f64 + c as f64);
        let est = fast_mcd(z.as_ref(), &McdOptions::default()).expect("valid input");
        let reason = est.fallback.as_deref().expect("fallback");
        assert!(
            reason.contains("4 observations") && reason.contains("3 columns"),
            "{reason}"
        );
        // Columns [0, 2, 4, 1], [4, 1, 3, 5], [3, 5, 2, 4]: medians 1.5, 3.5, 3.5, every MAD 1.
        assert_eq!(est.location, vec![1.5, 3.5, 3.5]);
        let var = 1.4826f64.powi(2);
        for (a, b) in (0..3).flat_map(|a| (0..3).map(move |b| (a, b))) {
            let want = if a == b { var } else { 0.0 };
            assert!((est.covariance[(a, b)] - want).abs() < 1e-15);
        }
        assert!(est.support.iter().all(|&s| s));
    }

    #[test]
    fn degenerate_data_fall_back_with_a_reason() {
        // Column 1 is constant: every support scatter is singular.
        let z = Mat::from_fn(40, 2, |i, c| if c == 0 { (i % 7) as f64 } else { 2.5 });
        let est = fast_mcd(z.as_ref(), &McdOptions::default()).expect("valid input");
        assert!(est
            .fallback
            .as_deref()
            .is_some_and(|r| r.contains("singular")));
        assert_eq!(est.covariance[(1, 1)], 1.0);
        assert_eq!(est.location[1], 2.5);
    }

    #[test]
    fn bad_input_is_an_error_naming_the_problem() {
        let mut z = gaussian(10, 0.0, 6);
        z[(3, 1)] = f64::NAN;
        let err = fast_mcd(z.as_ref(), &McdOptions::default()).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("row 3") && msg.contains("column 1"), "{msg}");
        let empty = Mat::<f64>::zeros(0, 2);
        assert_eq!(
            fast_mcd(empty.as_ref(), &McdOptions::default()).unwrap_err(),
            McdError::Empty
        );
        let no_cols = Mat::<f64>::zeros(5, 0);
        assert_eq!(
            fast_mcd(no_cols.as_ref(), &McdOptions::default()).unwrap_err(),
            McdError::NoColumns { rows: 5 }
        );
        let z = gaussian(10, 0.0, 6);
        for f in [0.0, -0.5, 1.5, f64::NAN] {
            let opts = McdOptions {
                support_fraction: f,
                ..Default::default()
            };
            let err = fast_mcd(z.as_ref(), &opts).unwrap_err();
            assert!(matches!(err, McdError::SupportFraction(_)), "{err}");
        }
        let opts = McdOptions {
            n_trials: 0,
            ..Default::default()
        };
        assert!(matches!(
            fast_mcd(z.as_ref(), &opts),
            Err(McdError::Trials { .. })
        ));
    }

    #[test]
    fn support_size_is_clamped() {
        assert_eq!(support_size(100, 3, 0.5), 52);
        assert_eq!(support_size(100, 3, 0.75), 75);
        assert_eq!(support_size(100, 3, 0.07), 52);
        assert_eq!(support_size(100, 1, 1.0), 100);
        assert_eq!(support_size(10, 2, 0.6), 6);
        assert_eq!(support_size(1000, 1, 0.007), 501);
        assert_eq!(support_size(100, 0, 0.07), 50);
    }
}
