//! Linear lower and upper bounding functions of a scalar `ψ` on an interval (spec §2.4,
//! Lemma 1) and their affine propagation (Lemma 15).
//!
//! Every `ψ` of the supported kernels (se, rq, Matérn ν ∈ {½, 3/2, 5/2} as functions of
//! `r²`, periodic as a function of `Σ sin²/ℓ²`) is convex and decreasing on `φ ≥ 0`, so the
//! lower bound is the tangent at the midpoint and the upper bound the chord (case 2); on a tiny
//! interval the bounds are the constants `ψ(φ_U) ≤ ψ ≤ ψ(φ_L)` (case 5), which also avoids the
//! tangent of Matérn-½ at `φ = 0`, where `ψ' = −∞`.

use super::rounding;
use crate::kernels::{Matern12, Matern32, Matern52, Radial, RationalQuadratic, SquaredExp};

/// Below this relative width an interval counts as degenerate (case 5).
const TINY_WIDTH: f64 = 1e-9;

/// A line `a + b φ`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Line {
    /// Intercept.
    pub a: f64,
    /// Slope.
    pub b: f64,
}

impl Line {
    /// The value at `phi`.
    pub fn at(&self, phi: f64) -> f64 {
        self.a + self.b * phi
    }
}

/// `lower(φ) ≤ ψ(φ) ≤ upper(φ)` on an interval, with the range `[min, max]` of `ψ` there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sandwich {
    /// Lower bounding line.
    pub lower: Line,
    /// Upper bounding line.
    pub upper: Line,
    /// A lower bound of `ψ` on the interval.
    pub min: f64,
    /// An upper bound of `ψ` on the interval.
    pub max: f64,
}

/// The unit-variance profile `ψ(φ)/σ²` of a supported base kernel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Profile {
    /// Squared exponential in `φ = r²`: `exp(−φ/2)`.
    Se,
    /// Matérn ½ in `φ = r²`: `exp(−√φ)`.
    Matern12,
    /// Matérn 3/2 in `φ = r²`.
    Matern32,
    /// Matérn 5/2 in `φ = r²`.
    Matern52,
    /// Rational quadratic with shape α in `φ = r²`: `(1 + φ/(2α))^(−α)`.
    Rq(f64),
    /// Periodic in `φ = Σ_d sin²(π Δ_d / p)/ℓ_d²`: `exp(−2φ)`.
    Periodic,
}

impl Profile {
    /// `(ψ(φ), ψ'(φ))` at unit variance, from the kernels' own profiles (`kernels::Radial`),
    /// so that the bounds and the kernel values come from the same formulas.
    pub fn eval(self, phi: f64) -> (f64, f64) {
        let phi = phi.max(0.0);
        let (f, h) = match self {
            Profile::Se => SquaredExp.eval(phi),
            Profile::Matern12 => Matern12.eval(phi),
            Profile::Matern32 => Matern32.eval(phi),
            Profile::Matern52 => Matern52.eval(phi),
            Profile::Rq(alpha) => RationalQuadratic { alpha }.eval(phi),
            Profile::Periodic => {
                let f = (-2.0 * phi).exp();
                return (f, -2.0 * f);
            }
        };
        // `Radial::eval` returns h = −2 f'(r²).
        (f, -0.5 * h)
    }

    /// The sandwich of `var·ψ` on `[lo, hi]` (`0 ≤ lo ≤ hi`), widened outward.
    pub fn sandwich(self, var: f64, lo: f64, hi: f64) -> Sandwich {
        let (f_lo, _) = self.eval(lo);
        let (f_hi, _) = self.eval(hi);
        let (max, min) = (var * f_lo, var * f_hi);
        let scale = var.abs();
        let min = rounding::down(min, scale);
        let max = rounding::up(max, scale);
        if hi - lo <= TINY_WIDTH * (1.0 + lo.abs()) {
            return Sandwich {
                lower: Line { a: min, b: 0.0 },
                upper: Line { a: max, b: 0.0 },
                min,
                max,
            };
        }
        // Convex: the tangent at the midpoint is below, the chord above.
        let c = 0.5 * (lo + hi);
        let (f_c, d_c) = self.eval(c);
        let b_l = var * d_c;
        let a_l = var * f_c - b_l * c;
        let b_u = var * (f_hi - f_lo) / (hi - lo);
        let a_u = var * f_lo - b_u * lo;
        let reach = lo.abs() + hi.abs();
        Sandwich {
            lower: Line {
                a: rounding::down(a_l, scale + b_l.abs() * reach),
                b: b_l,
            },
            upper: Line {
                a: rounding::up(a_u, scale + b_u.abs() * reach),
                b: b_u,
            },
            min,
            max,
        }
    }
}

/// Lemma 15: bounds of `α g` from bounds `lower ≤ g ≤ upper` — `(lower of αg, upper of αg)`.
pub fn scale_lines(alpha: f64, lower: Line, upper: Line) -> (Line, Line) {
    let mul = |l: Line| Line {
        a: alpha * l.a,
        b: alpha * l.b,
    };
    if alpha >= 0.0 {
        (mul(lower), mul(upper))
    } else {
        (mul(upper), mul(lower))
    }
}
