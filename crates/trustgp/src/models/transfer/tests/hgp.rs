//! The invariants of `safe-transfer.md` §4 (items 1–6) for FullTransHGP and EffTransHGP; the
//! kernel's own sanity checks (item 7) are in `kernels/hierarchical/tests.rs`, the block
//! factorisation's in `linalg/block_cholesky/tests.rs`.

use std::sync::Arc;

use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::kernels::{BaseKernel, BaseKind, Covariance, Kernel, Lengthscale};
use crate::linalg::Cholesky;
use crate::models::exact::{log_marginal_likelihood, ExactGp};
use crate::models::hyper::GpHyper;
use crate::models::robust::mogp::grouped_log_marginal_likelihood;
use crate::models::transfer::stack::tagged;
use crate::models::transfer::*;
use crate::sequential::safe::{FunctionModel, SourceTask};

const D: usize = 2;

fn source_fn(x: MatRef<'_, f64>, i: usize, shift: f64) -> f64 {
    (3.0 * x[(i, 0)] + shift).sin() + 0.5 * (2.0 * x[(i, 1)]).cos()
}

fn target_fn(x: MatRef<'_, f64>, i: usize) -> f64 {
    source_fn(x, i, 0.0) + 0.3 * (5.0 * x[(i, 1)]).sin()
}

fn uniform(n: usize, rng: &mut StdRng) -> Mat<f64> {
    Mat::from_fn(n, D, |_, _| rng.random_range(0.0..1.0))
}

/// `p` source tasks of `n_s` points each and `n` target points, seeded.
fn problem(p: usize, n_s: usize, n: usize, seed: u64) -> (Vec<SourceTask>, Mat<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let sources = (0..p)
        .map(|s| {
            let x = uniform(n_s, &mut rng);
            let y = (0..n_s)
                .map(|i| {
                    source_fn(x.as_ref(), i, 0.2 * s as f64) + 0.05 * rng.random_range(-1.0..1.0)
                })
                .collect();
            SourceTask { x, y }
        })
        .collect();
    let x = uniform(n, &mut rng);
    let y = (0..n)
        .map(|i| target_fn(x.as_ref(), i) + 0.05 * rng.random_range(-1.0..1.0))
        .collect();
    (sources, x, y)
}

fn matern(ls: &[f64], var: f64) -> Kernel {
    Kernel::Base(
        BaseKernel::new(BaseKind::Matern52)
            .with_var(var)
            .unwrap()
            .with_lengthscale(Lengthscale::Ard(ls.to_vec()))
            .unwrap(),
    )
}

/// Fixed hyperparameters for `p` sources: distinct lengthscales and variances per level,
/// noise ≥ 1e-2 (§4: exact-equality tests use noise ≥ 1e-2).
fn fixed(p: usize) -> (HierarchicalKernel, Vec<f64>) {
    let mut levels: Vec<Kernel> = (0..p)
        .map(|i| matern(&[0.3 + 0.1 * i as f64, 0.45], 1.0 - 0.2 * i as f64))
        .collect();
    levels.push(matern(&[0.25, 0.6], 0.15));
    let noise = (0..=p).map(|i| 0.01 + 0.005 * i as f64).collect();
    (HierarchicalKernel::new(levels).unwrap(), noise)
}

fn test_points(m: usize, seed: u64) -> Mat<f64> {
    uniform(m, &mut StdRng::seed_from_u64(seed))
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1.0)
}

fn fixed_efficient(
    p: usize,
    n_s: usize,
    n: usize,
    seed: u64,
) -> (EfficientHgp, Mat<f64>, Vec<f64>) {
    let (sources, x, y) = problem(p, n_s, n, seed);
    let mut eff = EfficientHgp::new(sources, TransferFitOptions::default()).unwrap();
    let (k, s) = fixed(p);
    eff.set_hyperparameters(k, s).unwrap();
    eff.update(x.as_ref(), &y, false, 0).unwrap();
    (eff, x, y)
}

fn fixed_full(p: usize, n_s: usize, n: usize, seed: u64) -> HgpTransfer {
    let (sources, x, y) = problem(p, n_s, n, seed);
    let mut full = HgpTransfer::new(sources, TransferFitOptions::default()).unwrap();
    let (k, s) = fixed(p);
    full.set_hyperparameters(k, s).unwrap();
    full.update(x.as_ref(), &y, false, 0).unwrap();
    full
}

/// The stacked task-indexed inputs and the dense `Ω = K + D` of a problem.
fn dense_omega(p: usize, n_s: usize, n: usize, seed: u64) -> Mat<f64> {
    let (sources, x, _) = problem(p, n_s, n, seed);
    let stacked = crate::models::transfer::stack::stack_sources(&sources).unwrap();
    let x_all: Mat<f64> = faer::concat![[stacked.x.as_ref()], [tagged(x.as_ref(), p).as_ref()]];
    let (k, s) = fixed(p);
    let mut omega = k.matrix(x_all.as_ref());
    let tasks = stacked
        .group
        .iter()
        .copied()
        .chain(std::iter::repeat_n(p, n));
    for (i, t) in tasks.enumerate() {
        omega[(i, i)] += s[t];
    }
    omega
}

#[test]
fn two_step_factor_equals_the_full_cholesky_of_omega() {
    // §4.1, one and several sources.
    for (p, n_s, n) in [(1, 25, 12), (3, 8, 10)] {
        let (eff, _, _) = fixed_efficient(p, n_s, n, 7);
        let omega = dense_omega(p, n_s, n, 7);
        let full = Cholesky::factor(&omega, "Ω", crate::linalg::Parallelism::Sequential).unwrap();
        let block = eff.block_factor().unwrap().to_cholesky();
        let size = omega.nrows();
        let mut worst: f64 = 0.0;
        let mut scale: f64 = 0.0;
        for j in 0..size {
            for i in j..size {
                worst = worst.max((block.l()[(i, j)] - full.l()[(i, j)]).abs());
                scale = scale.max(full.l()[(i, j)].abs());
            }
        }
        assert!(worst < 1e-10 * scale, "P={p}: {worst:e}");
        let llt = block.reconstruct();
        for j in 0..size {
            for i in 0..size {
                assert!(
                    (llt[(i, j)] - omega[(i, j)]).abs() < 1e-12,
                    "P={p} ({i},{j})"
                );
            }
        }
    }
}

#[test]
fn block_likelihood_and_posterior_equal_the_full_ones() {
    // §4.2: EffTransHGP's block LML and predictions against FullTransHGP's dense ones at the
    // same hyperparameters, and against the block formulas written out.
    for p in [1, 2] {
        let (eff, _, _) = fixed_efficient(p, 20, 12, 11);
        let full = fixed_full(p, 20, 12, 11);
        let (a, b) = (eff.lml().unwrap(), full.lml().unwrap());
        assert!(rel(a, b) < 1e-10, "P={p}: LML {a} vs {b}");
        let xs = test_points(15, 99);
        let (me, mf) = (
            eff.predict(xs.as_ref()).unwrap(),
            full.predict(xs.as_ref()).unwrap(),
        );
        for j in 0..15 {
            assert!((me.mean[j] - mf.mean[j]).abs() < 1e-10, "P={p} mean {j}");
            assert!((me.var[j] - mf.var[j]).abs() < 1e-10, "P={p} var {j}");
        }
        // w = L⁻¹ k* by blocks: μ = wᵀ L⁻¹ y, σ² = k** − ‖w‖².
        let block = eff.block_factor().unwrap();
        let (sources, x, y) = problem(p, 20, 12, 11);
        let stacked = crate::models::transfer::stack::stack_sources(&sources).unwrap();
        let x_all: Mat<f64> = faer::concat![[stacked.x.as_ref()], [tagged(x.as_ref(), p).as_ref()]];
        let xs_t = tagged(xs.as_ref(), p);
        let (kernel, _) = fixed(p);
        let mut w = kernel.cross(x_all.as_ref(), xs_t.as_ref());
        block.solve_lower_in_place(w.as_mut());
        let y_all: Vec<f64> = stacked.y.iter().chain(&y).copied().collect();
        let mut a = Mat::from_fn(y_all.len(), 1, |i, _| y_all[i]);
        block.solve_lower_in_place(a.as_mut());
        let kss = kernel.diag(xs_t.as_ref());
        for j in 0..15 {
            let mu: f64 = (0..y_all.len()).map(|i| w[(i, j)] * a[(i, 0)]).sum();
            let q: f64 = (0..y_all.len()).map(|i| w[(i, j)] * w[(i, j)]).sum();
            assert!((mu - me.mean[j]).abs() < 1e-10);
            assert!((kss[j] - q - me.var[j]).abs() < 1e-10);
        }
    }
}

#[test]
fn target_group_gradient_matches_central_differences() {
    // §4.2: the analytic gradient of the conditional likelihood (the EffTrans objective).
    for p in [0, 1, 2] {
        let (eff, _, _) = fixed_efficient(p, 15, 12, 21);
        let kernel = eff.kernel().unwrap();
        let v0: Vec<f64> = (kernel.levels()[p].log_params().into_iter())
            .chain([eff.noise()[p].ln() + 0.3])
            .collect();
        let (_, grad) = eff.conditional_log_likelihood(&v0).unwrap();
        assert_eq!(grad.len(), D + 2);
        let h = 1e-5;
        for j in 0..v0.len() {
            let mut v = v0.clone();
            v[j] += h;
            let up = eff.conditional_log_likelihood(&v).unwrap().0;
            v[j] -= 2.0 * h;
            let down = eff.conditional_log_likelihood(&v).unwrap().0;
            let fd = (up - down) / (2.0 * h);
            assert!(
                (fd - grad[j]).abs() < 1e-6 * (1.0 + fd.abs()),
                "P={p}, parameter {j}: analytic {} vs fd {fd}",
                grad[j]
            );
        }
    }
}

#[test]
fn conditional_likelihood_is_the_full_one_minus_the_source_one() {
    // §4.3: for every target group, LML(full) − LML(sources) = log N(y_t | c, …), with equal
    // gradients in the target group: the same argmax.
    let p = 2;
    let (eff, x, y) = fixed_efficient(p, 12, 10, 31);
    let (sources, _, _) = problem(p, 12, 10, 31);
    let stacked = crate::models::transfer::stack::stack_sources(&sources).unwrap();
    let (kernel, noise) = fixed(p);
    let source_kernel = HierarchicalKernel::new(kernel.levels()[..p].to_vec()).unwrap();
    let par = crate::linalg::Parallelism::Sequential;
    let (source_lml, _) = grouped_log_marginal_likelihood(
        &source_kernel,
        &Mean::Zero,
        stacked.x.as_ref(),
        &stacked.y,
        &stacked.group,
        &noise[..p],
        par,
        false,
    )
    .unwrap();
    let x_all: Mat<f64> = faer::concat![[stacked.x.as_ref()], [tagged(x.as_ref(), p).as_ref()]];
    let y_all: Vec<f64> = stacked.y.iter().chain(&y).copied().collect();
    let group: Vec<usize> = (stacked.group.iter().copied())
        .chain(std::iter::repeat_n(p, y.len()))
        .collect();
    let target_params = kernel.level_params(p);
    let mut rng = StdRng::seed_from_u64(5);
    for _ in 0..4 {
        let mut k = kernel.clone();
        let mut s = noise.clone();
        let mut all = k.params();
        for v in &mut all[target_params.clone()] {
            *v += rng.random_range(-0.5..0.5);
        }
        k.set_params(&all).unwrap();
        s[p] *= rng.random_range(0.5..2.0);
        let (full, full_grad) = grouped_log_marginal_likelihood(
            &k,
            &Mean::Zero,
            x_all.as_ref(),
            &y_all,
            &group,
            &s,
            par,
            true,
        )
        .unwrap();
        let v: Vec<f64> = (all[target_params.clone()].iter().copied())
            .chain([s[p].ln()])
            .collect();
        let (cond, cond_grad) = eff.conditional_log_likelihood(&v).unwrap();
        assert!(
            rel(full - source_lml, cond) < 1e-10,
            "{full} − {source_lml} vs {cond}"
        );
        let nk = Covariance::n_params(&k);
        let mut expected: Vec<f64> = full_grad[target_params.clone()].to_vec();
        expected.push(full_grad[nk + p]);
        for (a, b) in cond_grad.iter().zip(&expected) {
            assert!(
                (a - b).abs() < 1e-8 * (1.0 + b.abs()),
                "{cond_grad:?} vs {expected:?}"
            );
        }
    }
}

#[test]
fn appending_target_rows_equals_recomputing_and_the_source_factor_is_computed_once() {
    // §4.4, at fixed hyperparameters: 6 rows, then 7, then 12 (appended), then a refit that
    // keeps the source group, then one more row; against a fresh model on all the rows.
    let (sources, x, y) = problem(2, 15, 14, 41);
    let (k, s) = fixed(2);
    let mut inc = EfficientHgp::new(sources.clone(), TransferFitOptions::default()).unwrap();
    inc.set_hyperparameters(k.clone(), s.clone()).unwrap();
    inc.update(x.as_ref().subrows(0, 6), &y[..6], false, 0)
        .unwrap();
    let ls = inc.source_factor().unwrap().clone();
    for n in [7, 12, 12] {
        inc.update(x.as_ref().subrows(0, n), &y[..n], false, 0)
            .unwrap();
        assert!(Arc::ptr_eq(inc.source_factor().unwrap(), &ls));
    }
    let mut scratch = EfficientHgp::new(sources, TransferFitOptions::default()).unwrap();
    scratch.set_hyperparameters(k, s).unwrap();
    scratch
        .update(x.as_ref().subrows(0, 12), &y[..12], false, 0)
        .unwrap();
    let (bi, bs) = (inc.block_factor().unwrap(), scratch.block_factor().unwrap());
    let (ai, as_) = (bi.basis().a(), bs.basis().a());
    for j in 0..12 {
        for i in 0..ai.nrows() {
            assert!((ai[(i, j)] - as_[(i, j)]).abs() < 1e-13);
        }
    }
    assert!(rel(inc.lml().unwrap(), scratch.lml().unwrap()) < 1e-12);
    let xs = test_points(9, 3);
    let (pi, ps) = (
        inc.predict(xs.as_ref()).unwrap(),
        scratch.predict(xs.as_ref()).unwrap(),
    );
    for j in 0..9 {
        assert!((pi.mean[j] - ps.mean[j]).abs() < 1e-12);
        assert!((pi.var[j] - ps.var[j]).abs() < 1e-12);
    }
    // Refits move only the target group: the source levels, noises and L_s stay bit-identical.
    let source_params: Vec<f64> =
        inc.kernel().unwrap().params()[..inc.kernel().unwrap().level_params(2).start].to_vec();
    let source_noise = inc.noise()[..2].to_vec();
    inc.update(x.as_ref().subrows(0, 13), &y[..13], true, 1)
        .unwrap();
    inc.update(x.as_ref(), &y, true, 2).unwrap();
    assert!(Arc::ptr_eq(inc.source_factor().unwrap(), &ls));
    assert_eq!(inc.source_factorisations(), 1);
    let kernel = inc.kernel().unwrap();
    assert_eq!(
        kernel.params()[..kernel.level_params(2).start],
        source_params[..]
    );
    assert_eq!(inc.noise()[..2], source_noise[..]);
    assert!(inc.fit_seconds() > 0.0);
}

#[test]
fn the_fitted_source_group_is_fitted_once_and_frozen() {
    // A source group fitted at the first update (not given): L_s computed once over many
    // updates with refits, target inputs that change (rebuilt, not appended) included.
    let (sources, x, y) = problem(1, 30, 12, 51);
    let mut eff = EfficientHgp::new(sources, TransferFitOptions::default()).unwrap();
    eff.update(x.as_ref().subrows(0, 4), &y[..4], true, 0)
        .unwrap();
    let ls = eff.source_factor().unwrap().clone();
    let frozen = eff.kernel().unwrap().levels()[0].clone();
    let l0: Vec<f64> = (0..ls.n()).map(|i| ls.l()[(i, i)]).collect();
    for n in 5..=12 {
        eff.update(x.as_ref().subrows(0, n), &y[..n], n % 2 == 0, n as u64)
            .unwrap();
    }
    let reversed = Mat::from_fn(12, D, |i, j| x[(11 - i, j)]);
    let y_rev: Vec<f64> = y.iter().rev().copied().collect();
    eff.update(reversed.as_ref(), &y_rev, true, 99).unwrap();
    assert_eq!(eff.source_factorisations(), 1);
    assert!(Arc::ptr_eq(eff.source_factor().unwrap(), &ls));
    assert_eq!(eff.kernel().unwrap().levels()[0], frozen);
    let l1: Vec<f64> = (0..ls.n()).map(|i| ls.l()[(i, i)]).collect();
    assert_eq!(l0, l1);
    // The source fit is that of a single-task GP on the source data: a higher likelihood there
    // than the initial values.
    let s = eff.noise()[0];
    assert!(s > 0.0 && s < 0.05, "source noise {s}");
}

#[test]
fn efficient_equals_full_at_equal_hyperparameters() {
    // §4.5: FullTransHGP given EffTransHGP's fitted hyperparameters predicts the same.
    let (sources, x, y) = problem(1, 30, 10, 61);
    let opts = TransferFitOptions {
        restarts: 2,
        ..TransferFitOptions::default()
    };
    let mut eff = EfficientHgp::new(sources.clone(), opts.clone()).unwrap();
    eff.update(x.as_ref(), &y, true, 3).unwrap();
    let mut full = HgpTransfer::new(sources, opts).unwrap();
    full.set_hyperparameters(eff.kernel().unwrap().clone(), eff.noise().to_vec())
        .unwrap();
    full.update(x.as_ref(), &y, false, 0).unwrap();
    let pool = test_points(50, 8);
    let (pe, pf) = (
        eff.predict(pool.as_ref()).unwrap(),
        full.predict(pool.as_ref()).unwrap(),
    );
    for j in 0..50 {
        assert!((pe.mean[j] - pf.mean[j]).abs() < 1e-8, "mean {j}");
        assert!((pe.var[j] - pf.var[j]).abs() < 1e-8, "var {j}");
    }
    assert_eq!(eff.noise_variance(), full.noise_variance());
}

#[test]
fn without_sources_the_efficient_model_is_the_single_task_gp() {
    // §4.6 / issue: with no source task EffTransHGP is SAL's GP (Matérn-5/2 ARD, zero mean).
    let (_, x, y) = problem(0, 0, 15, 71);
    let (eff, _, _) = fixed_efficient(0, 0, 15, 71);
    let (kernel, noise) = fixed(0);
    let hyper = GpHyper {
        kernel: kernel.levels()[0].clone(),
        mean: Mean::Zero,
        noise: noise[0],
    };
    let gp = ExactGp::at(hyper.clone(), x.as_ref(), &y, 0.0).unwrap();
    let xs = test_points(10, 4);
    let (pe, pg) = (
        eff.predict(xs.as_ref()).unwrap(),
        gp.predict(xs.as_ref(), true).unwrap(),
    );
    for j in 0..10 {
        assert!((pe.mean[j] - pg.mean[j]).abs() < 1e-12);
        assert!((pe.var[j] - pg.var[j]).abs() < 1e-12);
    }
    // The objective is the GP's log marginal likelihood, gradient included (same layout:
    // kernel log-parameters, then ln σ²).
    let par = crate::linalg::Parallelism::Sequential;
    let lml = log_marginal_likelihood(&hyper, x.as_ref(), &y, 0.0, par, true).unwrap();
    let (value, grad) = eff.conditional_log_likelihood(&hyper.to_vec()).unwrap();
    assert!(rel(value, lml.value) < 1e-12);
    for (a, b) in grad.iter().zip(&lml.grad) {
        assert!((a - b).abs() < 1e-10 * (1.0 + b.abs()));
    }
    assert_eq!(eff.source_factorisations(), 0);
}

#[test]
fn a_vanishing_source_kernel_leaves_the_single_task_gp_on_k_t() {
    // §4.6: σ²_ks → 0 reduces the target posterior to a single-task GP with k_t and σ²_t.
    let (sources, x, y) = problem(1, 20, 12, 81);
    let mut eff = EfficientHgp::new(sources, TransferFitOptions::default()).unwrap();
    let (kernel, noise) = fixed(1);
    let mut levels = kernel.levels().to_vec();
    levels[0] = matern(&[0.3, 0.45], 1e-14);
    eff.set_hyperparameters(HierarchicalKernel::new(levels).unwrap(), noise.clone())
        .unwrap();
    eff.update(x.as_ref(), &y, false, 0).unwrap();
    let hyper = GpHyper {
        kernel: kernel.levels()[1].clone(),
        mean: Mean::Zero,
        noise: noise[1],
    };
    let gp = ExactGp::at(hyper, x.as_ref(), &y, 0.0).unwrap();
    let xs = test_points(10, 5);
    let (pe, pg) = (
        eff.predict(xs.as_ref()).unwrap(),
        gp.predict(xs.as_ref(), true).unwrap(),
    );
    for j in 0..10 {
        assert!((pe.mean[j] - pg.mean[j]).abs() < 1e-9);
        assert!((pe.var[j] - pg.var[j]).abs() < 1e-9);
    }
}

#[test]
fn one_source_reproduces_the_single_source_formulas() {
    // §4.6: P = 1 of the multi-source construction is Ω = [[k_s + σ²_s, k_s], [k_s, k_s + k_t
    // + σ²_t]], built here by hand from the two Matérn kernels and solved densely.
    let (sources, x, y) = problem(1, 15, 8, 91);
    let full = fixed_full(1, 15, 8, 91);
    let (kernel, noise) = fixed(1);
    let (ks, kt) = (&kernel.levels()[0], &kernel.levels()[1]);
    let xs = &sources[0].x;
    let (ns, n) = (xs.nrows(), x.nrows());
    let x_all: Mat<f64> = faer::concat![[xs.as_ref()], [x.as_ref()]];
    let mut omega = ks.matrix(x_all.as_ref());
    let ktt = kt.matrix(x.as_ref());
    for i in 0..n {
        for j in 0..n {
            omega[(ns + i, ns + j)] += ktt[(i, j)];
        }
    }
    for i in 0..ns + n {
        omega[(i, i)] += if i < ns { noise[0] } else { noise[1] };
    }
    let y_all: Vec<f64> = sources[0].y.iter().chain(&y).copied().collect();
    let inv = Cholesky::factor(&omega, "Ω", crate::linalg::Parallelism::Sequential)
        .unwrap()
        .inverse();
    let test = test_points(6, 6);
    let mut kstar = ks.cross(x_all.as_ref(), test.as_ref());
    let kt_star = kt.cross(x.as_ref(), test.as_ref());
    for i in 0..n {
        for j in 0..6 {
            kstar[(ns + i, j)] += kt_star[(i, j)];
        }
    }
    let pred = full.predict(test.as_ref()).unwrap();
    let prior: Vec<f64> = (0..6)
        .map(|j| ks.diag(test.as_ref())[j] + kt.diag(test.as_ref())[j])
        .collect();
    let weights = &inv * &kstar;
    for j in 0..6 {
        let mu: f64 = (0..ns + n).map(|i| weights[(i, j)] * y_all[i]).sum();
        let q: f64 = (0..ns + n).map(|i| weights[(i, j)] * kstar[(i, j)]).sum();
        assert!((mu - pred.mean[j]).abs() < 1e-9, "mean {j}");
        assert!((prior[j] - q - pred.var[j]).abs() < 1e-9, "var {j}");
    }
}

#[test]
fn fits_are_seeded_and_improve_the_likelihood() {
    let (sources, x, y) = problem(1, 25, 10, 101);
    let opts = TransferFitOptions {
        restarts: 2,
        ..TransferFitOptions::default()
    };
    let run_full = |seed| {
        let mut m = HgpTransfer::new(sources.clone(), opts.clone()).unwrap();
        m.update(x.as_ref(), &y, true, seed).unwrap();
        m
    };
    let run_eff = |seed| {
        let mut m = EfficientHgp::new(sources.clone(), opts.clone()).unwrap();
        m.update(x.as_ref(), &y, true, seed).unwrap();
        m
    };
    let xs = test_points(7, 9);
    let (f1, f2) = (run_full(4), run_full(4));
    assert_eq!(
        f1.predict(xs.as_ref()).unwrap(),
        f2.predict(xs.as_ref()).unwrap()
    );
    let (e1, e2) = (run_eff(4), run_eff(4));
    assert_eq!(
        e1.predict(xs.as_ref()).unwrap(),
        e2.predict(xs.as_ref()).unwrap()
    );
    // Both fits beat the initial values on their own objective.
    let mut initial = HgpTransfer::new(sources.clone(), opts.clone()).unwrap();
    initial.update(x.as_ref(), &y, false, 0).unwrap();
    assert!(f1.lml().unwrap() > initial.lml().unwrap());
    let mut e0 = EfficientHgp::new(sources.clone(), opts.clone()).unwrap();
    e0.update(x.as_ref(), &y, false, 4).unwrap();
    assert!(e1.lml().unwrap() > e0.lml().unwrap());
    // The joint fit maximises the full likelihood: at least as high as EffTrans's there.
    let mut at_eff = HgpTransfer::new(sources, opts).unwrap();
    at_eff
        .set_hyperparameters(e1.kernel().unwrap().clone(), e1.noise().to_vec())
        .unwrap();
    at_eff.update(x.as_ref(), &y, false, 0).unwrap();
    assert!(f1.lml().unwrap() >= at_eff.lml().unwrap() - 1e-6);
}

#[test]
fn bad_data_and_calls_are_clear_errors() {
    let (sources, x, y) = problem(1, 10, 5, 111);
    let opts = TransferFitOptions::default();
    let mut eff = EfficientHgp::new(sources.clone(), opts.clone()).unwrap();
    let err = eff.predict(x.as_ref()).unwrap_err().to_string();
    assert!(err.contains("update first"), "{err}");
    let err = eff
        .update(x.as_ref(), &y[..4], false, 0)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("target task: 5 input rows but 4 targets"),
        "{err}"
    );
    let mut bad_y = y.clone();
    bad_y[3] = f64::NAN;
    let err = eff
        .update(x.as_ref(), &bad_y, false, 0)
        .unwrap_err()
        .to_string();
    assert!(err.contains("row 3"), "{err}");
    let err = eff
        .update(x.as_ref().subcols(0, 1), &y, false, 0)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("1 columns") && err.contains("2 inputs"),
        "{err}"
    );
    let mut bad_source = sources.clone();
    bad_source[0].y.pop();
    let err = EfficientHgp::new(bad_source, opts.clone())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("source task 0: 10 input rows but 9 targets"),
        "{err}"
    );
    let empty = vec![SourceTask {
        x: Mat::zeros(0, 2),
        y: vec![],
    }];
    let err = HgpTransfer::new(empty, opts.clone())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("source task 0") && err.contains("at least one row"),
        "{err}"
    );
    let bad_opts = TransferFitOptions {
        initial_lengthscale: -1.0,
        ..opts.clone()
    };
    let err = HgpTransfer::new(sources.clone(), bad_opts)
        .unwrap_err()
        .to_string();
    assert!(err.contains("initial_lengthscale"), "{err}");
    let mut full = HgpTransfer::new(sources, opts).unwrap();
    let (k, _) = fixed(2);
    let err = full
        .set_hyperparameters(k, vec![0.1; 3])
        .unwrap_err()
        .to_string();
    assert!(err.contains("2 levels"), "{err}");
    full.update(x.as_ref(), &y, false, 0).unwrap();
    let err = full
        .predict(Mat::<f64>::zeros(2, 3).as_ref())
        .unwrap_err()
        .to_string();
    assert!(err.contains("3 columns"), "{err}");
}
