//! The softplus expected utility of EULBO (`rcagp.md` §2.11, §6.8; Maus et al., 2024):
//! `u(μ, σ) = E_{N(f; μ, σ²)}[ln softplus(f − y*)]` with `softplus(z) = ln(1 + eᶻ)`, a smooth
//! stand-in for `ln max(f − y*, 0)` that stays finite far below the incumbent.
//!
//! `ln softplus` is evaluated as `ln(max(z, 0) + ln1p(e^{−|z|}))` for `z > −20`, and by its
//! asymptote `z − eᶻ/2` below (the next term of `ln ln(1 + eᶻ)` is `5e^{2z}/24 < 1e-17`
//! there): the naive `ln(ln(1 + eᶻ))` underflows to `−∞` from `z ≈ −745` and loses every digit
//! of `ln(1 + eᶻ)` from `z ≈ −37`. The expectation is the 20-node Gauss–Hermite rule of
//! [`crate::likelihoods::quadrature`], and the derivatives are those of that sum.

use super::{finite, MarginalUtility, Utility};
use crate::likelihoods::quadrature::GaussHermite;
use crate::models::ModelError;

/// Below this `z`, `ln softplus(z)` is its asymptote `z − eᶻ/2` (`rcagp.md` §6.8).
const ASYMPTOTE_LIMIT: f64 = -20.0;

/// `softplus(z) = ln(1 + eᶻ)`, without overflow for large `z` or cancellation for small.
pub fn softplus(z: f64) -> f64 {
    z.max(0.0) + (-z.abs()).exp().ln_1p()
}

/// `ln softplus(z)`, finite for every finite `z`.
pub fn log_softplus(z: f64) -> f64 {
    if z > ASYMPTOTE_LIMIT {
        softplus(z).ln()
    } else {
        z - 0.5 * z.exp()
    }
}

/// `d ln softplus(z)/dz = sigmoid(z)/softplus(z)` (the asymptote's `1 − eᶻ/2` below −20).
pub fn log_softplus_derivative(z: f64) -> f64 {
    if z > ASYMPTOTE_LIMIT {
        let sigmoid = if z >= 0.0 {
            1.0 / (1.0 + (-z).exp())
        } else {
            let e = z.exp();
            e / (1.0 + e)
        };
        sigmoid / softplus(z)
    } else {
        1.0 - 0.5 * z.exp()
    }
}

/// The softplus expected utility over an incumbent `y*`: `E[ln softplus(f − y*)]` under the
/// posterior marginal `N(μ, σ²)`, by 20-node Gauss–Hermite quadrature.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SoftplusEi {
    incumbent: f64,
}

impl SoftplusEi {
    /// The utility over `incumbent` (the RCaGP reference uses the best standardised observed
    /// value, contaminated or not).
    ///
    /// # Errors
    /// [`ModelError::Invalid`] if `incumbent` is not finite.
    pub fn new(incumbent: f64) -> Result<Self, ModelError> {
        Ok(SoftplusEi {
            incumbent: finite(incumbent, "the softplus-EI incumbent")?,
        })
    }

    /// The incumbent `y*`.
    pub fn incumbent(&self) -> f64 {
        self.incumbent
    }
}

impl MarginalUtility for SoftplusEi {
    /// `Σ_k (w_k/√π) ln softplus(μ + √2 σ t_k − y*)` and its derivatives in `μ` and `σ`
    /// (`∂f_k/∂σ = √2 t_k`).
    fn utility(&self, mean: f64, sd: f64) -> Utility {
        let scale = std::f64::consts::SQRT_2 * sd;
        let base = mean - self.incumbent;
        let (mut value, mut d_mean, mut d_sd) = (0.0, 0.0, 0.0);
        for (t, w) in GaussHermite::get().positive_pairs() {
            let (up, down) = (base + scale * t, base - scale * t);
            let (d_up, d_down) = (log_softplus_derivative(up), log_softplus_derivative(down));
            value += w * (log_softplus(up) + log_softplus(down));
            d_mean += w * (d_up + d_down);
            d_sd += w * std::f64::consts::SQRT_2 * t * (d_up - d_down);
        }
        Utility {
            value,
            d_mean,
            d_sd,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(z, ln softplus(z), d ln softplus/dz)` from mpmath at 80 digits, rounded to the nearest
    /// `f64`, on both sides of the
    /// switch to the asymptote and far below it.
    const REFERENCE: [(f64, f64, f64); 13] = [
        (-800.0, -800.0, 1.0),
        (-300.0, -300.0, 1.0),
        (-40.0, -40.0, 1.0),
        (-20.5, -20.500000000625075, 0.9999999993749236),
        (-20.0, -20.00000000103058, 0.9999999989694232),
        (-19.5, -19.500000001699135, 0.999999998300866),
        (-5.0, -5.003359553239909, 0.9966498291384774),
        (-0.001, -0.36723434793137927, 0.721507174010924),
        (0.0, -0.36651292058166435, 0.7213475204444817),
        (0.5, -0.02626493926374671, 0.6390247807012777),
        (3.0, 1.114678319907568, 0.31246410778772515),
        (20.0, 2.995732273657049, 0.04999999989178944),
        (50.0, 3.912023005428146, 0.02),
    ];

    #[test]
    fn log_softplus_matches_high_precision_references() {
        for (z, value, slope) in REFERENCE {
            let got = log_softplus(z);
            assert!(
                (got - value).abs() <= 2e-16 * value.abs().max(1.0),
                "ln softplus({z}) = {got}, want {value}"
            );
            let d = log_softplus_derivative(z);
            assert!(
                (d - slope).abs() <= 4e-16,
                "d ln softplus({z}) = {d}, want {slope}"
            );
        }
    }

    /// Finite and strictly increasing on a fine grid of `[−800, 50]`, with the derivative of
    /// each branch matching central differences; the naive form is `−∞` at the bottom.
    #[test]
    fn log_softplus_is_finite_monotone_and_differentiable_on_the_whole_range() {
        assert_eq!((1.0 + (-800f64).exp()).ln().ln(), f64::NEG_INFINITY);
        let mut previous = f64::NEG_INFINITY;
        for k in 0..=8500 {
            let z = -800.0 + 0.1 * k as f64;
            let v = log_softplus(z);
            assert!(
                v.is_finite() && v > previous,
                "z = {z}: {v} after {previous}"
            );
            previous = v;
            let h = 1e-5;
            // Stay on one branch for the difference.
            if (z - ASYMPTOTE_LIMIT).abs() > 2.0 * h {
                let fd = (log_softplus(z + h) - log_softplus(z - h)) / (2.0 * h);
                let d = log_softplus_derivative(z);
                assert!(
                    (fd - d).abs() <= 1e-9 * v.abs().max(1.0),
                    "z = {z}: analytic {d}, finite difference {fd}"
                );
            }
        }
    }

    /// `E[ln softplus(f − y*)]` by composite Simpson over `μ ± 14σ` (4·10⁴ panels).
    fn brute_force(mean: f64, sd: f64, incumbent: f64) -> f64 {
        let panels = 40_000;
        let (lo, hi) = (mean - 14.0 * sd, mean + 14.0 * sd);
        let h = (hi - lo) / panels as f64;
        let density = |f: f64| {
            let z = (f - mean) / sd;
            (-0.5 * z * z).exp() / (sd * (2.0 * std::f64::consts::PI).sqrt())
        };
        (0..=panels)
            .map(|k| {
                let f = lo + h * k as f64;
                let weight = match k {
                    0 => 1.0,
                    _ if k == panels => 1.0,
                    _ if k % 2 == 1 => 4.0,
                    _ => 2.0,
                };
                weight * log_softplus(f - incumbent) * density(f)
            })
            .sum::<f64>()
            * h
            / 3.0
    }

    #[test]
    fn gauss_hermite_expectation_matches_brute_force_quadrature() {
        // Far below, near and above the incumbent, narrow and wide marginals.
        let cases = [
            (0.2, 0.05, 0.3, 1e-12),
            (0.3, 0.4, 0.5, 1e-7),
            (-2.0, 1.0, 1.0, 1e-6),
            (1.5, 0.8, 0.2, 1e-6),
            (-300.0, 2.0, 0.0, 1e-12),
        ];
        for (mean, sd, incumbent, tol) in cases {
            let u = SoftplusEi::new(incumbent).unwrap().utility(mean, sd).value;
            let want = brute_force(mean, sd, incumbent);
            assert!(
                (u - want).abs() <= tol * want.abs().max(1.0),
                "μ = {mean}, σ = {sd}, y* = {incumbent}: {u} vs {want}"
            );
        }
        // σ → 0: the utility at the mean.
        let u = SoftplusEi::new(0.1).unwrap().utility(0.7, 1e-9).value;
        assert!((u - log_softplus(0.6)).abs() < 1e-12);
    }

    #[test]
    fn derivatives_match_central_finite_differences() {
        for (mean, sd, incumbent) in [
            (0.3, 0.4, 0.5),
            (-2.0, 1.0, 1.0),
            (1.5, 0.8, 0.2),
            (-60.0, 3.0, 0.0),
        ] {
            let u = SoftplusEi::new(incumbent).unwrap();
            let at = u.utility(mean, sd);
            let h = 1e-6;
            let fd_mean =
                (u.utility(mean + h, sd).value - u.utility(mean - h, sd).value) / (2.0 * h);
            let fd_sd = (u.utility(mean, sd + h).value - u.utility(mean, sd - h).value) / (2.0 * h);
            let scale = at.value.abs().max(1.0);
            assert!(
                (fd_mean - at.d_mean).abs() < 1e-8 * scale,
                "∂μ at {mean}, {sd}: {} vs {fd_mean}",
                at.d_mean
            );
            assert!(
                (fd_sd - at.d_sd).abs() < 1e-8 * scale,
                "∂σ at {mean}, {sd}: {} vs {fd_sd}",
                at.d_sd
            );
        }
    }

    #[test]
    fn non_finite_incumbent_is_rejected() {
        let err = SoftplusEi::new(f64::NAN).unwrap_err().to_string();
        assert!(err.contains("incumbent"), "{err}");
    }
}
