//! Full-θ mode (module `full_theta`) against independent computations: `KL_θ` against the
//! dense Gaussian KL, the estimator's gradient against central differences (fixed `η`, fixed
//! minibatch), the limit `C_θ → 0` against point mode's objective (the whitened SVGP's ELBO),
//! the one-sample estimator's mean against quadrature over `q(θ)`, seeded training, the averaged
//! iterate against the mean of shorter runs' last iterates, and more `θ`-draws per step.

use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

use super::full_theta::{standard_normals, FullTheta, Stage, THETA_PRIOR_MEAN, THETA_PRIOR_SD};
use crate::kernels::Kernel;
use crate::linalg::{Cholesky, Parallelism};
use crate::means::Mean;
use crate::models::svgp::{Batches, Svgp, SvgpLikelihood};

/// `n` rows of a periodic-times-trend signal on [−3, 3] with a little noise.
fn data(n: usize, seed: u64) -> (Mat<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let x = Mat::from_fn(n, 1, |_, _| rng.random_range(-3.0..3.0));
    let y = (0..n)
        .map(|i| {
            let t: f64 = x[(i, 0)];
            0.4 * t * (2.0 * t).sin() + 0.1 * rng.sample::<f64, _>(StandardNormal)
        })
        .collect();
    (x, y)
}

/// A state with generic parameters: kernel `expr`, 5 inducing inputs, a random `q(u)` and a
/// random `q(θ)` around the kernel's hyperparameters with standard deviations `sd`.
fn model(expr: &str, sd: f64, seed: u64) -> FullTheta {
    let mut rng = StdRng::seed_from_u64(seed);
    let kernel = Kernel::parse(expr).unwrap();
    let z = Mat::from_fn(5, 1, |i, _| -2.5 + 1.2 * i as f64 + 0.1);
    let m_u: Vec<f64> = (0..5)
        .map(|_| 0.3 * rng.sample::<f64, _>(StandardNormal))
        .collect();
    let c_u = Mat::from_fn(5, 5, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Greater => 0.1 * rng.sample::<f64, _>(StandardNormal),
        std::cmp::Ordering::Equal => rng.random_range(0.2..0.6),
        std::cmp::Ordering::Less => 0.0,
    });
    let p = kernel.n_params();
    let m_theta: Vec<f64> = kernel
        .log_params()
        .iter()
        .map(|v| v + 0.1 * rng.sample::<f64, _>(StandardNormal))
        .collect();
    let c_theta = Mat::from_fn(p, p, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Greater => 0.3 * sd * rng.sample::<f64, _>(StandardNormal),
        std::cmp::Ordering::Equal => sd * rng.random_range(0.7..1.3),
        std::cmp::Ordering::Less => 0.0,
    });
    FullTheta::from_parts(kernel, z, (m_u, c_u), (m_theta, c_theta), 0.05).unwrap()
}

const EXPR: &str = "per(var=0.8, ls=[1.1], period=2.5) * lin(var=0.6) + se(var=0.3, ls=[0.9])";

#[test]
fn kl_theta_matches_the_dense_gaussian_kl() {
    let f = model(EXPR, 0.4, 1);
    let (m, c) = f.theta();
    let p = m.len();
    let sigma = c * c.transpose();
    let chol = Cholesky::factor(&sigma, "Σ_θ", Parallelism::Sequential).unwrap();
    let s2 = THETA_PRIOR_SD * THETA_PRIOR_SD;
    let trace: f64 = (0..p).map(|i| sigma[(i, i)]).sum();
    let quad: f64 = m.iter().map(|v| (v - THETA_PRIOR_MEAN).powi(2)).sum();
    // ½[tr(Σ₀⁻¹Σ) + (m − μ₀)ᵀΣ₀⁻¹(m − μ₀) − P + log|Σ₀| − log|Σ|].
    let dense = 0.5 * (trace / s2 + quad / s2 - p as f64 + p as f64 * s2.ln() - chol.log_det());
    assert!(
        (f.kl_theta() - dense).abs() < 1e-10 * dense.abs(),
        "{} vs {dense}",
        f.kl_theta()
    );
    // q(θ) = p(θ) gives 0.
    let kernel = Kernel::parse("se(var=1, ls=[1])").unwrap();
    let prior = FullTheta::from_parts(
        kernel,
        Mat::from_fn(2, 1, |i, _| i as f64 + 0.5),
        (vec![0.0; 2], Mat::identity(2, 2)),
        (vec![0.0; 2], Mat::identity(2, 2)),
        0.1,
    )
    .unwrap();
    assert!(prior.kl_theta().abs() < 1e-15);
}

#[test]
fn estimator_gradient_matches_central_differences() {
    let (x, y) = data(40, 2);
    let f = model(EXPR, 0.3, 3);
    let rows = [1, 4, 8, 15, 16, 23, 31, 39];
    let eta: Vec<f64> = (0..f.n_theta())
        .map(|i| 0.8 * (i as f64 - 1.7).sin())
        .collect();
    let (value, grad) = f
        .estimate((x.as_ref(), &y), Some(&rows), &eta, true)
        .unwrap();
    let grad = grad.unwrap();
    let p0 = f.pack();
    assert_eq!(grad.len(), p0.len());
    let at = |p: &[f64]| {
        f.unpack(p)
            .unwrap()
            .estimate((x.as_ref(), &y), Some(&rows), &eta, false)
            .unwrap()
            .0
    };
    assert!((at(&p0) - value).abs() < 1e-12 * value.abs());
    let h = 1e-5;
    for j in 0..p0.len() {
        let (mut up, mut down) = (p0.clone(), p0.clone());
        up[j] += h;
        down[j] -= h;
        let fd = (at(&up) - at(&down)) / (2.0 * h);
        assert!(
            (fd - grad[j]).abs() < 1e-6 * grad[j].abs().max(1.0),
            "entry {j} of {}: analytic {} vs difference {fd}",
            p0.len(),
            grad[j]
        );
    }
}

#[test]
fn vanishing_theta_variance_gives_the_point_objective() {
    let (x, y) = data(40, 4);
    let f = model(EXPR, 0.3, 5);
    let (m_theta, _) = f.theta();
    let m_theta = m_theta.to_vec();
    let (m_u, c_u) = f.variational();
    let (m_u, c_u) = (m_u.to_vec(), c_u.to_owned());
    let mut kernel = Kernel::parse(EXPR).unwrap();
    kernel.set_log_params(&m_theta).unwrap();
    // Point mode's objective: the whitened SVGP at θ = m_θ with the same q(u)
    // (m̃ = L⁻¹ m_u, L̃ = L⁻¹ C_u, K_uu + 10⁻⁶ I = L Lᵀ), formed here.
    let z = Mat::from_fn(5, 1, |i, _| -2.5 + 1.2 * i as f64 + 0.1);
    let mut kuu = kernel.matrix(z.as_ref());
    (0..5).for_each(|i| kuu[(i, i)] += 1e-6);
    let chol = Cholesky::factor(&kuu, "K_uu", Parallelism::Sequential).unwrap();
    let mut m_tilde = Mat::from_fn(5, 1, |i, _| m_u[i]);
    chol.solve_lower_in_place(m_tilde.as_mut());
    let mut l_tilde = c_u.clone();
    chol.solve_lower_in_place(l_tilde.as_mut());
    let point = Svgp::from_parts(
        kernel,
        Mean::Zero,
        vec![f.noise()],
        SvgpLikelihood::Gaussian,
        z.clone(),
        (0..5).map(|i| m_tilde[(i, 0)]).collect(),
        l_tilde,
    )
    .unwrap()
    .elbo(x.as_ref(), &y)
    .unwrap();
    let p = m_theta.len();
    let eta = vec![1.3; p];
    for sd in [1e-4, 1e-7, 1e-10] {
        let tiny = FullTheta::from_parts(
            Kernel::parse(EXPR).unwrap(),
            z.clone(),
            (m_u.clone(), c_u.clone()),
            (
                m_theta.clone(),
                Mat::from_fn(p, p, |i, j| if i == j { sd } else { 0.0 }),
            ),
            f.noise(),
        )
        .unwrap();
        let (v, _) = tiny.estimate((x.as_ref(), &y), None, &eta, false).unwrap();
        let gap = (v + tiny.kl_theta() - point).abs();
        // The sample moves θ by 1.3·sd: the gap shrinks with it.
        assert!(gap < 1e3 * sd * point.abs().max(1.0), "sd {sd}: gap {gap}");
    }
}

#[test]
fn one_sample_estimator_is_unbiased_for_the_quadrature_value() {
    // One hyperparameter (LIN's variance): E_q(θ)[h(θ)] by a fine trapezoid rule over η.
    let (x, y) = data(30, 6);
    let kernel = Kernel::parse("lin(var=0.5)").unwrap();
    let z = Mat::from_fn(3, 1, |i, _| -2.0 + 1.7 * i as f64 + 0.05);
    let f = FullTheta::from_parts(
        kernel,
        z,
        (
            vec![0.1, -0.2, 0.3],
            Mat::from_fn(3, 3, |i, j| if i == j { 0.3 } else { 0.0 }),
        ),
        (vec![-0.4], Mat::from_fn(1, 1, |_, _| 0.5)),
        0.2,
    )
    .unwrap();
    let h = |e: f64| f.estimate((x.as_ref(), &y), None, &[e], false).unwrap().0;
    let (lo, hi, steps) = (-9.0, 9.0, 4000);
    let dx = (hi - lo) / steps as f64;
    let phi = |e: f64| (-0.5 * e * e).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let quadrature: f64 = (0..=steps)
        .map(|k| {
            let e = lo + k as f64 * dx;
            let w = if k == 0 || k == steps { 0.5 } else { 1.0 };
            w * h(e) * phi(e) * dx
        })
        .sum();
    let draws = standard_normals(20_000, 1, 11);
    let values: Vec<f64> = draws.iter().map(|e| h(e[0])).collect();
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (values.len() - 1) as f64;
    let se = (var / values.len() as f64).sqrt();
    assert!(se > 0.0, "the estimator must vary with θ");
    assert!(
        (mean - quadrature).abs() < 4.0 * se,
        "MC {mean} ± {se} vs quadrature {quadrature}"
    );
}

fn local(f: &FullTheta, x: MatRef<'_, f64>, y: &[f64]) -> f64 {
    f.local_elbo((x, y), None, &standard_normals(16, f.n_theta(), 3))
        .unwrap()
}

#[test]
fn training_is_seeded_and_raises_the_local_elbo() {
    let (x, y) = data(60, 7);
    let kernel = Kernel::parse("per(var=1, ls=[1], period=1) * lin(var=1)").unwrap();
    let z = Mat::from_fn(6, 1, |i, _| -2.7 + 1.05 * i as f64);
    let f = FullTheta::new(kernel, z, 0.1).unwrap();
    let before = local(&f, x.as_ref(), &y);
    let a = f.train((x.as_ref(), &y), 300, 0.02, 16, (1, 2)).unwrap();
    let b = f.train((x.as_ref(), &y), 300, 0.02, 16, (1, 2)).unwrap();
    let (pa, pb) = (a.pack(), b.pack());
    assert!(pa.iter().zip(&pb).all(|(u, v)| u.to_bits() == v.to_bits()));
    let c = f.train((x.as_ref(), &y), 300, 0.02, 16, (1, 3)).unwrap();
    assert_ne!(c.pack(), pa, "another η stream gives another run");
    let after = local(&a, x.as_ref(), &y);
    assert!(after > before + 1.0, "{before} → {after}");
}

#[test]
fn optimal_q_u_is_a_stationary_point_of_the_sample_average() {
    let (x, y) = data(50, 8);
    let f = model(EXPR, 0.3, 9);
    let etas = standard_normals(5, f.n_theta(), 4);
    let opt = f.with_optimal_q_u((x.as_ref(), &y), &etas).unwrap();
    let m = 5;
    let (mut grad, mut value, mut before) = (vec![0.0; opt.len()], 0.0, 0.0);
    for eta in &etas {
        let (v, g) = opt.estimate((x.as_ref(), &y), None, eta, true).unwrap();
        value += v;
        before += f.estimate((x.as_ref(), &y), None, eta, false).unwrap().0;
        grad.iter_mut().zip(g.unwrap()).for_each(|(t, s)| *t += s);
    }
    // Every q(u) coordinate (m_u, then C_u's triangle) has zero gradient at the optimum.
    let q_u = m + m * (m + 1) / 2;
    let scale = grad[q_u..].iter().fold(1.0_f64, |a, g| a.max(g.abs()));
    for (j, g) in grad[..q_u].iter().enumerate() {
        assert!(g.abs() < 1e-7 * scale.max(value.abs()), "entry {j}: {g}");
    }
    assert!(
        value > before,
        "the optimum {value} is above the generic q(u)'s {before}"
    );
}

fn stage(steps: usize, average_from: Option<usize>, theta_samples: usize) -> Stage {
    Stage {
        steps,
        lr: 0.02,
        batch_size: 16,
        seeds: (1, 2),
        average_from,
        theta_samples,
    }
}

#[test]
fn averaged_iterate_is_the_mean_of_the_later_iterates() {
    let (x, y) = data(60, 7);
    let f = model(EXPR, 0.2, 5);
    let data = (x.as_ref(), y.as_slice());
    // A k-step run follows the first k steps of a longer one (same minibatches, same η, a
    // constant rate), so its last iterate is the longer run's k-th: averaging from step 6 of
    // 15 must give the mean of the 7- … 15-step runs' last iterates.
    let averaged = f.train_stage(data, &stage(15, Some(6), 1)).unwrap().pack();
    let mut mean = vec![0.0; averaged.len()];
    for k in 7..=15 {
        let last = f.train_stage(data, &stage(k, None, 1)).unwrap().pack();
        mean.iter_mut().zip(last).for_each(|(m, v)| *m += v / 9.0);
    }
    for (j, (a, m)) in averaged.iter().zip(&mean).enumerate() {
        assert!(
            (a - m).abs() < 1e-12 * m.abs().max(1.0),
            "entry {j}: {a} vs {m}"
        );
    }
    // And it is not the last iterate.
    assert_ne!(
        averaged,
        f.train_stage(data, &stage(15, None, 1)).unwrap().pack()
    );
    // `train` is the one-draw, last-iterate stage, bit for bit.
    let plain = f.train(data, 15, 0.02, 16, (1, 2)).unwrap().pack();
    assert_eq!(
        plain,
        f.train_stage(data, &stage(15, None, 1)).unwrap().pack()
    );
}

#[test]
fn several_theta_draws_per_step_ascend_their_mean_gradient() {
    let (x, y) = data(60, 7);
    let f = model(EXPR, 0.2, 5);
    let data = (x.as_ref(), y.as_slice());
    assert!(f.train_stage(data, &stage(5, None, 0)).is_err());
    // Adam's first step is lr·ĝ/(|ĝ| + ε) per coordinate (bias-corrected moments are ĝ and
    // ĝ²), ĝ the objective's gradient at the start: here the mean over 3 draws of η (the
    // η-stream's first 3, in order) on the first minibatch, divided by n.
    let (n, draws, lr) = (60.0, 3, 0.02);
    let rows = Batches::new(60, 16, 1).next_batch().to_vec();
    let mut rng = StdRng::seed_from_u64(2);
    let mut g = vec![0.0; f.len()];
    for _ in 0..draws {
        let eta: Vec<f64> = (0..f.n_theta())
            .map(|_| rng.sample(StandardNormal))
            .collect();
        let (_, gs) = f.estimate(data, Some(&rows), &eta, true).unwrap();
        g.iter_mut().zip(gs.unwrap()).for_each(|(a, b)| *a += b);
    }
    let stepped = f.train_stage(data, &stage(1, None, draws)).unwrap().pack();
    for (j, ((x1, x0), gj)) in stepped.iter().zip(f.pack()).zip(&g).enumerate() {
        let gh = gj / (draws as f64 * n);
        let expected = x0 + lr * gh / (gh.abs() + 1e-8);
        assert!(
            (x1 - expected).abs() < 1e-12 * expected.abs().max(1.0),
            "entry {j}: {x1} vs {expected}"
        );
    }
    // One draw's step differs (its gradient has other signs somewhere).
    assert_ne!(
        stepped,
        f.train_stage(data, &stage(1, None, 1)).unwrap().pack()
    );
}
