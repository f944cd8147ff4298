//! FullTransLMC.

use faer::Mat;

use super::*;
use crate::kernels::{Coregion, Covariance, LmcTerm, MultiOutputKernel};
use crate::means::Mean;
use crate::models::exact::ExactGp;
use crate::models::hyper::GpHyper;
use crate::models::transfer::{LmcTransfer, SingleTaskGp, TransferFitOptions};

/// Few restarts keep the tests fast; the scheme is the same.
fn options() -> TransferFitOptions {
    TransferFitOptions {
        restarts: 2,
        ..TransferFitOptions::default()
    }
}

fn two_sources(d: usize) -> Vec<SourceTask> {
    vec![source(7, d, 0.1, 0.3), source(5, d, 0.5, -0.2)]
}

/// An LMC from `(lengthscales, W_l (tasks×rank), κ_l)` per latent, each a unit-variance
/// Matérn-5/2.
fn lmc(terms: &[(Vec<f64>, Mat<f64>, Vec<f64>)]) -> MultiOutputKernel {
    let terms = terms
        .iter()
        .map(|(ls, w, kappa)| {
            let mut kernel = matern_kernel(1.0, ls);
            kernel.fix_scale();
            LmcTerm {
                kernel,
                coregion: Coregion::new(w.clone(), Some(kappa.clone())).unwrap(),
            }
        })
        .collect();
    MultiOutputKernel::new(terms).unwrap()
}

fn column(v: &[f64]) -> Mat<f64> {
    Mat::from_fn(v.len(), 1, |i, _| v[i])
}

/// `B_l = W_l W_lᵀ + diag(κ_l)` from the entries, and the lengthscales of `k_l`.
fn latents(k: &MultiOutputKernel) -> Vec<(Mat<f64>, Vec<f64>)> {
    k.terms()
        .iter()
        .map(|term| {
            let (a, kappa) = (term.coregion.a(), term.coregion.kappa().unwrap());
            let t = a.nrows();
            let b = Mat::from_fn(t, t, |i, j| {
                (0..a.ncols()).map(|r| a[(i, r)] * a[(j, r)]).sum::<f64>()
                    + if i == j { kappa[i] } else { 0.0 }
            });
            let ls = term.kernel.log_params().iter().map(|v| v.exp()).collect();
            (b, ls)
        })
        .collect()
}

/// `Ω = Σ_l B_l[t_a, t_b] k_l(x_a, x_b) + diag(σ²_{t_a})` over task-indexed rows, written out.
fn dense_omega(k: &MultiOutputKernel, x: &Mat<f64>, noise: &[f64]) -> Mat<f64> {
    let d = x.ncols() - 1;
    let lat = latents(k);
    let n = x.nrows();
    Mat::from_fn(n, n, |a, b| {
        let (ta, tb) = (x[(a, d)] as usize, x[(b, d)] as usize);
        let (xa, xb) = (row(x.as_ref(), a), row(x.as_ref(), b));
        let k: f64 = (lat.iter())
            .map(|(bl, ls)| bl[(ta, tb)] * matern52(&xa[..d], &xb[..d], ls))
            .sum();
        k + if a == b { noise[ta] } else { 0.0 }
    })
}

/// Sources then target, task-indexed.
fn task_indexed(sources: &[SourceTask], x: &Mat<f64>) -> Mat<f64> {
    let mut blocks: Vec<(usize, &Mat<f64>)> = sources.iter().map(|s| &s.x).enumerate().collect();
    blocks.push((sources.len(), x));
    let d = x.ncols();
    let rows: Vec<Vec<f64>> = blocks
        .iter()
        .flat_map(|(t, m)| {
            (0..m.nrows()).map(move |i| {
                let mut r = row(m.as_ref(), i);
                r.push(*t as f64);
                r
            })
        })
        .collect();
    Mat::from_fn(rows.len(), d + 1, |i, j| rows[i][j])
}

/// Deterministic, non-trivial parameters near the initial ones.
fn perturbed(p: &[f64]) -> Vec<f64> {
    p.iter()
        .enumerate()
        .map(|(i, v)| v + 0.4 * ((i as f64 + 1.0) * 1.7).sin())
        .collect()
}

#[test]
fn the_objective_is_the_dense_log_likelihood_and_its_gradient_matches_central_differences() {
    let sources = two_sources(2);
    let x = inputs(6, 2, 0.8);
    let y = values(&x, 0.1);
    for rank in [1, 2] {
        let model = LmcTransfer::new(sources.clone(), options())
            .unwrap()
            .with_rank(rank)
            .unwrap();
        let p = perturbed(&model.parameters());
        let (value, grad) = model.log_marginal_likelihood(x.as_ref(), &y, &p).unwrap();
        // The value from the matrices written out, with an eigendecomposition.
        let nk = model.kernel().n_params();
        let mut k = model.kernel().clone();
        k.set_params(&p[..nk]).unwrap();
        let noise: Vec<f64> = p[nk..].iter().map(|v| v.exp()).collect();
        let xa = task_indexed(&sources, &x);
        let omega = dense_omega(&k, &xa, &noise);
        let ya: Vec<f64> = sources
            .iter()
            .flat_map(|s| s.y.clone())
            .chain(y.clone())
            .collect();
        let (inv, logdet) = dense_inverse_logdet(&omega);
        let n = ya.len();
        let quad: f64 = (0..n)
            .map(|a| (0..n).map(|b| ya[a] * inv[(a, b)] * ya[b]).sum::<f64>())
            .sum();
        let dense = -0.5 * quad - 0.5 * logdet - 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln();
        assert!(
            (value - dense).abs() < 1e-10 * dense.abs(),
            "{value} vs {dense}"
        );
        // Every entry of the gradient against central differences.
        let names = model.parameter_names();
        assert_eq!(grad.len(), p.len());
        for j in 0..p.len() {
            let h = 1e-5;
            let at = |delta: f64| {
                let mut q = p.clone();
                q[j] += delta;
                model.log_marginal_likelihood(x.as_ref(), &y, &q).unwrap().0
            };
            let fd = (at(h) - at(-h)) / (2.0 * h);
            assert!(
                (fd - grad[j]).abs() < 1e-6 * (1.0 + fd.abs()),
                "rank {rank}, {}: analytic {} vs fd {fd}",
                names[j],
                grad[j]
            );
        }
    }
}

#[test]
fn one_source_has_the_papers_parameter_count_and_initial_values() {
    // Rank 1, per-latent κ: 4 (W) + 4 (κ) + 2D (lengthscales) + 2 (noises), spec §2.7.
    for d in [1, 3] {
        let model = LmcTransfer::new(vec![source(5, d, 0.0, 0.0)], options()).unwrap();
        assert_eq!(model.parameters().len(), 2 * d + 10);
        assert_eq!(model.n_tasks(), 2);
        assert_eq!(model.noise(), [0.1f64.powi(2); 2]);
        assert_eq!(model.noise_variance(), 0.1f64.powi(2));
        // Σ_l B_l = I: unit prior variance per task and no net correlation, while each
        // latent does correlate the tasks.
        let lat = latents(model.kernel());
        for (i, j) in [(0, 0), (0, 1), (1, 1)] {
            let total: f64 = lat.iter().map(|(b, _)| b[(i, j)]).sum();
            assert!(
                (total - f64::from(u8::from(i == j))).abs() < 1e-15,
                "{total}"
            );
        }
        assert!(lat[0].0[(0, 1)] > 0.4 && lat[1].0[(0, 1)] < -0.4);
        assert!(lat
            .iter()
            .all(|(_, ls)| ls.iter().all(|l| (l - 0.2).abs() < 1e-15)));
    }
    let three = LmcTransfer::new(two_sources(2), options()).unwrap();
    assert_eq!(three.n_tasks(), 3);
    assert_eq!(three.kernel().terms().len(), 3);
    let r2 = three.clone().with_rank(2).unwrap();
    // Rank 2 adds the free entries of the second column: 2 per latent.
    assert_eq!(r2.parameters().len(), three.parameters().len() + 3 * 2);
    assert!(three.clone().with_rank(0).is_err());
    let e = three.with_rank(4).unwrap_err().to_string();
    assert!(e.contains("between 1 and the number of tasks (3)"), "{e}");
}

#[test]
fn the_gram_matrix_is_symmetric_psd_and_the_kronecker_sum_on_duplicated_inputs() {
    let model = LmcTransfer::new(two_sources(2), options())
        .unwrap()
        .with_rank(2)
        .unwrap();
    let mut k = model.kernel().clone();
    let nk = k.n_params();
    k.set_params(&perturbed(&model.parameters())[..nk]).unwrap();
    let (n, t) = (5, 3);
    let x = inputs(n, 2, 0.2);
    // Every input once per task, task-major.
    let xt = Mat::from_fn(
        n * t,
        3,
        |a, j| if j < 2 { x[(a % n, j)] } else { (a / n) as f64 },
    );
    let g = k.matrix(xt.as_ref());
    let lat = latents(&k);
    let mut largest = 0.0f64;
    for a in 0..n * t {
        for b in 0..n * t {
            let kron: f64 = (lat.iter())
                .map(|(bl, ls)| {
                    let kl = matern52(&row(x.as_ref(), a % n), &row(x.as_ref(), b % n), ls);
                    bl[(a / n, b / n)] * kl
                })
                .sum();
            assert!((g[(a, b)] - kron).abs() < 1e-13, "{} vs {kron}", g[(a, b)]);
            assert!((g[(a, b)] - g[(b, a)]).abs() < 1e-15);
            largest = largest.max(g[(a, b)].abs());
        }
    }
    let eig = g.self_adjoint_eigenvalues(faer::Side::Lower).unwrap();
    assert!(eig[0] > -1e-12 * largest, "{eig:?}");
}

/// Three tasks where no latent links a source to the target: `W_{l,s} W_{l,t} = 0`.
fn uncorrelated() -> (MultiOutputKernel, Vec<f64>) {
    let k = lmc(&[
        (
            vec![0.3, 0.6],
            column(&[0.8, -0.5, 0.0]),
            vec![0.1, 0.2, 0.05],
        ),
        (
            vec![0.5, 0.25],
            column(&[0.0, 0.0, 0.9]),
            vec![0.03, 0.04, 0.15],
        ),
        (
            vec![0.7, 0.4],
            column(&[0.6, 0.3, 0.0]),
            vec![0.02, 0.03, 0.07],
        ),
    ]);
    (k, vec![0.01, 0.02, 0.015])
}

#[test]
fn without_task_correlation_the_target_is_the_single_task_gp_and_ignores_the_sources() {
    let (k, noise) = uncorrelated();
    let x = inputs(10, 2, 0.45);
    let y = values(&x, 0.0);
    let test = inputs(12, 2, 0.05);
    let condition = |sources: Vec<SourceTask>, k: MultiOutputKernel| {
        let mut m = LmcTransfer::new(sources, options()).unwrap();
        m.set_hyperparameters(k, noise.clone()).unwrap();
        m.update(x.as_ref(), &y, false, 0).unwrap();
        m.predict(test.as_ref()).unwrap()
    };
    let ours = condition(two_sources(2), k.clone());
    // The single-task GP with kernel Σ_l B_l,tt k_l and the target's noise.
    let single = Kernel::sum(vec![
        matern_kernel(0.05, &[0.3, 0.6]),
        matern_kernel(0.81 + 0.15, &[0.5, 0.25]),
        matern_kernel(0.07, &[0.7, 0.4]),
    ]);
    let h = GpHyper {
        kernel: single,
        mean: Mean::Zero,
        noise: 0.015,
    };
    let exact = ExactGp::at(h, x.as_ref(), &y, 0.0).unwrap();
    let expected = exact.predict(test.as_ref(), true).unwrap();
    let close = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(u, v)| (u - v).abs() < 1e-10);
    assert!(
        close(&ours.mean, &expected.mean),
        "{:?}\n{:?}",
        ours.mean,
        expected.mean
    );
    assert!(
        close(&ours.var, &expected.var),
        "{:?}\n{:?}",
        ours.var,
        expected.var
    );
    // Other source inputs, values and sizes change nothing.
    let mut other = vec![source(9, 2, 0.33, 1.5), source(3, 2, 0.9, -1.0)];
    other[1].y.iter_mut().for_each(|v| *v *= 5.0);
    let moved = condition(other.clone(), k);
    assert!(close(&moved.mean, &ours.mean) && close(&moved.var, &ours.var));
    // With a latent shared by a source and the target, the sources do matter.
    let (mut linked, _) = uncorrelated();
    let mut p = linked.params();
    // Latent 0's W_{0,t}: after its two lengthscales and W_{0,s1}, W_{0,s2}.
    p[4] = 0.4;
    linked.set_params(&p).unwrap();
    let (a, b) = (
        condition(two_sources(2), linked.clone()),
        condition(other, linked),
    );
    assert!(!close(&a.mean, &b.mean) && !close(&a.mean, &ours.mean));
}

#[test]
fn conditioning_more_data_never_raises_a_variance_and_observing_the_mean_moves_no_mean() {
    let mut model = LmcTransfer::new(two_sources(2), options()).unwrap();
    let mut k = model.kernel().clone();
    let nk = k.n_params();
    let p = perturbed(&model.parameters());
    k.set_params(&p[..nk]).unwrap();
    model
        .set_hyperparameters(k, p[nk..].iter().map(|v| v.exp()).collect())
        .unwrap();
    let before = model.parameters();
    check_conditioning_invariants(&mut model, 2);
    assert_eq!(model.parameters(), before);
}

#[test]
fn refits_are_seeded_and_without_a_refit_the_parameters_stay_bit_identical() {
    let sources = vec![source(20, 1, 0.0, 0.2)];
    let x = inputs(8, 1, 0.3);
    let y = values(&x, 0.0);
    let test = inputs(6, 1, 0.77);
    let fit = || {
        let mut m = LmcTransfer::new(sources.clone(), options()).unwrap();
        m.update(x.as_ref(), &y, true, 9).unwrap();
        m
    };
    let mut m = fit();
    assert!(m.fit_seconds() > 0.0);
    assert_eq!(m.fit_reports().len(), 1);
    assert!(
        (m.fit_reports()[0].objective - m.lml().unwrap()).abs() < 1e-9 * m.lml().unwrap().abs()
    );
    let fitted = m.parameters();
    assert_ne!(
        fitted,
        LmcTransfer::new(sources.clone(), options())
            .unwrap()
            .parameters()
    );
    let twin = fit();
    assert_eq!(twin.parameters(), fitted);
    assert_eq!(
        twin.predict(test.as_ref()).unwrap(),
        m.predict(test.as_ref()).unwrap()
    );
    // More data without a refit: the same parameters, no fit time.
    let x1 = stack(&x, &test);
    let y1: Vec<f64> = y.iter().copied().chain(values(&test, 0.0)).collect();
    m.update(x1.as_ref(), &y1, false, 10).unwrap();
    assert_eq!(m.parameters(), fitted);
    assert_eq!(m.fit_seconds(), 0.0);
    assert!(m.fit_reports().is_empty());
    // A refit with more data is no worse than its warm start, the last optimum.
    let warm = m.lml().unwrap();
    m.update(x1.as_ref(), &y1, true, 10).unwrap();
    assert!(m.lml().unwrap() >= warm, "{} < {warm}", m.lml().unwrap());
}

#[test]
fn a_related_source_carries_the_target_far_from_its_own_data() {
    // The source covers [0, 1]; the target, the source plus a small trend, was only measured
    // on [0, 0.3], too little to extrapolate its oscillation from.
    let f = |x: f64, trend: f64| (9.0 * x).sin() + trend * x;
    let xs = inputs(30, 1, 0.0);
    let ys = (0..30).map(|i| f(xs[(i, 0)], 0.0)).collect();
    let sources = vec![SourceTask { x: xs, y: ys }];
    let x = Mat::from_fn(6, 1, |i, _| 0.3 * i as f64 / 5.0);
    let y: Vec<f64> = (0..6).map(|i| f(x[(i, 0)], 0.2)).collect();
    let far = Mat::from_fn(20, 1, |i, _| 0.5 + 0.5 * i as f64 / 19.0);
    let rmse_var = |m: &dyn FunctionModel| {
        let p = m.predict(far.as_ref()).unwrap();
        let e = (0..20)
            .map(|i| (p.mean[i] - f(far[(i, 0)], 0.2)).powi(2))
            .sum::<f64>();
        ((e / 20.0).sqrt(), p.var.iter().sum::<f64>() / 20.0)
    };
    let mut lmc = LmcTransfer::new(sources, TransferFitOptions::default()).unwrap();
    lmc.update(x.as_ref(), &y, true, 1).unwrap();
    let mut sal = SingleTaskGp::new(TransferFitOptions::single_task());
    sal.update(x.as_ref(), &y, true, 1).unwrap();
    let (lmc_rmse, lmc_var) = rmse_var(&lmc);
    let (sal_rmse, sal_var) = rmse_var(&sal);
    // The fitted task correlation (at zero distance) is high.
    let lat = latents(lmc.kernel());
    let b = |i: usize, j: usize| lat.iter().map(|(b, _)| b[(i, j)]).sum::<f64>();
    let corr = b(0, 1) / (b(0, 0) * b(1, 1)).sqrt();
    assert!(corr > 0.9, "{corr}");
    // Measured: RMSE 0.064 vs 1.07, mean variance 0.0011 vs 1.19 (the trend, 0.2 at x = 1, is
    // most of the LMC's error).
    assert!(lmc_rmse < 0.15 && sal_rmse > 0.5, "{lmc_rmse} {sal_rmse}");
    assert!(lmc_var < 0.1 * sal_var, "{lmc_var} {sal_var}");
}

#[test]
fn bad_input_is_an_error_that_says_what_is_wrong() {
    let msg = |r: Result<LmcTransfer, crate::models::ModelError>| r.unwrap_err().to_string();
    let e = msg(LmcTransfer::new(vec![], options()));
    assert!(e.contains("no source task"), "{e}");
    let mut bad = two_sources(2);
    bad[1].x[(2, 0)] = f64::NAN;
    let e = msg(LmcTransfer::new(bad, options()));
    assert!(
        e.contains("source task 1") && e.contains("row 2, column 0"),
        "{e}"
    );
    let mut bad = two_sources(2);
    bad[0].y.pop();
    let e = msg(LmcTransfer::new(bad, options()));
    assert!(e.contains("source task 0") && e.contains("targets"), "{e}");
    let e = msg(LmcTransfer::new(
        vec![source(4, 2, 0.0, 0.0), source(4, 3, 0.0, 0.0)],
        options(),
    ));
    assert!(e.contains("source task 1 has 3 input columns"), "{e}");
    let e = msg(LmcTransfer::new(
        two_sources(2),
        TransferFitOptions {
            initial_noise_std: 0.0,
            ..options()
        },
    ));
    assert!(e.contains("initial_noise_std"), "{e}");

    let mut m = LmcTransfer::new(two_sources(2), options()).unwrap();
    let x = inputs(5, 2, 0.0);
    let y = values(&x, 0.0);
    let e = m.predict(x.as_ref()).unwrap_err().to_string();
    assert!(e.contains("call update"), "{e}");
    let e = m
        .update(inputs(5, 1, 0.0).as_ref(), &y, true, 0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("1 columns") && e.contains("2 inputs"), "{e}");
    let e = m
        .update(Mat::<f64>::zeros(0, 2).as_ref(), &[], true, 0)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("target task") && e.contains("at least one row"),
        "{e}"
    );
    let mut yb = y.clone();
    yb[4] = f64::NAN;
    let e = m.update(x.as_ref(), &yb, false, 0).unwrap_err().to_string();
    assert!(e.contains("row 4"), "{e}");
    m.update(x.as_ref(), &y, false, 0).unwrap();
    let mut t = inputs(3, 2, 0.0);
    t[(2, 1)] = f64::INFINITY;
    let e = m.predict(t.as_ref()).unwrap_err().to_string();
    assert!(e.contains("row 2, column 1"), "{e}");
    let e = m
        .predict(inputs(3, 4, 0.0).as_ref())
        .unwrap_err()
        .to_string();
    assert!(e.contains("4 columns"), "{e}");
    // An empty batch of test points is fine.
    assert!(m
        .predict(Mat::<f64>::zeros(0, 2).as_ref())
        .unwrap()
        .mean
        .is_empty());
    let e = m
        .log_marginal_likelihood(x.as_ref(), &y, &[0.0; 3])
        .unwrap_err()
        .to_string();
    assert!(e.contains("expected 27 parameters, got 3"), "{e}");
    let (k, _) = uncorrelated();
    let e = m
        .set_hyperparameters(k.clone(), vec![0.1, 0.1])
        .unwrap_err()
        .to_string();
    assert!(e.contains("over 3 tasks"), "{e}");
    let e = m
        .set_hyperparameters(k, vec![0.1, -1.0, 0.1])
        .unwrap_err()
        .to_string();
    assert!(e.contains("task 1"), "{e}");
    let one_input = lmc(&[(vec![0.3], column(&[1.0, 0.0, 0.0]), vec![0.1; 3])]);
    assert!(m.set_hyperparameters(one_input, vec![0.1; 3]).is_err());
}
