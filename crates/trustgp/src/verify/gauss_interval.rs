//! The probability that a Gaussian falls in an interval, `P(μ, Σ) = ∫_a^b N(ξ | μ, Σ) dξ`, and
//! its sound minimum and maximum over a `(μ, Σ)` rectangle (spec §2.8, Lemma 12, with the
//! infinite endpoints of the \[choice\] there and the tail-stable differences of §6.8).
//!
//! For fixed `Σ`, `P` is symmetric and unimodal in `μ` about the centre `(a + b)/2`, so over
//! `[μ_L, μ_U]` it is largest at the centre clipped into the interval and smallest at the endpoint
//! farther from the centre, whatever `Σ` is. Then, in `Σ`: with `μ` inside `[a, b]`, `P`
//! decreases; outside, it rises to its maximum at `Σ_c(μ)` and falls, so its minimum over
//! `[Σ_L, Σ_U]` is at an end. One-sided intervals (`a = −∞` or `b = +∞`) are a `Φ` that is
//! monotone in `μ`, and in `Σ` with the sign of the distance to the finite end.

use crate::sequential::acquisition::normal;

/// Relative error allowed for each `Φ` value that enters a difference (`Φ` is accurate to a few
/// ulps; the rounding of `(b − μ)/√Σ` moves `Φ` by at most `φ(z)|z|·3ε ≤ ε` relative to
/// its tail value for the `|z|` that do not underflow).
const REL: f64 = 1e-12;

/// Whether a bound is wanted from below (a minimum) or from above (a maximum).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// A lower bound of the minimum.
    Lower,
    /// An upper bound of the maximum.
    Upper,
}

/// `P(μ, Σ)` for `Σ > 0` or `Σ = 0`, with an absolute error bound: `(value, error)`.
///
/// `Σ = 0` is the limit (1 inside, 0 outside); on an endpoint the limit is ½, and the error
/// ½ covers both one-sided limits.
pub fn probability(a: f64, b: f64, mu: f64, var: f64) -> (f64, f64) {
    if a >= b {
        return (0.0, 0.0);
    }
    if var <= 0.0 {
        return if a < mu && mu < b {
            (1.0, 0.0)
        } else if mu == a || mu == b {
            (0.5, 0.5)
        } else {
            (0.0, 0.0)
        };
    }
    let s = var.sqrt();
    let za = (a - mu) / s;
    let zb = (b - mu) / s;
    // Subtract lower tails when both are below the median, upper tails when both are above:
    // no cancellation of values near 1 (§6.8).
    let (p, q) = if zb <= 0.0 {
        (normal::cdf(zb), normal::cdf(za))
    } else if za >= 0.0 {
        (normal::cdf(-za), normal::cdf(-zb))
    } else {
        let (lo, hi) = (normal::cdf(za), normal::cdf(-zb));
        return ((1.0 - lo - hi).max(0.0), REL * (1.0 + lo + hi) + 1e-300);
    };
    ((p - q).max(0.0), REL * (p + q) + 1e-300)
}

/// `Σ_c(μ)`: the variance at which `P(μ, ·)` is largest, for `μ` outside `[a, b]` (finite),
/// as `(b − a)(d + d + (b − a)) / (2 log1p((b − a)/d))` with `d` the distance to the nearer
/// end (no overflow, no cancellation far away where it is about `d (d + b − a)`).
fn sigma_c(a: f64, b: f64, mu: f64) -> f64 {
    let w = b - a;
    let d = if mu > b { mu - b } else { a - mu };
    w * (2.0 * d + w) / (2.0 * (w / d).ln_1p())
}

/// A sound bound of the extremum of `P(μ, Σ)` over `μ ∈ [mu.0, mu.1]`, `Σ ∈ [var.0, var.1]`
/// (`var.0 ≥ 0` assumed; `a < b`, either may be infinite): a lower bound of the minimum for
/// [`Side::Lower`], an upper bound of the maximum for [`Side::Upper`], in `[0, 1]`.
pub fn extremum(a: f64, b: f64, mu: (f64, f64), var: (f64, f64), side: Side) -> f64 {
    let var = (var.0.max(0.0), var.1.max(var.0.max(0.0)));
    if a >= b {
        return 0.0;
    }
    if a == f64::NEG_INFINITY && b == f64::INFINITY {
        return 1.0;
    }
    let at = |m: f64, v: f64| {
        let (p, e) = probability(a, b, m, v);
        match side {
            Side::Lower => (p - e).max(0.0),
            Side::Upper => (p + e).min(1.0),
        }
    };
    if a == f64::NEG_INFINITY {
        // Φ((b − μ)/√Σ): decreasing in μ; in Σ decreasing while μ < b, increasing after.
        return match side {
            Side::Upper => {
                let m = mu.0;
                at(m, if m <= b { var.0 } else { var.1 })
            }
            Side::Lower => {
                let m = mu.1;
                at(m, if m <= b { var.1 } else { var.0 })
            }
        };
    }
    if b == f64::INFINITY {
        // Φ((μ − a)/√Σ): the mirror image.
        return match side {
            Side::Upper => {
                let m = mu.1;
                at(m, if m >= a { var.0 } else { var.1 })
            }
            Side::Lower => {
                let m = mu.0;
                at(m, if m >= a { var.1 } else { var.0 })
            }
        };
    }
    let centre = 0.5 * (a + b);
    match side {
        Side::Upper => {
            let m = centre.clamp(mu.0, mu.1);
            if (a..=b).contains(&m) {
                at(m, var.0)
            } else {
                let v = sigma_c(a, b, m).clamp(var.0, var.1);
                at(m, v)
            }
        }
        Side::Lower => {
            let m = if (mu.0 - centre).abs() >= (mu.1 - centre).abs() {
                mu.0
            } else {
                mu.1
            };
            at(m, var.0).min(at(m, var.1))
        }
    }
}
