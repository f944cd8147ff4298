//! Class probabilities `Π(μ, Σ) = ∫ σ(ξ) N(ξ | μ, Σ) dξ` of a binary classifier over a
//! `(mean, variance)` rectangle (spec §2.7, Propositions 8 and 9).
//!
//! `Π` increases in `μ`, and `sign ∂Π/∂Σ = −sign μ` for the probit and the logistic link, so
//! its minimum over `[μ_L, μ_U] × [Σ_L, Σ_U]` is at `(μ_L, Σ_U if μ_L ≥ 0 else Σ_L)` and its
//! maximum at `(μ_U, Σ_L if μ_U ≥ 0 else Σ_U)`. Probit is closed form
//! (`Φ(μ/√(1 + Σ))`, GPML's `likErf`); the logistic integral has none, so it is bracketed by the
//! trapezoid rule's certified error bound ([`logistic_normal`], at most a few `10⁻¹²` wide): the same
//! computation as the classifier's `predict`, so a certified bound and a prediction never
//! disagree by more than that width. (Spec §2.9 discretises latent space instead; a fixed `(μ, Σ)`
//! only needs an integral, §6.9.)

use crate::likelihoods::logistic_normal::logistic_normal;
use crate::sequential::acquisition::normal;
/// Absolute margin on computed probabilities (`Φ` is accurate to a few ulps).
const PROB_MARGIN: f64 = 1e-12;

/// The link of a binary classifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryLink {
    /// `σ(ξ) = Φ(ξ)`.
    Probit,
    /// `σ(ξ) = 1/(1 + e^{−ξ})`.
    Logistic,
}

impl BinaryLink {
    /// The link's name.
    pub fn name(self) -> &'static str {
        match self {
            BinaryLink::Probit => "probit",
            BinaryLink::Logistic => "logit",
        }
    }

    /// A certified bracket `[lo, hi] ∋ Π(μ, Σ)`.
    pub fn bracket(self, mu: f64, var: f64) -> (f64, f64) {
        let var = var.max(0.0);
        let (lo, hi) = match self {
            BinaryLink::Probit => {
                let p = normal::cdf(mu / (1.0 + var).sqrt());
                (p, p)
            }
            BinaryLink::Logistic => {
                let r = logistic_normal(mu, var);
                (r.value - r.error, r.value + r.error)
            }
        };
        ((lo - PROB_MARGIN).max(0.0), (hi + PROB_MARGIN).min(1.0))
    }

    /// A point value of `Π(μ, Σ)`.
    pub fn value(self, mu: f64, var: f64) -> f64 {
        match self {
            BinaryLink::Probit => normal::cdf(mu / (1.0 + var.max(0.0)).sqrt()),
            BinaryLink::Logistic => logistic_normal(mu, var).value,
        }
    }

    /// A sound lower bound of `min Π` over the rectangle.
    pub fn min_over(self, mu: (f64, f64), var: (f64, f64)) -> f64 {
        let v = if mu.0 >= 0.0 { var.1 } else { var.0 };
        self.bracket(mu.0, v).0
    }

    /// A sound upper bound of `max Π` over the rectangle.
    pub fn max_over(self, mu: (f64, f64), var: (f64, f64)) -> f64 {
        let v = if mu.1 >= 0.0 { var.0 } else { var.1 };
        self.bracket(mu.1, v).1
    }
}
