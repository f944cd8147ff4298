use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::model::{index_pool, FixedGp, TableModel};
use crate::posterior::Marginals;
use crate::sequential::acquisition::normal::{cdf, pdf};
use crate::sequential::safe::acquisition::{gaussian_entropy, PreparedAcquisition};
use crate::sequential::safe::{
    propose_from_pool, AcquisitionOptions, Constraint, FunctionModel, ProposeOptions,
    SafeAcquisition, SafeSet, SafeSetOptions,
};

/// −∫ p ln p of N(0, var) by Simpson's rule on ±14 sd: independent of the closed form.
fn entropy_by_quadrature(var: f64) -> f64 {
    let sd = var.sqrt();
    let n = 20000;
    let (a, b) = (-14.0 * sd, 14.0 * sd);
    let h = (b - a) / n as f64;
    let f = |x: f64| {
        let p = (-(x * x) / (2.0 * var)).exp() / (2.0 * std::f64::consts::PI * var).sqrt();
        if p > 0.0 {
            -p * p.ln()
        } else {
            0.0
        }
    };
    let mut s = f(a) + f(b);
    for i in 1..n {
        s += f(a + i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
    }
    s * h / 3.0
}

#[test]
fn entropy_matches_quadrature_and_is_floored() {
    for var in [1e-6, 0.01, 0.3, 1.0, 7.5] {
        let e = gaussian_entropy(var);
        let q = entropy_by_quadrature(var);
        assert!((e - q).abs() < 1e-9, "var {var}: {e} vs {q}");
    }
    let floor = gaussian_entropy(1e-12);
    assert_eq!(gaussian_entropy(0.0), floor);
    assert_eq!(gaussian_entropy(-3.0), floor);
    assert_eq!(gaussian_entropy(f64::NAN), floor);
    assert!(gaussian_entropy(2e-12) > floor);
}

fn tables(rng: &mut StdRng, n: usize, k: usize) -> Vec<TableModel> {
    (0..k)
        .map(|_| TableModel {
            mean: (0..n).map(|_| rng.random_range(-1.0..1.0)).collect(),
            var: (0..n).map(|_| rng.random_range(1e-6..2.0)).collect(),
            noise: rng.random_range(0.001..0.2),
        })
        .collect()
}

fn prepare(
    kind: SafeAcquisition,
    noisy: bool,
    minimize: bool,
    models: &[&dyn FunctionModel],
) -> PreparedAcquisition {
    let options = AcquisitionOptions {
        kind,
        noisy_entropy: noisy,
        minimize,
    };
    PreparedAcquisition::new(&options, models, index_pool(4).as_ref()).unwrap()
}

#[test]
fn entropy_variants_are_sum_max_and_target_of_the_single_entropies() {
    let mut rng = StdRng::seed_from_u64(11);
    let models = tables(&mut rng, 30, 3);
    let refs: Vec<&dyn FunctionModel> = models.iter().map(|m| m as &dyn FunctionModel).collect();
    let marginals: Vec<Marginals> = models
        .iter()
        .map(|m| m.predict(index_pool(30).as_ref()).unwrap())
        .collect();
    let noise: Vec<f64> = models.iter().map(|m| m.noise).collect();
    for noisy in [false, true] {
        let sum = prepare(SafeAcquisition::EntropySum, noisy, false, &refs);
        let max = prepare(SafeAcquisition::EntropyMax, noisy, false, &refs);
        let target = prepare(SafeAcquisition::EntropyTarget, noisy, false, &refs);
        for i in 0..30 {
            let h: Vec<f64> = (0..3)
                .map(|j| {
                    let v = models[j].var[i] + if noisy { models[j].noise } else { 0.0 };
                    0.5 * (2.0 * std::f64::consts::PI * std::f64::consts::E * v).ln()
                })
                .collect();
            let close = |a: f64, b: f64| (a - b).abs() < 1e-13;
            assert!(close(sum.value(&marginals, &noise, i), h.iter().sum()));
            assert!(close(
                max.value(&marginals, &noise, i),
                h.iter().copied().fold(f64::MIN, f64::max)
            ));
            assert!(close(target.value(&marginals, &noise, i), h[0]));
        }
    }
}

#[test]
fn ucb_and_log_ei_match_their_formulas_in_both_directions() {
    let mut rng = StdRng::seed_from_u64(12);
    let models = tables(&mut rng, 40, 1);
    let refs: Vec<&dyn FunctionModel> = vec![&models[0]];
    let marginals = vec![models[0].predict(index_pool(40).as_ref()).unwrap()];
    let noise = vec![models[0].noise];
    // The incumbent: best posterior mean over the "evaluated" rows 0..4.
    let best_max = models[0].mean[..4].iter().copied().fold(f64::MIN, f64::max);
    let best_min = models[0].mean[..4].iter().copied().fold(f64::MAX, f64::min);
    for minimize in [false, true] {
        let ucb = prepare(SafeAcquisition::Ucb { beta: 2.25 }, false, minimize, &refs);
        let ei = prepare(SafeAcquisition::LogEi, false, minimize, &refs);
        for i in 0..40 {
            let (mu, sd) = (models[0].mean[i], models[0].var[i].sqrt());
            let sign = if minimize { -1.0 } else { 1.0 };
            let want = sign * mu + 1.5 * sd;
            assert!((ucb.value(&marginals, &noise, i) - want).abs() < 1e-14);
            // EI = σ(φ(z) + zΦ(z)), z = (improvement)/σ on the maximised scale.
            let z = if minimize {
                (best_min - mu) / sd
            } else {
                (mu - best_max) / sd
            };
            let ei_direct = sd * (pdf(z) + z * cdf(z));
            if ei_direct > 1e-200 {
                let got = ei.value(&marginals, &noise, i);
                assert!(
                    (got - ei_direct.ln()).abs() < 1e-9 * got.abs().max(1.0),
                    "{got} vs {}",
                    ei_direct.ln()
                );
            }
        }
    }
}

#[test]
fn bad_acquisition_options_are_clear_errors() {
    let m = TableModel {
        mean: vec![0.0],
        var: vec![1.0],
        noise: 0.1,
    };
    let refs: Vec<&dyn FunctionModel> = vec![&m];
    for beta in [-1.0, f64::NAN] {
        let options = AcquisitionOptions {
            kind: SafeAcquisition::Ucb { beta },
            ..AcquisitionOptions::default()
        };
        let e = PreparedAcquisition::new(&options, &refs, index_pool(1).as_ref()).unwrap_err();
        assert!(e.to_string().contains("beta"), "{e}");
    }
    let options = AcquisitionOptions {
        kind: SafeAcquisition::LogEi,
        ..AcquisitionOptions::default()
    };
    let e = PreparedAcquisition::new(&options, &refs, index_pool(0).as_ref()).unwrap_err();
    assert!(e.to_string().contains("at least one evaluated"), "{e}");
}

#[test]
fn one_gp_entropy_argmax_is_variance_argmax_and_shift_invariant() {
    let mut rng = StdRng::seed_from_u64(13);
    for trial in 0..20 {
        let n = 8;
        let x = Mat::from_fn(n, 2, |_, _| rng.random_range(0.0..1.0));
        let y: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let gp = FixedGp::fitted(0.3, 1.0, 0.01, x.as_ref(), &y);
        let pool = Mat::from_fn(300, 2, |_, _| rng.random_range(0.0..1.0));
        let safe_set = SafeSet::new(
            vec![Constraint {
                output: 0,
                lower: Some(-10.0),
                upper: None,
            }],
            1,
            &SafeSetOptions::default(),
        )
        .unwrap();
        let p = propose_from_pool(
            &[&gp],
            &safe_set,
            pool.as_ref(),
            x.as_ref(),
            &ProposeOptions::default(),
        )
        .unwrap();
        let m = gp.predict(pool.as_ref()).unwrap();
        let var_argmax = (0..300).fold(0, |b, i| if m.var[i] > m.var[b] { i } else { b });
        assert_eq!(p.index, var_argmax, "trial {trial}");
        assert_eq!(p.safe_set_size, 300);
        // Scaling every variance (a constant added to each log σ) keeps the choice.
        let table = TableModel {
            mean: m.mean.clone(),
            var: m.var.clone(),
            noise: 0.01,
        };
        let scaled = TableModel {
            mean: m.mean.clone(),
            var: m.var.iter().map(|v| v * 3.7).collect(),
            noise: 0.01,
        };
        let pool_i = index_pool(300);
        let loose = SafeSet::new(
            vec![Constraint {
                output: 0,
                lower: Some(-100.0),
                upper: None,
            }],
            1,
            &SafeSetOptions::default(),
        )
        .unwrap();
        let a = propose_from_pool(
            &[&table],
            &loose,
            pool_i.as_ref(),
            pool_i.as_ref(),
            &ProposeOptions::default(),
        )
        .unwrap();
        let b = propose_from_pool(
            &[&scaled],
            &loose,
            pool_i.as_ref(),
            pool_i.as_ref(),
            &ProposeOptions::default(),
        )
        .unwrap();
        assert_eq!(a.index, var_argmax);
        assert_eq!(b.index, var_argmax);
    }
}
