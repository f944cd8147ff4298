//! Invariants of the multi-output and robust conjugate GPs (MO-RCGP spec §4).

use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;
use trustgp::fit::FitOptions;
use trustgp::kernels::{Coregion, Covariance, Kernel, LmcTerm, MultiOutputKernel};
use trustgp::linalg::{Cholesky, Parallelism};
use trustgp::means::{Mean, TaskMean};
use trustgp::models::robust::mogp::{grouped_log_marginal_likelihood, MultiOutputGp};
use trustgp::models::robust::multi_output::{MultiOutputConfig, MultiOutputKind, MultiOutputModel};
use trustgp::models::robust::tasks::{all_outputs, TaskEntries};
use trustgp::models::robust::{
    conditional_weights, prior_centred_weights, RobustGp, RobustWeights,
};
use trustgp::robust::ImqWeights;

/// An ICM with T = 3 outputs (the MO-RCGP paper's Table 1 covariance) and an SE kernel.
fn icm(ls: f64) -> MultiOutputKernel {
    let b = Mat::from_fn(3, 3, |i, j| {
        [[1.0, 0.9, 0.7], [0.9, 1.0, 0.8], [0.7, 0.8, 1.0]][i][j]
    });
    MultiOutputKernel::new(vec![LmcTerm {
        kernel: Kernel::parse(&format!("se(ls={ls})")).unwrap(),
        coregion: Coregion::from_covariance(b.as_ref(), 3).unwrap(),
    }])
    .unwrap()
}

/// N inputs in [-5, 5] and a draw of the 3 outputs from the ICM plus noise (std 0.1); entries
/// listed in `missing` are removed.
fn sample(n: usize, seed: u64, missing: &[(usize, usize)]) -> (Mat<f64>, Mat<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let x = Mat::from_fn(n, 1, |_, _| rng.random_range(-5.0f64..5.0));
    let k = icm(1.0);
    let xa = all_outputs(x.as_ref(), 3);
    let mut kk = k.matrix(xa.as_ref());
    for i in 0..kk.nrows() {
        kk[(i, i)] += 1e-8;
    }
    let l = Cholesky::factor(&kk, "test", Parallelism::Sequential).unwrap();
    let z: Vec<f64> = (0..kk.nrows())
        .map(|_| rng.sample(StandardNormal))
        .collect();
    let f: Vec<f64> = (0..kk.nrows())
        .map(|i| (0..=i).map(|j| l.l()[(i, j)] * z[j]).sum())
        .collect();
    let mut y = Mat::from_fn(n, 3, |i, t| {
        f[t * n + i] + 0.1 * rng.sample::<f64, _>(StandardNormal)
    });
    for &(i, t) in missing {
        y[(i, t)] = f64::NAN;
    }
    (x, y)
}

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(u, v)| (u - v).abs() <= tol * (1.0 + v.abs()))
}

#[test]
fn gaussian_weights_recover_the_mogp_exactly() {
    let (x, y) = sample(30, 1, &[(3, 0), (7, 2)]);
    let e = TaskEntries::new(x.as_ref(), y.as_ref());
    let mean = TaskMean(vec![0.1, -0.2, 0.0]);
    let group = e.noise_groups(false);
    let noise = [0.01, 0.02, 0.015];
    let mogp =
        MultiOutputGp::at(icm(1.0), mean.clone(), e.x.as_ref(), &e.y, &group, &noise).unwrap();
    let xs = all_outputs(Mat::from_fn(9, 1, |i, _| -4.0 + i as f64).as_ref(), 3);
    let gs: Vec<usize> = (0..xs.nrows()).map(|k| k / 9).collect();
    let want = mogp.predict(xs.as_ref(), false, &gs);
    // ŵ ≡ 1 (w = σ/√2) ...
    let gaussian = RobustWeights {
        imq: ImqWeights::gaussian(e.len()),
        centre: vec![0.0; e.len()],
        thresholds: vec![f64::INFINITY; 3],
        floored: vec![],
    };
    let r = RobustGp::at(
        icm(1.0),
        mean.clone(),
        e.x.as_ref(),
        &e.y,
        &group,
        &noise,
        gaussian,
    )
    .unwrap();
    let got = r.predict(xs.as_ref(), false, &gs);
    assert!(close(&got.mean, &want.mean, 1e-12) && close(&got.var, &want.var, 1e-12));
    // ... and c → ∞ give the MOGP.
    let centre: Vec<f64> = e.task.iter().map(|&t| mean.0[t]).collect();
    let huge = RobustWeights {
        imq: ImqWeights::new(&e.y, &centre, &vec![1e12; e.len()]),
        centre,
        thresholds: vec![1e12; 3],
        floored: vec![],
    };
    let r = RobustGp::at(icm(1.0), mean, e.x.as_ref(), &e.y, &group, &noise, huge).unwrap();
    let got = r.predict(xs.as_ref(), false, &gs);
    assert!(close(&got.mean, &want.mean, 1e-10) && close(&got.var, &want.var, 1e-10));
}

#[test]
fn heterotopic_mogp_equals_the_hand_restricted_dense_formula() {
    let missing = [(0, 1), (4, 0), (4, 2), (9, 1)];
    let (x, y) = sample(12, 2, &missing);
    let e = TaskEntries::new(x.as_ref(), y.as_ref());
    let noise = [0.02, 0.03, 0.04];
    let group = e.noise_groups(false);
    let k = icm(0.7);
    let gp = MultiOutputGp::at(
        k.clone(),
        TaskMean(vec![0.0; 3]),
        e.x.as_ref(),
        &e.y,
        &group,
        &noise,
    )
    .unwrap();
    // Dense NT×NT system, then delete the missing rows and columns by hand.
    let full = all_outputs(x.as_ref(), 3);
    let kf = k.matrix(full.as_ref());
    let n = x.nrows();
    let keep: Vec<usize> = (0..3 * n)
        .filter(|&k| !missing.contains(&(k % n, k / n)))
        .collect();
    let q = Mat::from_fn(keep.len(), keep.len(), |a, b| {
        kf[(keep[a], keep[b])] + if a == b { noise[keep[a] / n] } else { 0.0 }
    });
    let yv: Vec<f64> = keep.iter().map(|&k| y[(k % n, k / n)]).collect();
    let chol = Cholesky::factor(&q, "test", Parallelism::Sequential).unwrap();
    let alpha = chol.solve_vec(&yv);
    let xs = all_outputs(Mat::from_fn(4, 1, |i, _| -1.5 + i as f64).as_ref(), 3);
    let ks = k.cross(full.as_ref(), xs.as_ref());
    let gs: Vec<usize> = (0..xs.nrows()).map(|k| k / 4).collect();
    let pred = gp.predict(xs.as_ref(), true, &gs);
    for s in 0..xs.nrows() {
        let kv: Vec<f64> = keep.iter().map(|&k| ks[(k, s)]).collect();
        let mean: f64 = kv.iter().zip(&alpha).map(|(a, b)| a * b).sum();
        let b = chol.solve_vec(&kv);
        let var =
            k.matrix(xs.as_ref())[(s, s)] - kv.iter().zip(&b).map(|(a, b)| a * b).sum::<f64>();
        assert!((pred.mean[s] - mean).abs() < 1e-11, "mean {s}");
        assert!((pred.var[s] - var).abs() < 1e-11, "var {s}");
    }
    // The LML of the hand-restricted system.
    let quad: f64 = yv.iter().zip(&alpha).map(|(a, b)| a * b).sum();
    let lml = -0.5 * quad
        - 0.5 * chol.log_det()
        - 0.5 * yv.len() as f64 * (2.0 * std::f64::consts::PI).ln();
    assert!((gp.lml() - lml).abs() < 1e-10 * lml.abs());
    // A fully missing extra row changes nothing.
    let x2 = Mat::from_fn(n + 1, 1, |i, _| if i < n { x[(i, 0)] } else { 2.5 });
    let y2 = Mat::from_fn(n + 1, 3, |i, t| if i < n { y[(i, t)] } else { f64::NAN });
    let e2 = TaskEntries::new(x2.as_ref(), y2.as_ref());
    assert_eq!(e2.y, e.y);
}

#[test]
fn grouped_lml_gradient_matches_finite_differences() {
    let (x, y) = sample(15, 3, &[(2, 1)]);
    let e = TaskEntries::new(x.as_ref(), y.as_ref());
    let mut k = MultiOutputKernel::new(vec![
        LmcTerm {
            kernel: Kernel::parse("se(ls=0.9)").unwrap(),
            coregion: Coregion::new(
                Mat::from_fn(3, 2, |i, j| 0.3 + 0.2 * i as f64 - 0.4 * j as f64),
                Some(vec![0.1, 0.2, 0.3]),
            )
            .unwrap(),
        },
        LmcTerm {
            kernel: Kernel::parse("matern32(ls=2)").unwrap(),
            coregion: Coregion::new(
                Mat::from_fn(3, 1, |i, _| 0.5 - 0.3 * i as f64),
                Some(vec![0.05, 0.05, 0.05]),
            )
            .unwrap(),
        },
    ])
    .unwrap();
    let group = e.noise_groups(true);
    let mean = TaskMean(vec![0.0; 3]);
    let f = |k: &MultiOutputKernel, ln_noise: f64, grad: bool| {
        grouped_log_marginal_likelihood(
            k,
            &mean,
            e.x.as_ref(),
            &e.y,
            &group,
            &[ln_noise.exp()],
            Parallelism::Sequential,
            grad,
        )
        .unwrap()
    };
    let ln_noise = 0.02f64.ln();
    let (_, g) = f(&k, ln_noise, true);
    let p0 = k.params();
    let h = 1e-6;
    for j in 0..=p0.len() {
        let eval = |delta: f64| {
            let mut p = p0.clone();
            let mut ln = ln_noise;
            if j < p0.len() {
                p[j] += delta;
            } else {
                ln += delta;
            }
            let mut kk = k.clone();
            kk.set_params(&p).unwrap();
            f(&kk, ln, false).0
        };
        let fd = (eval(h) - eval(-h)) / (2.0 * h);
        assert!(
            (fd - g[j]).abs() < 1e-6 * (1.0 + fd.abs()),
            "param {j}: {} vs {fd}",
            g[j]
        );
    }
    k.set_params(&p0).unwrap();
}

#[test]
fn one_output_mo_rcgp_is_rcgp() {
    let mut rng = StdRng::seed_from_u64(5);
    let n = 40;
    let x = Mat::from_fn(n, 1, |_, _| rng.random_range(-3.0f64..3.0));
    let mut y = Mat::from_fn(n, 1, |i, _| {
        x[(i, 0)].sin() + 0.1 * rng.sample::<f64, _>(StandardNormal)
    });
    y[(7, 0)] += 5.0;
    let e = TaskEntries::new(x.as_ref(), y.as_ref());
    let b: f64 = 1.7;
    let mo = MultiOutputKernel::new(vec![LmcTerm {
        kernel: Kernel::parse("se(ls=0.8)").unwrap(),
        coregion: Coregion::new(Mat::from_fn(1, 1, |_, _| b.sqrt()), None).unwrap(),
    }])
    .unwrap();
    let single = Kernel::parse(&format!("const(var={b}) * se(ls=0.8)")).unwrap();
    let group = vec![0; n];
    let noise = [0.05];
    let prior = vec![0.2; n];
    // w_MORCGP with one output has no other channel: its centre is the prior mean.
    let c = Mat::from_fn(1, 1, |_, _| b + noise[0]);
    let wm = conditional_weights(&e, &prior, c.as_ref(), &[0.2]).unwrap();
    let wr = prior_centred_weights(&e.y, &prior, &e.task, &[0.2]).unwrap();
    assert_eq!(wm, wr);
    let a = RobustGp::at(
        mo,
        TaskMean(vec![0.2]),
        e.x.as_ref(),
        &e.y,
        &group,
        &noise,
        wm,
    )
    .unwrap();
    let r = RobustGp::at(
        single,
        Mean::Constant { c: 0.2 },
        x.as_ref(),
        &e.y,
        &group,
        &noise,
        wr,
    )
    .unwrap();
    let xs = Mat::from_fn(7, 1, |i, _| -3.0 + i as f64);
    let pa = a.predict(all_outputs(xs.as_ref(), 1).as_ref(), false, &[0; 7]);
    let pr = r.predict(xs.as_ref(), false, &[0; 7]);
    assert!(close(&pa.mean, &pr.mean, 1e-12) && close(&pa.var, &pr.var, 1e-12));
    assert!((a.objective() - r.objective()).abs() < 1e-10 * r.objective().abs());
}

/// The posterior mean of every output at the training inputs after adding `delta` to y[m, s].
fn means_after_outlier(robust: bool, delta: f64) -> Vec<f64> {
    let (x, mut y) = sample(40, 6, &[]);
    y[(10, 0)] += delta;
    let e = TaskEntries::new(x.as_ref(), y.as_ref());
    let noise = [0.01, 0.01, 0.01];
    let group = e.noise_groups(false);
    let mean = TaskMean(vec![0.0; 3]);
    let k = icm(1.0);
    let xs = all_outputs(x.as_ref(), 3);
    if robust {
        let prior = vec![0.0; e.len()];
        let mut c = k.terms()[0].coregion.b();
        for t in 0..3 {
            c[(t, t)] += noise[t];
        }
        let w = conditional_weights(&e, &prior, c.as_ref(), &[0.1, 0.1, 0.1]).unwrap();
        let gp = RobustGp::at(k, mean, e.x.as_ref(), &e.y, &group, &noise, w).unwrap();
        gp.predict(xs.as_ref(), true, &vec![0; xs.nrows()]).mean
    } else {
        let gp = MultiOutputGp::at(k, mean, e.x.as_ref(), &e.y, &group, &noise).unwrap();
        gp.predict(xs.as_ref(), true, &vec![0; xs.nrows()]).mean
    }
}

#[test]
fn one_outlier_has_bounded_influence_on_mo_rcgp_and_unbounded_on_mogp() {
    let base_r = means_after_outlier(true, 0.0);
    let base_g = means_after_outlier(false, 0.0);
    let shift = |a: &[f64], b: &[f64], t: usize| -> f64 {
        (t * 40..(t + 1) * 40)
            .map(|k| (a[k] - b[k]).abs())
            .fold(0.0, f64::max)
    };
    let mut shifts_r = Vec::new();
    for &delta in &[1e1, 1e2, 1e3, 1e4, 1e5, 1e6] {
        let r = means_after_outlier(true, delta);
        let g = means_after_outlier(false, delta);
        let sr: Vec<f64> = (0..3).map(|t| shift(&r, &base_r, t)).collect();
        for (t, s) in sr.iter().enumerate() {
            let sg = shift(&g, &base_g, t);
            // The MOGP's shift grows linearly with the outlier in every correlated channel.
            assert!(sg > 1e-3 * delta, "MOGP channel {t} at {delta}: {sg}");
            // MO-RCGP's stays small ...
            assert!(*s < 0.5, "MO-RCGP channel {t} at {delta}: {s}");
        }
        shifts_r.push(sr);
    }
    // ... and settles to a limit (the outlier's weight → 0 and its pull stays bounded).
    let (a, b) = (&shifts_r[4], &shifts_r[5]);
    for (t, (u, v)) in a.iter().zip(b).enumerate() {
        assert!((u - v).abs() < 1e-3, "channel {t}: {u} then {v}");
    }
}

#[test]
fn fitting_improves_the_weighted_loo_and_is_deterministic() {
    let (x, mut y) = sample(40, 7, &[(5, 1)]);
    y[(3, 0)] += 4.0;
    y[(20, 0)] -= 4.0;
    let e = TaskEntries::new(x.as_ref(), y.as_ref());
    let group = e.noise_groups(false);
    let prior = vec![0.0; e.len()];
    let c0 = icm(1.0).terms()[0].coregion.b();
    let init = conditional_weights(&e, &prior, c0.as_ref(), &[0.1, 0.0, 0.0]).unwrap();
    let start = icm(2.0);
    let noise = [0.1, 0.1, 0.1];
    let mean = TaskMean(vec![0.0; 3]);
    let before = RobustGp::at(
        start.clone(),
        mean.clone(),
        e.x.as_ref(),
        &e.y,
        &group,
        &noise,
        init.clone(),
    )
    .unwrap();
    let reweight = |k: &MultiOutputKernel, s: &[f64]| {
        let mut c = k.terms()[0].coregion.b();
        for t in 0..3 {
            c[(t, t)] += s[t];
        }
        conditional_weights(&e, &prior, c.as_ref(), &[0.1, 0.0, 0.0])
    };
    let fit = |_: ()| {
        RobustGp::fit(
            start.clone(),
            mean.clone(),
            e.x.as_ref(),
            &e.y,
            &group,
            &noise,
            init.clone(),
            reweight,
            &FitOptions::default(),
        )
        .unwrap()
    };
    let a = fit(());
    let b = fit(());
    assert!(a.starts()[0].objective > before.objective() + 1.0);
    assert_eq!(a.covariance().params(), b.covariance().params());
    assert_eq!(a.noise(), b.noise());
    // The fitted noise is near the truth (std 0.1) in the clean channels.
    for t in 1..3 {
        assert!(
            (a.noise()[t] / 0.01 - 1.0).abs() < 0.6,
            "noise {t}: {}",
            a.noise()[t]
        );
    }
}

#[test]
fn outputs_observed_at_different_inputs_fit_without_complete_rows() {
    // Output 0 on the first half of the inputs, output 1 on the second: no row has both, so
    // the robust row covariance falls back to per-output medians and MADs.
    let (x, y) = sample(40, 8, &[]);
    let y = Mat::from_fn(40, 2, |i, t| {
        if (i < 20) == (t == 0) {
            y[(i, t)]
        } else {
            f64::NAN
        }
    });
    for kind in [MultiOutputKind::Mogp, MultiOutputKind::MoRcgp] {
        let cfg = MultiOutputConfig {
            kind,
            kernels: vec![Kernel::parse("se(ls=1)").unwrap()],
            rank: None,
            shared_noise: false,
            noise: 0.1,
            epsilon: vec![0.1, 0.1],
            mcd_support: None,
            task_means: None,
            fit: FitOptions::default(),
        };
        let m = MultiOutputModel::fit(x.as_ref(), y.as_ref(), &cfg).unwrap();
        let p = m.predict(x.as_ref());
        assert_eq!(p.len(), 2);
        // Every output is predicted at every input, also where it was never observed.
        assert!(p.iter().all(|q| q.mean.iter().all(|v| v.is_finite())));
    }
}

/// A 2-output ICM with a diagonal B: the outputs are independent.
fn diagonal_icm() -> MultiOutputKernel {
    let a = Mat::from_fn(
        2,
        2,
        |i, j| if i == j { [1.3f64, 0.7][i].sqrt() } else { 0.0 },
    );
    MultiOutputKernel::new(vec![LmcTerm {
        kernel: Kernel::parse("se(ls=0.9)").unwrap(),
        coregion: Coregion::new(a, None).unwrap(),
    }])
    .unwrap()
}

#[test]
fn block_diagonal_b_decouples_mo_rcgp_into_independent_rcgps() {
    let (x, mut y) = sample(30, 9, &[(4, 1)]);
    y[(2, 0)] += 6.0;
    let y = Mat::from_fn(30, 2, |i, t| y[(i, t)]);
    let e = TaskEntries::new(x.as_ref(), y.as_ref());
    let noise = [0.02, 0.05];
    let group = e.noise_groups(false);
    let k = diagonal_icm();
    let mut c = k.terms()[0].coregion.b();
    for t in 0..2 {
        c[(t, t)] += noise[t];
    }
    let prior = vec![0.0; e.len()];
    let w = conditional_weights(&e, &prior, c.as_ref(), &[0.2, 0.2]).unwrap();
    let joint = RobustGp::at(
        k,
        TaskMean(vec![0.0; 2]),
        e.x.as_ref(),
        &e.y,
        &group,
        &noise,
        w,
    )
    .unwrap();
    let xs = Mat::from_fn(6, 1, |i, _| -4.0 + 1.5 * i as f64);
    let pj = joint.predict(
        all_outputs(xs.as_ref(), 2).as_ref(),
        false,
        &[0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1],
    );
    for (t, bt) in [(0usize, 1.3), (1, 0.7)] {
        let rows: Vec<usize> = (0..30).filter(|&i| y[(i, t)].is_finite()).collect();
        let xt = Mat::from_fn(rows.len(), 1, |i, _| x[(rows[i], 0)]);
        let yt: Vec<f64> = rows.iter().map(|&i| y[(i, t)]).collect();
        let g = vec![0; yt.len()];
        let wt = prior_centred_weights(&yt, &vec![0.0; yt.len()], &g, &[0.2]).unwrap();
        let kt = Kernel::parse(&format!("const(var={bt}) * se(ls=0.9)")).unwrap();
        let single = RobustGp::at(kt, Mean::Zero, xt.as_ref(), &yt, &g, &[noise[t]], wt).unwrap();
        let ps = single.predict(xs.as_ref(), false, &[0; 6]);
        assert!(
            close(&pj.mean[6 * t..6 * t + 6], &ps.mean, 1e-11),
            "output {t} mean"
        );
        assert!(
            close(&pj.var[6 * t..6 * t + 6], &ps.var, 1e-11),
            "output {t} var"
        );
    }
}

#[test]
fn permuting_rows_leaves_mo_rcgp_predictions_unchanged_and_decoupled_mogp_ignores_other_blocks() {
    let (x, mut y) = sample(25, 10, &[(3, 2)]);
    y[(5, 1)] -= 5.0;
    let perm: Vec<usize> = (0..25).map(|i| (i * 7) % 25).collect();
    let xp = Mat::from_fn(25, 1, |i, _| x[(perm[i], 0)]);
    let yp = Mat::from_fn(25, 3, |i, t| y[(perm[i], t)]);
    let predict = |x: &Mat<f64>, y: &Mat<f64>| {
        let e = TaskEntries::new(x.as_ref(), y.as_ref());
        let noise = [0.01, 0.01, 0.01];
        let k = icm(1.0);
        let mut c = k.terms()[0].coregion.b();
        for t in 0..3 {
            c[(t, t)] += noise[t];
        }
        let prior = vec![0.0; e.len()];
        let w = conditional_weights(&e, &prior, c.as_ref(), &[0.1, 0.1, 0.1]).unwrap();
        let gp = RobustGp::at(
            k,
            TaskMean(vec![0.0; 3]),
            e.x.as_ref(),
            &e.y,
            &e.noise_groups(false),
            &noise,
            w,
        )
        .unwrap();
        let xs = all_outputs(Mat::from_fn(5, 1, |i, _| -3.0 + 1.5 * i as f64).as_ref(), 3);
        gp.predict(xs.as_ref(), false, &[0; 15])
    };
    let (a, b) = (predict(&x, &y), predict(&xp, &yp));
    assert!(close(&a.mean, &b.mean, 1e-10) && close(&a.var, &b.var, 1e-10));
    // MOGP with a diagonal B: moving an output-0 value changes nothing in output 1 (zero
    // influence across independent blocks, spec Lemma B.5).
    let (x2, y2) = sample(20, 11, &[]);
    let y2 = Mat::from_fn(20, 2, |i, t| y2[(i, t)]);
    let mogp = |y: &Mat<f64>| {
        let e = TaskEntries::new(x2.as_ref(), y.as_ref());
        let gp = MultiOutputGp::at(
            diagonal_icm(),
            TaskMean(vec![0.0; 2]),
            e.x.as_ref(),
            &e.y,
            &e.noise_groups(false),
            &[0.02, 0.02],
        )
        .unwrap();
        gp.predict(all_outputs(x2.as_ref(), 2).as_ref(), true, &vec![0; 40])
            .mean
    };
    let mut moved = y2.clone();
    moved[(7, 0)] += 100.0;
    let (before, after) = (mogp(&y2), mogp(&moved));
    assert!(close(&before[20..], &after[20..], 1e-12), "output 1 moved");
    assert!((before[7] - after[7]).abs() > 1.0, "output 0 did not move");
}

/// Fit options with the scale profiled or not, to the default tolerances or to tight ones (so
/// that two fits of the same objective agree to far below the default stopping rule).
fn fit_options(profile_scale: bool, tight: bool) -> FitOptions {
    let mut o = FitOptions {
        profile_scale,
        ..FitOptions::default()
    };
    if tight {
        o.lbfgs.f_rel_tol = 1e-14;
        o.lbfgs.grad_tol = 1e-9;
    }
    o
}

/// RCGP fits of a sine with two outliers, targets multiplied by `scale`.
fn rcgp_fit(scale: f64, opts: &FitOptions) -> RobustGp<Kernel, Mean> {
    let mut rng = StdRng::seed_from_u64(9);
    let n = 50;
    let x = Mat::from_fn(n, 1, |_, _| rng.random_range(-3.0f64..3.0));
    let mut y: Vec<f64> = (0..n)
        .map(|i| x[(i, 0)].sin() + 0.1 * rng.sample::<f64, _>(StandardNormal))
        .collect();
    y[4] += 5.0;
    y[30] -= 4.0;
    y.iter_mut().for_each(|v| *v *= scale);
    let prior = vec![0.0; n];
    let task = vec![0; n];
    let w = prior_centred_weights(&y, &prior, &task, &[0.2]).unwrap();
    let fixed = w.clone();
    RobustGp::fit(
        Kernel::parse("const(var=1) * se(ls=1)").unwrap(),
        Mean::Constant { c: 0.0 },
        x.as_ref(),
        &y,
        &task,
        &[0.1],
        w,
        |_, _| Ok(fixed.clone()),
        opts,
    )
    .unwrap()
}

/// MO-RCGP fits (ICM with three outputs, one noise each, B carrying the scale as
/// `MultiOutputModel` sets it up) to a draw with one outlier and one missing entry.
fn mo_rcgp_fit(opts: &FitOptions) -> RobustGp<MultiOutputKernel, TaskMean> {
    let (x, mut y) = sample(40, 7, &[(5, 1)]);
    y[(3, 0)] += 4.0;
    let e = TaskEntries::new(x.as_ref(), y.as_ref());
    let prior = vec![0.0; e.len()];
    let c0 = icm(1.0).terms()[0].coregion.b();
    let w = conditional_weights(&e, &prior, c0.as_ref(), &[0.1, 0.0, 0.0]).unwrap();
    let fixed = w.clone();
    let mut kernel = Kernel::parse("se(ls=2)").unwrap();
    kernel.fix_scale();
    let cov = MultiOutputKernel::new(vec![LmcTerm {
        kernel,
        coregion: icm(1.0).terms()[0].coregion.clone(),
    }])
    .unwrap();
    RobustGp::fit(
        cov,
        TaskMean(vec![0.0; 3]),
        e.x.as_ref(),
        &e.y,
        &e.noise_groups(false),
        &[0.1; 3],
        w,
        |_, _| Ok(fixed.clone()),
        opts,
    )
    .unwrap()
}

#[test]
fn profiling_the_scale_reaches_the_unprofiled_optimum_in_fewer_evaluations() {
    let tight = |p| fit_options(p, true);
    let (p, u) = (rcgp_fit(1.0, &tight(true)), rcgp_fit(1.0, &tight(false)));
    assert_eq!(p.starts().len(), 1);
    let (op, ou) = (p.starts()[0].objective, u.starts()[0].objective);
    assert!((op - ou).abs() < 1e-11 * ou.abs(), "{op} vs {ou}");
    assert!(close(
        &p.covariance().params(),
        &u.covariance().params(),
        1e-5
    ));
    assert!(close(p.noise(), u.noise(), 1e-5));
    let (p, u) = (mo_rcgp_fit(&tight(true)), mo_rcgp_fit(&tight(false)));
    let (op, ou) = (p.starts()[0].objective, u.starts()[0].objective);
    assert!((op - ou).abs() < 1e-11 * ou.abs(), "{op} vs {ou}");
    // Compare B = AAᵀ (A is determined only up to the signs of its columns). Its overall size
    // is weakly identified here (a long lengthscale trades off against it), so equal
    // objectives to 1e-11 pin it only to about 1e-5.
    let b = |g: &RobustGp<MultiOutputKernel, TaskMean>| g.covariance().terms()[0].coregion.b();
    let (bp, bu) = (b(&p), b(&u));
    for j in 0..3 {
        assert!(
            close(bp.col_as_slice(j), bu.col_as_slice(j), 1e-4),
            "{bp:?} vs {bu:?}"
        );
    }
    assert!(close(p.noise(), u.noise(), 1e-4));
    // To the default tolerances, profiling needs fewer evaluations.
    let default = |p| fit_options(p, false);
    let evals = |p| rcgp_fit(1.0, &default(p)).starts()[0].evaluations;
    assert!(
        evals(true) < evals(false),
        "{} vs {}",
        evals(true),
        evals(false)
    );
    let evals = |p| mo_rcgp_fit(&default(p)).starts()[0].evaluations;
    assert!(
        evals(true) < evals(false),
        "{} vs {}",
        evals(true),
        evals(false)
    );
}

#[test]
fn a_profile_that_leaves_the_bounds_is_continued_unprofiled_inside_them() {
    // Targets × 300: the profiled path heads for scales beyond the bounds, so it stops at the
    // first such point and the fit continues unprofiled from the best scaled point so far. It
    // ends inside the bounds, at an optimum at least as good as the unprofiled fit's (here a
    // better one: −185.655 against −185.975).
    let (p, u) = (
        rcgp_fit(300.0, &fit_options(true, true)),
        rcgp_fit(300.0, &fit_options(false, true)),
    );
    assert_eq!(p.starts().len(), 2);
    // The profiled start ends at the evaluation that left (its evaluations are all computed
    // ones, not the failures an optimiser left alone would have run into).
    assert!(!p.starts()[0].converged);
    assert_eq!(
        p.starts()[0].message,
        "stopped where the profiled scale left the bounds: stopped at the objective's request"
    );
    assert!(p.starts()[1]
        .message
        .starts_with("continued unprofiled within the bounds"));
    let (op, ou) = (p.starts()[1].objective, u.starts()[0].objective);
    assert!(op >= ou - 1e-11 * ou.abs(), "{op} vs {ou}");
    let bounds = p.covariance().bounds();
    let params = p.covariance().params();
    assert!((params.iter().zip(&bounds)).all(|(v, (lo, hi))| lo <= v && v <= hi));
    // Targets × 3000: already the first profiled point scales out of bounds (a kernel variance
    // beyond 1e5), so the fit is the unprofiled one, which ends on that bound.
    let (p, u) = (
        rcgp_fit(3000.0, &fit_options(true, true)),
        rcgp_fit(3000.0, &fit_options(false, true)),
    );
    assert_eq!(p.starts().len(), 1);
    assert_eq!(p.covariance().params(), u.covariance().params());
    assert_eq!(p.noise(), u.noise());
    assert!((p.covariance().params()[0] - 1e5f64.ln()).abs() < 1e-9);
}
