//! Class probabilities `Π(μ, Σ) = ∫ σ(ξ) N(ξ | μ, Σ) dξ` of a binary classifier over a
//! `(mean, variance)` rectangle (spec §2.7, Propositions 8 and 9).
//!
//! `Π` increases in `μ`, and `sign ∂Π/∂Σ = −sign μ` for the probit and the logistic link, so
//! its minimum over `[μ_L, μ_U] × [Σ_L, Σ_U]` is at `(μ_L, Σ_U if μ_L ≥ 0 else Σ_L)` and its
//! maximum at `(μ_U, Σ_L if μ_U ≥ 0 else Σ_U)`. Probit is closed form
//! (`Φ(μ/√(1 + Σ))`, GPML's `likErf`); the logistic integral has none, so it is bracketed by a
//! discretisation of latent space into cells of equal link mass (spec §2.9, used at a fixed
//! `(μ, Σ)` as §6.9 allows): `Σ_l σ(a_l) P_l ≤ Π ≤ Σ_l σ(b_l) P_l`, a bracket of width `1/M`.

use crate::sequential::acquisition::normal;

/// Cells of the logistic bracket: its width is `1/LOGISTIC_CELLS`.
pub const LOGISTIC_CELLS: usize = 16384;

/// Beyond this many standard deviations a cell's normal mass is below `Φ(−9) < 1.2·10⁻¹⁹` and
/// is bounded instead of computed.
const TAIL_Z: f64 = 9.0;
/// `Φ(−9)`, rounded up.
const TAIL_MASS: f64 = 1.2e-19;
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
            BinaryLink::Logistic => logistic_bracket(mu, var),
        };
        ((lo - PROB_MARGIN).max(0.0), (hi + PROB_MARGIN).min(1.0))
    }

    /// A point value of `Π(μ, Σ)` (the bracket's midpoint for the logistic link).
    pub fn value(self, mu: f64, var: f64) -> f64 {
        match self {
            BinaryLink::Probit => normal::cdf(mu / (1.0 + var.max(0.0)).sqrt()),
            BinaryLink::Logistic => {
                let (lo, hi) = logistic_bracket(mu, var.max(0.0));
                0.5 * (lo + hi)
            }
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

fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// `[Σ_l (l/M) P_l, Σ_l ((l+1)/M) P_l]` over the cells `[logit(l/M), logit((l+1)/M)]`.
fn logistic_bracket(mu: f64, var: f64) -> (f64, f64) {
    let m = LOGISTIC_CELLS;
    let mf = m as f64;
    let s = var.sqrt();
    if s == 0.0 || !s.is_finite() {
        let p = sigmoid(mu);
        return (p, p);
    }
    // Only cells within ±TAIL_Z standard deviations carry mass worth computing.
    let first = ((mf * sigmoid(mu - TAIL_Z * s)).floor() as usize).min(m - 1);
    let last = ((mf * sigmoid(mu + TAIL_Z * s)).floor() as usize).min(m - 1);
    let edge = |l: usize| -> f64 {
        // Φ((logit(l/M) − μ)/s), with logit(0) = −∞ and logit(1) = +∞.
        if l == 0 {
            0.0
        } else if l >= m {
            1.0
        } else {
            let p = l as f64 / mf;
            normal::cdf(((p / (1.0 - p)).ln() - mu) / s)
        }
    };
    let (mut lo, mut hi) = (0.0, 0.0);
    let mut below = edge(first);
    for l in first..=last {
        let above = edge(l + 1);
        // No clamping: the edges telescope, so their rounding errors do not accumulate.
        let p = above - below;
        lo += l as f64 / mf * p;
        hi += (l + 1) as f64 / mf * p;
        below = above;
    }
    // The skipped cells: at most TAIL_MASS on each side, at most weight 1.
    hi += 2.0 * TAIL_MASS;
    // Summation of up to M terms of total weight ≤ 1: error ≤ M ε_mach < 4·10⁻¹².
    (lo - 1e-11, hi + 1e-11)
}
