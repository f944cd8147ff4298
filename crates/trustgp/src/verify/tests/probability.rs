//! Probability bounds: the logistic bracket against an independent quadrature, the monotonicity
//! facts behind Propositions 8–9 (invariant 8), and the rectangle bounds against a grid.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::verify::link::BinaryLink;

/// `∫ σ(ξ) N(ξ | μ, Σ) dξ` by the composite Simpson rule on ±12 sd (error far below 1e-10).
fn logistic_integral(mu: f64, var: f64) -> f64 {
    let s = var.sqrt();
    let n = 20000;
    let (a, b) = (mu - 12.0 * s, mu + 12.0 * s);
    let h = (b - a) / n as f64;
    let f = |x: f64| {
        let z = (x - mu) / s;
        (-0.5 * z * z).exp() / (s * (2.0 * std::f64::consts::PI).sqrt()) / (1.0 + (-x).exp())
    };
    let mut acc = f(a) + f(b);
    for k in 1..n {
        acc += f(a + h * k as f64) * if k % 2 == 1 { 4.0 } else { 2.0 };
    }
    acc * h / 3.0
}

#[test]
fn logistic_bracket_contains_the_integral_and_is_narrow() {
    let mut rng = StdRng::seed_from_u64(21);
    for _ in 0..200 {
        let mu = rng.random_range(-6.0..6.0);
        let var = rng.random_range(1e-4..9.0);
        let exact = logistic_integral(mu, var);
        let (lo, hi) = BinaryLink::Logistic.bracket(mu, var);
        assert!(
            lo <= exact && exact <= hi,
            "({mu}, {var}): {lo} {exact} {hi}"
        );
        assert!(hi - lo <= 5e-12, "width {}", hi - lo);
    }
    // Σ = 0: the link itself.
    let (lo, hi) = BinaryLink::Logistic.bracket(0.7, 0.0);
    let v = 1.0 / (1.0 + (-0.7f64).exp());
    assert!(lo <= v && v <= hi && hi - lo < 1e-10);
}

#[test]
fn probit_matches_its_integral_definition() {
    // Π(μ, Σ) = ∫ Φ(ξ) N(ξ | μ, Σ) dξ = Φ(μ/√(1+Σ)): checked by Simpson on ±12 sd.
    for (mu, var) in [(0.3f64, 0.5f64), (-1.2, 2.0), (2.0, 0.1)] {
        let s: f64 = var.sqrt();
        let n = 20000;
        let (a, b) = (mu - 12.0 * s, mu + 12.0 * s);
        let h = (b - a) / n as f64;
        let f = |x: f64| {
            let z = (x - mu) / s;
            (-0.5 * z * z).exp() / (s * (2.0 * std::f64::consts::PI).sqrt())
                * crate::sequential::acquisition::normal::cdf(x)
        };
        let mut acc = f(a) + f(b);
        for k in 1..n {
            acc += f(a + h * k as f64) * if k % 2 == 1 { 4.0 } else { 2.0 };
        }
        let exact = acc * h / 3.0;
        assert!((BinaryLink::Probit.value(mu, var) - exact).abs() < 1e-10);
    }
}

#[test]
fn rectangle_bounds_enclose_a_grid_and_are_attained() {
    let mut rng = StdRng::seed_from_u64(22);
    for link in [BinaryLink::Probit, BinaryLink::Logistic] {
        for _ in 0..25 {
            let m0 = rng.random_range(-3.0..3.0);
            let mu = (m0, m0 + rng.random_range(0.0..2.0));
            let v0 = rng.random_range(0.0..2.0);
            let var = (v0, v0 + rng.random_range(0.0..2.0));
            let lo = link.min_over(mu, var);
            let hi = link.max_over(mu, var);
            let (mut gmin, mut gmax) = (f64::INFINITY, f64::NEG_INFINITY);
            for a in 0..=12 {
                for b in 0..=12 {
                    let m = mu.0 + (mu.1 - mu.0) * a as f64 / 12.0;
                    let v = var.0 + (var.1 - var.0) * b as f64 / 12.0;
                    let (l, h) = link.bracket(m, v);
                    gmin = gmin.min(l);
                    gmax = gmax.max(h);
                }
            }
            assert!(lo <= gmin + 1e-15 && gmax <= hi + 1e-15);
            // Attained (the extremal corner is on the grid): tight up to the bracket width.
            assert!(
                gmin - lo < 1e-9 && hi - gmax < 1e-9,
                "{link:?}: {lo} {gmin} {gmax} {hi}"
            );
        }
    }
}

#[test]
fn monotonicity_in_mean_and_variance() {
    // ∂Π/∂μ > 0 and sign ∂Π/∂Σ = −sign μ (finite differences on a grid).
    for link in [BinaryLink::Probit, BinaryLink::Logistic] {
        for mu in [-2.5, -0.7, -0.1, 0.1, 0.7, 2.5] {
            for var in [0.2, 1.0, 3.0] {
                let (h, hv) = (1e-2, 0.3);
                let dm = link.value(mu + h, var) - link.value(mu - h, var);
                let dv = link.value(mu, var + hv) - link.value(mu, var - 0.1);
                assert!(dm > 0.0, "{link:?} μ {mu} Σ {var}");
                assert!(dv * mu < 0.0, "{link:?} μ {mu} Σ {var}: {dv}");
            }
        }
    }
}
