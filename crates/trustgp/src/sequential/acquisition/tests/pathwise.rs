//! Pathwise posterior samples (random-feature prior paths updated by Matheron's rule) against
//! each model's exact joint posterior, and Thompson sampling's switch to them.

use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::super::normal::cdf;
use super::super::{
    thompson_candidates, thompson_sample, thompson_sample_with, ThompsonRoute, EXACT_THOMPSON_MAX,
};
use super::model::fitted_gp;
use crate::kernels::Kernel;
use crate::means::Mean;
use crate::models::computation_aware::{Actions, CaGp};
use crate::models::exact::ExactGp;
use crate::models::hyper::GpHyper;
use crate::models::sparse::{SparseGp, SparseKind};
use crate::models::svgp::{Svgp, SvgpLikelihood};
use crate::posterior::{PathwiseSamples, Posterior};

/// Samples drawn to compare moments.
const SAMPLES: usize = 20_000;
/// How many standard errors a sample moment may be off.
const STANDARD_ERRORS: f64 = 5.0;

fn uniform(rows: usize, cols: usize, lo: f64, hi: f64, seed: u64) -> Mat<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    Mat::from_fn(rows, cols, |_, _| rng.random_range(lo..hi))
}

/// A Matérn-5/2 kernel with ARD lengthscales plus a constant: a sum whose terms share the
/// frequencies.
fn kernel() -> Kernel {
    Kernel::parse("const(var=0.9) * matern52(ls=[0.8, 1.3]) + const(var=0.2)").unwrap()
}

/// Twenty noisy observations of a smooth function on `[-2, 2]²`.
fn data() -> (Mat<f64>, Vec<f64>) {
    let x = uniform(20, 2, -2.0, 2.0, 1);
    let e = uniform(20, 1, -0.1, 0.1, 2);
    let y = (0..20)
        .map(|i| x[(i, 0)].sin() * x[(i, 1)] + e[(i, 0)])
        .collect();
    (x, y)
}

/// Four test points: inside the data (where the posterior differs most from the prior) and
/// one outside it.
fn test_inputs() -> Mat<f64> {
    let mut x = uniform(4, 2, -1.5, 1.5, 3);
    x[(3, 0)] = 3.0;
    x
}

/// The sample mean and covariance of pathwise samples at the rows of `xs` against the exact
/// joint posterior, each within 5 standard errors estimated from the samples (no feature bias:
/// every path draws its own frequencies, so the first two moments are exact); and the prior
/// covariance must be outside those tolerances somewhere, so that a sampler that skips the
/// update fails.
fn check_moments(p: &dyn Posterior, kernel: &Kernel, xs: MatRef<'_, f64>, seed: u64) {
    let PathwiseSamples::Samples(s) = p.pathwise_sample(xs, SAMPLES, 256, seed).unwrap() else {
        panic!("pathwise samples unsupported");
    };
    let exact = p.joint(xs).unwrap();
    let prior = kernel.cross(xs, xs);
    let n = SAMPLES as f64;
    let m = xs.nrows();
    let mean: Vec<f64> = (0..m).map(|i| s.row(i).iter().sum::<f64>() / n).collect();
    let mut prior_detected = false;
    for i in 0..m {
        let var_i = s.row(i).iter().map(|v| (v - mean[i]).powi(2)).sum::<f64>() / (n - 1.0);
        let se = (var_i / n).sqrt();
        assert!(
            (mean[i] - exact.mean[i]).abs() <= STANDARD_ERRORS * se,
            "mean {i}: {} vs {} (se {se:.1e})",
            mean[i],
            exact.mean[i]
        );
        for k in 0..=i {
            let products: Vec<f64> = (0..SAMPLES)
                .map(|j| (s[(i, j)] - mean[i]) * (s[(k, j)] - mean[k]))
                .collect();
            let cov = products.iter().sum::<f64>() / (n - 1.0);
            let spread = products.iter().map(|v| (v - cov).powi(2)).sum::<f64>() / (n - 1.0);
            let tol = STANDARD_ERRORS * (spread / n).sqrt();
            assert!(
                (cov - exact.cov[(i, k)]).abs() <= tol,
                "cov ({i}, {k}): {cov} vs {} (tolerance {tol:.1e})",
                exact.cov[(i, k)]
            );
            prior_detected |= (prior[(i, k)] - exact.cov[(i, k)]).abs() > 4.0 * tol;
        }
    }
    assert!(
        prior_detected,
        "the prior covariance passes too: the test cannot tell"
    );
}

/// An exact GP with a rational quadratic kernel, which has no random features here.
fn rq_gp() -> ExactGp {
    let x = uniform(5, 2, -1.0, 1.0, 9);
    let y: Vec<f64> = (0..5).map(|i| x[(i, 0)]).collect();
    let hyper = GpHyper {
        kernel: Kernel::parse("rq(ls=1.0)").unwrap(),
        mean: Mean::Zero,
        noise: 0.1,
    };
    ExactGp::at(hyper, x.as_ref(), &y, 0.0).unwrap()
}

#[test]
fn exact_gp_pathwise_samples_have_the_posterior_moments() {
    let gp = fitted_gp();
    check_moments(&gp, &gp.hyper().kernel, test_inputs().as_ref(), 1);
    let (x, y) = data();
    let hyper = GpHyper {
        kernel: kernel(),
        mean: Mean::Linear {
            w: vec![0.3, -0.2],
            b: 0.1,
        },
        noise: 0.05,
    };
    let gp = ExactGp::at(hyper, x.as_ref(), &y, 0.0).unwrap();
    check_moments(&gp, &kernel(), test_inputs().as_ref(), 2);
}

#[test]
fn sparse_and_computation_aware_pathwise_samples_have_the_posterior_moments() {
    let (x, y) = data();
    let z = uniform(6, 2, -2.0, 2.0, 4);
    let mean = Mean::Linear {
        w: vec![0.3, -0.2],
        b: 0.1,
    };
    let xs = test_inputs();
    for kind in [SparseKind::Sgpr, SparseKind::Rcsvgp] {
        let gp = SparseGp::from_parts(
            kind,
            x.clone(),
            y.clone(),
            kernel(),
            mean.clone(),
            0.05,
            z.clone(),
            0.5,
            1.0,
        )
        .unwrap();
        check_moments(&gp, &kernel(), xs.as_ref(), 3);
    }
    // Six inducing-point actions: S − S K S has rank 6 of 20, a singular covariance.
    let gp = CaGp::from_parts(
        x,
        y,
        kernel(),
        0.05,
        0.1,
        Actions::Inducing(z),
        0.5,
        1.0,
        true,
    )
    .unwrap();
    check_moments(&gp, &kernel(), xs.as_ref(), 4);
}

#[test]
fn svgp_pathwise_samples_need_a_q_u_inside_the_prior() {
    // Whitened q(u) = N(K^{1/2} m̃, K^{1/2} L̃L̃ᵀ K^{1/2}ᵀ): S − S K S is a covariance exactly
    // when L̃L̃ᵀ ⪯ I.
    let z = uniform(6, 2, -2.0, 2.0, 4);
    let m_tilde = uniform(6, 1, -1.0, 1.0, 5).col_as_slice(0).to_vec();
    let svgp = |scale: f64| {
        Svgp::from_parts(
            kernel(),
            Mean::Constant { c: 0.2 },
            vec![0.05],
            SvgpLikelihood::Gaussian,
            z.clone(),
            m_tilde.clone(),
            Mat::from_fn(6, 6, |i, j| if i == j { scale } else { 0.0 }),
        )
        .unwrap()
    };
    let xs = test_inputs();
    check_moments(&svgp(0.5), &kernel(), xs.as_ref(), 5);
    let wide = svgp(2.0).pathwise_sample(xs.as_ref(), 3, 16, 0).unwrap();
    assert!(
        matches!(&wide, PathwiseSamples::Unsupported(why) if why.contains("not a covariance")),
        "{wide:?}"
    );
}

#[test]
fn pathwise_samples_are_seeded_and_inputs_checked() {
    let gp = fitted_gp();
    let xs = test_inputs();
    let draw = |seed| gp.pathwise_sample(xs.as_ref(), 3, 64, seed).unwrap();
    assert_eq!(draw(7), draw(7));
    assert_ne!(draw(7), draw(8));
    assert!(gp.pathwise_sample(xs.as_ref(), 3, 0, 0).is_err());
    assert!(gp
        .pathwise_sample(Mat::<f64>::zeros(2, 3).as_ref(), 3, 64, 0)
        .is_err());
    let rq = rq_gp();
    assert!(matches!(
        rq.pathwise_sample(xs.as_ref(), 3, 64, 0).unwrap(),
        PathwiseSamples::Unsupported(why) if why.contains("`rq`")
    ));
}

#[test]
fn thompson_switches_to_pathwise_samples_beyond_the_threshold() {
    let gp = fitted_gp();
    let bounds = [(-2.0, 2.0), (-2.0, 2.0)];
    let small = thompson_candidates(&[0.5, 0.5], &bounds, 200, 1).unwrap();
    let exact = thompson_sample(&gp, small.as_ref(), 3, 9).unwrap();
    assert_eq!(exact.route, ThompsonRoute::Exact);
    assert_eq!(
        exact,
        thompson_sample_with(&gp, small.as_ref(), 3, 9, 200, 64).unwrap()
    );
    // Below 200 allowed exact candidates: pathwise, picking each sample's argmax.
    let picks = thompson_sample_with(&gp, small.as_ref(), 3, 9, 199, 64).unwrap();
    assert_eq!(picks.route, ThompsonRoute::Pathwise);
    assert_eq!(
        picks,
        thompson_sample_with(&gp, small.as_ref(), 3, 9, 199, 64).unwrap()
    );
    let PathwiseSamples::Samples(s) = gp.pathwise_sample(small.as_ref(), 3, 64, 9).unwrap() else {
        panic!("pathwise samples unsupported");
    };
    let mut taken = Vec::new();
    for j in 0..3 {
        let best = (0..200)
            .filter(|i| !taken.contains(i))
            .max_by(|&a, &b| s[(a, j)].total_cmp(&s[(b, j)]))
            .unwrap();
        assert_eq!(picks.indices[j], best);
        taken.push(best);
    }
    // The default threshold.
    let large = thompson_candidates(&[0.5, 0.5], &bounds, EXACT_THOMPSON_MAX + 1, 1).unwrap();
    let picks = thompson_sample(&gp, large.as_ref(), 2, 3).unwrap();
    assert_eq!(picks.route, ThompsonRoute::Pathwise);
    // A kernel without random features falls back to exact samples, saying why.
    let rq = rq_gp();
    let picks = thompson_sample_with(&rq, small.as_ref(), 2, 3, 10, 64).unwrap();
    assert!(
        matches!(&picks.route, ThompsonRoute::ExactFallback(why) if why.contains("`rq`")),
        "{:?}",
        picks.route
    );
    assert_eq!(
        picks.indices,
        thompson_sample(&rq, small.as_ref(), 2, 3).unwrap().indices
    );
}

#[test]
fn a_pathwise_pick_is_as_likely_as_the_candidate_being_the_larger() {
    // Two candidates, pathwise forced: P(pick the first) = Φ((μ₁ − μ₂)/√(v₁ + v₂ − 2c)).
    let gp = fitted_gp();
    let x = Mat::from_fn(2, 2, |i, c| [[2.6, -2.4], [-2.6, -2.5]][i][c]);
    let j = gp.joint(x.as_ref()).unwrap();
    let sd = (j.cov[(0, 0)] + j.cov[(1, 1)] - 2.0 * j.cov[(0, 1)]).sqrt();
    let p = cdf((j.mean[0] - j.mean[1]) / sd);
    assert!(p > 0.05 && p < 0.95, "a test that can tell: p = {p}");
    let trials = 4000;
    let first = (0..trials)
        .filter(|&seed| {
            thompson_sample_with(&gp, x.as_ref(), 1, seed, 0, 256)
                .unwrap()
                .indices[0]
                == 0
        })
        .count();
    let freq = first as f64 / trials as f64;
    let se = (p * (1.0 - p) / trials as f64).sqrt();
    assert!(
        (freq - p).abs() < STANDARD_ERRORS * se,
        "picked {freq}, want {p} (se {se:.1e})"
    );
}
