//! Thompson sampling: the candidate set's construction rule, and picks against the posterior's
//! probability that one candidate is the larger.

use faer::Mat;

use super::super::normal::cdf;
use super::super::{default_candidate_count, thompson_candidates, thompson_sample};
use super::model::fitted_gp;
use crate::posterior::Posterior;

#[test]
fn the_default_count_follows_the_reference_rule() {
    assert_eq!(default_candidate_count(2), 2000);
    assert_eq!(default_candidate_count(12), 2400);
    assert_eq!(default_candidate_count(60), 5000);
}

#[test]
fn candidates_perturb_the_incumbent_inside_the_box() {
    for d in [3, 40] {
        let bounds: Vec<(f64, f64)> = (0..d).map(|c| (-1.0 - c as f64, 2.0)).collect();
        let incumbent: Vec<f64> = (0..d).map(|c| 0.5 - 0.01 * c as f64).collect();
        let count = 3000;
        let x = thompson_candidates(&incumbent, &bounds, count, 4).unwrap();
        assert_eq!(
            x,
            thompson_candidates(&incumbent, &bounds, count, 4).unwrap()
        );
        assert_ne!(
            x,
            thompson_candidates(&incumbent, &bounds, count, 5).unwrap()
        );
        let mut replaced = 0usize;
        for i in 0..count {
            let changed = (0..d).filter(|&c| x[(i, c)] != incumbent[c]).count();
            assert!(changed >= 1, "candidate {i} repeats the incumbent");
            replaced += changed;
            for (c, &(lo, hi)) in bounds.iter().enumerate() {
                assert!(lo <= x[(i, c)] && x[(i, c)] <= hi);
            }
        }
        // Each coordinate is replaced with probability p = min(20/d, 1), and a candidate with
        // none replaced gets one: E[changed] = d p + (1 − p)^d.
        let p = (20.0 / d as f64).min(1.0);
        let expected = d as f64 * p + (1.0 - p).powi(d as i32);
        let mean = replaced as f64 / count as f64;
        let se = (d as f64 * p * (1.0 - p) / count as f64).sqrt().max(1e-12);
        assert!(
            (mean - expected).abs() < 5.0 * se + 1e-12,
            "d = {d}: {mean} coordinates replaced on average, want {expected}"
        );
    }
}

#[test]
fn invalid_candidate_settings_are_errors() {
    let b = [(0.0, 1.0), (0.0, 1.0)];
    assert!(thompson_candidates(&[0.5], &b, 10, 0).is_err());
    assert!(thompson_candidates(&[0.5, 1.5], &b, 10, 0).is_err());
    assert!(thompson_candidates(&[0.5, f64::NAN], &b, 10, 0).is_err());
    assert!(thompson_candidates(&[0.5, 0.5], &b, 0, 0).is_err());
    assert!(thompson_candidates(&[], &[], 10, 0).is_err());
    assert!(thompson_candidates(&[0.5, 0.5], &[(0.0, 1.0), (1.0, 1.0)], 10, 0).is_err());
}

#[test]
fn picks_are_the_argmax_of_seeded_joint_samples() {
    let gp = fitted_gp();
    let x = thompson_candidates(&[0.5, 0.5], &[(-2.0, 2.0), (-2.0, 2.0)], 200, 1).unwrap();
    let picks = thompson_sample(&gp, x.as_ref(), 3, 9).unwrap();
    assert_eq!(picks, thompson_sample(&gp, x.as_ref(), 3, 9).unwrap());
    let s = gp.sample_seeded(x.as_ref(), 3, 9).unwrap();
    let mut taken = Vec::new();
    for j in 0..3 {
        let best = (0..200)
            .filter(|i| !taken.contains(i))
            .max_by(|&a, &b| s[(a, j)].total_cmp(&s[(b, j)]))
            .unwrap();
        assert_eq!(picks.indices[j], best);
        taken.push(best);
        for c in 0..2 {
            assert_eq!(picks.points[(j, c)], x[(best, c)]);
        }
    }
    assert!(thompson_sample(&gp, x.as_ref(), 0, 9).is_err());
    assert!(thompson_sample(&gp, x.as_ref(), 201, 9).is_err());
    assert!(thompson_sample(&gp, Mat::<f64>::zeros(3, 4).as_ref(), 1, 9).is_err());
}

#[test]
fn a_candidate_is_picked_as_often_as_it_is_the_larger() {
    // Two candidates: P(pick the first) = P(f₁ > f₂) = Φ((μ₁ − μ₂)/√(v₁ + v₂ − 2c)).
    let gp = fitted_gp();
    let x = Mat::from_fn(2, 2, |i, c| [[2.6, -2.4], [-2.6, -2.5]][i][c]);
    let j = gp.joint(x.as_ref()).unwrap();
    let sd = (j.cov[(0, 0)] + j.cov[(1, 1)] - 2.0 * j.cov[(0, 1)]).sqrt();
    let p = cdf((j.mean[0] - j.mean[1]) / sd);
    assert!(p > 0.05 && p < 0.95, "a test that can tell: p = {p}");
    let trials = 4000;
    let first = (0..trials)
        .filter(|&seed| thompson_sample(&gp, x.as_ref(), 1, seed).unwrap().indices[0] == 0)
        .count();
    let freq = first as f64 / trials as f64;
    let se = (p * (1.0 - p) / trials as f64).sqrt();
    assert!(
        (freq - p).abs() < 5.0 * se,
        "picked {freq}, want {p} (se {se:.1e})"
    );
}
