//! The standard normal distribution: density, distribution function Φ and log Φ, accurate to a
//! few units in the last place for every `z` (log Φ stays finite far below where Φ underflows),
//! and the scaled complementary error function `erfcx(x) = exp(x²) erfc(x)` behind them; the
//! quantile function `Φ⁻¹` ([`quantile`]) that maps quasi-random uniforms to normals.
//!
//! Φ in the lower tail is `½ erfcx(−z/√2) exp(−z²/2)`: `erfcx` varies slowly, so rounding `z/√2`
//! costs nothing, and `exp(−z²/2)` is formed from `z` split into a short head and a tail, so the
//! rounding of `z²` (which `exp` would magnify by `z²/2`) does not enter either.

use std::f64::consts::{FRAC_2_SQRT_PI, PI, SQRT_2};

/// `ln √(2π)`.
const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;
/// `1/√(2π)`.
const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;
/// Below this `x` the series of `erf` gives `erfcx` (its cancellation costs at most a factor 30
/// there); from it on the continued fraction, which needs fewer than 100 terms.
const SERIES_LIMIT: f64 = 1.5;
/// Cap on continued-fraction terms (about 90 are needed at `x = 1.5`, 6 at `x = 28`).
const MAX_TERMS: usize = 500;

/// The standard normal density `φ(z)`.
pub fn pdf(z: f64) -> f64 {
    FRAC_1_SQRT_2PI * exp_neg_half_square(z)
}

/// `ln φ(z)`.
pub fn log_pdf(z: f64) -> f64 {
    -0.5 * z * z - LN_SQRT_2PI
}

/// The standard normal distribution function `Φ(z)`.
pub fn cdf(z: f64) -> f64 {
    if z <= 0.0 {
        lower_tail(z)
    } else {
        1.0 - lower_tail(-z)
    }
}

/// `ln Φ(z)`, finite for every finite `z` (about `−z²/2 − ln(−z√(2π))` far below zero).
pub fn log_cdf(z: f64) -> f64 {
    if z <= 0.0 {
        (0.5 * erfcx(-z / SQRT_2)).ln() - 0.5 * z * z
    } else {
        (-lower_tail(-z)).ln_1p()
    }
}

/// The scaled complementary error function `erfcx(x) = exp(x²) erfc(x)`; about `1/(x√π)` for
/// large `x`, and `+∞` where `2 exp(x²)` overflows (`x < −26.6`).
pub fn erfcx(x: f64) -> f64 {
    if x.is_nan() {
        x
    } else if x == f64::INFINITY {
        0.0
    } else if x < 0.0 {
        2.0 * (x * x).exp() - erfcx(-x)
    } else if x < SERIES_LIMIT {
        // exp(x²) erfc(x) = exp(x²) − exp(x²) erf(x), and exp(x²) erf(x) is a series of
        // positive terms: (2x/√π) Σ (2x²)ⁿ / (1·3·…·(2n+1)).
        let two_x2 = 2.0 * x * x;
        let (mut term, mut sum, mut n) = (1.0f64, 1.0f64, 0.0f64);
        while term > f64::EPSILON * sum {
            n += 1.0;
            term *= two_x2 / (2.0 * n + 1.0);
            sum += term;
        }
        (x * x).exp() - FRAC_2_SQRT_PI * x * sum
    } else {
        erfcx_continued_fraction(x)
    }
}

/// `erfcx(x) = (1/√π) / (x + ½/(x + 1/(x + (3/2)/(x + …))))` for `x ≥ 1.5`, evaluated forward
/// by the modified Lentz method (all partial denominators are positive, so none vanishes).
fn erfcx_continued_fraction(x: f64) -> f64 {
    let (mut f, mut c, mut d) = (x, x, 0.0f64);
    for n in 1..=MAX_TERMS {
        let a = 0.5 * n as f64;
        d = 1.0 / (x + a * d);
        c = x + a / c;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() <= f64::EPSILON {
            break;
        }
    }
    1.0 / (f * PI.sqrt())
}

/// `Φ(z)` for `z ≤ 0`.
fn lower_tail(z: f64) -> f64 {
    let gaussian = exp_neg_half_square(z);
    if gaussian == 0.0 {
        // Also keeps z = −∞ from forming 0·∞.
        return 0.0;
    }
    0.5 * erfcx(-z / SQRT_2) * gaussian
}

/// `exp(−z²/2)` without the rounding error of `z²`: with `z = h + t`, `h` keeping 4 fractional
/// bits (so `h²` is exact for `|z| < 2²⁴`) and `t` exact, `z² = h² + t(z + h)`.
fn exp_neg_half_square(z: f64) -> f64 {
    if z.abs() > 40.0 {
        // exp(−800) is already below the smallest subnormal.
        return 0.0;
    }
    let h = (z * 16.0).trunc() / 16.0;
    let t = z - h;
    (-0.5 * h * h).exp() * (-0.5 * t * (z + h)).exp()
}

/// Coefficients of Acklam's rational approximation of `Φ⁻¹` (relative error below 1.2e-9).
const ACKLAM_A: [f64; 6] = [
    -3.969_683_028_665_376e1,
    2.209_460_984_245_205e2,
    -2.759_285_104_469_687e2,
    1.383_577_518_672_69e2,
    -3.066_479_806_614_716e1,
    2.506_628_277_459_239,
];
const ACKLAM_B: [f64; 5] = [
    -5.447_609_879_822_406e1,
    1.615_858_368_580_409e2,
    -1.556_989_798_598_866e2,
    6.680_131_188_771_972e1,
    -1.328_068_155_288_572e1,
];
const ACKLAM_C: [f64; 6] = [
    -7.784_894_002_430_293e-3,
    -3.223_964_580_411_365e-1,
    -2.400_758_277_161_838,
    -2.549_732_539_343_734,
    4.374_664_141_464_968,
    2.938_163_982_698_783,
];
const ACKLAM_D: [f64; 4] = [
    7.784_695_709_041_462e-3,
    3.224_671_290_700_398e-1,
    2.445_134_137_142_996,
    3.754_408_661_907_416,
];
/// Below this probability Acklam's tail form applies.
const ACKLAM_TAIL: f64 = 0.024_25;

/// The standard normal quantile `Φ⁻¹(p)` for `0 < p < 1` (`∓∞` at 0 and 1, NaN outside):
/// Acklam's rational approximation refined by one Halley step on `Φ(x) − p`, which takes its
/// relative error of about 1e-9 to rounding level. The lower half is computed directly and the
/// upper half by symmetry, `Φ⁻¹(p) = −Φ⁻¹(1 − p)`, where `1 − p` is exact.
pub fn quantile(p: f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p > 0.5 {
        return -quantile(1.0 - p);
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    let x = if p < ACKLAM_TAIL {
        let q = (-2.0 * p.ln()).sqrt();
        let [c0, c1, c2, c3, c4, c5] = ACKLAM_C;
        let [d0, d1, d2, d3] = ACKLAM_D;
        (((((c0 * q + c1) * q + c2) * q + c3) * q + c4) * q + c5)
            / ((((d0 * q + d1) * q + d2) * q + d3) * q + 1.0)
    } else {
        let q = p - 0.5;
        let r = q * q;
        let [a0, a1, a2, a3, a4, a5] = ACKLAM_A;
        let [b0, b1, b2, b3, b4] = ACKLAM_B;
        (((((a0 * r + a1) * r + a2) * r + a3) * r + a4) * r + a5) * q
            / (((((b0 * r + b1) * r + b2) * r + b3) * r + b4) * r + 1.0)
    };
    // Halley: with u = (Φ(x) − p)/φ(x), x ← x − u/(1 + x u/2). For x ≤ 0, Φ(x) is accurate
    // relative to itself, so the step is accurate deep into the tail.
    let u = (cdf(x) - p) / pdf(x);
    x - u / (1.0 + 0.5 * x * u)
}
