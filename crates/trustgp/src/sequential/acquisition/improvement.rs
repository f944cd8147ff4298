//! Improvement over an incumbent `f*`: expected improvement (EI), its logarithm (LogEI), the
//! probability of improvement (PI) and its logarithm, all functions of `z = (μ − f*)/σ`.
//!
//! EI is `σ h(z)` with `h(z) = φ(z) + zΦ(z)`. Far below the incumbent `φ(z)` and `zΦ(z)` cancel
//! to `h(z) ≈ φ(z)/z²` and EI underflows (`z < −38`), leaving an optimiser no gradient. LogEI
//! evaluates `ln h` without forming `h` (Ament et al., 2023, "Unexpected improvements to
//! expected improvement for Bayesian optimization"):
//!
//! ```text
//! z > −1:          ln(φ(z) + zΦ(z))
//! −100 ≤ z ≤ −1:   ln φ(z) + ln(1 + z·erfcx(−z/√2)·√(π/2))         (Φ/φ = erfcx(−z/√2)√(π/2))
//! z < −100:        ln φ(z) − 2 ln|z| + ln(1 − 3/z² + 15/z⁴ − 105/z⁶ + 945/z⁸)
//! ```
//!
//! The middle form loses `z²` units in the last place of `1 + zΦ/φ` to cancellation (2e-12 at
//! `z = −100`); beyond, the asymptotic series of the Mills ratio is used, whose first omitted
//! term is `10395/z¹⁰ < 1e-16`.

use std::f64::consts::PI;

use super::normal::{cdf, erfcx, log_cdf, log_pdf, pdf};
use super::{finite, MarginalUtility, Utility};
use crate::models::ModelError;

/// Where `ln h` switches from the direct form to the erfcx form.
const DIRECT_LIMIT: f64 = -1.0;
/// Where `ln h` switches from the erfcx form to the asymptotic series.
const ASYMPTOTIC_LIMIT: f64 = -100.0;

/// Which function of the improvement over the incumbent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImprovementKind {
    /// Expected improvement `E[max(f − f*, 0)] = σ h(z)`.
    Expected,
    /// `ln` of the expected improvement, finite where EI underflows.
    LogExpected,
    /// Probability of improvement `P(f > f*) = Φ(z)`.
    Probability,
    /// `ln` of the probability of improvement, finite where PI underflows.
    LogProbability,
}

/// A function of the improvement `max(f − f*, 0)` of the latent `f` over the incumbent `f*`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Improvement {
    kind: ImprovementKind,
    incumbent: f64,
}

impl Improvement {
    /// `kind` of improvement over `incumbent` (for noisy observations, the best posterior mean:
    /// [`best_posterior_mean`](super::best_posterior_mean)).
    ///
    /// # Errors
    /// [`ModelError::Invalid`] if `incumbent` is not finite.
    pub fn new(kind: ImprovementKind, incumbent: f64) -> Result<Self, ModelError> {
        Ok(Improvement {
            kind,
            incumbent: finite(incumbent, "the incumbent")?,
        })
    }

    /// Which function of the improvement.
    pub fn kind(&self) -> ImprovementKind {
        self.kind
    }

    /// The incumbent `f*`.
    pub fn incumbent(&self) -> f64 {
        self.incumbent
    }
}

impl MarginalUtility for Improvement {
    fn utility(&self, mean: f64, sd: f64) -> Utility {
        let z = (mean - self.incumbent) / sd;
        // Every kind is u(z) or σ·u(z); with dz/dμ = 1/σ and dz/dσ = −z/σ.
        let (value, d_z, d_sd_direct) = match self.kind {
            ImprovementKind::Expected => {
                // d(σh)/dμ = Φ(z), d(σh)/dσ = h − zΦ = φ(z).
                return Utility {
                    value: sd * log_h(z).exp(),
                    d_mean: cdf(z),
                    d_sd: pdf(z),
                };
            }
            ImprovementKind::LogExpected => {
                let log_h = log_h(z);
                // d ln h/dz = Φ(z)/h(z), formed in logs: both underflow together.
                (log_h + sd.ln(), (log_cdf(z) - log_h).exp(), 1.0 / sd)
            }
            ImprovementKind::Probability => (cdf(z), pdf(z), 0.0),
            ImprovementKind::LogProbability => {
                let log_phi = log_cdf(z);
                (log_phi, (log_pdf(z) - log_phi).exp(), 0.0)
            }
        };
        Utility {
            value,
            d_mean: d_z / sd,
            d_sd: d_sd_direct - d_z * z / sd,
        }
    }
}

/// `ln h(z)`, `h(z) = φ(z) + zΦ(z)`, accurate for every finite `z` (see the module notes).
pub fn log_h(z: f64) -> f64 {
    if z > DIRECT_LIMIT {
        (pdf(z) + z * cdf(z)).ln()
    } else if z >= ASYMPTOTIC_LIMIT {
        let mills = erfcx(-z / std::f64::consts::SQRT_2) * (0.5 * PI).sqrt();
        log_pdf(z) + (z * mills).ln_1p()
    } else {
        let r = 1.0 / (z * z);
        let series = r * (-3.0 + r * (15.0 + r * (-105.0 + r * 945.0)));
        log_pdf(z) - 2.0 * (-z).ln() + series.ln_1p()
    }
}
