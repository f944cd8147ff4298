//! Class probabilities `Π(μ, Σ) = ∫ σ(ξ) N(ξ | μ, Σ) dξ` of a binary classifier over a
//! `(mean, variance)` rectangle (spec §2.7, Propositions 8 and 9).
//!
//! `Π` increases in `μ`, and `sign ∂Π/∂Σ = −sign μ` for the probit and the logistic link, so
//! its minimum over `[μ_L, μ_U] × [Σ_L, Σ_U]` is at `(μ_L, Σ_U if μ_L ≥ 0 else Σ_L)` and its
//! maximum at `(μ_U, Σ_L if μ_U ≥ 0 else Σ_U)`. Probit is closed form
//! (`Φ(μ/√(1 + Σ))`, GPML's `likErf`); the logistic integral has none, so it is bracketed by a
//! piecewise-linear sandwich of `σ` on cells of latent space integrated exactly against the
//! normal (a refinement of spec §2.9's discretisation, used at a fixed `(μ, Σ)` as §6.9
//! allows), a bracket about `4·10⁻⁵` wide.

use crate::sequential::acquisition::normal;

/// Widest cell of the logistic bracket: the bracket is at most `max|σ''| h²/4 ≈ 4·10⁻⁵` wide.
pub const LOGISTIC_CELL: f64 = 0.04;
/// Most cells of the logistic bracket (reached only for latent standard deviations above 9).
const MAX_LOGISTIC_CELLS: usize = 4096;

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

/// `[lo, hi] ∋ ∫ σ(ξ) N(ξ | μ, s²) dξ`: on cells of width at most [`LOGISTIC_CELL`] over
/// `μ ± 9s`, split at the inflection point 0, `σ` lies between its chord and its midpoint
/// tangent (convex below 0, concave above), and a line integrates in closed form against the
/// normal: `∫_a^b (α + βξ) N = α P + β (μ P + s (φ(z_a) − φ(z_b)))`. The tails beyond `±9s`
/// carry mass below `Φ(−9)` each.
fn logistic_bracket(mu: f64, var: f64) -> (f64, f64) {
    let s = var.sqrt();
    if s == 0.0 || !s.is_finite() {
        let p = sigmoid(mu);
        return (p, p);
    }
    let (left, right) = (mu - TAIL_Z * s, mu + TAIL_Z * s);
    let cells = ((right - left) / LOGISTIC_CELL)
        .ceil()
        .clamp(16.0, MAX_LOGISTIC_CELLS as f64) as usize;
    let mut edges: Vec<f64> = (0..=cells)
        .map(|k| left + (right - left) * k as f64 / cells as f64)
        .collect();
    if left < 0.0 && right > 0.0 {
        let k = edges.partition_point(|e| *e < 0.0);
        edges.insert(k, 0.0);
    }
    let z: Vec<f64> = edges.iter().map(|e| (e - mu) / s).collect();
    let cdf: Vec<f64> = z.iter().map(|&z| normal::cdf(z)).collect();
    let pdf: Vec<f64> = z.iter().map(|&z| normal::pdf(z)).collect();
    let (mut lo, mut hi, mut scale) = (0.0, 0.0, 0.0);
    for k in 0..edges.len() - 1 {
        let (a, b) = (edges[k], edges[k + 1]);
        // The edges telescope, so the rounding of Φ does not accumulate.
        let p = cdf[k + 1] - cdf[k];
        let m1 = mu * p + s * (pdf[k] - pdf[k + 1]);
        let (sa, sb) = (sigmoid(a), sigmoid(b));
        let chord_b = (sb - sa) / (b - a);
        let chord = (sa - chord_b * a, chord_b);
        let c = 0.5 * (a + b);
        let sc = sigmoid(c);
        let tb = sc * (1.0 - sc);
        let tangent = (sc - tb * c, tb);
        // Convex on ξ ≤ 0 (tangent below, chord above); concave on ξ ≥ 0.
        let (below, above) = if b <= 0.0 {
            (tangent, chord)
        } else {
            (chord, tangent)
        };
        let l = below.0 * p + below.1 * m1;
        let h = above.0 * p + above.1 * m1;
        lo += l;
        hi += h;
        scale +=
            (below.0 * p).abs() + (below.1 * m1).abs() + (above.0 * p).abs() + (above.1 * m1).abs();
    }
    // Tails: σ ∈ [0, σ(left)] on the left, [σ(right), 1] on the right.
    hi += sigmoid(left) * TAIL_MASS + TAIL_MASS;
    let margin = 1e-12 * (1.0 + scale) + 1e-14;
    (lo - margin, hi + margin)
}
