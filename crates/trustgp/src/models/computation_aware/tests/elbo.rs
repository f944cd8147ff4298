//! Spec §4 items 7, 8 and 10: the ELBO's pieces, the evidence bound and bounded influence.

use faer::Mat;

use super::dense::{dense_actions, gaussian_kl, Dense};
use super::{kernel, model, problem, random_blocks, rel_err};
use crate::kernels::Kernel;
use crate::models::computation_aware::action_set::ActionSet;
use crate::models::computation_aware::actions::BlockActions;
use crate::models::computation_aware::elbo::{forward, State};
use crate::models::computation_aware::likelihood::{PseudoLikelihood, Weighting};

#[test]
fn pseudo_likelihood_is_the_per_point_score_matching_loss() {
    let (_, y) = problem(25, 21, true);
    let (s2, m0) = (0.37, -0.2);
    for (beta, c) in [(1.0, 0.6), (2.5, 3.0)] {
        let lik = PseudoLikelihood::new(&y, m0, s2, Weighting::Imq { beta, c }, None);
        let x = Mat::<f64>::zeros(25, 1);
        let dense = Dense::new(
            &x,
            &y,
            &Kernel::parse("se(ls=1)").unwrap(),
            s2,
            m0,
            Some((beta, c)),
        );
        assert!(rel_err(&lik.r, &dense.r) < 1e-12);
        for shift in [-3.0, 0.0, 1.7] {
            let f: Vec<f64> = (0..25).map(|j| shift + (j as f64 * 0.7).sin()).collect();
            let quad: f64 = (0..25)
                .map(|j| lik.p[j] * f[j] * f[j] - 2.0 * f[j] * lik.nu[j])
                .sum();
            let got = -0.5 * (quad + lik.c);
            let want = dense.score_matching(&f);
            assert!(
                (got - want).abs() < 1e-10 * want.abs().max(1.0),
                "{got} vs {want}"
            );
        }
    }
}

/// With given centres γ_j the pseudo-likelihood is the score-matching loss of spec §2.2 with
/// the weight `w_j = β (1 + (y_j − γ_j)²/c²)^(−1/2)`, written out here term by term: it does
/// not depend on the prior mean m0 (which only enters `r = y − m0 − σ² g`), and centres all
/// equal to m0 give the prior-centred pseudo-likelihood.
#[test]
fn pseudo_likelihood_with_given_centres_is_the_score_matching_loss() {
    let (_, y) = problem(25, 21, true);
    let n = y.len();
    let centre: Vec<f64> = (0..n).map(|j| 0.3 * (j as f64 * 1.3).cos()).collect();
    let s2 = 0.37;
    for (beta, c) in [(1.0, 0.6), (2.5, 3.0)] {
        for m0 in [-0.2, 0.9] {
            let lik = PseudoLikelihood::new(&y, m0, s2, Weighting::Imq { beta, c }, Some(&centre));
            for shift in [-3.0, 0.0, 1.7] {
                let f: Vec<f64> = (0..n).map(|j| shift + (j as f64 * 0.7).sin()).collect();
                let quad: f64 = (0..n)
                    .map(|j| lik.p[j] * f[j] * f[j] - 2.0 * f[j] * lik.nu[j])
                    .sum();
                let got = -0.5 * (quad + lik.c);
                // −Σ [w²(f − y)²/σ⁴ + (2/σ²) ∂_y(w²(f − y))], ∂_y w² = w² g.
                let want: f64 = -(0..n)
                    .map(|j| {
                        let u = y[j] - centre[j];
                        let w2 = beta * beta / (1.0 + u * u / (c * c));
                        let g = -2.0 * u / (c * c + u * u);
                        let e = f[j] - y[j];
                        w2 * e * e / (s2 * s2) + 2.0 / s2 * (w2 * g * e - w2)
                    })
                    .sum::<f64>();
                assert!(
                    (got - want).abs() < 1e-10 * want.abs().max(1.0),
                    "{got} vs {want}"
                );
            }
            for j in 0..n {
                let u = y[j] - centre[j];
                let g = -2.0 * u / (c * c + u * u);
                assert!((lik.r[j] - (y[j] - m0 - s2 * g)).abs() < 1e-14);
            }
            let at_mean =
                PseudoLikelihood::new(&y, m0, s2, Weighting::Imq { beta, c }, Some(&vec![m0; n]));
            let prior = PseudoLikelihood::new(&y, m0, s2, Weighting::Imq { beta, c }, None);
            assert!(rel_err(&at_mean.r, &prior.r) < 1e-15);
            assert!(rel_err(&at_mean.w2, &prior.w2) < 1e-15);
            assert!((at_mean.c - prior.c).abs() < 1e-12 * prior.c.abs());
        }
    }
}

#[test]
fn imq_weights_have_the_properties_of_the_spec() {
    let (beta, c, m0, s2) = (1.3, 0.6, 0.4, 0.5);
    let ys: Vec<f64> = (-60..=60)
        .map(|k| m0 + 0.01 * f64::from(k).powi(3))
        .collect();
    let lik = PseudoLikelihood::new(&ys, m0, s2, Weighting::Imq { beta, c }, None);
    let w =
        |y: f64| PseudoLikelihood::new(&[y], m0, s2, Weighting::Imq { beta, c }, None).w2[0].sqrt();
    assert_eq!(w(m0), beta);
    let x = Mat::<f64>::zeros(ys.len(), 1);
    let dense = Dense::new(
        &x,
        &ys,
        &Kernel::parse("se(ls=1)").unwrap(),
        s2,
        m0,
        Some((beta, c)),
    );
    for (j, &y) in ys.iter().enumerate() {
        let wj = lik.w2[j].sqrt();
        assert!(wj > 0.0 && wj <= beta);
        assert!((wj - dense.w[j]).abs() < 1e-14);
        // m_w − m = y − m − r, bounded by σ²/c.
        assert!((y - m0 - lik.r[j]).abs() <= s2 / c + 1e-12);
        let h = 1e-5 * y.abs().max(1.0);
        let fd = (w(y + h) - w(y - h)) / (2.0 * h);
        let dw = -wj.powi(3) * (y - m0) / (beta * beta * c * c);
        assert!((fd - dw).abs() < 1e-8 * beta / c, "y = {y}: {fd} vs {dw}");
    }
    let sup = (-6..=6)
        .map(|e| 10f64.powi(e))
        .flat_map(|t| [t, -t])
        .map(|y| (y * w(y) * w(y)).abs())
        .fold(0.0, f64::max);
    assert!(sup < beta * beta * (c + m0.abs()), "sup |y w²| = {sup}");
}

#[test]
fn kl_term_is_the_dense_gaussian_kl() {
    let (x, y) = problem(23, 22, true);
    for (robust, i) in [(true, 3), (true, 8), (false, 5)] {
        let blocks = random_blocks(23, i, 23);
        let state = State {
            kernel: kernel(),
            noise: 0.2,
            mean: 0.3,
            actions: ActionSet::Blocks(BlockActions::from_blocks(23, blocks.clone()).unwrap()),
            weighting: if robust {
                Weighting::Imq { beta: 1.0, c: 0.8 }
            } else {
                Weighting::Constant
            },
            centre: None,
        };
        let fw = forward(x.as_ref(), &y, &state).unwrap();
        let kl = fw.lik.expected(&fw.mu, &fw.kappa) - fw.elbo;
        let dense = Dense::new(&x, &y, &kernel(), 0.2, 0.3, robust.then_some((1.0, 0.8)));
        let kl_ref = dense.kl(&dense_actions(&blocks));
        assert!(
            (kl - kl_ref).abs() < 1e-8 * kl_ref.abs(),
            "{kl} vs {kl_ref}"
        );
        // The same KL from the library's own q (mean and covariance at X).
        let gp = model(&x, &y, blocks, robust, 0.8);
        let (mean, cov) = gp.predict_joint(x.as_ref());
        let kl_q = gaussian_kl(&mean, &cov, &[0.3; 23], &dense.k);
        assert!(
            (kl_q - kl_ref).abs() < 1e-6 * kl_ref.abs(),
            "{kl_q} vs {kl_ref}"
        );
    }
}

#[test]
fn elbo_is_below_the_log_evidence_for_random_actions() {
    let (x, y) = problem(20, 24, true);
    for robust in [true, false] {
        let lz =
            Dense::new(&x, &y, &kernel(), 0.2, 0.3, robust.then_some((1.0, 0.8))).log_evidence();
        for seed in 0..8 {
            let i = 1 + (seed as usize * 5) % 19;
            let gp = model(&x, &y, random_blocks(20, i, seed), robust, 0.8);
            assert!(gp.elbo() < lz, "i = {i}: {} ≥ {lz}", gp.elbo());
        }
    }
}

/// `KL(clean ‖ contaminated)` of the posteriors at X when `y_5` is moved by `t`.
fn influence(robust: bool, t: f64) -> f64 {
    let (x, y) = problem(24, 25, false);
    let blocks = random_blocks(24, 6, 26);
    let clean = model(&x, &y, blocks.clone(), robust, 0.5);
    let mut y_t = y.clone();
    y_t[5] += t;
    let dirty = model(&x, &y_t, blocks, robust, 0.5);
    let (m0, c0) = clean.predict_joint(x.as_ref());
    let (m1, c1) = dirty.predict_joint(x.as_ref());
    gaussian_kl(&m0, &c0, &m1, &c1)
}

#[test]
fn influence_of_one_observation_is_bounded_for_rcagp_only() {
    let (r4, r6) = (influence(true, 1e4), influence(true, 1e6));
    assert!(r4.is_finite() && r4 > 0.0);
    assert!((r6 - r4).abs() < 0.05 * r4, "RCaGP: {r4} vs {r6}");
    let (r4n, r6n) = (influence(true, -1e4), influence(true, -1e6));
    assert!(
        (r6n - r4n).abs() < 0.05 * r4n,
        "RCaGP, t → −∞: {r4n} vs {r6n}"
    );
    // CaGP: the mean moves linearly in t, so the KL grows like t².
    let (g4, g6) = (influence(false, 1e4), influence(false, 1e6));
    let ratio = g6 / g4;
    assert!((ratio / 1e4 - 1.0).abs() < 0.01, "CaGP ratio {ratio}");
}
