//! The Student-t likelihood
//!
//! ```text
//! log St(y; f, ν, s²) = log C(ν, s²) − (ν+1)/2 · log(1 + r²/(νs²)),   r = y − f,
//! C = Γ((ν+1)/2) / (Γ(ν/2) √(πν s²)).
//! ```
//!
//! With `a = νs²` and `q = a + r²` the derivatives in `f` are
//!
//! ```text
//! ℓ' = (ν+1) r/q,   ℓ'' = (ν+1)(r² − a)/q²,   ℓ''' = 2(ν+1) r (r² − 3a)/q³,
//! ```
//!
//! so `ℓ'' > 0` for outliers (`r² > a`): the likelihood is not log-concave. It is convex in
//! `r²`, so the quadratic of curvature `(ν+1)/q ≥ max(−ℓ'', 0)` touching it at `f` minorises it
//! (the EM step of the Student-t as a scale mixture), which is its Newton curvature.
//!
//! Parameters: `log s²` and, when `ν` is learned, `ρ = log(ν − 2)` first (so that `ν > 2` and
//! the predictive variance `s²ν/(ν−2)` exists). With `ν` fixed any `ν > 0` is allowed.

use std::f64::consts::PI;

use super::{
    check_count, check_variance, LatentDerivatives, Likelihood, LikelihoodError, ParamDerivatives,
};
use crate::models::hyper::NOISE_BOUNDS;

/// The log density of the Student-t likelihood `p(y | f)` with scale² `sigma2` and `nu`
/// degrees of freedom.
pub fn student_t_log_pdf(y: f64, f: f64, sigma2: f64, nu: f64) -> f64 {
    log_normaliser(sigma2, nu) - log_kernel(y - f, nu, sigma2)
}

/// `(ν+1)/2 · log(1 + r²/(νσ²))`: the part of `−log p` that depends on the residual `r`.
fn log_kernel(r: f64, nu: f64, sigma2: f64) -> f64 {
    0.5 * (nu + 1.0) * (r * r / (nu * sigma2)).ln_1p()
}

/// The variance of a Student-t observation about its latent value: `σ² ν/(ν−2)` for `ν > 2`,
/// infinite otherwise (the distribution then has no variance).
pub fn student_t_noise_variance(sigma2: f64, nu: f64) -> f64 {
    if nu > 2.0 {
        sigma2 * nu / (nu - 2.0)
    } else {
        f64::INFINITY
    }
}

/// `ln Γ(x + ½) − ln Γ(x)` for `x > 0`. Computed directly: for `ν = 1e7` the two log-gammas are
/// ~7e7 each and their difference would lose eight digits. The recurrence
/// `D(x) = D(x+1) + ln(x/(x+½))` lifts `x` to 30, where the asymptotic series
/// `½ ln x − 1/(8x) + 1/(192x³) − 1/(640x⁵) + 17/(14336x⁷)` is accurate to 1e-16.
pub fn ln_gamma_half_ratio(x: f64) -> f64 {
    let mut x = x;
    let mut acc = 0.0;
    while x < 30.0 {
        acc += (x / (x + 0.5)).ln();
        x += 1.0;
    }
    let z = 1.0 / x;
    let z2 = z * z;
    acc + 0.5 * x.ln()
        + z * (-1.0 / 8.0 + z2 * (1.0 / 192.0 + z2 * (-1.0 / 640.0 + z2 * 17.0 / 14336.0)))
}

/// `d/dx [ln Γ(x + ½) − ln Γ(x)] = ψ(x + ½) − ψ(x)` for `x > 0`, by the derivatives of the
/// recurrence and the series of [`ln_gamma_half_ratio`] (the degrees of freedom are learned by
/// the Student-t SVGP).
pub fn ln_gamma_half_ratio_derivative(x: f64) -> f64 {
    let mut x = x;
    let mut acc = 0.0;
    while x < 30.0 {
        acc += 1.0 / x - 1.0 / (x + 0.5);
        x += 1.0;
    }
    let z = 1.0 / x;
    let z2 = z * z;
    acc + 0.5 * z
        + z2 * (1.0 / 8.0 + z2 * (-1.0 / 64.0 + z2 * (1.0 / 128.0 - z2 * 119.0 / 14336.0)))
}

/// `ln [Γ((ν+1)/2) / (Γ(ν/2) √(νπ) σ)]`.
fn log_normaliser(sigma2: f64, nu: f64) -> f64 {
    ln_gamma_half_ratio(0.5 * nu) - 0.5 * (nu * PI).ln() - 0.5 * sigma2.ln()
}

/// Box for `ρ = log(ν − 2)`: ν from 2.01 (predictive variance 201 s²) to about 1000, where
/// the distribution is Gaussian for all practical purposes.
const LOG_EXCESS_DOF_BOUNDS: (f64, f64) = (-4.605_170_185_988_091, 6.907_755_278_982_137);

/// The Student-t likelihood with `nu` degrees of freedom and squared scale `scale2`.
#[derive(Clone, Debug, PartialEq)]
pub struct StudentT {
    nu: f64,
    scale2: f64,
    /// Whether ν is a parameter (`ρ = log(ν − 2)`) or fixed.
    learn_nu: bool,
    /// `log C(ν, s²)`, computed once per parameter value rather than once per observation.
    log_norm: f64,
    /// `∂ log C / ∂ν = ½ (ψ((ν+1)/2) − ψ(ν/2)) − 1/(2ν)`.
    d_log_norm_d_nu: f64,
}

impl StudentT {
    /// The likelihood with fixed `nu > 0`; its one parameter is `log s²`.
    ///
    /// # Errors
    /// If `nu` is not positive and finite, or `scale2` not a positive finite variance.
    pub fn fixed_nu(nu: f64, scale2: f64) -> Result<Self, LikelihoodError> {
        if !(nu.is_finite() && nu > 0.0) {
            return Err(LikelihoodError(format!(
                "nu = {nu} must be a positive finite number"
            )));
        }
        Self::build(nu, scale2, false)
    }

    /// The likelihood with learned `nu > 2`; its parameters are `log(ν − 2)` and `log s²`.
    ///
    /// # Errors
    /// If `nu` is not finite and above 2, or `scale2` not a positive finite variance.
    pub fn learned_nu(nu: f64, scale2: f64) -> Result<Self, LikelihoodError> {
        if !(nu.is_finite() && nu > 2.0) {
            return Err(LikelihoodError(format!(
                "the Student-t degrees of freedom ν must be finite and above 2 (so that the \
                 predictive variance exists), got {nu}"
            )));
        }
        Self::build(nu, scale2, true)
    }

    fn build(nu: f64, scale2: f64, learn_nu: bool) -> Result<Self, LikelihoodError> {
        let scale2 = check_variance("the Student-t scale s²", scale2)?;
        Ok(StudentT {
            nu,
            scale2,
            learn_nu,
            log_norm: log_normaliser(scale2, nu),
            d_log_norm_d_nu: 0.5 * ln_gamma_half_ratio_derivative(0.5 * nu) - 0.5 / nu,
        })
    }

    /// The degrees of freedom ν.
    pub fn nu(&self) -> f64 {
        self.nu
    }

    /// The squared scale s².
    pub fn scale2(&self) -> f64 {
        self.scale2
    }
}

impl Likelihood for StudentT {
    fn name(&self) -> &'static str {
        "student_t"
    }

    fn log_density(&self, y: f64, f: f64) -> f64 {
        self.log_norm - log_kernel(y - f, self.nu, self.scale2)
    }

    fn latent_derivatives(&self, y: f64, f: f64) -> LatentDerivatives {
        let nu1 = self.nu + 1.0;
        let r = y - f;
        let a = self.nu * self.scale2;
        let q = a + r * r;
        LatentDerivatives {
            value: self.log_density(y, f),
            d1: nu1 * r / q,
            d2: nu1 * (r * r - a) / (q * q),
            d3: 2.0 * nu1 * r * (r * r - 3.0 * a) / (q * q * q),
        }
    }

    /// `(ν+1)/(νs² + r²)`, the curvature of the quadratic minoriser (see the module docs).
    fn newton_curvature(&self, y: f64, f: f64) -> f64 {
        let r = y - f;
        (self.nu + 1.0) / (self.nu * self.scale2 + r * r)
    }

    fn param_names(&self) -> &'static [&'static str] {
        if self.learn_nu {
            &["nu", "scale2"]
        } else {
            &["scale2"]
        }
    }

    fn natural(&self) -> Vec<f64> {
        if self.learn_nu {
            vec![self.nu, self.scale2]
        } else {
            vec![self.scale2]
        }
    }

    fn unconstrained(&self) -> Vec<f64> {
        if self.learn_nu {
            vec![(self.nu - 2.0).ln(), self.scale2.ln()]
        } else {
            vec![self.scale2.ln()]
        }
    }

    fn set_unconstrained(&mut self, u: &[f64]) -> Result<(), LikelihoodError> {
        check_count(self.name(), self.param_names().len(), u)?;
        *self = if self.learn_nu {
            StudentT::learned_nu(2.0 + u[0].exp(), u[1].exp())?
        } else {
            StudentT::fixed_nu(self.nu, u[0].exp())?
        };
        Ok(())
    }

    fn bounds(&self) -> Vec<(f64, f64)> {
        let scale = (NOISE_BOUNDS.0.ln(), NOISE_BOUNDS.1.ln());
        if self.learn_nu {
            vec![LOG_EXCESS_DOF_BOUNDS, scale]
        } else {
            vec![scale]
        }
    }

    fn param_derivatives(&self, y: f64, f: f64, out: &mut [ParamDerivatives]) {
        let nu1 = self.nu + 1.0;
        let r = y - f;
        let a = self.nu * self.scale2;
        let q = a + r * r;
        // In log s²: a = νs² moves with it, ∂a/∂log s² = a.
        let scale = ParamDerivatives {
            value: -0.5 + 0.5 * nu1 * r * r / q,
            d1: -nu1 * a * r / (q * q),
            d2: -(nu1 * a * (3.0 * r * r - a) / (q * q * q)),
        };
        if !self.learn_nu {
            out[0] = scale;
            return;
        }
        // In ν (∂a/∂ν = s²), then ν = 2 + e^ρ: ∂/∂ρ = (ν − 2) ∂/∂ν.
        let s2 = self.scale2;
        let log1p = (r * r / a).ln_1p();
        let d_nu = ParamDerivatives {
            value: self.d_log_norm_d_nu - 0.5 * log1p + 0.5 * nu1 * (r * r / q) / self.nu,
            d1: r / q - nu1 * r * s2 / (q * q),
            d2: (r * r - a) / (q * q) + nu1 * s2 * (a - 3.0 * r * r) / (q * q * q),
        };
        let excess = self.nu - 2.0;
        out[0] = ParamDerivatives {
            value: excess * d_nu.value,
            d1: excess * d_nu.d1,
            d2: excess * d_nu.d2,
        };
        out[1] = scale;
    }

    fn predict(&self, mu: f64, v: f64) -> (f64, f64) {
        (mu, v + student_t_noise_variance(self.scale2, self.nu))
    }
}
