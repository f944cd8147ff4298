//! Checks every fitted model's [`Posterior`]: input gradients against central finite
//! differences, the joint covariance against the marginals, seeded samples against the
//! posterior (tolerances from the central limit theorem), and the linear-Gaussian form, formed
//! densely, against each model's own prediction.

mod form;
mod joint_gradients;
mod models;

use faer::{Mat, MatRef};

use super::{LinearGaussian, Marginals, Posterior};
use crate::kernels::Covariance;
use crate::means::PriorMean;

/// Samples drawn to compare moments.
const SAMPLES: usize = 20_000;
/// How many standard errors a sample moment may be off.
const STANDARD_ERRORS: f64 = 5.0;
/// Step of the central differences.
const STEP: f64 = 1e-5;

/// Central finite differences of the marginal mean and variance against
/// [`Posterior::marginal_gradients`], for the first `continuous` columns (the others are task
/// indices, whose gradient must be zero).
fn check_gradients<P: Posterior>(p: &P, xs: MatRef<'_, f64>, continuous: usize) {
    let g = p.marginal_gradients(xs).unwrap();
    let direct = p.marginals(xs).unwrap();
    assert_eq!(g.marginals, direct, "marginals with and without gradients");
    let mut worst = 0.0f64;
    for a in 0..xs.nrows() {
        for c in 0..xs.ncols() {
            if c >= continuous {
                assert_eq!((g.mean[(a, c)], g.var[(a, c)]), (0.0, 0.0));
                continue;
            }
            let at = |h: f64| {
                let mut row = xs.subrows(a, 1).to_owned();
                row[(0, c)] += h;
                p.marginals(row.as_ref()).unwrap()
            };
            let (up, down) = (at(STEP), at(-STEP));
            let fd_mean = (up.mean[0] - down.mean[0]) / (2.0 * STEP);
            let fd_var = (up.var[0] - down.var[0]) / (2.0 * STEP);
            for (what, fd, an) in [
                ("mean", fd_mean, g.mean[(a, c)]),
                ("var", fd_var, g.var[(a, c)]),
            ] {
                let err = (fd - an).abs() / (1.0 + an.abs());
                worst = worst.max(err);
                assert!(err < 1e-8, "d {what}/dx[{a},{c}]: {an} vs FD {fd}");
            }
        }
    }
    eprintln!("worst relative gradient error {worst:.1e}");
}

/// The joint posterior's mean and diagonal are the marginals.
fn check_joint<P: Posterior>(p: &P, xs: MatRef<'_, f64>) {
    let joint = p.joint(xs).unwrap();
    let m = p.marginals(xs).unwrap();
    for i in 0..xs.nrows() {
        assert!((joint.mean[i] - m.mean[i]).abs() < 1e-12 * (1.0 + m.mean[i].abs()));
        assert!(
            (joint.cov[(i, i)] - m.var[i]).abs() < 1e-12,
            "{i}: {} vs {}",
            joint.cov[(i, i)],
            m.var[i]
        );
        for j in 0..i {
            assert_eq!(joint.cov[(i, j)], joint.cov[(j, i)]);
        }
    }
}

/// Sample mean and covariance of seeded samples within [`STANDARD_ERRORS`] standard errors of
/// the posterior's; the same seed repeats the samples, another one does not.
fn check_samples<P: Posterior>(p: &P, xs: MatRef<'_, f64>) {
    let joint = p.joint(xs).unwrap();
    let s = p.sample_seeded(xs, SAMPLES, 11).unwrap();
    assert_eq!(s, p.sample_seeded(xs, SAMPLES, 11).unwrap());
    assert_ne!(s.col(0), p.sample_seeded(xs, 1, 12).unwrap().col(0));
    let (m, n) = (xs.nrows(), SAMPLES as f64);
    let mean: Vec<f64> = (0..m)
        .map(|i| (0..SAMPLES).map(|j| s[(i, j)]).sum::<f64>() / n)
        .collect();
    let sigma = &joint.cov;
    for i in 0..m {
        let se = (sigma[(i, i)] / n).sqrt();
        assert!(
            (mean[i] - joint.mean[i]).abs() < STANDARD_ERRORS * se,
            "sample mean {i}: {} vs {} (se {se:.1e})",
            mean[i],
            joint.mean[i]
        );
        for k in 0..=i {
            let c = (0..SAMPLES)
                .map(|j| (s[(i, j)] - joint.mean[i]) * (s[(k, j)] - joint.mean[k]))
                .sum::<f64>()
                / n;
            // Var of a product of two zero-mean Gaussians: σ_ii σ_kk + σ_ik².
            let se = ((sigma[(i, i)] * sigma[(k, k)] + sigma[(i, k)].powi(2)) / n).sqrt();
            assert!(
                (c - sigma[(i, k)]).abs() < STANDARD_ERRORS * se,
                "sample covariance ({i},{k}): {c} vs {} (se {se:.1e})",
                sigma[(i, k)]
            );
        }
    }
}

/// All four checks of a posterior.
fn check_posterior<P: Posterior>(p: &P, xs: MatRef<'_, f64>, continuous: usize) {
    check_gradients(p, xs, continuous);
    joint_gradients::check_joint_gradients(p, xs, continuous);
    check_joint(p, xs);
    check_samples(p, xs);
}

/// The form's mean and variance computed densely (`m + kᵀt`, `k − kᵀ S k` with the explicit
/// `S`) agree with a model's own `predict` to `1e-10`.
fn check_form<C: Covariance, M: PriorMean>(
    form: &LinearGaussian<'_, C, M>,
    xs: MatRef<'_, f64>,
    predicted: &Marginals,
) {
    let kz = form.covariance().cross(form.support(), xs);
    let s = form.s_matrix();
    let sk = &s * &kz;
    let prior = form.prior_mean().eval(xs);
    let kss = form.covariance().diag(xs);
    let n = form.support().nrows();
    let own = form.marginals(xs).unwrap();
    for j in 0..xs.nrows() {
        assert!((own.mean[j] - predicted.mean[j]).abs() < 1e-10);
        assert!((own.var[j] - predicted.var[j]).abs() < 1e-10);
        let mean = prior[j] + (0..n).map(|i| kz[(i, j)] * form.t()[i]).sum::<f64>();
        let var = kss[j] - (0..n).map(|i| kz[(i, j)] * sk[(i, j)]).sum::<f64>();
        assert!(
            (mean - predicted.mean[j]).abs() < 1e-10,
            "mean {j}: {mean} vs {}",
            predicted.mean[j]
        );
        assert!(
            (var - predicted.var[j]).abs() < 1e-10,
            "var {j}: {var} vs {}",
            predicted.var[j]
        );
    }
    for i in 0..n {
        for k in 0..i {
            assert!((s[(i, k)] - s[(k, i)]).abs() < 1e-9 * (1.0 + s[(i, k)].abs()));
        }
    }
}

/// A seeded uniform matrix on `[lo, hi)`.
fn uniform(rows: usize, cols: usize, lo: f64, hi: f64, seed: u64) -> Mat<f64> {
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    let mut rng = StdRng::seed_from_u64(seed);
    Mat::from_fn(rows, cols, |_, _| rng.random_range(lo..hi))
}
