use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::sequential::acquisition::normal::cdf;
use crate::sequential::safe::safe_set::{alpha_from_beta, beta_from_alpha};
use crate::sequential::safe::{Constraint, SafeError, SafeSet, SafeSetOptions, TwoSidedRule};

fn lower(t: f64) -> Constraint {
    Constraint {
        output: 0,
        lower: Some(t),
        upper: None,
    }
}

fn set(c: Constraint, noisy: bool, two_sided: TwoSidedRule) -> SafeSet {
    let options = SafeSetOptions {
        noisy,
        two_sided,
        ..SafeSetOptions::default()
    };
    SafeSet::new(vec![c], 1, &options).unwrap()
}

fn message(e: SafeError) -> String {
    e.to_string()
}

#[test]
fn beta_four_is_alpha_two_point_two_seven_five_percent() {
    // 1 − Φ(2) = erfc(√2)/2 = 0.022750131948179207… (tables / mpmath).
    let a = alpha_from_beta(4.0).unwrap();
    assert!((a - 0.022_750_131_948_179_21).abs() < 1e-16, "{a}");
    assert!((a - 0.02275).abs() < 1e-5);
    assert_eq!(SafeSetOptions::default().beta, 4.0);
    // And back: β = Φ⁻¹(1 − α)².
    let b = beta_from_alpha(a).unwrap();
    assert!((b - 4.0).abs() < 1e-12, "{b}");
    let o = SafeSetOptions::with_alpha(a).unwrap();
    assert!((o.beta - 4.0).abs() < 1e-12);
}

#[test]
fn beta_alpha_round_trip_and_independent_tail() {
    for beta in [1e-4, 0.25, 1.0, 2.0, 4.0, 9.0, 25.0, 100.0] {
        let a = alpha_from_beta(beta).unwrap();
        // Independent: 1 − Φ(√β) through the upper form of cdf.
        let direct = 1.0 - cdf(beta.sqrt());
        assert!(
            (a - direct).abs() <= 1e-15 + 1e-12 * a,
            "beta {beta}: {a} vs {direct}"
        );
        let back = beta_from_alpha(a).unwrap();
        assert!(
            (back - beta).abs() <= 1e-9 * beta.max(1.0),
            "beta {beta}: back {back}"
        );
    }
}

#[test]
fn bad_beta_or_alpha_is_a_clear_error() {
    for beta in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let e = message(alpha_from_beta(beta).unwrap_err());
        assert!(e.contains("beta"), "{e}");
        let o = SafeSetOptions {
            beta,
            ..SafeSetOptions::default()
        };
        assert!(SafeSet::new(vec![lower(0.0)], 1, &o).is_err());
    }
    for alpha in [0.5, 0.7, 0.0, -0.1, f64::NAN, 1.0] {
        let e = message(beta_from_alpha(alpha).unwrap_err());
        assert!(e.contains("alpha") && e.contains("(0, 0.5)"), "{e}");
    }
}

#[test]
fn bad_constraints_are_clear_errors() {
    let o = SafeSetOptions::default();
    let cases: Vec<(Vec<Constraint>, &str)> = vec![
        (vec![], "at least one constraint"),
        (
            vec![Constraint {
                output: 2,
                lower: Some(0.0),
                upper: None,
            }],
            "output column 2",
        ),
        (
            vec![Constraint {
                output: 0,
                lower: None,
                upper: None,
            }],
            "neither",
        ),
        (vec![lower(f64::NAN)], "lower threshold must be finite"),
        (
            vec![Constraint {
                output: 1,
                lower: Some(1.0),
                upper: Some(1.0),
            }],
            "below the upper",
        ),
    ];
    for (c, want) in cases {
        let e = message(SafeSet::new(c, 2, &o).unwrap_err());
        assert!(e.contains(want), "{e} should contain {want}");
    }
}

#[test]
fn bound_check_equals_probability_form_and_probability_is_independent() {
    let mut rng = StdRng::seed_from_u64(3);
    let sqrt_beta = 2.0;
    let alpha = alpha_from_beta(4.0).unwrap();
    for noisy in [true, false] {
        let mut both = 0;
        for _ in 0..5000 {
            let t = rng.random_range(-2.0..2.0);
            let mu = rng.random_range(-3.0..5.0);
            let var = rng.random_range(0.0..2.0f64);
            let noise = rng.random_range(1e-4..0.3);
            let s = set(lower(t), noisy, TwoSidedRule::Separate);
            let check = s.check(0, mu, var, noise);
            let sd = (var + if noisy { noise } else { 0.0 }).sqrt();
            assert_eq!(check.safe, mu - sqrt_beta * sd >= t);
            // P(z ≥ T) = Φ((μ − T)/s), the other tail's form.
            let p = cdf((mu - t) / sd);
            assert!(
                (check.probability - p).abs() < 1e-14,
                "{} vs {p}",
                check.probability
            );
            // Equivalent probability form, away from the boundary's rounding.
            if (p - (1.0 - alpha)).abs() > 1e-9 {
                assert_eq!(check.safe, p >= 1.0 - alpha);
                both += usize::from(check.safe);
            }
        }
        assert!(
            both > 100,
            "too few safe draws ({both}) for the test to bite"
        );
    }
}

#[test]
fn upper_bound_is_the_mirrored_lower_bound() {
    let mut rng = StdRng::seed_from_u64(4);
    for _ in 0..2000 {
        let u = rng.random_range(-2.0..2.0);
        let mu = rng.random_range(-4.0..4.0);
        let var = rng.random_range(0.0..2.0);
        let noise = 0.01;
        let up = set(
            Constraint {
                output: 0,
                lower: None,
                upper: Some(u),
            },
            true,
            TwoSidedRule::Separate,
        )
        .check(0, mu, var, noise);
        // z ≤ U  ⇔  −z ≥ −U, and −z has mean −μ and the same variance.
        let mirrored = set(lower(-u), true, TwoSidedRule::Separate).check(0, -mu, var, noise);
        assert_eq!(up.safe, mirrored.safe);
        assert!((up.probability - mirrored.probability).abs() < 1e-14);
    }
}

#[test]
fn noisy_safe_set_is_inside_the_noise_free_one_and_joint_inside_separate() {
    let mut rng = StdRng::seed_from_u64(5);
    let mut strict = [0usize; 2];
    for _ in 0..20000 {
        let lo = rng.random_range(-2.0..0.5);
        let hi = lo + rng.random_range(0.1..4.0);
        let c = match rng.random_range(0..3) {
            0 => lower(lo),
            1 => Constraint {
                output: 0,
                lower: None,
                upper: Some(hi),
            },
            _ => Constraint {
                output: 0,
                lower: Some(lo),
                upper: Some(hi),
            },
        };
        let two_sided = c.lower.is_some() && c.upper.is_some();
        let mu = rng.random_range(-3.0..3.0);
        let var = rng.random_range(0.0..1.0);
        let noise = rng.random_range(1e-3..0.5);
        for rule in [TwoSidedRule::Separate, TwoSidedRule::Joint] {
            let noisy = set(c.clone(), true, rule).check(0, mu, var, noise).safe;
            let free = set(c.clone(), false, rule).check(0, mu, var, noise).safe;
            assert!(
                !noisy || free,
                "noisy-safe but not noise-free-safe: {c:?} {mu} {var}"
            );
            strict[0] += usize::from(free && !noisy);
        }
        let joint = set(c.clone(), true, TwoSidedRule::Joint).check(0, mu, var, noise);
        let separate = set(c.clone(), true, TwoSidedRule::Separate).check(0, mu, var, noise);
        assert!(!joint.safe || separate.safe);
        if !two_sided {
            // One bound: the rules coincide.
            assert_eq!(joint, separate);
        } else {
            strict[1] += usize::from(separate.safe && !joint.safe);
            // Independent: P(L ≤ z ≤ U) from the upper tails.
            let s = (var + noise).sqrt();
            let p = cdf((mu - lo) / s) - cdf((mu - hi) / s);
            assert!((joint.probability - p).abs() < 1e-13);
        }
    }
    // Both inclusions are strict somewhere, so the asserts above could fail.
    assert!(strict[0] > 0 && strict[1] > 0, "{strict:?}");
}

#[test]
fn zero_variance_and_nan_are_handled() {
    let s = set(lower(1.0), false, TwoSidedRule::Separate);
    // On the threshold with no uncertainty: safe and certain.
    let c = s.check(0, 1.0, 0.0, 0.0);
    assert!(c.safe && c.probability == 1.0);
    let c = s.check(0, 0.999, -1e-17, 0.0);
    assert!(!c.safe && c.probability == 0.0);
    for (mu, var) in [(f64::NAN, 0.1), (5.0, f64::NAN)] {
        for noisy in [true, false] {
            let s = set(lower(0.0), noisy, TwoSidedRule::Separate);
            assert!(!s.check(0, mu, var, 0.01).safe, "{mu} {var}");
        }
    }
}
