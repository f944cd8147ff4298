//! The inverse multiquadric (IMQ) weight of the robust conjugate GPs.
//!
//! ```text
//! w(x, y) = β (1 + ((y − γ(x)) / c)²)^(−1/2),       ŵ = w/β = (1 + u²)^(−1/2),  u = (y − γ)/c,
//! g = ∂ log w² / ∂y = −2u / (c (1 + u²))            (γ and c held fixed)
//! ```
//!
//! With `β = σ/√2` the observation gets the effective noise variance `σ²/ŵ²` and its target
//! is shifted by `σ² g`, so an observation at its centre (`ŵ = 1`, `g = 0`) is treated exactly
//! as by the GP and a far outlier gets a huge variance and a bounded pull. The soft threshold
//! `c` is an order statistic of the absolute residuals (never an interpolated quantile: with
//! interpolation `c` can grow with the outlier itself and robustness is lost).

use crate::likelihoods::ImqPoint;

/// The smallest soft threshold used (in the model's units): below it, tied or zero residuals
/// would divide by zero.
pub const C_FLOOR: f64 = 1e-8;

/// Normalised IMQ weights `ŵ ∈ (0, 1]` and score corrections `g`, one per observation.
#[derive(Clone, Debug, PartialEq)]
pub struct ImqWeights {
    /// `ŵ = w/β`.
    pub w_hat: Vec<f64>,
    /// `g = ∂ log w²/∂y`.
    pub g: Vec<f64>,
}

impl ImqWeights {
    /// Weights of observations `y` with centres `centre` and per-observation thresholds `c`.
    pub fn new(y: &[f64], centre: &[f64], c: &[f64]) -> ImqWeights {
        let (w_hat, g) = y
            .iter()
            .zip(centre)
            .zip(c)
            .map(|((&y, &m), &c)| {
                let p = ImqPoint::new(y - m, c);
                (p.w_hat(), p.g())
            })
            .unzip();
        ImqWeights { w_hat, g }
    }

    /// Constant weights `ŵ = 1`, `g = 0`: the model is then exactly the Gaussian one.
    pub fn gaussian(n: usize) -> ImqWeights {
        ImqWeights {
            w_hat: vec![1.0; n],
            g: vec![0.0; n],
        }
    }
}

/// The order statistic `v_(⌊q (n−1)⌋)` of `values` (NumPy's `quantile(method = "lower")`),
/// or `None` if `values` is empty or `q` is not in [0, 1].
pub fn order_statistic_quantile(values: &[f64], q: f64) -> Option<f64> {
    if values.is_empty() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let mut v = values.to_vec();
    let k = (q * (v.len() - 1) as f64).floor() as usize;
    let (_, kth, _) = v.select_nth_unstable_by(k, f64::total_cmp);
    Some(*kth)
}

/// The soft threshold `c`: the `(1 − ε)` order statistic of `|residuals|`, floored at
/// [`C_FLOOR`]. Returns `c` and whether the floor was applied (the caller reports it).
/// `None` if there are no residuals or `ε` is not in [0, 1).
pub fn soft_threshold(residuals: &[f64], epsilon: f64) -> Option<(f64, bool)> {
    if !(0.0..1.0).contains(&epsilon) {
        return None;
    }
    let abs: Vec<f64> = residuals.iter().map(|r| r.abs()).collect();
    let c = order_statistic_quantile(&abs, 1.0 - epsilon)?;
    Some(if c < C_FLOOR {
        (C_FLOOR, true)
    } else {
        (c, false)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_properties_of_the_spec() {
        let c = 0.7;
        let ys: Vec<f64> = (-40..=40).map(|i| 0.3 + 0.25 * i as f64).collect();
        let centre = vec![0.3; ys.len()];
        let w = ImqWeights::new(&ys, &centre, &vec![c; ys.len()]);
        for (i, &y) in ys.iter().enumerate() {
            let u = y - 0.3;
            assert!(w.w_hat[i] > 0.0 && w.w_hat[i] <= 1.0);
            // Symmetric about the centre, odd score, |g| ≤ 1/c, |y ŵ²| bounded.
            let j = ys.len() - 1 - i;
            assert!((w.w_hat[i] - w.w_hat[j]).abs() < 1e-15);
            assert!((w.g[i] + w.g[j]).abs() < 1e-15);
            assert!(w.g[i].abs() <= 1.0 / c + 1e-15);
            assert!((u * w.w_hat[i] * w.w_hat[i]).abs() <= c / 2.0 + 1e-15);
            if u.abs() < 1e-12 {
                assert_eq!(w.w_hat[i], 1.0);
            }
        }
        // Monotone in |y − γ|.
        for i in 41..ys.len() {
            assert!(w.w_hat[i] < w.w_hat[i - 1]);
        }
    }

    #[test]
    fn score_is_the_derivative_of_log_w_squared() {
        let (m, c) = (-0.4, 1.3);
        for &y in &[-5.0, -0.4, 0.1, 2.0, 30.0] {
            let h = 1e-6;
            let lw2 = |y: f64| (ImqWeights::new(&[y], &[m], &[c]).w_hat[0]).powi(2).ln();
            let fd = (lw2(y + h) - lw2(y - h)) / (2.0 * h);
            let g = ImqWeights::new(&[y], &[m], &[c]).g[0];
            assert!((fd - g).abs() < 1e-8, "y = {y}: {g} vs {fd}");
        }
    }

    #[test]
    fn quantile_is_the_lower_order_statistic() {
        let v = [5.0, 1.0, 4.0, 2.0, 3.0];
        assert_eq!(order_statistic_quantile(&v, 0.0), Some(1.0));
        assert_eq!(order_statistic_quantile(&v, 1.0), Some(5.0));
        // ⌊0.8·4⌋ = 3 → the 4th smallest, where interpolation would give 4.2.
        assert_eq!(order_statistic_quantile(&v, 0.8), Some(4.0));
        assert_eq!(order_statistic_quantile(&v, 0.74), Some(3.0));
        assert_eq!(order_statistic_quantile(&[], 0.5), None);
        assert_eq!(order_statistic_quantile(&v, 1.5), None);
    }

    #[test]
    fn threshold_does_not_follow_a_growing_outlier() {
        // 10 residuals, ε = 0.05: ⌊0.95·9⌋ = 8, the second largest, whatever the largest is.
        let mut r: Vec<f64> = (1..=10).map(f64::from).collect();
        let (c1, _) = soft_threshold(&r, 0.05).unwrap();
        r[9] = 1e9;
        let (c2, _) = soft_threshold(&r, 0.05).unwrap();
        assert_eq!(c1, 9.0);
        assert_eq!(c2, 9.0);
        // ε = 0 takes the maximum, which does follow it (not robust, as the spec warns).
        assert_eq!(soft_threshold(&r, 0.0).unwrap().0, 1e9);
        assert_eq!(soft_threshold(&[0.0, 0.0], 0.2), Some((C_FLOOR, true)));
        assert_eq!(soft_threshold(&r, 1.0), None);
    }
}
