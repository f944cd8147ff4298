//! The utilities as functions of the posterior mean and standard deviation: closed forms at
//! mpmath references (80 digits), LogEI where EI underflows, and their derivatives by central
//! finite differences on every branch of `ln h`.

use std::f64::consts::LN_2;

use super::super::{
    log_h, Improvement, ImprovementKind, MarginalUtility, UpperConfidenceBound, Utility,
};
use super::assert_relative;

/// `(z, ln h(z))`, `h(z) = φ(z) + zΦ(z)`, on each branch and at both sides of each switch.
const LOG_H: [(f64, f64); 13] = [
    (-10000.0, -50000019.33961931),
    (-1000.0, -500014.73445209116),
    (-150.0, -11260.940342433996),
    (-100.0, -5010.12957880025),
    (-99.9, -5000.132578400064),
    (-40.0, -808.29856835662),
    (-10.0, -55.55312203612235),
    (-1.0001, -2.485311456445883),
    (-1.0, -2.4851210257126413),
    (-0.5, -1.6205162643873199),
    (0.0, -0.9189385332046728),
    (2.0, 0.6973835457882284),
    (30.0, 3.4011973816621555),
];

/// `[μ, σ, f*, EI, ln EI, PI, ln PI]`, rounded to the nearest `f64`; the third has `z = −40`,
/// where EI = 4.56e-352 and PI = 3.66e-350 round to 0.
const IMPROVEMENT: [[f64; 7]; 5] = [
    [
        0.3,
        0.7,
        0.5,
        0.19058103574135002,
        -1.6576777903966757,
        0.38754848109799234,
        -0.9479143255037049,
    ],
    [
        1.2,
        0.4,
        0.5,
        0.7064695177259326,
        -0.3474752232576573,
        0.9599408431361829,
        -0.04088361815209495,
    ],
    [
        -19.0,
        0.5,
        1.0,
        0.0,
        -808.9917155371799,
        0.0,
        -804.6084420137538,
    ],
    [
        -3.0,
        2.0,
        0.25,
        0.0438123781617066,
        -3.127838895093755,
        0.05208127941521955,
        -2.9549497150391097,
    ],
    [
        0.5,
        1.5,
        0.5,
        0.598413420602149,
        -0.5134734250965084,
        0.5,
        -LN_2,
    ],
];

const KINDS: [ImprovementKind; 4] = [
    ImprovementKind::Expected,
    ImprovementKind::LogExpected,
    ImprovementKind::Probability,
    ImprovementKind::LogProbability,
];

fn improvement(kind: ImprovementKind, incumbent: f64) -> Improvement {
    Improvement::new(kind, incumbent).unwrap()
}

#[test]
fn log_h_matches_references_on_every_branch() {
    for (z, want) in LOG_H {
        assert_relative(log_h(z), want, 1e-13, &format!("ln h({z})"));
    }
}

#[test]
fn improvements_match_closed_forms() {
    for [mean, sd, incumbent, ei, log_ei, pi, log_pi] in IMPROVEMENT {
        for (kind, want) in KINDS.into_iter().zip([ei, log_ei, pi, log_pi]) {
            let got = improvement(kind, incumbent).utility(mean, sd).value;
            if want == 0.0 {
                assert_eq!(
                    got, 0.0,
                    "{kind:?} at ({mean}, {sd}, {incumbent}) underflows"
                );
            } else {
                assert_relative(
                    got,
                    want,
                    1e-13,
                    &format!("{kind:?} at ({mean}, {sd}, {incumbent})"),
                );
            }
        }
    }
}

#[test]
fn log_ei_is_accurate_where_ei_underflows() {
    // z = (−19 − 1)/0.5 = −40 exactly: EI = 4.6e-352 is below the smallest subnormal.
    let ei = improvement(ImprovementKind::Expected, 1.0).utility(-19.0, 0.5);
    assert_eq!(ei.value, 0.0);
    let log_ei = improvement(ImprovementKind::LogExpected, 1.0).utility(-19.0, 0.5);
    assert!(log_ei.value.is_finite() && log_ei.d_mean.is_finite() && log_ei.d_sd.is_finite());
    assert_relative(log_ei.value, -808.9917155371799, 1e-10, "ln EI at z = −40");
    // d ln EI/dμ = Φ(z)/(σ h(z)) and d ln EI/dσ = 1/σ − zΦ(z)/(σ h(z)), from mpmath.
    assert_relative(
        log_ei.d_mean,
        80.09981331529704,
        1e-12,
        "d ln EI/dμ at z = −40",
    );
    assert_relative(
        log_ei.d_sd,
        3205.9925326118814,
        1e-12,
        "d ln EI/dσ at z = −40",
    );
}

#[test]
fn ucb_is_mean_plus_root_beta_sd() {
    let u = UpperConfidenceBound::new(2.0).unwrap().utility(0.3, 0.7);
    assert_relative(u.value, 1.2899494936611665, 1e-15, "UCB(β = 2)");
    assert_eq!((u.d_mean, u.d_sd), (1.0, 2f64.sqrt()));
    assert_eq!(
        UpperConfidenceBound::new(0.0)
            .unwrap()
            .utility(0.3, 0.7)
            .value,
        0.3
    );
}

/// Central differences of `u` in the mean and the standard deviation at `(mean, sd)`.
fn check_derivatives(u: &dyn MarginalUtility, mean: f64, sd: f64, what: &str) {
    let at = |m: f64, s: f64| u.utility(m, s).value;
    let Utility { d_mean, d_sd, .. } = u.utility(mean, sd);
    let h = 1e-6 * sd;
    let fd_mean = (at(mean + h, sd) - at(mean - h, sd)) / (2.0 * h);
    let fd_sd = (at(mean, sd + h) - at(mean, sd - h)) / (2.0 * h);
    for (name, got, fd) in [("μ", d_mean, fd_mean), ("σ", d_sd, fd_sd)] {
        assert!(
            (got - fd).abs() <= 1e-6 * fd.abs().max(1e-3),
            "{what}: d/d{name} = {got:e}, central difference {fd:e}"
        );
    }
}

#[test]
fn derivatives_match_central_differences_on_every_branch() {
    let sd = 0.8;
    // z from the asymptotic series of ln h through its erfcx form to the direct one.
    for z in [-500.0, -120.0, -60.0, -5.0, -1.5, -0.4, 0.0, 2.5] {
        for kind in KINDS {
            // EI and PI underflow below z ≈ −38: only their logarithms are checked there.
            let underflows = z < -30.0
                && matches!(
                    kind,
                    ImprovementKind::Expected | ImprovementKind::Probability
                );
            if !underflows {
                check_derivatives(
                    &improvement(kind, 1.0),
                    1.0 + z * sd,
                    sd,
                    &format!("{kind:?} at z = {z}"),
                );
            }
        }
    }
    check_derivatives(&UpperConfidenceBound::new(3.0).unwrap(), 0.2, sd, "UCB");
}

#[test]
fn invalid_parameters_are_refused_with_their_name() {
    let e = Improvement::new(ImprovementKind::Expected, f64::NAN).unwrap_err();
    assert!(e.to_string().contains("incumbent"), "{e}");
    let e = UpperConfidenceBound::new(-1.0).unwrap_err();
    assert!(
        e.to_string().contains("beta") && e.to_string().contains("-1"),
        "{e}"
    );
    let e = UpperConfidenceBound::new(f64::INFINITY).unwrap_err();
    assert!(e.to_string().contains("beta"), "{e}");
}

#[test]
fn variances_at_or_below_the_floor_are_floored_and_flagged() {
    use super::super::{standard_deviation, MIN_VARIANCE};
    assert_eq!(standard_deviation(4.0), (2.0, false));
    for var in [MIN_VARIANCE, 0.0, -1e-14] {
        assert_eq!(standard_deviation(var), (1e-12, true), "variance {var}");
    }
}
