//! Fisher's g-test for a periodogram peak (Fisher 1929), applied sequentially to the 2nd,
//! 3rd, … largest ordinates on the remaining ones (Whittle 1952): the significance test of
//! the data-driven PER periods (`periods`, docs/decisions.md).
//!
//! Under Gaussian white noise the periodogram ordinates `I_1, …, I_m` at the Fourier
//! frequencies `j/N`, `0 < j < N/2`, are independent and exponential with one mean, so
//! `g = max_j I_j / Σ_j I_j` has the distribution of the largest of `m` uniform spacings:
//!
//! `P(g > x) = Σ_{k=1}^{⌊1/x⌋} (−1)^{k−1} C(m,k) (1 − kx)^{m−1}`.
//!
//! Whittle's extension tests the `r`-th largest ordinate by the same law with `m − r + 1`
//! ordinates, `g_r = I_(r) / Σ_{s≥r} I_(s)`, and stops at the first that is not significant,
//! so the `r`-th ordinate's p-value is the largest of the first `r` (step-down adjusted).

/// Where the alternating sum's first term `t₁ = m(1 − x)^{m−1}` exceeds this, the sum is
/// replaced by its Poisson limit (see [`fisher_p_value`]).
const MAX_FIRST_TERM: f64 = 20.0;

/// Terms of the alternating sum below this share of the partial sum end it.
const NEGLIGIBLE: f64 = 1e-18;

/// `P(g > x)` for Fisher's statistic `g` of `m` periodogram ordinates under white noise.
///
/// Evaluated in log space, term by term (`ln C(m,k)` built up by ratios, `(1 − kx)^{m−1}` as
/// `exp((m−1)·ln_1p(−kx))`). The terms are bounded by `t₁^k / k!` with `t₁ = m(1 − x)^{m−1}`
/// (as `1 − kx ≤ (1 − x)^k`), so they decay factorially once `k > t₁` and the sum stops when
/// they are negligible. Each term carries a relative error of about `10⁻¹⁴` (the exponent is
/// up to a few hundred), so the absolute error is about `10⁻¹⁴·max_k t₁^k/k!`: below `10⁻¹²`
/// where `t₁ ≤ 5` (all `p < 0.994`, the whole range that matters for a test), growing to
/// `10⁻⁶` at `t₁ = 20` where `p > 1 − 10⁻⁸`. Beyond `t₁ > 20` (a small `g`, deep in the bulk
/// of the null distribution) the cancellation would eat every digit, and the Poisson limit
/// `1 − e^{−t₁}` (the expected number of ordinates above `x·Σ I` is about `t₁`) is returned.
///
/// `m ≤ 1` or `x ≤ 1/m` (the largest of `m` shares is at least their mean) give 1, `x ≥ 1`
/// gives 0, and a non-finite `x` gives NaN.
pub fn fisher_p_value(x: f64, m: usize) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if m <= 1 || x * m as f64 <= 1.0 {
        return 1.0;
    }
    if x >= 1.0 {
        return 0.0;
    }
    let mf = m as f64;
    let log_term = |log_binom: f64, k: usize| log_binom + (mf - 1.0) * (-(k as f64) * x).ln_1p();
    let t1 = log_term(mf.ln(), 1).exp();
    if t1 > MAX_FIRST_TERM {
        return -(-t1).exp_m1();
    }
    let mut sum = 0.0;
    let mut log_binom = 0.0;
    for k in 1..=m {
        if k as f64 * x >= 1.0 {
            break;
        }
        log_binom += ((m - k + 1) as f64 / k as f64).ln();
        let t = log_term(log_binom, k).exp();
        sum += if k % 2 == 1 { t } else { -t };
        if k as f64 > t1 && t <= NEGLIGIBLE * sum.abs() {
            break;
        }
    }
    sum.clamp(0.0, 1.0)
}

/// Whittle's sequential test of periodogram ordinates: each ordinate's step-down p-value, in
/// the order of `ordinates`. The `r`-th largest ordinate gets `max_{s ≤ r} P(g_s)` with
/// `g_s = I_(s) / Σ_{t ≥ s} I_(t)` and `m − s + 1` ordinates: it is significant at level `α`
/// exactly when the sequential test, stopping at the first non-significant ordinate, reaches
/// and rejects it. Ties are ranked by index; an all-zero (or empty) periodogram gives 1s.
pub fn whittle_p_values(ordinates: &[f64]) -> Vec<f64> {
    let m = ordinates.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| ordinates[b].total_cmp(&ordinates[a]).then(a.cmp(&b)));
    // Σ_{t ≥ s} I_(t) summed from the smallest up, so each tail is accurate to rounding.
    let mut tails = vec![0.0; m + 1];
    for s in (0..m).rev() {
        tails[s] = tails[s + 1] + ordinates[order[s]];
    }
    let mut p = vec![1.0; m];
    let mut worst: f64 = 0.0;
    for (s, &i) in order.iter().enumerate() {
        let step = if tails[s] > 0.0 {
            fisher_p_value(ordinates[i] / tails[s], m - s)
        } else {
            1.0
        };
        worst = worst.max(step);
        p[i] = worst;
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;
    use rand_distr::{Distribution, StandardNormal};
    use std::f64::consts::PI;

    /// The formula as written, in plain arithmetic (exact binomials, `powi`): fine for small m.
    fn direct(x: f64, m: usize) -> f64 {
        let mut binom = 1.0;
        let mut sum = 0.0;
        for k in 1..=m {
            binom *= (m - k + 1) as f64 / k as f64;
            let base = 1.0 - k as f64 * x;
            if base <= 0.0 {
                break;
            }
            let sign = if k % 2 == 1 { 1.0 } else { -1.0 };
            sum += sign * binom * base.powi(m as i32 - 1);
        }
        sum
    }

    #[test]
    fn the_stable_sum_equals_the_direct_formula_for_small_m() {
        for m in [2usize, 3, 5, 8, 12, 20] {
            for i in 1..200 {
                let x = i as f64 / 200.0;
                let (a, b) = (fisher_p_value(x, m), direct(x, m));
                let b = if x * m as f64 <= 1.0 { 1.0 } else { b };
                assert!((a - b).abs() < 1e-12, "m {m} x {x}: {a} vs {b}");
            }
        }
        // m = 2: g = max(U, 1 − U) for a uniform U, so P(g > x) = 2(1 − x) on [½, 1].
        for x in [0.5, 0.6, 0.93] {
            assert!((fisher_p_value(x, 2) - 2.0 * (1.0 - x)).abs() < 1e-15);
        }
    }

    #[test]
    fn m_three_matches_the_area_of_the_simplex() {
        // Three ordinates' shares are uniform on the triangle u, v ≥ 0, u + v ≤ 1: P(g ≤ x)
        // is the share of its area where all three are ≤ x (midpoint rule, 2000² cells).
        let cells = 2000;
        let h = 1.0 / cells as f64;
        for x in [0.4, 0.5, 0.7] {
            let (mut inside, mut total) = (0usize, 0usize);
            for a in 0..cells {
                for b in 0..cells {
                    let (u, v) = ((a as f64 + 0.5) * h, (b as f64 + 0.5) * h);
                    if u + v < 1.0 {
                        total += 1;
                        if u <= x && v <= x && 1.0 - u - v <= x {
                            inside += 1;
                        }
                    }
                }
            }
            let area = 1.0 - inside as f64 / total as f64;
            assert!((fisher_p_value(x, 3) - area).abs() < 2e-3, "x {x}: {area}");
        }
    }

    #[test]
    fn p_value_matches_monte_carlo_white_noise_periodograms() {
        // N = 2m + 1 white Gaussian values: the ordinates at j = 1..m are i.i.d. exponential,
        // the null of the test. The periodogram is the DFT's definition (independent code).
        let m = 5;
        let n = 2 * m + 1;
        let reps = 100_000;
        let xs = [0.3, 0.4, 0.5, 0.65];
        let mut exceed = [0usize; 4];
        let mut rng = StdRng::seed_from_u64(11);
        let mut v = vec![0.0; n];
        for _ in 0..reps {
            for e in v.iter_mut() {
                *e = StandardNormal.sample(&mut rng);
            }
            let ord: Vec<f64> = (1..=m)
                .map(|j| {
                    let (mut re, mut im) = (0.0, 0.0);
                    for (t, e) in v.iter().enumerate() {
                        let a = 2.0 * PI * (j * t) as f64 / n as f64;
                        re += e * a.cos();
                        im -= e * a.sin();
                    }
                    re * re + im * im
                })
                .collect();
            let g = ord.iter().cloned().fold(0.0, f64::max) / ord.iter().sum::<f64>();
            for (c, &x) in exceed.iter_mut().zip(&xs) {
                *c += usize::from(g > x);
            }
        }
        for (&c, &x) in exceed.iter().zip(&xs) {
            let p = fisher_p_value(x, m);
            let freq = c as f64 / reps as f64;
            // Four Monte Carlo standard errors.
            let tol = 4.0 * (p * (1.0 - p) / reps as f64).sqrt();
            assert!((freq - p).abs() < tol, "x {x}: {freq} vs {p} ± {tol}");
        }
    }

    #[test]
    fn large_m_is_stable_and_meets_the_poisson_limit() {
        for m in [60usize, 100, 1000, 32_767] {
            let mf = m as f64;
            // At the switch (t₁ = 20) the sum and the Poisson limit agree, both about 1.
            let at = |t1: f64| 1.0 - ((t1 / mf).ln() / (mf - 1.0)).exp();
            let (inside, outside) = (fisher_p_value(at(19.999), m), fisher_p_value(at(20.001), m));
            assert!((inside - 1.0).abs() < 1e-6, "m {m}: {inside}");
            assert!((outside - 1.0).abs() < 1e-8, "m {m}: {outside}");
            // The tail: with g = (ln m + 10)/m the classical asymptotic 1 − (1 − e^{−mg})^m
            // ≈ e^{−10} holds up to its leading correction, (1 − g)^{m−1} ≈ e^{−mg − mg²/2}
            // against e^{−mg}: a relative error of about (ln m + 10)²/(2m).
            let g = (mf.ln() + 10.0) / mf;
            let asym = 1.0 - (1.0 - (-mf * g).exp()).powf(mf);
            let p = fisher_p_value(g, m);
            assert!(p > 0.0 && p.is_finite());
            if m >= 1000 {
                let tol = (mf.ln() + 10.0).powi(2) / mf;
                assert!((p / asym - 1.0).abs() < tol, "m {m}: {p} vs {asym}");
            }
            // Monotone in x and within [0, 1], up to the documented error: 1e-6 where p is
            // within 1e-2 of 1 (t₁ up to 20), rounding level below.
            let mut last = 1.0;
            for i in 1..400 {
                let x = i as f64 / 400.0 * 30.0 / mf;
                let p = fisher_p_value(x, m);
                let tol = if last > 0.99 { 1e-6 } else { 1e-12 };
                assert!((0.0..=1.0).contains(&p) && p <= last + tol, "m {m} x {x}");
                last = p;
            }
        }
        assert_eq!(fisher_p_value(1.0, 10), 0.0);
        assert_eq!(fisher_p_value(0.05, 10), 1.0);
        assert_eq!(fisher_p_value(0.9, 1), 1.0);
        assert!(fisher_p_value(f64::NAN, 10).is_nan());
    }

    #[test]
    fn whittle_adjusts_step_down_and_in_place() {
        // One huge ordinate among equal ones: only it is significant, and the second step
        // tests the rest as a fresh periodogram of m − 1.
        let mut ord = vec![1.0; 50];
        ord[7] = 400.0;
        ord[30] = 1.5;
        let p = whittle_p_values(&ord);
        let total: f64 = ord.iter().sum();
        assert!((p[7] - fisher_p_value(400.0 / total, 50)).abs() < 1e-15);
        let rest = total - 400.0;
        let second = fisher_p_value(1.5 / rest, 49).max(p[7]);
        assert!((p[30] - second).abs() < 1e-15);
        assert!(p[7] < 1e-10 && p[30] > 0.5);
        // Step-down: an ordinate never gets a smaller p-value than a larger one.
        for i in 0..50 {
            for j in 0..50 {
                if ord[i] > ord[j] {
                    assert!(p[i] <= p[j]);
                }
            }
        }
        assert_eq!(whittle_p_values(&[0.0; 4]), vec![1.0; 4]);
        assert!(whittle_p_values(&[]).is_empty());
    }
}
