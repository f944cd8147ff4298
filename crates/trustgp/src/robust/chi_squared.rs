//! The χ² distribution: CDF and quantile function.
//!
//! MCD needs χ²_T quantiles at 0.5 (consistency correction) and 0.975 (reweighting cut-off)
//! for arbitrary T, so a table will not do. χ²_k is a Gamma(k/2, scale 2) distribution, so
//! everything reduces to the regularised lower incomplete gamma function P(a, x), which is
//! evaluated by its power series where that converges fast (x < a + 1) and otherwise through
//! the upper function Q = 1 − P by Lentz's continued fraction (the series would need O(x)
//! terms and lose digits there). The quantile inverts P by Newton steps kept inside a
//! bracket, so a bad step can never escape and bisection guarantees progress.

/// Relative accuracy targeted by the series, the continued fraction and the inversion.
const EPS: f64 = 1e-16;
/// Iteration cap for the series and the continued fraction; both need O(√a) terms, so this
/// covers any degrees of freedom that fit in memory-sized problems by a wide margin.
const MAX_TERMS: usize = 100_000;
/// Floor for Lentz's algorithm, which must never divide by an exact zero.
const TINY: f64 = 1e-300;

/// Lanczos coefficients for g = 7, n = 9 (relative error of Γ about 1e-15 for x > 0).
const LANCZOS_G: f64 = 7.0;
const LANCZOS: [f64; 9] = [
    0.999_999_999_999_809_9,
    676.520_368_121_885_1,
    -1_259.139_216_722_402_8,
    771.323_428_777_653_1,
    -176.615_029_162_140_6,
    12.507_343_278_686_905,
    -0.138_571_095_265_720_12,
    9.984_369_578_019_572e-6,
    1.505_632_735_149_311_6e-7,
];

/// ln Γ(x) for x > 0 (Lanczos approximation; reflection below 0.5 where it loses accuracy).
pub(crate) fn ln_gamma(x: f64) -> f64 {
    if x < 0.5 {
        // Γ(x) Γ(1 − x) = π / sin(πx); for 0 < x < 0.5 the sine is positive.
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = LANCZOS[0];
    for (i, c) in LANCZOS.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + LANCZOS_G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// `ln(x^a e^{-x} / Γ(a))`, the common prefactor of the series and the continued fraction.
fn log_prefactor(a: f64, x: f64) -> f64 {
    a * x.ln() - x - ln_gamma(a)
}

/// Regularised lower incomplete gamma P(a, x) = γ(a, x)/Γ(a) for a > 0, x ≥ 0.
pub(crate) fn gamma_p(a: f64, x: f64) -> f64 {
    if x.is_nan() || a.is_nan() {
        return f64::NAN;
    }
    if x <= 0.0 {
        return 0.0;
    }
    if x == f64::INFINITY {
        return 1.0;
    }
    if x < a + 1.0 {
        series_p(a, x)
    } else {
        1.0 - continued_fraction_q(a, x)
    }
}

/// P(a, x) = x^a e^{-x}/Γ(a) · Σ_n x^n / (a (a+1) ⋯ (a+n)); all terms are positive, so the
/// sum has no cancellation and converges geometrically once a + n > x.
fn series_p(a: f64, x: f64) -> f64 {
    let mut ap = a;
    let mut term = 1.0 / a;
    let mut sum = term;
    for _ in 0..MAX_TERMS {
        ap += 1.0;
        term *= x / ap;
        sum += term;
        if term.abs() < sum.abs() * EPS {
            break;
        }
    }
    (sum.ln() + log_prefactor(a, x)).exp().min(1.0)
}

/// Q(a, x) = 1 − P(a, x) by the continued fraction
/// Q = x^a e^{-x}/Γ(a) · 1/(x+1−a− 1·(1−a)/(x+3−a− 2·(2−a)/(x+5−a− ⋯))),
/// evaluated with the modified Lentz algorithm (forward evaluation without rescaling).
fn continued_fraction_q(a: f64, x: f64) -> f64 {
    let mut b = x + 1.0 - a;
    let mut c = 1.0 / TINY;
    let mut d = 1.0 / b;
    let mut h = d;
    for i in 1..=MAX_TERMS {
        let an = -(i as f64) * (i as f64 - a);
        b += 2.0;
        d = an * d + b;
        if d.abs() < TINY {
            d = TINY;
        }
        c = b + an / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < EPS {
            break;
        }
    }
    (h.ln() + log_prefactor(a, x)).exp().clamp(0.0, 1.0)
}

/// CDF of the χ² distribution with `df` degrees of freedom at `x`: P(df/2, x/2).
///
/// Returns 0 for `x ≤ 0`, 1 for `x = +∞`, and NaN for a NaN `x` or `df = 0` (no such
/// distribution; NaN rather than a panic so that bad input propagates visibly).
pub fn chi_squared_cdf(df: usize, x: f64) -> f64 {
    if df == 0 {
        return f64::NAN;
    }
    gamma_p(df as f64 / 2.0, x / 2.0)
}

/// Quantile (inverse CDF) of the χ² distribution with `df` degrees of freedom: the `x` with
/// `chi_squared_cdf(df, x) = p`, accurate to about 1e-14 relative.
///
/// Returns 0 for `p ≤ 0`, +∞ for `p ≥ 1`, and NaN for a NaN `p` or `df = 0`.
pub fn chi_squared_quantile(df: usize, p: f64) -> f64 {
    if df == 0 || p.is_nan() {
        return f64::NAN;
    }
    if p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    2.0 * gamma_p_inverse(df as f64 / 2.0, p)
}

/// Standard normal quantile to about 4.5e-4 (Abramowitz & Stegun 26.2.23): only a starting
/// point for the Newton iteration, which supplies the accuracy.
fn normal_quantile_rough(p: f64) -> f64 {
    let q = if p < 0.5 { p } else { 1.0 - p };
    let t = (-2.0 * q.ln()).sqrt();
    let z = t
        - (2.515_517 + 0.802_853 * t + 0.010_328 * t * t)
            / (1.0 + 1.432_788 * t + 0.189_269 * t * t + 0.001_308 * t * t * t);
    if p < 0.5 {
        -z
    } else {
        z
    }
}

/// Starting point for inverting P(a, ·) at p: Wilson–Hilferty (χ²_k)^{1/3} ≈ normal, which is
/// good except in the far lower tail of small a, where P(a, x) ≈ x^a/Γ(a + 1) is used.
fn initial_guess(a: f64, p: f64) -> f64 {
    let k = 2.0 * a;
    let s = 2.0 / (9.0 * k);
    let wh = 1.0 - s + normal_quantile_rough(p) * s.sqrt();
    let from_wh = 0.5 * k * wh * wh * wh;
    let from_tail = ((p.ln() + ln_gamma(a + 1.0)) / a).exp();
    if wh > 0.0 && from_wh.is_finite() && from_wh > from_tail {
        from_wh
    } else {
        from_tail
    }
}

/// The x ≥ 0 with P(a, x) = p for 0 < p < 1: Newton's method on P(a, x) − p, whose
/// derivative is the Gamma density, inside a bracket [lo, hi] that always contains the root.
/// A step leaving the bracket is replaced by bisection, so the iteration cannot diverge.
fn gamma_p_inverse(a: f64, p: f64) -> f64 {
    let mut x = initial_guess(a, p).max(f64::MIN_POSITIVE);
    // Bracket: P(a, 0) = 0 < p, so lo = 0 works; grow hi until P(a, hi) ≥ p.
    let mut lo = 0.0;
    let mut hi = x.max(1.0);
    for _ in 0..2000 {
        if gamma_p(a, hi) >= p {
            break;
        }
        lo = hi;
        hi *= 2.0;
    }
    if !(lo..=hi).contains(&x) {
        x = 0.5 * (lo + hi);
    }
    for _ in 0..500 {
        let f = gamma_p(a, x) - p;
        if f == 0.0 {
            return x;
        }
        if f < 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let density = (log_prefactor(a, x) - x.ln()).exp();
        let newton = x - f / density;
        let next = if density > 0.0 && newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        let converged = (next - x).abs() <= 4.0 * f64::EPSILON * next.abs()
            || hi - lo <= 4.0 * f64::EPSILON * hi;
        x = next;
        if converged {
            break;
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_rel(got: f64, want: f64, tol: f64) {
        let rel = (got - want).abs() / want.abs();
        assert!(
            rel <= tol,
            "got {got:.17e}, want {want:.17e}, rel {rel:.3e}"
        );
    }

    #[test]
    fn ln_gamma_matches_exact_values() {
        // Γ(n) = (n − 1)!, Γ(1/2) = √π, Γ(n + 1/2) = (2n)! √π / (4ⁿ n!).
        assert!(ln_gamma(1.0).abs() < 1e-14);
        assert!(ln_gamma(2.0).abs() < 1e-14);
        assert_rel(ln_gamma(10.0), 362_880f64.ln(), 1e-14);
        assert_rel(ln_gamma(0.5), 0.5 * std::f64::consts::PI.ln(), 1e-14);
        assert_rel(
            ln_gamma(3.5),
            (15.0 / 8.0 * std::f64::consts::PI.sqrt()).ln(),
            1e-14,
        );
        // Stirling with four correction terms is exact to ~1e-17 relative at x = 100.
        let x: f64 = 100.0;
        let stirling =
            (x - 0.5) * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI).ln() + 1.0 / (12.0 * x)
                - 1.0 / (360.0 * x.powi(3))
                + 1.0 / (1260.0 * x.powi(5));
        assert_rel(ln_gamma(x), stirling, 1e-14);
        // The reflection branch: Γ(0.25) = 3.625609908221908…
        assert_rel(ln_gamma(0.25), 3.625_609_908_221_908_f64.ln(), 1e-14);
    }

    #[test]
    fn cdf_with_two_degrees_of_freedom_is_exponential() {
        // χ²₂ is Exp(1/2): F(x) = 1 − e^{−x/2}; both branches of P are exercised.
        for &x in &[1e-6, 0.1, 1.0, 1.9, 2.1, 5.0, 20.0, 60.0] {
            let want = -(-x / 2.0f64).exp_m1();
            assert_rel(chi_squared_cdf(2, x), want, 1e-13);
        }
    }

    #[test]
    fn quantile_with_two_degrees_of_freedom_is_closed_form() {
        assert_rel(chi_squared_quantile(2, 0.5), 2.0 * 2f64.ln(), 1e-12);
        for p in [1e-10f64, 1e-3, 0.025, 0.3, 0.5, 0.9, 0.975, 0.999_999] {
            let want = -2.0 * (-p).ln_1p();
            assert_rel(chi_squared_quantile(2, p), want, 1e-12);
        }
    }

    #[test]
    fn quantiles_match_scipy() {
        assert_rel(chi_squared_quantile(1, 0.975), 5.023_886_187_314_888, 1e-12);
        assert_rel(chi_squared_quantile(1, 0.5), 0.454_936_423_119_572, 1e-12);
        assert_rel(chi_squared_quantile(3, 0.975), 9.348_403_604_496_145, 1e-12);
        assert_rel(chi_squared_quantile(3, 0.5), 2.365_973_884_375_338, 1e-12);
        assert_rel(
            chi_squared_quantile(10, 0.975),
            20.483_177_350_807_39,
            1e-12,
        );
    }

    #[test]
    fn one_degree_of_freedom_is_a_squared_normal() {
        // χ²₁ quantile p = (Φ⁻¹((1+p)/2))²; Φ⁻¹(0.975) = 1.959963984540054 and
        // Φ⁻¹(0.75) = 0.6744897501960817 to full double precision.
        assert_rel(
            chi_squared_quantile(1, 0.95),
            1.959_963_984_540_054f64.powi(2),
            1e-12,
        );
        assert_rel(
            chi_squared_quantile(1, 0.5),
            0.674_489_750_196_081_7f64.powi(2),
            1e-12,
        );
    }

    #[test]
    fn cdf_of_quantile_round_trips() {
        for &df in &[1usize, 2, 3, 5, 10, 30, 100, 1000] {
            for &p in &[1e-12, 1e-6, 0.01, 0.1, 0.5, 0.9, 0.975, 0.999, 1.0 - 1e-9] {
                let x = chi_squared_quantile(df, p);
                let back = chi_squared_cdf(df, x);
                // In the upper tail P is 1 − Q, so compare the small complement instead.
                let (got, want) = if p > 0.5 {
                    (1.0 - back, 1.0 - p)
                } else {
                    (back, p)
                };
                assert_rel(got, want, 1e-10);
            }
        }
    }

    #[test]
    fn edge_cases_do_not_panic() {
        assert_eq!(chi_squared_quantile(3, 0.0), 0.0);
        assert_eq!(chi_squared_quantile(3, 1.0), f64::INFINITY);
        assert!(chi_squared_quantile(3, f64::NAN).is_nan());
        assert!(chi_squared_quantile(0, 0.5).is_nan());
        assert_eq!(chi_squared_cdf(3, -1.0), 0.0);
        assert_eq!(chi_squared_cdf(3, f64::INFINITY), 1.0);
        assert!(chi_squared_cdf(0, 1.0).is_nan());
        assert!(chi_squared_cdf(3, f64::NAN).is_nan());
    }
}
