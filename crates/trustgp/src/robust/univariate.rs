//! Per-column robust statistics (median, MAD) and the MCD fallback built from them.

use faer::{Mat, MatRef};

use super::McdEstimate;

/// Scale factor making the MAD consistent for the standard deviation at the normal model
/// (1/Φ⁻¹(3/4) ≈ 1.4826, the constant used by R and scikit-learn's robust scalers).
pub(crate) const MAD_TO_SD: f64 = 1.4826;

/// Median of finite values (average of the two middle values for an even count); NaN for an
/// empty slice. Reorders `values`.
pub(crate) fn median_in_place(values: &mut [f64]) -> f64 {
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    if n % 2 == 1 {
        values[n / 2]
    } else {
        0.5 * (values[n / 2 - 1] + values[n / 2])
    }
}

/// Per-column median and robust variance (1.4826·MAD)² of `z` (rows are observations).
///
/// A column whose MAD is 0 (more than half of its values equal) gets its population variance
/// instead, and a constant column gets 1.0: the result is used as a covariance that must stay
/// positive definite, and 1.0 is the neutral scale for standardised data.
pub(crate) fn median_and_robust_variance(z: MatRef<'_, f64>) -> (Vec<f64>, Vec<f64>) {
    let n = z.nrows();
    let mut medians = Vec::with_capacity(z.ncols());
    let mut variances = Vec::with_capacity(z.ncols());
    let mut column = vec![0.0; n];
    for t in 0..z.ncols() {
        for (i, c) in column.iter_mut().enumerate() {
            *c = z[(i, t)];
        }
        let med = median_in_place(&mut column);
        for c in column.iter_mut() {
            *c = (*c - med).abs();
        }
        let mad = median_in_place(&mut column);
        let mut var = (MAD_TO_SD * mad).powi(2);
        if var.is_nan() || var <= 0.0 {
            let mean = (0..n).map(|i| z[(i, t)]).sum::<f64>() / n as f64;
            var = (0..n).map(|i| (z[(i, t)] - mean).powi(2)).sum::<f64>() / n as f64;
        }
        if var.is_nan() || var <= 0.0 || var.is_infinite() {
            var = 1.0;
        }
        medians.push(med);
        variances.push(var);
    }
    (medians, variances)
}

/// The MAD-diagonal estimate documented on [`fast_mcd`](super::fast_mcd): column medians and
/// diag((1.4826 · MAD)²), every row marked as support, raw fields equal to the final ones.
pub(crate) fn fallback(z: MatRef<'_, f64>, reason: String) -> McdEstimate {
    let (medians, variances) = median_and_robust_variance(z);
    let t = variances.len();
    let covariance = Mat::from_fn(t, t, |a, b| if a == b { variances[a] } else { 0.0 });
    McdEstimate {
        location: medians.clone(),
        covariance: covariance.clone(),
        raw_location: medians,
        raw_covariance: covariance,
        raw_support: vec![true; z.nrows()],
        support: vec![true; z.nrows()],
        fallback: Some(reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_handles_odd_and_even_counts() {
        assert_eq!(median_in_place(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median_in_place(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median_in_place(&mut []).is_nan());
    }

    #[test]
    fn robust_variance_uses_mad_then_variance_then_one() {
        // Column 0: values 1..=5, median 3, |dev| = 2,1,0,1,2 → MAD 1.
        // Column 1: four zeros and one 10 → MAD 0, population variance 16.
        // Column 2: constant → 1.0.
        let z = Mat::from_fn(5, 3, |i, t| match t {
            0 => (i + 1) as f64,
            1 => {
                if i == 4 {
                    10.0
                } else {
                    0.0
                }
            }
            _ => 7.0,
        });
        let (med, var) = median_and_robust_variance(z.as_ref());
        assert_eq!(med, vec![3.0, 0.0, 7.0]);
        assert!((var[0] - MAD_TO_SD * MAD_TO_SD).abs() < 1e-15);
        assert!((var[1] - 16.0).abs() < 1e-12);
        assert_eq!(var[2], 1.0);
    }
}
