//! VBKS (spec `vbks.md` §2, §5): the kernel belief q(g), the kernel posterior, the model
//! average, and the per-kernel sparse GPs, each against an independent computation.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, StandardNormal};
use trustgp::linalg::{Cholesky, Parallelism};
use trustgp::models::inducing::InducingInit;
use trustgp::models::svgp::{Svgp, SvgpConfig, SvgpLikelihood};
use trustgp::posterior::Marginals;
use trustgp::selection::{
    initial_periods, mixture_moments, random_baseline, BeliefConfig, KernelBelief, KernelSpace,
    PeriodInit, Structure, Vbks, VbksConfig, VbksMode, DEFAULT_PERIOD_ALPHA,
};
use trustgp::{fit::Optimizer, means::Mean, Mat};

fn normals(rng: &mut StdRng, count: usize, k: usize) -> Vec<Vec<f64>> {
    (0..count)
        .map(|_| (0..k).map(|_| StandardNormal.sample(rng)).collect())
        .collect()
}

fn random_belief(k: usize, seed: u64) -> KernelBelief {
    let mut rng = StdRng::seed_from_u64(seed);
    let mean = (0..k).map(|_| rng.random_range(-1.0..1.0)).collect();
    let chol = Mat::from_fn(k, k, |i, j| match () {
        _ if j > i => 0.0,
        _ if j == i => rng.random_range(0.3..1.5),
        _ => rng.random_range(-0.5..0.5),
    });
    KernelBelief::from_parts(mean, chol).unwrap()
}

fn dense_log_det(a: &Mat<f64>) -> f64 {
    Cholesky::exact(a.clone(), Parallelism::Sequential)
        .unwrap()
        .log_det()
}

#[test]
fn kl_of_q_g_matches_the_dense_formula_and_vanishes_at_the_prior() {
    assert_eq!(KernelBelief::prior(5).kl(), 0.0);
    let b = random_belief(4, 1);
    let c = b.chol();
    let sigma = c * c.transpose();
    let trace: f64 = (0..4).map(|i| sigma[(i, i)]).sum();
    let mm: f64 = b.mean().iter().map(|v| v * v).sum();
    let dense = 0.5 * (trace + mm - 4.0 - dense_log_det(&sigma));
    assert!((b.kl() - dense).abs() < 1e-12 * dense.abs().max(1.0));
    assert!(b.kl() > 0.0);
}

#[test]
fn q_g_gradient_matches_central_differences() {
    let k = 4;
    let b = random_belief(k, 2);
    let l_star = [-120.0, -118.5, -125.0, -119.2];
    let etas = normals(&mut StdRng::seed_from_u64(9), 64, k);
    let (_, grad) = b.objective(&l_star, &etas);
    let p = b.to_params();
    for i in 0..p.len() {
        let h = 1e-6;
        let mut up = p.clone();
        let mut down = p.clone();
        up[i] += h;
        down[i] -= h;
        let fu = KernelBelief::from_params(k, &up)
            .objective(&l_star, &etas)
            .0;
        let fd = KernelBelief::from_params(k, &down)
            .objective(&l_star, &etas)
            .0;
        let fdiff = (fu - fd) / (2.0 * h);
        assert!(
            (fdiff - grad[i]).abs() < 1e-6 * grad[i].abs().max(1.0),
            "parameter {i}: analytic {} vs differences {fdiff}",
            grad[i]
        );
    }
    // The parameter layout round-trips.
    let back = KernelBelief::from_params(k, &p);
    assert!((back.kl() - b.kl()).abs() < 1e-12);
}

#[test]
fn shifting_every_local_elbo_shifts_f_and_leaves_the_gradient() {
    let b = random_belief(3, 4);
    let etas = normals(&mut StdRng::seed_from_u64(5), 32, 3);
    let l = [-10.0, -12.0, -9.5];
    let shifted: Vec<f64> = l.iter().map(|v| v + 1e5).collect();
    let (f1, g1) = b.objective(&l, &etas);
    let (f2, g2) = b.objective(&shifted, &etas);
    assert!((f2 - f1 - 1e5).abs() < 1e-8);
    assert_eq!(g1, g2);
}

#[test]
fn kernel_posterior_is_a_probability_vector_even_for_extreme_logits() {
    let mean = vec![1e4, -1e4, 0.0, 3.0];
    let chol = Mat::from_fn(4, 4, |i, j| if i == j { 1e-12 } else { 0.0 });
    let b = KernelBelief::from_parts(mean, chol).unwrap();
    for s in [1, 7, 2000] {
        let q = b.probabilities(s, 1, None);
        assert!(q.iter().all(|v| (0.0..=1.0).contains(v)));
        assert!((q.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((q[0] - 1.0).abs() < 1e-12);
    }
    // A (numerically) degenerate q(g) gives softmax(m_g).
    let b = KernelBelief::from_parts(
        vec![0.5, -1.0, 2.0],
        Mat::from_fn(3, 3, |i, j| if i == j { 1e-12 } else { 0.0 }),
    )
    .unwrap();
    let q = b.probabilities(10, 3, None);
    let e: Vec<f64> = [0.5f64, -1.0, 2.0].iter().map(|v| v.exp()).collect();
    let total: f64 = e.iter().sum();
    for i in 0..3 {
        assert!((q[i] - e[i] / total).abs() < 1e-9);
    }
    // A failed kernel (L* = −∞) gets probability 0.
    let q = KernelBelief::prior(3).probabilities(500, 2, Some(&[-1.0, f64::NEG_INFINITY, -2.0]));
    assert_eq!(q[1], 0.0);
    assert!((q.iter().sum::<f64>() - 1.0).abs() < 1e-12);
}

/// The spec's K = 2 oracle (§2.9): the optimum q(k₁) by ΔL, from Gauss–Hermite quadrature.
#[test]
fn cold_refit_reaches_the_two_kernel_oracle() {
    for (delta, oracle) in [(1.0, 0.56550), (10.0, 0.86321), (100.0, 0.97913)] {
        let mut b = KernelBelief::prior(2);
        b.refit(&[-500.0 + delta, -500.0], 2000, &BeliefConfig::default(), 7)
            .unwrap();
        let q = b.probabilities(100_000, 11, None)[0];
        assert!(
            (q - oracle).abs() < 0.01,
            "ΔL = {delta}: q(k1) = {q}, oracle {oracle}"
        );
    }
}

#[test]
fn equal_local_elbos_give_a_uniform_posterior_and_order_is_kept() {
    let mut b = KernelBelief::prior(3);
    b.refit(&[-7.0; 3], 2000, &BeliefConfig::default(), 1)
        .unwrap();
    let q = b.probabilities(100_000, 2, None);
    for v in &q {
        assert!((v - 1.0 / 3.0).abs() < 0.01, "{q:?}");
    }
    let l = [-10.0, -4.0, -6.0];
    let mut b = KernelBelief::prior(3);
    b.refit(&l, 2000, &BeliefConfig::default(), 1).unwrap();
    let q = b.probabilities(20_000, 2, None);
    assert!(q[1] > q[2] && q[2] > q[0], "{q:?}");
    // Permuting the kernels permutes q(k).
    let mut p = KernelBelief::prior(3);
    p.refit(&[l[2], l[0], l[1]], 2000, &BeliefConfig::default(), 1)
        .unwrap();
    let qp = p.probabilities(20_000, 2, None);
    for (a, b) in [(0, 2), (1, 0), (2, 1)] {
        assert!((qp[a] - q[b]).abs() < 0.02, "{qp:?} vs {q:?}");
    }
}

#[test]
fn restricting_the_belief_keeps_the_marginal_of_the_kept_kernels() {
    let b = random_belief(5, 8);
    let keep = [3, 0, 4];
    let r = b.restrict(&keep).unwrap();
    let full = b.chol() * b.chol().transpose();
    let part = r.chol() * r.chol().transpose();
    for (a, &i) in keep.iter().enumerate() {
        assert_eq!(r.mean()[a], b.mean()[i]);
        for (c, &j) in keep.iter().enumerate() {
            assert!((part[(a, c)] - full[(i, j)]).abs() < 1e-12);
        }
    }
    assert!(b.restrict(&[]).is_err());
    assert!(b.restrict(&[5]).is_err());
}

#[test]
fn mixture_moments_agree_with_the_uncentred_form_bounds_and_sampling() {
    let w = [0.5, 0.3, 0.2];
    let comps = [
        Marginals {
            mean: vec![20.0, 1.0],
            var: vec![0.16, 2.0],
        },
        Marginals {
            mean: vec![20.5, -1.0],
            var: vec![0.25, 0.5],
        },
        Marginals {
            mean: vec![19.2, 0.0],
            var: vec![0.09, 1.0],
        },
    ];
    let m = mixture_moments(&w, &comps);
    let mut rng = StdRng::seed_from_u64(17);
    for j in 0..2 {
        let uncentred: f64 = w
            .iter()
            .zip(&comps)
            .map(|(w, c)| w * (c.var[j] + c.mean[j].powi(2)))
            .sum::<f64>()
            - m.mean[j].powi(2);
        assert!((uncentred - m.var[j]).abs() < 1e-9);
        let lo = comps
            .iter()
            .map(|c| c.mean[j])
            .fold(f64::INFINITY, f64::min);
        let hi = comps
            .iter()
            .map(|c| c.mean[j])
            .fold(f64::NEG_INFINITY, f64::max);
        assert!(lo <= m.mean[j] && m.mean[j] <= hi);
        let within: f64 = w.iter().zip(&comps).map(|(w, c)| w * c.var[j]).sum();
        assert!(m.var[j] > within);
        // Direct sampling of the mixture.
        let n = 200_000;
        let draws: Vec<f64> = (0..n)
            .map(|_| {
                let u: f64 = rng.random();
                let i = if u < 0.5 {
                    0
                } else if u < 0.8 {
                    1
                } else {
                    2
                };
                let z: f64 = StandardNormal.sample(&mut rng);
                comps[i].mean[j] + comps[i].var[j].sqrt() * z
            })
            .collect();
        let mean = draws.iter().sum::<f64>() / n as f64;
        let var = draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let se_mean = (m.var[j] / n as f64).sqrt();
        assert!(
            (mean - m.mean[j]).abs() < 4.0 * se_mean,
            "mean {mean} vs {}",
            m.mean[j]
        );
        // The variance of a sample variance is (μ₄ − σ⁴)/n; bounded here by 3σ⁴·2/n generously.
        let se_var = (6.0 * m.var[j].powi(2) / n as f64).sqrt();
        assert!(
            (var - m.var[j]).abs() < 4.0 * se_var,
            "var {var} vs {}",
            m.var[j]
        );
    }
    // Weight 1 on one kernel gives that kernel; identical kernels give their variance.
    let one = mixture_moments(&[0.0, 1.0, 0.0], &comps);
    assert_eq!(one.mean, comps[1].mean);
    assert_eq!(one.var, comps[1].var);
    let same = mixture_moments(&[0.4, 0.6], &[comps[0].clone(), comps[0].clone()]);
    for j in 0..2 {
        assert!((same.var[j] - comps[0].var[j]).abs() < 1e-14);
    }
}

/// A small 1-D data set: a periodic signal times a linear trend, plus noise (standardised).
fn data(n: usize, seed: u64) -> (Mat<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let x = Mat::from_fn(n, 1, |_, _| rng.random_range(-2.0..2.0));
    let y: Vec<f64> = (0..n)
        .map(|i| {
            let t: f64 = x[(i, 0)];
            let e: f64 = StandardNormal.sample(&mut rng);
            (3.0 * t).sin() * t + 0.05 * e
        })
        .collect();
    (x, y)
}

fn small_config() -> VbksConfig {
    VbksConfig {
        inducing: 12,
        batch_size: 32,
        iterations: 60,
        checkpoints: 3,
        belief: BeliefConfig {
            cold_steps: 300,
            warm_steps: 100,
            ..BeliefConfig::default()
        },
        top: 4,
        seed: 21,
        ..VbksConfig::default()
    }
}

#[test]
fn one_candidate_is_exactly_that_kernels_svgp() {
    let (x, y) = data(80, 1);
    let space = KernelSpace::parse("per * lin").unwrap();
    let config = VbksConfig {
        batch_size: 1000, // the full batch: the minibatch order plays no part
        checkpoints: 1,
        ..small_config()
    };
    let run = Vbks::fit(x.as_ref(), &y, &space, &config, &mut |_| {}).unwrap();
    assert_eq!(run.probabilities(), &[1.0]);
    let model = run.models()[0].as_ref().unwrap();
    // The kernel as VBKS starts it: its PER factor at the series' periodogram peak.
    let periods = initial_periods(PeriodInit::Data, x.as_ref(), &y, 1, DEFAULT_PERIOD_ALPHA);
    assert_eq!(run.initial_periods(), &periods);
    let periods = periods.periods();
    let direct = Svgp::fit(
        x.as_ref(),
        &y,
        space.kernels()[0]
            .instantiate_with_periods(1, &periods)
            .unwrap(),
        Mean::Zero,
        0.1,
        &SvgpConfig {
            likelihood: SvgpLikelihood::Gaussian,
            inducing: 12,
            init: InducingInit::Given(model.inducing().to_owned()),
            learn_inducing: false,
            batch_size: 1000,
            optimizer: Optimizer::adam_fixed_steps(60, 0.01),
            natural_gradients: true,
            seed: 99,
        },
        &mut |_, _| {},
    )
    .unwrap();
    let xs = Mat::from_fn(7, 1, |i, _| -2.5 + 0.8 * i as f64);
    let a = run.mixture().unwrap().predict(xs.as_ref(), true).unwrap();
    let b = direct.predict(xs.as_ref());
    assert_eq!(a.mean, b.mean);
    assert_eq!(a.var, b.var);
    assert_eq!(run.local_elbos()[0], direct.elbo(x.as_ref(), &y).unwrap());
    // The full ELBO (8) with K = 1 is L₁ − KL(q(g)‖p(g)) and q(g) stays at the prior.
    let last = run.history().last().unwrap();
    assert!((last.elbo - run.local_elbos()[0] + run.belief().kl()).abs() < 1e-9);
}

/// Titsias' collapsed bound at the fitted hyperparameters, densely: with natural gradients
/// every stage ends at the optimal q(u), so L* must equal it (spec T7).
#[test]
fn local_elbo_equals_the_dense_collapsed_bound() {
    let (x, y) = data(60, 2);
    let space = KernelSpace::parse("se; per * lin; rq + lin").unwrap();
    let config = VbksConfig {
        inducing: 10,
        ..small_config()
    };
    let run = Vbks::fit(x.as_ref(), &y, &space, &config, &mut |_| {}).unwrap();
    for (i, m) in run.models().iter().enumerate() {
        let m = m.as_ref().unwrap();
        let z = m.inducing().to_owned();
        let kern = m.kernel();
        let sigma2 = m.likelihood().1[0];
        let n = x.nrows();
        let mm = z.nrows();
        let mut kzz = kern.matrix(z.as_ref());
        for a in 0..mm {
            kzz[(a, a)] += 1e-6;
        }
        let kxz = kern.cross(x.as_ref(), z.as_ref());
        let kxx_diag = kern.diag(x.as_ref());
        let kzz_inv = Cholesky::exact(kzz.clone(), Parallelism::Sequential)
            .unwrap()
            .inverse();
        let q = &kxz * &kzz_inv * kxz.transpose();
        let mut c = q.clone();
        for a in 0..n {
            c[(a, a)] += sigma2;
        }
        let chol = Cholesky::exact(c.clone(), Parallelism::Sequential).unwrap();
        let alpha = chol.solve_vec(&y);
        let quad: f64 = y.iter().zip(&alpha).map(|(a, b)| a * b).sum();
        let log_n = -0.5 * (quad + chol.log_det() + n as f64 * (2.0 * std::f64::consts::PI).ln());
        let trace: f64 = (0..n).map(|a| kxx_diag[a] - q[(a, a)]).sum();
        let bound = log_n - trace / (2.0 * sigma2);
        let l = run.local_elbos()[i];
        assert!(
            (l - bound).abs() < 1e-6 * bound.abs(),
            "kernel {i}: L* {l} vs collapsed bound {bound}"
        );
    }
}

#[test]
fn seeded_runs_are_bit_identical_and_kernels_train_independently() {
    let (x, y) = data(150, 3);
    let space = KernelSpace::k12();
    let config = small_config();
    let mut seen = Vec::new();
    let a = Vbks::fit(x.as_ref(), &y, &space, &config, &mut |c| {
        seen.push(c.clone())
    })
    .unwrap();
    let b = Vbks::fit(x.as_ref(), &y, &space, &config, &mut |_| {}).unwrap();
    assert_eq!(a.probabilities(), b.probabilities());
    assert_eq!(a.local_elbos(), b.local_elbos());
    assert_eq!(a.top(), b.top());
    assert_eq!(seen.len(), 3);
    assert_eq!(seen.last().unwrap().iteration, 60);
    assert!((seen[0].data_fraction - 20.0 * 32.0 / 150.0).abs() < 1e-12);
    let xs = Mat::from_fn(5, 1, |i, _| -1.5 + 0.7 * i as f64);
    let pa = a.mixture().unwrap().predict(xs.as_ref(), false).unwrap();
    let pb = b.mixture().unwrap().predict(xs.as_ref(), false).unwrap();
    assert_eq!(pa.mean, pb.mean);
    assert_eq!(pa.var, pb.var);
    // q(k) is a probability vector and the kept weights sum to 1.
    assert!((a.probabilities().iter().sum::<f64>() - 1.0).abs() < 1e-12);
    let (top, w) = a.top();
    assert_eq!(top.len(), 4);
    assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    for pair in top.windows(2) {
        assert!(a.probabilities()[pair[0]] >= a.probabilities()[pair[1]]);
    }
    // Kernel 11 trained alone (same seed: same Z, same minibatches) is bit-identical (T3).
    let alone = KernelSpace::new(vec![space.kernels()[10].clone()]).unwrap();
    let c = Vbks::fit(x.as_ref(), &y, &alone, &config, &mut |_| {}).unwrap();
    let m_in = a.models()[10].as_ref().unwrap().predict(xs.as_ref());
    let m_alone = c.models()[0].as_ref().unwrap().predict(xs.as_ref());
    assert_eq!(m_in.mean, m_alone.mean);
    assert_eq!(a.local_elbos()[10], c.local_elbos()[0]);
    // VBKS-s is the most probable kernel alone.
    let s = a.single_best().unwrap();
    assert_eq!(s.components().len(), 1);
    assert_eq!(s.components()[0].index, top[0]);
    let ps = s.predict(xs.as_ref(), true).unwrap();
    let direct = a.models()[top[0]].as_ref().unwrap().predict(xs.as_ref());
    assert_eq!(ps.mean, direct.mean);
    // The Random baseline is seeded and trains one kernel of the space.
    let (i1, r1) = random_baseline(x.as_ref(), &y, &space, &config).unwrap();
    let (i2, _) = random_baseline(x.as_ref(), &y, &space, &config).unwrap();
    assert_eq!(i1, i2);
    assert_eq!(r1.space().kernels()[0], space.kernels()[i1]);
}

#[test]
fn bad_settings_and_data_are_clear_errors() {
    let (x, y) = data(30, 4);
    let space = KernelSpace::parse("se").unwrap();
    let run = |c: VbksConfig| {
        Vbks::fit(x.as_ref(), &y, &space, &c, &mut |_| {})
            .unwrap_err()
            .to_string()
    };
    assert!(run(VbksConfig {
        inducing: 31,
        ..small_config()
    })
    .contains("inducing"));
    assert!(run(VbksConfig {
        inducing: 0,
        ..small_config()
    })
    .contains("inducing"));
    assert!(run(VbksConfig {
        batch_size: 0,
        ..small_config()
    })
    .contains("batch size"));
    assert!(run(VbksConfig {
        iterations: 0,
        ..small_config()
    })
    .contains("iterations"));
    assert!(run(VbksConfig {
        top: 0,
        ..small_config()
    })
    .contains("top"));
    let mut bad_y = y.clone();
    bad_y[3] = f64::NAN;
    assert!(Vbks::fit(x.as_ref(), &bad_y, &space, &small_config(), &mut |_| {}).is_err());
    // Inputs at the origin are never inducing inputs (a LIN factor would zero their row).
    let mut at_origin = x.clone();
    for i in 0..25 {
        at_origin[(i, 0)] = 0.0;
    }
    let err = Vbks::fit(
        at_origin.as_ref(),
        &y,
        &space,
        &VbksConfig {
            inducing: 10,
            ..small_config()
        },
        &mut |_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("origin"), "{err}");
    let _ = Structure::parse("se").unwrap();
}

/// Pruning during training (spec §2.12 applied early): after the first checkpoint only the
/// top kernels train on; the others keep their stage-1 model and `L*` exactly, the kept ones
/// are exactly those of an unpruned run (kernels train independently), and `q(g)` still covers
/// the whole space.
#[test]
fn pruning_during_training_freezes_all_but_the_top_kernels() {
    let (x, y) = data(150, 5);
    let space = KernelSpace::k12();
    let config = VbksConfig {
        top: 3,
        ..small_config()
    };
    let pruned_config = VbksConfig {
        prune_after: Some(1),
        ..config.clone()
    };
    let full = Vbks::fit(x.as_ref(), &y, &space, &config, &mut |_| {}).unwrap();
    let pruned = Vbks::fit(x.as_ref(), &y, &space, &pruned_config, &mut |_| {}).unwrap();
    // The first stage alone: 20 of the 60 iterations, the same seeds.
    let first = Vbks::fit(
        x.as_ref(),
        &y,
        &space,
        &VbksConfig {
            iterations: 20,
            checkpoints: 1,
            ..config.clone()
        },
        &mut |_| {},
    )
    .unwrap();
    let h = pruned.history();
    assert_eq!(h.len(), 3);
    assert_eq!(h[0].local_elbos, full.history()[0].local_elbos);
    assert_eq!(h[0].probabilities, full.history()[0].probabilities);
    // The kept kernels: the top 3 of q(k) at the first checkpoint.
    let q1 = &h[0].probabilities;
    let mut order: Vec<usize> = (0..12).collect();
    order.sort_by(|&a, &b| q1[b].total_cmp(&q1[a]).then(a.cmp(&b)));
    let kept = &order[..3];
    let xs = Mat::from_fn(5, 1, |i, _| -1.5 + 0.7 * i as f64);
    let predict = |run: &Vbks, i: usize| run.models()[i].as_ref().unwrap().predict(xs.as_ref());
    for i in 0..12 {
        let p = predict(&pruned, i);
        if kept.contains(&i) {
            assert_eq!(p.mean, predict(&full, i).mean, "kept kernel {i}");
            assert_eq!(h[2].local_elbos[i], full.local_elbos()[i]);
        } else {
            assert_eq!(p.mean, predict(&first, i).mean, "frozen kernel {i}");
            assert_eq!(p.var, predict(&first, i).var, "frozen kernel {i}");
            assert_eq!(h[1].local_elbos[i], h[0].local_elbos[i]);
            assert_eq!(h[2].local_elbos[i], h[0].local_elbos[i]);
        }
    }
    assert_eq!(h[2].probabilities.len(), 12);
    assert!((h[2].probabilities.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    // Pruning after the last checkpoint changes nothing.
    let late = Vbks::fit(
        x.as_ref(),
        &y,
        &space,
        &VbksConfig {
            prune_after: Some(3),
            ..config.clone()
        },
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(late.probabilities(), full.probabilities());
    // Pruning before any q(k) exists is refused, naming the setting.
    let err = Vbks::fit(
        x.as_ref(),
        &y,
        &space,
        &VbksConfig {
            prune_after: Some(0),
            ..config
        },
        &mut |_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("prune after"), "{err}");
}

#[test]
fn full_theta_runs_are_seeded_and_kernels_train_independently() {
    let (x, y) = data(120, 4);
    let space = KernelSpace::parse("se; per * lin; se + lin").unwrap();
    let config = VbksConfig {
        mode: VbksMode::Full,
        predict_samples: 8,
        eval_samples: 4,
        iterations: 90,
        ..small_config()
    };
    let a = Vbks::fit(x.as_ref(), &y, &space, &config, &mut |_| {}).unwrap();
    let b = Vbks::fit(x.as_ref(), &y, &space, &config, &mut |_| {}).unwrap();
    assert_eq!(a.mode(), VbksMode::Full);
    assert_eq!(a.probabilities(), b.probabilities());
    assert_eq!(a.local_elbos(), b.local_elbos());
    assert!(a.local_elbos().iter().all(|v| v.is_finite()));
    let xs = Mat::from_fn(5, 1, |i, _| -1.5 + 0.7 * i as f64);
    let pa = a.mixture().unwrap().predict(xs.as_ref(), false).unwrap();
    let pb = b.mixture().unwrap().predict(xs.as_ref(), false).unwrap();
    assert_eq!((pa.mean, pa.var), (pb.mean, pb.var));
    // Each kept kernel enters with `predict_samples` hyperparameter samples of equal weight.
    let (top, w) = a.top();
    let mix = a.mixture().unwrap();
    assert_eq!(mix.components().len(), 8 * top.len());
    for (&i, &wi) in top.iter().zip(w) {
        let parts: Vec<f64> = mix
            .components()
            .iter()
            .filter(|c| c.index == i)
            .map(|c| c.weight)
            .collect();
        assert_eq!(parts.len(), 8);
        assert!((parts.iter().sum::<f64>() - wi).abs() < 1e-12);
    }
    // q(θ) moved away from its start 0.1·I and the prior mean.
    let f = a.full_models()[1].as_ref().unwrap();
    assert_eq!(f.n_theta(), 4);
    assert!(f.kl_theta() > 0.0);
    // A kernel trained alone draws the same numbers (its stream follows its structure): the
    // same local ELBO bit for bit (T3), and with one candidate q(k) = 1 (T1).
    let alone = KernelSpace::new(vec![space.kernels()[1].clone()]).unwrap();
    let c = Vbks::fit(x.as_ref(), &y, &alone, &config, &mut |_| {}).unwrap();
    assert_eq!(a.local_elbos()[1], c.local_elbos()[0]);
    assert_eq!(c.probabilities(), &[1.0]);
}

/// The timing protocol's schedule: a short first stage (`first_checkpoint`), the other
/// checkpoints evenly spaced after it; pruning after it trains only the top kernels, whose
/// first stage is exactly that of a run stopped there.
#[test]
fn first_checkpoint_sets_a_short_first_stage() {
    let (x, y) = data(150, 5);
    let space = KernelSpace::k12();
    let config = VbksConfig {
        first_checkpoint: Some(7),
        prune_after: Some(1),
        ..small_config()
    };
    let run = Vbks::fit(x.as_ref(), &y, &space, &config, &mut |_| {}).unwrap();
    let ends: Vec<usize> = run.history().iter().map(|c| c.iteration).collect();
    // 7, then 2 evenly spaced ends over (7, 60]: 7 + 53/2 (floored), 60.
    assert_eq!(ends, vec![7, 33, 60]);
    let first = Vbks::fit(
        x.as_ref(),
        &y,
        &space,
        &VbksConfig {
            iterations: 7,
            checkpoints: 1,
            ..small_config()
        },
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(run.history()[0].local_elbos, first.history()[0].local_elbos);
    for (bad, needle) in [
        (Some(0), "first checkpoint"),
        (Some(60), "first checkpoint"),
    ] {
        let err = Vbks::fit(
            x.as_ref(),
            &y,
            &space,
            &VbksConfig {
                first_checkpoint: bad,
                ..small_config()
            },
            &mut |_| {},
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains(needle), "{err}");
    }
}

/// The closing natural-gradient pass of each stage on a row subset: all rows as the subset
/// is exactly the default; fewer rows give another (finite) run; zero rows or full-θ mode are
/// refused by name.
#[test]
fn final_q_rows_subsets_the_closing_pass() {
    let (x, y) = data(150, 6);
    let space = KernelSpace::parse("se; per; se + lin").unwrap();
    let fit = |final_q_rows: Option<usize>, mode: VbksMode| {
        let config = VbksConfig {
            final_q_rows,
            mode,
            ..small_config()
        };
        Vbks::fit(x.as_ref(), &y, &space, &config, &mut |_| {})
    };
    let exact = fit(None, VbksMode::Point).unwrap();
    let all = fit(Some(150), VbksMode::Point).unwrap();
    assert_eq!(exact.local_elbos(), all.local_elbos());
    let subset = fit(Some(40), VbksMode::Point).unwrap();
    assert!(subset.local_elbos().iter().all(|v| v.is_finite()));
    assert_ne!(subset.local_elbos(), exact.local_elbos());
    let err = fit(Some(0), VbksMode::Point).unwrap_err().to_string();
    assert!(err.contains("final q rows"), "{err}");
    let err = fit(Some(40), VbksMode::Full).unwrap_err().to_string();
    assert!(err.contains("final q rows"), "{err}");
}
