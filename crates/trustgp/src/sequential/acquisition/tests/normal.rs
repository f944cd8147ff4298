//! φ, Φ, ln Φ and erfcx against mpmath at 60 digits.

use std::f64::consts::LN_2;

use super::super::normal::{cdf, erfcx, log_cdf, log_pdf, pdf};
use super::assert_relative;

/// Relative tolerance against the references.
const TOL: f64 = 1e-13;

/// `(z, Φ(z), ln Φ(z))`, rounded to the nearest `f64` (Φ(−40) = 3.66e-350 and
/// Φ(−38.5) = 1.41e-324 round to 0); `z = −2.1213…` is where erfcx switches from its series to its continued
/// fraction (`−z/√2 = 1.5`).
const CDF: [(f64, f64, f64); 29] = [
    (-40.0, 0.0, -804.6084420137538),
    (-38.5, 0.0, -745.695270290411),
    (-37.0, 5.725571222524577e-300, -689.0305855768906),
    (-30.0, 4.906713927148187e-198, -454.3212439563432),
    (-25.0, 3.056696706382561e-138, -316.63940800802027),
    (-20.0, 2.7536241186062337e-89, -203.91715537109727),
    (-15.0, 3.670966199312751e-51, -116.1313848457117),
    (-10.0, 7.619853024160525e-24, -53.23128515051247),
    (-7.5, 3.1908916729108963e-14, -31.075890902890002),
    (-5.0, 2.866515718791939e-07, -15.064998393988725),
    (-3.0, 0.0013498980316300946, -6.607726221510349),
    (-2.2, 0.013903447513498604, -4.275618447044144),
    (
        -2.1213203435596424,
        0.016947426762344644,
        -4.077639270111497,
    ),
    (-2.0, 0.02275013194817921, -3.783184333682032),
    (-1.5, 0.06680720126885807, -2.7059444008238898),
    (-1.0, 0.15865525393145705, -1.8410216450092636),
    (-0.5, 0.3085375387259869, -1.1759117615936185),
    (-0.125, 0.45026177516988714, -0.7979261427530241),
    (-0.001, 0.49960105778608893, -0.6939453834669652),
    (0.0, 0.5, -LN_2),
    (0.001, 0.500398942213911, -0.6923496142726883),
    (0.3, 0.6179114221889527, -0.4814101615884812),
    (1.0, 0.8413447460685429, -0.17275377902344988),
    (2.0, 0.9772498680518208, -0.023012909328963486),
    (3.5, 0.9997673709209645, -0.00023265614137680455),
    (5.0, 0.9999997133484281, -2.866516129637636e-07),
    (7.0, 0.9999999999987201, -1.279812543886654e-12),
    (8.5, 1.0, -9.479534822203318e-18),
    (10.0, 1.0, -7.619853024160525e-24),
];

/// `(x, erfcx(x))`, on both sides of the switch at 1.5 and on the negative axis.
const ERFCX: [(f64, f64); 16] = [
    (0.0, 1.0),
    (1e-08, 0.9999999887162084),
    (0.1, 0.8964569799691267),
    (0.5, 0.6156903441929259),
    (1.0, 0.427583576155807),
    (1.4999999, 0.32158543281661006),
    (1.5, 0.3215854164543175),
    (2.0, 0.25539567631050575),
    (3.0, 0.17900115118138996),
    (5.0, 0.11070463773306863),
    (10.0, 0.05614099274382259),
    (28.284271247461902, 0.01993467037660262),
    (100.0, 0.005641613782989433),
    (10000.0, 5.641895807268084e-05),
    (-0.5, 1.952360489182557),
    (-3.0, 16205.988853999586),
];

/// `(z, φ(z))`.
const PDF: [(f64, f64); 4] = [
    (-37.5, 1.7282337322841054e-306),
    (-3.3, 0.0017225689390536812),
    (0.0, 0.3989422804014327),
    (6.25, 1.3140018181558838e-09),
];

#[test]
fn log_cdf_matches_references_across_minus_40_to_10() {
    for (z, _, want) in CDF {
        assert_relative(log_cdf(z), want, TOL, &format!("ln Φ({z})"));
    }
}

#[test]
fn cdf_matches_references_where_it_is_a_normal_number() {
    for (z, want, _) in CDF {
        if want >= f64::MIN_POSITIVE {
            assert_relative(cdf(z), want, TOL, &format!("Φ({z})"));
        } else {
            // Below the normal range only underflow to (almost) zero is asked for.
            assert!(cdf(z) < 1e-300, "Φ({z}) = {:e}", cdf(z));
        }
    }
}

#[test]
fn erfcx_matches_references() {
    for (x, want) in ERFCX {
        assert_relative(erfcx(x), want, TOL, &format!("erfcx({x})"));
    }
}

#[test]
fn pdf_and_log_pdf_match_references() {
    for (z, want) in PDF {
        assert_relative(pdf(z), want, TOL, &format!("φ({z})"));
        assert_relative(log_pdf(z), want.ln(), TOL, &format!("ln φ({z})"));
    }
}

#[test]
fn non_finite_arguments_give_the_limits() {
    assert_eq!(cdf(f64::NEG_INFINITY), 0.0);
    assert_eq!(cdf(f64::INFINITY), 1.0);
    assert_eq!(log_cdf(f64::INFINITY), 0.0);
    assert_eq!(log_cdf(f64::NEG_INFINITY), f64::NEG_INFINITY);
    assert_eq!(erfcx(f64::INFINITY), 0.0);
    assert_eq!(pdf(f64::INFINITY), 0.0);
    assert!(erfcx(f64::NAN).is_nan());
}
