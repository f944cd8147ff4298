//! The expert-guided robust prior mean of the RCaGP paper (§5, App. G; `rcagp.md` §2.12): an
//! expert points at outliers and proposes corrected values; each correction is shrunk towards
//! what the outlier's inlier neighbours say and weighted by how surprising the outlier was, and
//! the result is a constant prior mean (or its kernel-weighted form). The mean enters both the
//! GP prior and the IMQ weight, which is what makes the weights more informative.
//!
//! For each expert-identified outlier `o` at `x_o` with observed `ŷ_o` and correction `ȳ_o`:
//!
//! ```text
//! label reliability  δ_o ~ Beta(α_o, β_o),  α_o = |ŷ_o − ȳ| / s_y,  β_o = 10⁻² [choice]
//!                    label ō_o = 1  ⇒  E[δ_o] = (α_o + 1) / (α_o + β_o + 1)
//! neighbours         N_J(x_o): the J = 3 inliers nearest to x_o (Euclidean; any isotropic
//!                    stationary kernel ranks them the same)
//!                    μ_o = mean of their y,  τ_o⁻¹ = their sample variance (J − 1) + 10⁻⁶
//! correction         μ̄_o ~ N(μ_o, τ_o⁻¹),  ȳ_o ~ N(μ̄_o, σ²_corr)
//!                    E[μ̄_o | ȳ_o] = (τ_o μ_o + ȳ_o/σ²_corr) / (τ_o + 1/σ²_corr)
//! mean               m = (1/ô) Σ_o E[δ_o] E[μ̄_o | ȳ_o]
//! ```
//!
//! with `ȳ`, `s_y` the mean and sample standard deviation (`n − 1`) of all targets. `τ_o` is a
//! precision: the paper's Alg. 1 assigns the neighbours' variance to it, which the spec fixes.
//! Everything is in the units of `y` (σ²_corr included); [`ExpertMean::standardised`] maps the
//! constant to a model's standardised target units.

use faer::MatRef;

use crate::kernels::Kernel;
use crate::means::Mean;

/// The variance of an expert's correction, `σ²_corr` (`rcagp.md` §2.12, Table S4).
pub const EXPERT_CORRECTION_VARIANCE: f64 = 1.0;
/// The number of inlier neighbours `J` of each outlier (the reference code's 3).
pub const EXPERT_NEIGHBOURS: usize = 3;
/// The Beta prior's second parameter `β_o` (the reference code's `10⁻²`; Alg. 1 writes 0).
pub const EXPERT_BETA_PRIOR: f64 = 1e-2;
/// The jitter added to the neighbours' variance before it is inverted into `τ_o`.
pub const EXPERT_VARIANCE_JITTER: f64 = 1e-6;

/// One expert-identified outlier: its row in the data and the expert's corrected value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExpertCorrection {
    /// The row of the outlier in the data.
    pub index: usize,
    /// The expert's corrected target `ȳ_o`.
    pub corrected: f64,
}

/// The settings of [`expert_mean`]; the default is the paper's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExpertSettings {
    /// `σ²_corr`, the variance of a correction.
    pub correction_variance: f64,
    /// `J`, the inlier neighbours of each outlier (at least 2: their sample variance is used).
    pub neighbours: usize,
    /// `β_o`, the second parameter of the Beta prior on the label's reliability.
    pub beta_prior: f64,
}

impl Default for ExpertSettings {
    /// `σ²_corr = 1`, `J = 3`, `β_o = 10⁻²`.
    fn default() -> Self {
        ExpertSettings {
            correction_variance: EXPERT_CORRECTION_VARIANCE,
            neighbours: EXPERT_NEIGHBOURS,
            beta_prior: EXPERT_BETA_PRIOR,
        }
    }
}

/// What the mean made of one outlier.
#[derive(Clone, Debug, PartialEq)]
pub struct CorrectedOutlier {
    /// The outlier's row.
    pub index: usize,
    /// The rows of its `J` inlier neighbours, nearest first.
    pub neighbours: Vec<usize>,
    /// `E[δ_o]`, the posterior mean reliability of the label.
    pub reliability: f64,
    /// `μ_o`, the neighbours' mean.
    pub neighbour_mean: f64,
    /// `τ_o`, the precision of the neighbours' prior on the corrected value.
    pub precision: f64,
    /// `E[μ̄_o | ȳ_o]`, the posterior mean of the corrected value.
    pub corrected_mean: f64,
}

impl CorrectedOutlier {
    /// `E[δ_o] E[μ̄_o | ȳ_o]`, the outlier's contribution to the mean.
    pub fn contribution(&self) -> f64 {
        self.reliability * self.corrected_mean
    }
}

/// The expert-guided mean: the constant and the per-outlier quantities behind it.
#[derive(Clone, Debug, PartialEq)]
pub struct ExpertMean {
    /// `m = (1/ô) Σ_o E[δ_o] E[μ̄_o | ȳ_o]`, in the units of `y`.
    pub constant: f64,
    /// One entry per correction, in the order given.
    pub outliers: Vec<CorrectedOutlier>,
    /// The rows of the outliers' inputs (to place the kernel-weighted form).
    x_outliers: Vec<Vec<f64>>,
}

/// Invalid input to [`expert_mean`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExpertMeanError {
    /// `x` and `y` disagree, or there are no corrections.
    #[error("{0}")]
    Shape(String),
    /// A value is not finite.
    #[error("{what} is {value}: expected a finite number")]
    NonFinite {
        /// Which value (names the row, column or correction).
        what: String,
        /// The value.
        value: f64,
    },
    /// A correction names a row that does not exist, or a row twice.
    #[error("correction {position}: {reason}")]
    BadCorrection {
        /// The position in the list of corrections.
        position: usize,
        /// What is wrong.
        reason: String,
    },
    /// A setting is out of range.
    #[error("{0}")]
    Setting(String),
    /// The kernel of the weighted form does not fit the inputs.
    #[error("kernel: {0}")]
    Kernel(String),
}

fn finite(what: impl FnOnce() -> String, value: f64) -> Result<(), ExpertMeanError> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(ExpertMeanError::NonFinite {
            what: what(),
            value,
        })
    }
}

fn check(
    x: MatRef<'_, f64>,
    y: &[f64],
    corrections: &[ExpertCorrection],
    s: &ExpertSettings,
) -> Result<(), ExpertMeanError> {
    let n = y.len();
    if x.nrows() != n {
        return Err(ExpertMeanError::Shape(format!(
            "{} input rows but {n} targets: expected one target per row",
            x.nrows()
        )));
    }
    if corrections.is_empty() {
        return Err(ExpertMeanError::Shape(
            "no expert corrections: the mean needs at least one identified outlier".into(),
        ));
    }
    for (i, &v) in y.iter().enumerate() {
        finite(|| format!("target {i}"), v)?;
        for c in 0..x.ncols() {
            finite(|| format!("input row {i}, column {c}"), x[(i, c)])?;
        }
    }
    if !(s.correction_variance > 0.0 && s.correction_variance.is_finite()) {
        return Err(ExpertMeanError::Setting(format!(
            "the correction variance σ²_corr is {}: expected a finite value > 0",
            s.correction_variance
        )));
    }
    if !(s.beta_prior > 0.0 && s.beta_prior.is_finite()) {
        return Err(ExpertMeanError::Setting(format!(
            "the Beta prior's β_o is {}: expected a finite value > 0",
            s.beta_prior
        )));
    }
    if s.neighbours < 2 {
        return Err(ExpertMeanError::Setting(format!(
            "{} neighbours per outlier: expected at least 2 (their sample variance is used)",
            s.neighbours
        )));
    }
    let mut seen = vec![false; n];
    for (position, c) in corrections.iter().enumerate() {
        if c.index >= n {
            return Err(ExpertMeanError::BadCorrection {
                position,
                reason: format!("row {} does not exist (the data have {n} rows)", c.index),
            });
        }
        if std::mem::replace(&mut seen[c.index], true) {
            return Err(ExpertMeanError::BadCorrection {
                position,
                reason: format!("row {} is corrected twice", c.index),
            });
        }
        finite(
            || format!("correction {position} (row {})", c.index),
            c.corrected,
        )?;
    }
    let inliers = n - corrections.len();
    if inliers < s.neighbours {
        return Err(ExpertMeanError::Shape(format!(
            "{inliers} inliers for {} neighbours per outlier: expected at least as many inliers",
            s.neighbours
        )));
    }
    Ok(())
}

/// The `j` inlier rows nearest to row `o` of `x` (Euclidean; ties to the lower row).
fn nearest_inliers(x: MatRef<'_, f64>, o: usize, outlier: &[bool], j: usize) -> Vec<usize> {
    let dist = |i: usize| -> f64 {
        (0..x.ncols())
            .map(|c| (x[(i, c)] - x[(o, c)]).powi(2))
            .sum()
    };
    let mut rows: Vec<(f64, usize)> = (0..x.nrows())
        .filter(|&i| !outlier[i])
        .map(|i| (dist(i), i))
        .collect();
    rows.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    rows.into_iter().take(j).map(|(_, i)| i).collect()
}

/// The expert-guided constant mean of `rcagp.md` §2.12 from inputs `x` (n×d), targets `y`
/// (contaminated) and the expert's corrections (every other row is an inlier).
///
/// # Errors
/// Mismatched shapes, non-finite values, a correction of a missing or repeated row, no
/// corrections, settings out of range, or fewer inliers than neighbours.
pub fn expert_mean(
    x: MatRef<'_, f64>,
    y: &[f64],
    corrections: &[ExpertCorrection],
    settings: &ExpertSettings,
) -> Result<ExpertMean, ExpertMeanError> {
    check(x, y, corrections, settings)?;
    let n = y.len() as f64;
    let y_mean = y.iter().sum::<f64>() / n;
    // The sample std (n − 1); a single row or constant targets leave no scale, and then every
    // observation is as (un)surprising as any other: α_o = 0.
    let y_std = if y.len() > 1 {
        (y.iter().map(|v| (v - y_mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    let mut outlier = vec![false; y.len()];
    corrections.iter().for_each(|c| outlier[c.index] = true);
    let corr_precision = 1.0 / settings.correction_variance;
    let j = settings.neighbours;
    let outliers: Vec<CorrectedOutlier> = corrections
        .iter()
        .map(|c| {
            let alpha = if y_std > 0.0 {
                ((y[c.index] - y_mean) / y_std).abs()
            } else {
                0.0
            };
            // Beta(α, β) prior, Bernoulli label ō = 1: posterior Beta(α + 1, β).
            let reliability = (alpha + 1.0) / (alpha + settings.beta_prior + 1.0);
            let neighbours = nearest_inliers(x, c.index, &outlier, j);
            let mu = neighbours.iter().map(|&i| y[i]).sum::<f64>() / j as f64;
            let var = neighbours.iter().map(|&i| (y[i] - mu).powi(2)).sum::<f64>() / (j - 1) as f64
                + EXPERT_VARIANCE_JITTER;
            let tau = 1.0 / var;
            let corrected_mean = (tau * mu + corr_precision * c.corrected) / (tau + corr_precision);
            CorrectedOutlier {
                index: c.index,
                neighbours,
                reliability,
                neighbour_mean: mu,
                precision: tau,
                corrected_mean,
            }
        })
        .collect();
    let constant = outliers
        .iter()
        .map(CorrectedOutlier::contribution)
        .sum::<f64>()
        / outliers.len() as f64;
    let x_outliers = corrections
        .iter()
        .map(|c| (0..x.ncols()).map(|col| x[(c.index, col)]).collect())
        .collect();
    Ok(ExpertMean {
        constant,
        outliers,
        x_outliers,
    })
}

impl ExpertMean {
    /// The constant as a prior mean (fixed: the expert's information should not be trained
    /// away, so fit with the mean frozen).
    pub fn prior_mean(&self) -> Mean {
        Mean::Constant { c: self.constant }
    }

    /// The constant in a model's standardised target units, `(m − mean)/std`, for targets
    /// standardised with `mean` and `std`.
    ///
    /// # Errors
    /// A non-finite `mean`, or a `std` that is not a positive finite number.
    pub fn standardised(&self, mean: f64, std: f64) -> Result<f64, ExpertMeanError> {
        finite(|| "the standardising mean".into(), mean)?;
        if !(std > 0.0 && std.is_finite()) {
            return Err(ExpertMeanError::Setting(format!(
                "the standardising std is {std}: expected a finite value > 0"
            )));
        }
        Ok((self.constant - mean) / std)
    }

    /// The optional kernel-weighted form (the paper's Eq. 22) at the rows of `xs`:
    /// `m(x) = (1/n̂) Σ_{ĵ among the n̂ outliers with the largest l(x, x_ĵ)} E[δ_ĵ] E[μ̄_ĵ] l(x, x_ĵ)`
    /// (`nearest` is capped at the number of outliers; ties go to the earlier correction).
    ///
    /// # Errors
    /// `nearest` of 0, or a kernel that is not initialised or does not fit the inputs.
    pub fn kernel_weighted(
        &self,
        xs: MatRef<'_, f64>,
        kernel: &Kernel,
        nearest: usize,
    ) -> Result<Vec<f64>, ExpertMeanError> {
        if nearest == 0 {
            return Err(ExpertMeanError::Setting(
                "the kernel-weighted mean needs at least one nearest outlier, got 0".into(),
            ));
        }
        let d = self.x_outliers.first().map_or(0, Vec::len);
        if !kernel.is_initialized() {
            return Err(ExpertMeanError::Kernel(format!(
                "'{kernel}' has lengthscales without values"
            )));
        }
        kernel
            .validate(d)
            .map_err(|e| ExpertMeanError::Kernel(e.to_string()))?;
        if xs.ncols() != d {
            return Err(ExpertMeanError::Shape(format!(
                "{} input columns at the query points, but the outliers have {d}",
                xs.ncols()
            )));
        }
        let xo = faer::Mat::from_fn(self.x_outliers.len(), d, |i, c| self.x_outliers[i][c]);
        let l = kernel.cross(xs, xo.as_ref());
        let n_hat = nearest.min(self.outliers.len());
        Ok((0..xs.nrows())
            .map(|r| {
                let mut order: Vec<usize> = (0..self.outliers.len()).collect();
                order.sort_by(|&a, &b| l[(r, b)].total_cmp(&l[(r, a)]).then(a.cmp(&b)));
                order[..n_hat]
                    .iter()
                    .map(|&o| self.outliers[o].contribution() * l[(r, o)])
                    .sum::<f64>()
                    / n_hat as f64
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use faer::Mat;

    use super::*;

    /// Ten points on a line, y = x, with rows 2 and 7 gross outliers.
    fn data() -> (Mat<f64>, Vec<f64>) {
        let x = Mat::from_fn(10, 1, |i, _| i as f64);
        let mut y: Vec<f64> = (0..10).map(|i| i as f64).collect();
        y[2] = 40.0;
        y[7] = -30.0;
        (x, y)
    }

    const CORRECTIONS: [ExpertCorrection; 2] = [
        ExpertCorrection {
            index: 2,
            corrected: 2.5,
        },
        ExpertCorrection {
            index: 7,
            corrected: 6.0,
        },
    ];

    #[test]
    fn matches_a_hand_computation() {
        let (x, y) = data();
        let m = expert_mean(x.as_ref(), &y, &CORRECTIONS, &ExpertSettings::default()).unwrap();
        // ȳ = (0+1+40+3+4+5+6−30+8+9)/10 = 4.6; s_y² = Σ(y − 4.6)²/9.
        let ss: f64 = y.iter().map(|v| (v - 4.6f64).powi(2)).sum();
        let sy = (ss / 9.0).sqrt();
        // Row 2: neighbours 1, 3 (distance 1), then 0 and 4 tie at 2 → 0. y = 1, 3, 0.
        let o = &m.outliers[0];
        assert_eq!(o.neighbours, vec![1, 3, 0]);
        let mu: f64 = 4.0 / 3.0;
        let var = ((1.0 - mu).powi(2) + (3.0 - mu).powi(2) + (0.0 - mu).powi(2)) / 2.0 + 1e-6;
        let tau = 1.0 / var;
        let a = ((40.0 - 4.6) / sy).abs();
        let rel = (a + 1.0) / (a + 0.01 + 1.0);
        let post = (tau * mu + 2.5) / (tau + 1.0);
        assert!((o.neighbour_mean - mu).abs() < 1e-14);
        assert!((o.precision - tau).abs() < 1e-12 * tau);
        assert!((o.reliability - rel).abs() < 1e-14);
        assert!((o.corrected_mean - post).abs() < 1e-13);
        // Row 7: neighbours 6, 8, then 5 and 9 tie → 5. y = 6, 8, 5.
        let o2 = &m.outliers[1];
        assert_eq!(o2.neighbours, vec![6, 8, 5]);
        let mu2: f64 = 19.0 / 3.0;
        let var2 = ((6.0 - mu2).powi(2) + (8.0 - mu2).powi(2) + (5.0 - mu2).powi(2)) / 2.0 + 1e-6;
        let a2 = ((-30.0 - 4.6) / sy).abs();
        let rel2 = (a2 + 1.0) / (a2 + 1.01);
        let post2 = (mu2 / var2 + 6.0) / (1.0 / var2 + 1.0);
        let expected = 0.5 * (rel * post + rel2 * post2);
        assert!(
            (m.constant - expected).abs() < 1e-13,
            "{} vs {expected}",
            m.constant
        );
        assert_eq!(m.prior_mean(), Mean::Constant { c: m.constant });
        // In standardised units.
        let z = m.standardised(4.6, sy).unwrap();
        assert!((z - (expected - 4.6) / sy).abs() < 1e-14);
    }

    #[test]
    fn neighbours_are_the_nearest_inliers_by_brute_force() {
        let x = Mat::from_fn(30, 3, |i, j| ((i * 5 + j * 11) as f64 * 0.61).sin() * 2.0);
        let y: Vec<f64> = (0..30).map(|i| (i as f64 * 0.3).cos()).collect();
        let corr: Vec<ExpertCorrection> = [4, 11, 17, 23]
            .iter()
            .map(|&index| ExpertCorrection {
                index,
                corrected: 0.0,
            })
            .collect();
        let s = ExpertSettings {
            neighbours: 5,
            ..ExpertSettings::default()
        };
        let m = expert_mean(x.as_ref(), &y, &corr, &s).unwrap();
        for o in &m.outliers {
            let d =
                |i: usize| -> f64 { (0..3).map(|c| (x[(i, c)] - x[(o.index, c)]).powi(2)).sum() };
            // Every chosen neighbour is an inlier and no inlier left out is nearer.
            let worst = o.neighbours.iter().map(|&i| d(i)).fold(0.0, f64::max);
            for i in 0..30 {
                let is_outlier = corr.iter().any(|c| c.index == i);
                if o.neighbours.contains(&i) {
                    assert!(!is_outlier);
                } else if !is_outlier {
                    assert!(d(i) >= worst, "row {i} is nearer than a chosen neighbour");
                }
            }
            assert_eq!(o.neighbours.len(), 5);
        }
    }

    #[test]
    fn limits_of_the_correction_variance_and_of_the_reliability() {
        let (x, y) = data();
        let with = |v: f64| {
            let s = ExpertSettings {
                correction_variance: v,
                ..ExpertSettings::default()
            };
            expert_mean(x.as_ref(), &y, &CORRECTIONS, &s).unwrap()
        };
        // An untrusted expert (σ²_corr → ∞): the neighbours' mean.
        let vague = with(1e12);
        for o in &vague.outliers {
            assert!((o.corrected_mean - o.neighbour_mean).abs() < 1e-9);
        }
        // A perfect expert (σ²_corr → 0): the correction itself.
        let sharp = with(1e-12);
        for (o, c) in sharp.outliers.iter().zip(&CORRECTIONS) {
            assert!((o.corrected_mean - c.corrected).abs() < 1e-9);
        }
        // β_o → 0 makes the label certain: E[δ] → 1, and m is the mean of the corrections.
        let s = ExpertSettings {
            beta_prior: 1e-15,
            correction_variance: 1e-12,
            ..ExpertSettings::default()
        };
        let certain = expert_mean(x.as_ref(), &y, &CORRECTIONS, &s).unwrap();
        assert!((certain.constant - 4.25).abs() < 1e-9);
        // The reliability grows with the outlier's surprise: row 2 is 35.4 from ȳ, row 7 34.6.
        let default = with(1.0);
        assert!(default.outliers[0].reliability > default.outliers[1].reliability);
        assert!(default.outliers.iter().all(|o| o.reliability < 1.0));
    }

    #[test]
    fn the_kernel_weighted_form_matches_a_direct_sum() {
        let (x, y) = data();
        let m = expert_mean(x.as_ref(), &y, &CORRECTIONS, &ExpertSettings::default()).unwrap();
        let k = Kernel::parse("se(ls=2.0)").unwrap();
        let xs = Mat::from_fn(3, 1, |i, _| [0.0, 4.4, 9.0][i]);
        let l = |a: f64, b: f64| (-(a - b).powi(2) / 8.0).exp();
        let c = [m.outliers[0].contribution(), m.outliers[1].contribution()];
        // n̂ = 2: both outliers, halved.
        let both = m.kernel_weighted(xs.as_ref(), &k, 2).unwrap();
        for (r, &q) in [0.0, 4.4, 9.0].iter().enumerate() {
            let want = (c[0] * l(q, 2.0) + c[1] * l(q, 7.0)) / 2.0;
            assert!((both[r] - want).abs() < 1e-14);
        }
        // n̂ = 1: only the nearer outlier (2 for x = 0 and 4.4, 7 for x = 9).
        let one = m.kernel_weighted(xs.as_ref(), &k, 1).unwrap();
        assert!((one[0] - c[0] * l(0.0, 2.0)).abs() < 1e-14);
        assert!((one[1] - c[0] * l(4.4, 2.0)).abs() < 1e-14);
        assert!((one[2] - c[1] * l(9.0, 7.0)).abs() < 1e-14);
        // n̂ beyond the outliers is capped.
        assert_eq!(m.kernel_weighted(xs.as_ref(), &k, 9).unwrap(), both);
        assert!(m.kernel_weighted(xs.as_ref(), &k, 0).is_err());
    }

    #[test]
    fn bad_inputs_are_errors_that_name_the_problem() {
        let (x, y) = data();
        let s = ExpertSettings::default();
        let e = expert_mean(x.as_ref(), &y[..9], &CORRECTIONS, &s).unwrap_err();
        assert!(e.to_string().contains("10 input rows but 9 targets"), "{e}");
        assert!(expert_mean(x.as_ref(), &y, &[], &s).is_err());
        let far = [ExpertCorrection {
            index: 10,
            corrected: 0.0,
        }];
        let e = expert_mean(x.as_ref(), &y, &far, &s).unwrap_err();
        assert!(e.to_string().contains("row 10 does not exist"), "{e}");
        let twice = [CORRECTIONS[0], CORRECTIONS[0]];
        let e = expert_mean(x.as_ref(), &y, &twice, &s).unwrap_err();
        assert!(e.to_string().contains("corrected twice"), "{e}");
        let mut ynan = y.clone();
        ynan[4] = f64::NAN;
        let e = expert_mean(x.as_ref(), &ynan, &CORRECTIONS, &s).unwrap_err();
        assert!(e.to_string().contains("target 4"), "{e}");
        for bad in [
            ExpertSettings { neighbours: 1, ..s },
            ExpertSettings {
                correction_variance: 0.0,
                ..s
            },
            ExpertSettings {
                beta_prior: -1.0,
                ..s
            },
            ExpertSettings { neighbours: 9, ..s },
        ] {
            assert!(expert_mean(x.as_ref(), &y, &CORRECTIONS, &bad).is_err());
        }
        let m = expert_mean(x.as_ref(), &y, &CORRECTIONS, &s).unwrap();
        assert!(m.standardised(0.0, 0.0).is_err());
    }
}
