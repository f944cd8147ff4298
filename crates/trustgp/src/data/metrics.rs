//! Accuracy and Gaussian predictive scores of predictions against observed targets.
//!
//! All metrics take the targets `y`, the predictive means and (for NLPD) the predictive
//! standard deviations as slices of equal length. A NaN target is a missing value: that
//! position is skipped entirely (its mean and std are not looked at), and averages are over the
//! observed positions only. Errors: slices of different lengths; no observed target (empty or
//! all NaN); an infinite target; a non-finite mean; a non-finite or non-positive std at an
//! observed position. Positions in messages are 0-based.

use std::f64::consts::PI;

use super::DataError;

/// Root mean squared error over the observed targets.
pub fn rmse(y: &[f64], mean: &[f64]) -> Result<f64, DataError> {
    let (sum, count) = sum_observed(y, mean, None, |y, m, _| (y - m).powi(2))?;
    let largest = y
        .iter()
        .zip(mean)
        .filter(|(y, _)| !y.is_nan())
        .map(|(y, m)| (y - m).abs())
        .fold(0.0, f64::max);
    if largest == 0.0 || (1e-150..=1e150).contains(&largest) {
        return Ok((sum / count as f64).sqrt());
    }
    // Squares would overflow or underflow: the mean square of the errors divided by the
    // largest one, scaled back, so data on any scale get their RMSE.
    let (scaled, _) = sum_observed(y, mean, None, |y, m, _| ((y - m) / largest).powi(2))?;
    Ok(largest * (scaled / count as f64).sqrt())
}

/// Mean absolute error over the observed targets.
pub fn mae(y: &[f64], mean: &[f64]) -> Result<f64, DataError> {
    let (sum, count) = sum_observed(y, mean, None, |y, m, _| (y - m).abs())?;
    Ok(sum / count as f64)
}

/// Mean Gaussian negative log predictive density over the observed targets, where one point
/// scores `0.5 ln(2π s²) + (y − m)² / (2 s²)`.
pub fn nlpd_mean(y: &[f64], mean: &[f64], std: &[f64]) -> Result<f64, DataError> {
    let (sum, count) = sum_observed(y, mean, Some(std), nlpd_point)?;
    Ok(sum / count as f64)
}

/// Summed Gaussian negative log predictive density over the observed targets (see
/// [`nlpd_mean`]).
pub fn nlpd_sum(y: &[f64], mean: &[f64], std: &[f64]) -> Result<f64, DataError> {
    let (sum, _) = sum_observed(y, mean, Some(std), nlpd_point)?;
    Ok(sum)
}

/// The Gaussian NLPD of one observation. Where `s²` or `(y − m)²` would overflow or underflow
/// (data on a scale beyond ~1e±154) the same quantity is taken in log space.
fn nlpd_point(y: f64, m: f64, s: f64) -> f64 {
    let var = s * s;
    let direct = 0.5 * (2.0 * PI * var).ln() + (y - m).powi(2) / (2.0 * var);
    if direct.is_finite() {
        direct
    } else {
        0.5 * (2.0 * PI).ln() + s.ln() + 0.5 * ((y - m) / s).powi(2)
    }
}

/// Validates the slices and returns `(Σ f(y, m, s), count)` over the observed positions
/// (`s` is 1 when no stds are given).
fn sum_observed(
    y: &[f64],
    mean: &[f64],
    std: Option<&[f64]>,
    f: impl Fn(f64, f64, f64) -> f64,
) -> Result<(f64, usize), DataError> {
    let lengths = [("predictive means", Some(mean)), ("predictive stds", std)];
    for (what, values) in lengths {
        if let Some(values) = values {
            if values.len() != y.len() {
                return Err(DataError::ShapeMismatch {
                    what: format!("metric: number of {what} (one per target)"),
                    expected: y.len(),
                    found: values.len(),
                });
            }
        }
    }
    let mut sum = 0.0;
    let mut count = 0;
    for (i, (&yi, &mi)) in y.iter().zip(mean).enumerate() {
        if yi.is_nan() {
            continue;
        }
        let si = std.map_or(1.0, |s| s[i]);
        for (what, value) in [
            ("target", yi),
            ("predictive mean", mi),
            ("predictive std", si),
        ] {
            if !value.is_finite() {
                return Err(DataError::NonFiniteValue {
                    what: format!("metric: {what} at position {i}"),
                    value,
                });
            }
        }
        if si <= 0.0 {
            return Err(DataError::NotPositive {
                what: format!("metric: predictive std at position {i}"),
                value: si,
            });
        }
        sum += f(yi, mi, si);
        count += 1;
    }
    if count == 0 {
        return Err(DataError::NoObserved {
            what: format!("metric: targets ({} given)", y.len()),
        });
    }
    Ok((sum, count))
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    const NAN: f64 = f64::NAN;

    #[test]
    fn rmse_and_mae_by_hand() {
        // Errors 1, -2, 2 → squares 1, 4, 4 → RMSE √3; absolute 5/3.
        let y = [1.0, 2.0, 3.0];
        let m = [0.0, 4.0, 1.0];
        assert_relative_eq!(rmse(&y, &m).unwrap(), 3f64.sqrt(), epsilon = 1e-15);
        assert_relative_eq!(mae(&y, &m).unwrap(), 5.0 / 3.0, epsilon = 1e-15);
        assert_eq!(rmse(&y, &y).unwrap(), 0.0);
    }

    #[test]
    fn nlpd_by_hand() {
        // Standard normal at 0: 0.5 ln(2π) = 0.918938533204672742.
        let half_ln_2pi = 0.918_938_533_204_672_7;
        assert_relative_eq!(
            nlpd_sum(&[0.0], &[0.0], &[1.0]).unwrap(),
            half_ln_2pi,
            epsilon = 1e-15
        );
        // y = 3, m = 1, s = 2: 0.5 ln(8π) + 4/8.
        let p2 = 0.5 * (8.0 * PI).ln() + 0.5;
        assert_relative_eq!(p2, 2.112_085_713_764_618, epsilon = 1e-14);
        let y = [0.0, 3.0];
        let m = [0.0, 1.0];
        let s = [1.0, 2.0];
        assert_relative_eq!(
            nlpd_sum(&y, &m, &s).unwrap(),
            half_ln_2pi + p2,
            epsilon = 1e-14
        );
        assert_relative_eq!(
            nlpd_mean(&y, &m, &s).unwrap(),
            (half_ln_2pi + p2) / 2.0,
            epsilon = 1e-14
        );
    }

    #[test]
    fn nan_targets_are_skipped_everywhere() {
        // The skipped position may hold anything, even a NaN mean or a negative std.
        let y = [1.0, NAN, 3.0];
        let m = [0.0, NAN, 1.0];
        let s = [1.0, -1.0, 2.0];
        // Errors 1 and 2 over 2 observed points.
        assert_relative_eq!(rmse(&y, &m).unwrap(), 2.5f64.sqrt(), epsilon = 1e-15);
        assert_relative_eq!(mae(&y, &m).unwrap(), 1.5, epsilon = 1e-15);
        let expected = nlpd_point(1.0, 0.0, 1.0) + nlpd_point(3.0, 1.0, 2.0);
        assert_relative_eq!(nlpd_sum(&y, &m, &s).unwrap(), expected, epsilon = 1e-14);
        assert_relative_eq!(
            nlpd_mean(&y, &m, &s).unwrap(),
            expected / 2.0,
            epsilon = 1e-14
        );
    }

    #[test]
    fn metric_errors() {
        let msg = |r: Result<f64, DataError>| r.unwrap_err().to_string();
        let m = msg(rmse(&[1.0, 2.0], &[1.0]));
        assert!(
            m.contains("number of predictive means") && m.contains("expected 2, found 1"),
            "{m}"
        );
        let m = msg(nlpd_sum(&[1.0], &[1.0], &[1.0, 1.0]));
        assert!(
            m.contains("number of predictive stds") && m.contains("expected 1, found 2"),
            "{m}"
        );
        let m = msg(mae(&[], &[]));
        assert!(m.contains("no observed") && m.contains("0 given"), "{m}");
        let m = msg(nlpd_mean(&[NAN, NAN], &[0.0, 0.0], &[1.0, 1.0]));
        assert!(m.contains("no observed") && m.contains("2 given"), "{m}");
        let m = msg(nlpd_mean(&[1.0, 2.0], &[0.0, 0.0], &[1.0, 0.0]));
        assert!(
            m.contains("predictive std at position 1: expected a positive number, found 0"),
            "{m}"
        );
        let m = msg(nlpd_sum(&[1.0], &[0.0], &[-2.0]));
        assert!(
            m.contains("position 0: expected a positive number, found -2"),
            "{m}"
        );
        let m = msg(nlpd_sum(&[1.0], &[0.0], &[f64::INFINITY]));
        assert!(
            m.contains("predictive std at position 0: expected a finite number"),
            "{m}"
        );
        let m = msg(rmse(&[1.0, 2.0], &[0.0, NAN]));
        assert!(
            m.contains("predictive mean at position 1: expected a finite number, found NaN"),
            "{m}"
        );
        let m = msg(mae(&[f64::INFINITY], &[0.0]));
        assert!(
            m.contains("target at position 0: expected a finite number, found inf"),
            "{m}"
        );
    }

    #[test]
    fn metrics_are_equivariant_to_the_scale_of_the_data() {
        let y = [1.0, 2.0, 4.0, f64::NAN];
        let m = [1.5, 1.0, 3.0, 0.0];
        let s = [0.5, 2.0, 1.0, 1.0];
        let (r, a, n) = (
            rmse(&y, &m).unwrap(),
            mae(&y, &m).unwrap(),
            nlpd_mean(&y, &m, &s).unwrap(),
        );
        for scale in [1e-300, 1e-200, 1e200, 1e300] {
            let ys: Vec<f64> = y.iter().map(|v| v * scale).collect();
            let ms: Vec<f64> = m.iter().map(|v| v * scale).collect();
            let ss: Vec<f64> = s.iter().map(|v| v * scale).collect();
            let rs = rmse(&ys, &ms).unwrap();
            assert!(
                (rs / scale - r).abs() <= 1e-14 * r,
                "rmse at {scale:e}: {rs:e}"
            );
            assert!((mae(&ys, &ms).unwrap() / scale - a).abs() <= 1e-14 * a);
            // NLPD shifts by ln(scale) per point under a change of units.
            let ns = nlpd_mean(&ys, &ms, &ss).unwrap();
            assert!(
                (ns - scale.ln() - n).abs() <= 1e-12 * n.abs().max(1.0),
                "nlpd at {scale:e}"
            );
        }
        assert_eq!(rmse(&[3.0, 3.0], &[3.0, 3.0]).unwrap(), 0.0);
    }
}
