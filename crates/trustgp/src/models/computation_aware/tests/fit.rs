//! Fitting: the ELBO improves, RCaGP resists outliers that mislead CaGP, determinism, and
//! input validation.

use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;

use super::{kernel, problem, random_blocks, rebuilt};
use crate::fit::Optimizer;
use crate::kernels::Kernel;
use crate::models::computation_aware::action_set::ActionSet;
use crate::models::computation_aware::actions::BlockActions;
use crate::models::computation_aware::elbo::{forward, State};
use crate::models::computation_aware::likelihood::Weighting;
use crate::models::computation_aware::{Actions, CaConfig, CaGp};
use crate::models::ModelError;

fn config(robust: bool, actions: usize) -> CaConfig {
    CaConfig {
        robust,
        actions,
        ..CaConfig::default()
    }
}

#[test]
fn fitting_improves_the_elbo_and_leaves_no_stale_cache() {
    let (x, y) = problem(40, 40, true);
    for (robust, optimizer) in [
        (true, Optimizer::lbfgs(200)),
        (false, Optimizer::lbfgs(200)),
        (true, Optimizer::adam_fixed_steps(50, 0.01)),
    ] {
        let cfg = CaConfig {
            optimizer,
            ..config(robust, 6)
        };
        let mut seen = Vec::new();
        let gp = CaGp::fit(x.as_ref(), &y, kernel(), 0.5, &cfg, &mut |i, f| {
            seen.push((i, f))
        })
        .unwrap();
        let m0 = y.iter().sum::<f64>() / 40.0;
        let start = State {
            kernel: kernel(),
            noise: 0.5,
            mean: m0,
            actions: ActionSet::Blocks(BlockActions::random(40, 6, cfg.seed)),
            weighting: if robust {
                Weighting::Imq {
                    beta: 1.0,
                    c: gp.threshold(),
                }
            } else {
                Weighting::Constant
            },
            centre: None,
        };
        let initial = forward(x.as_ref(), &y, &start).unwrap().elbo;
        assert_eq!(seen[0].1, initial);
        let report = gp.report().unwrap();
        assert!(
            gp.elbo() > initial + 1.0,
            "robust {robust}: {} vs {initial}",
            gp.elbo()
        );
        // The caches are rebuilt at the returned parameters.
        assert!((gp.elbo() - report.objective).abs() < 1e-9 * gp.elbo().abs());
        let rebuilt = rebuilt(&gp);
        assert_eq!(rebuilt.elbo(), gp.elbo());
        assert_eq!(rebuilt.predict(x.as_ref()), gp.predict(x.as_ref()));
        assert!(gp.noise() >= 1e-4);
        assert_eq!(gp.robust(), robust);
    }
}

/// 1-d data: `sin(3x)` with noise 0.1 and 10% of the points shifted up by 4–6.
fn contaminated(n: usize, seed: u64) -> (Mat<f64>, Vec<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let x = Mat::<f64>::from_fn(n, 1, |_, _| rng.random_range(-2.0..2.0));
    let y = (0..n)
        .map(|j| {
            let out = if j % 10 == 4 {
                rng.random_range(4.0..6.0)
            } else {
                0.0
            };
            (3.0 * x[(j, 0)]).sin() + 0.1 * rng.sample::<f64, _>(StandardNormal) + out
        })
        .collect();
    (x, y)
}

#[test]
fn rcagp_beats_cagp_on_asymmetric_outliers() {
    let (x, y) = contaminated(150, 41);
    let xs = Mat::<f64>::from_fn(200, 1, |t, _| -1.9 + 3.8 * t as f64 / 199.0);
    let truth: Vec<f64> = (0..200).map(|t| (3.0 * xs[(t, 0)]).sin()).collect();
    let mae = |robust: bool| {
        let k = Kernel::parse("const(var=1) * matern52(ls=0.5)").unwrap();
        let gp = CaGp::fit(x.as_ref(), &y, k, 0.5, &config(robust, 25), &mut |_, _| {}).unwrap();
        let mean = gp.predict(xs.as_ref()).mean;
        let w = gp.weights();
        (
            mean.iter()
                .zip(&truth)
                .map(|(m, t)| (m - t).abs())
                .sum::<f64>()
                / 200.0,
            w,
        )
    };
    let (robust, w) = mae(true);
    let (plain, w_plain) = mae(false);
    eprintln!("MAE RCaGP {robust:.4}, CaGP {plain:.4}");
    assert!(robust < 0.5 * plain, "RCaGP {robust} vs CaGP {plain}");
    // The outliers get the smallest weights; CaGP's are all σ/√2.
    let out_max = (0..150)
        .filter(|j| j % 10 == 4)
        .map(|j| w[j])
        .fold(0.0, f64::max);
    let in_min = (0..150)
        .filter(|j| j % 10 != 4)
        .map(|j| w[j])
        .fold(f64::INFINITY, f64::min);
    assert!(out_max < in_min, "{out_max} vs {in_min}");
    assert!(w_plain.iter().all(|v| (v - w_plain[0]).abs() == 0.0));
}

#[test]
fn same_seed_gives_the_same_model() {
    let (x, y) = problem(30, 42, true);
    let fit = |seed| {
        let cfg = CaConfig {
            seed,
            ..config(true, 4)
        };
        CaGp::fit(x.as_ref(), &y, kernel(), 0.3, &cfg, &mut |_, _| {}).unwrap()
    };
    let (a, b, c) = (fit(7), fit(7), fit(8));
    assert_eq!(a.elbo(), b.elbo());
    assert_eq!(a.actions(), b.actions());
    assert_eq!(a.predict(x.as_ref()), b.predict(x.as_ref()));
    assert_ne!(a.actions(), c.actions());
}

fn invalid(r: Result<CaGp, ModelError>) -> String {
    match r {
        Err(ModelError::Invalid(msg)) => msg,
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn bad_inputs_are_errors() {
    let (x, y) = problem(12, 43, false);
    let fit = |x: &Mat<f64>, y: &[f64], k: Kernel, noise: f64, cfg: CaConfig| {
        CaGp::fit(x.as_ref(), y, k, noise, &cfg, &mut |_, _| {})
    };
    let ok = config(true, 3);
    let mut bad_x = x.clone();
    bad_x[(3, 1)] = f64::NAN;
    assert!(invalid(fit(&bad_x, &y, kernel(), 0.1, ok.clone())).contains("row 3, column 1"));
    let mut bad_y = y.clone();
    bad_y[2] = f64::INFINITY;
    assert!(invalid(fit(&x, &bad_y, kernel(), 0.1, ok.clone())).contains("training row 2"));
    assert!(invalid(fit(&x, &y[..11], kernel(), 0.1, ok.clone())).contains("11"));
    for a in [0, 13] {
        assert!(invalid(fit(&x, &y, kernel(), 0.1, config(true, a))).contains("actions"));
    }
    for eps in [0.0, 1.0, f64::NAN] {
        let cfg = CaConfig {
            epsilon: eps,
            ..ok.clone()
        };
        assert!(invalid(fit(&x, &y, kernel(), 0.1, cfg)).contains("epsilon"));
    }
    for noise in [0.0, -1.0, f64::INFINITY] {
        assert!(invalid(fit(&x, &y, kernel(), noise, ok.clone())).contains("noise"));
    }
    let cfg = CaConfig {
        beta: 0.0,
        ..ok.clone()
    };
    assert!(invalid(fit(&x, &y, kernel(), 0.1, cfg)).contains("beta"));
    let white = Kernel::parse("se(ls=1) + white(var=0.1)").unwrap();
    assert!(invalid(fit(&x, &y, white, 0.1, ok.clone())).contains("white"));
    assert!(
        invalid(fit(&x, &y, Kernel::parse("se").unwrap(), 0.1, ok.clone())).contains("initialize")
    );
    assert!(fit(&x, &y, Kernel::parse("se(ls=[1, 1, 1])").unwrap(), 0.1, ok).is_err());
    let parts = |blocks: Vec<Vec<f64>>, c: f64, mean: f64| {
        CaGp::from_parts(
            x.clone(),
            y.clone(),
            kernel(),
            0.1,
            mean,
            Actions::Blocks(blocks),
            c,
            1.0,
            true,
        )
    };
    assert!(parts(random_blocks(12, 5, 1), 1.0, 0.0).is_ok());
    let mut short = random_blocks(12, 5, 1);
    short[0].pop();
    assert!(invalid(parts(short, 1.0, 0.0)).contains("block 0"));
    assert!(invalid(parts(vec![], 1.0, 0.0)).contains("blocks"));
    assert!(invalid(parts(random_blocks(12, 5, 1), 0.0, 0.0)).contains("threshold"));
    assert!(invalid(parts(random_blocks(12, 5, 1), 1.0, f64::NAN)).contains("mean"));
}
