//! The expert-guided prior mean in BO: with no correction the run is the one without an
//! expert, bit for bit; a fixed mean at the targets' mean is the default fit bit for bit; a
//! constant mean enters RCGP's predictions as the dense formula says (prior mean and weight
//! centre) and RCaGP's and RCSVGP's fits hold it; the units (standardised, minimisation); the
//! state round trip keeps the setting and the corrections; bad input is refused by name.

use faer::Mat;

use super::*;
use crate::estimators::regressor::{Fitted, SingleOutput};
use crate::linalg::{Cholesky, Parallelism};
use crate::models::approximate::ApproxModel;

/// Branin-like data on `[0, 1]²` with four gross outliers (+8 at rows 2, 7, 11, 15).
fn contaminated() -> (Vec<Vec<f64>>, Vec<f64>, Vec<usize>) {
    let outliers = vec![2, 7, 11, 15];
    let x: Vec<Vec<f64>> = (0..20)
        .map(|i| {
            let t = i as f64;
            vec![(t * 0.618_034).fract(), (t * 0.414_214 + 0.1).fract()]
        })
        .collect();
    let y = x
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let f = (3.0 * p[0]).sin() + (p[1] - 0.3).powi(2);
            f + if outliers.contains(&i) { 8.0 } else { 0.0 }
        })
        .collect();
    (x, y, outliers)
}

fn unit_bounds() -> Vec<Bound> {
    ["a", "b"]
        .iter()
        .map(|n| Bound {
            name: (*n).into(),
            lo: 0.0,
            hi: 1.0,
        })
        .collect()
}

/// A run of `model` told the contaminated data.
fn told(model: &str, expert: ExpertPrior) -> BayesOpt {
    let mut s = BoSettings::new(unit_bounds());
    s.model = model.into();
    s.n_init = 5;
    s.seed = 2;
    s.expert_mean = expert;
    let mut bo = BayesOpt::new(s).unwrap();
    let (x, y, _) = contaminated();
    bo.tell(&x, &y).unwrap();
    bo
}

/// The standardised targets of a surrogate fitted to `data`.
fn standardised(data: &Dataset) -> (Standardizer, Vec<f64>) {
    let (st, _) = Standardizer::fit(data.x.as_ref(), data.y.as_ref()).unwrap();
    let ys = st.transform_y(data.y.as_ref());
    let y = (0..data.n()).map(|i| ys[(i, 0)]).collect();
    (st, y)
}

#[test]
fn without_a_correction_the_run_is_the_one_without_an_expert_bit_for_bit() {
    for model in ["rcgp", "rcagp"] {
        let mut off = told(model, ExpertPrior::Off);
        let mut expert = told(model, ExpertPrior::Corrections);
        assert_eq!(
            expert.expert_prior_mean(&expert.surrogate_data()).unwrap(),
            None
        );
        let (a, b) = (off.ask(1).unwrap(), expert.ask(1).unwrap());
        assert_eq!(a.points, b.points, "{model}");
        assert_eq!(
            a.acquisition_value.map(f64::to_bits),
            b.acquisition_value.map(f64::to_bits)
        );
        // With corrections the mean, and so the proposal, moves.
        let (_, y, outliers) = contaminated();
        for &o in &outliers {
            expert.correct(o, y[o] - 8.0).unwrap();
        }
        let m = expert.expert_prior_mean(&expert.surrogate_data()).unwrap();
        assert!(m.is_some_and(f64::is_finite));
        assert_ne!(expert.ask(1).unwrap().points, a.points, "{model}");
    }
}

/// The plumbing of a fixed mean changes nothing when the mean is the one a model keeps anyway
/// (the standardised targets' mean): the same fit, bit for bit. That is RCGP's case; the
/// robust sparse surrogates learn their mean with their noise ([`FREE_NOISE_SURROGATES`]), so
/// for them a fixed mean is a different model.
#[test]
fn a_fixed_mean_at_the_targets_mean_is_the_default_fit_bit_for_bit() {
    let bo = told("rcgp", ExpertPrior::Off);
    let data = bo.surrogate_data();
    let (_, ys) = standardised(&data);
    let mean = ys.iter().sum::<f64>() / ys.len() as f64;
    let xt = Mat::from_fn(7, 2, |i, c| 0.13 * i as f64 - 0.2 * c as f64);
    let learns_its_mean =
        |m: &str| FREE_NOISE_SURROGATES.contains(&crate::estimators::ModelKind::parse(m).unwrap());
    for model in EXPERT_MODELS.into_iter().filter(|m| !learns_its_mean(m)) {
        let plain = fit_surrogate_with(model, 1, &data, None, RobustCentre::Prior, None).unwrap();
        let fixed =
            fit_surrogate_with(model, 1, &data, None, RobustCentre::Prior, Some(mean)).unwrap();
        let (p, f) = (
            latent_posterior(&plain)
                .unwrap()
                .marginals(xt.as_ref())
                .unwrap(),
            latent_posterior(&fixed)
                .unwrap()
                .marginals(xt.as_ref())
                .unwrap(),
        );
        assert_eq!(p, f, "{model}");
    }
}

/// RCGP with a fixed constant mean `m`: `μ(x) = m + k_xᵀ K̃⁻¹ (y − m − σ² g)` with
/// `K̃ = K + diag(σ²/ŵ²)` and the IMQ weights centred on `m`, computed densely by hand from the
/// fitted kernel, noise and threshold; far from the data the mean reverts to `m`.
#[test]
fn a_constant_expert_mean_enters_rcgp_as_the_dense_formula_says() {
    let bo = told("rcgp", ExpertPrior::Off);
    let data = bo.surrogate_data();
    let (st, ys) = standardised(&data);
    let xs = st.transform_x(data.x.as_ref());
    let xt = Mat::from_fn(5, 2, |i, c| [-0.7, 0.1, 0.9, 1.6, 30.0][i] + 0.3 * c as f64);
    let n = ys.len();
    for m in [0.0, 1.5, -2.0] {
        let fitted =
            fit_surrogate_with("rcgp", 1, &data, None, RobustCentre::Prior, Some(m)).unwrap();
        let Fitted::PerTarget(outputs) = &fitted.fitted else {
            panic!("single output")
        };
        let SingleOutput::Rcgp(gp, _) = &outputs[0].gp else {
            panic!("rcgp")
        };
        let w = gp.weights();
        assert!(
            w.centre.iter().all(|&c| c == m),
            "weights centred on the expert mean"
        );
        let (c, s2) = (w.thresholds[0], gp.noise()[0]);
        let kernel = gp.covariance();
        let mut kt = kernel.cross(xs.as_ref(), xs.as_ref());
        let mut r = Mat::<f64>::zeros(n, 1);
        for j in 0..n {
            let u = (ys[j] - m) / c;
            let w_hat = (1.0 + u * u).powf(-0.5);
            let g = -2.0 * u / (c * (1.0 + u * u));
            kt[(j, j)] += s2 / (w_hat * w_hat);
            r[(j, 0)] = ys[j] - m - s2 * g;
        }
        Cholesky::factor(&kt, "K̃", Parallelism::Sequential)
            .unwrap()
            .solve_in_place(r.as_mut());
        let k_star = kernel.cross(xt.as_ref(), xs.as_ref());
        let got = latent_posterior(&fitted)
            .unwrap()
            .marginals(xt.as_ref())
            .unwrap();
        for t in 0..xt.nrows() {
            let want = m + (0..n).map(|j| k_star[(t, j)] * r[(j, 0)]).sum::<f64>();
            assert!(
                (got.mean[t] - want).abs() < 1e-9 * want.abs().max(1.0),
                "m = {m}, point {t}: {} vs {want}",
                got.mean[t]
            );
        }
        // The last test point is far from every input: the prior mean.
        assert!((got.mean[4] - m).abs() < 1e-6, "{}", got.mean[4]);
    }
}

/// RCaGP and RCSVGP hold the expert's mean fixed, and RCaGP centres its weights on it.
#[test]
fn rcagp_and_rcsvgp_hold_the_expert_mean() {
    let bo = told("rcagp", ExpertPrior::Off);
    let data = bo.surrogate_data();
    let (_, ys) = standardised(&data);
    let m = 0.75;
    for model in ["rcagp", "rcsvgp"] {
        let fitted =
            fit_surrogate_with(model, 1, &data, None, RobustCentre::Prior, Some(m)).unwrap();
        let Fitted::PerTarget(outputs) = &fitted.fitted else {
            panic!("single output")
        };
        match &outputs[0].gp {
            SingleOutput::Approx(ApproxModel::Ca(gp), _) => {
                assert_eq!(gp.mean(), m);
                let c = gp.threshold();
                for (j, w) in gp.weights().iter().enumerate() {
                    let u = (ys[j] - m) / c;
                    let want = gp.beta() * (1.0 + u * u).powf(-0.5);
                    assert!((w - want).abs() < 1e-12 * want, "row {j}: {w} vs {want}");
                }
            }
            SingleOutput::Approx(ApproxModel::Sparse(gp), _) => {
                assert_eq!(*gp.mean(), crate::means::Mean::Constant { c: m });
            }
            _ => panic!("{model}"),
        }
    }
}

/// A constant in the objective's units maps to the standardised units of the (negated, when
/// minimising) targets; corrections count in the same units as the targets.
#[test]
fn the_expert_mean_is_in_the_surrogates_units() {
    for minimize in [false, true] {
        let mut bo = told("rcgp", ExpertPrior::Constant { value: 2.5 });
        bo.settings.minimize = minimize;
        let sign = if minimize { -1.0 } else { 1.0 };
        let y: Vec<f64> = bo.y().iter().map(|v| sign * v).collect();
        let n = y.len() as f64;
        let mean = y.iter().sum::<f64>() / n;
        let std = (y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
        let got = bo.expert_prior_mean(&bo.surrogate_data()).unwrap().unwrap();
        let want = (sign * 2.5 - mean) / std;
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        // A correction: §2.12 on the standardised targets and corrections.
        bo.settings.expert_mean = ExpertPrior::Corrections;
        bo.correct(7, 1.0).unwrap();
        let unit = Mat::from_fn(bo.x().len(), 2, |i, c| bo.x()[i][c]);
        let ys: Vec<f64> = y.iter().map(|v| (v - mean) / std).collect();
        let fix = [crate::robust::ExpertCorrection {
            index: 7,
            corrected: (sign * 1.0 - mean) / std,
        }];
        let want = crate::robust::expert_mean(
            unit.as_ref(),
            &ys,
            &fix,
            &crate::robust::ExpertSettings::default(),
        )
        .unwrap()
        .constant;
        let got = bo.expert_prior_mean(&bo.surrogate_data()).unwrap().unwrap();
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    }
}

#[test]
fn the_state_round_trip_keeps_the_expert_and_its_corrections() {
    let mut bo = told("rcagp", ExpertPrior::Corrections);
    bo.correct(2, 0.1).unwrap();
    bo.correct(11, 0.4).unwrap();
    bo.correct(2, 0.2).unwrap();
    assert_eq!(
        bo.corrections(),
        &[
            Correction {
                index: 2,
                value: 0.2
            },
            Correction {
                index: 11,
                value: 0.4
            }
        ]
    );
    let text = bo.to_json().unwrap();
    let mut back = BayesOpt::from_json(&text).unwrap();
    assert_eq!(back, bo);
    assert_eq!(back.ask(1).unwrap().points, bo.ask(1).unwrap().points);
    // A state without the fields (an older file) reads as no expert and no corrections.
    let plain = told("rcagp", ExpertPrior::Off).to_json().unwrap();
    assert!(!plain.contains("corrections"));
    let mut value: serde_json::Value = serde_json::from_str(&plain).unwrap();
    let removed = value["settings"]
        .as_object_mut()
        .unwrap()
        .remove("expert_mean");
    assert!(removed.is_some());
    let old = value.to_string();
    assert_eq!(
        BayesOpt::from_json(&old).unwrap().settings().expert_mean,
        ExpertPrior::Off
    );
    // Corrections of observations that do not exist, or twice, are refused.
    let bad = text.replace("\"index\": 11", "\"index\": 99");
    let e = BayesOpt::from_json(&bad).unwrap_err().to_string();
    assert!(e.contains("correction 1 names observation 99"), "{e}");
    let twice = text.replace("\"index\": 11", "\"index\": 2");
    let e = BayesOpt::from_json(&twice).unwrap_err().to_string();
    assert!(e.contains("observation 2 is corrected twice"), "{e}");
}

#[test]
fn bad_expert_input_is_refused_by_name() {
    let mut bo = told("rcgp", ExpertPrior::Corrections);
    let e = bo.correct(20, 1.0).unwrap_err().to_string();
    assert!(e.contains("observation 20 does not exist (20 told"), "{e}");
    let e = bo.correct(3, f64::NAN).unwrap_err().to_string();
    assert!(e.contains("observation 3 is NaN"), "{e}");
    let mut s = BoSettings::new(unit_bounds());
    s.expert_mean = ExpertPrior::Corrections;
    let e = BayesOpt::new(s.clone()).unwrap_err().to_string();
    assert!(
        e.contains("robust models rcgp, rcsvgp, rcagp (got 'gp')"),
        "{e}"
    );
    s.model = "rcagp".into();
    s.robust_centre = RobustCentre::Loo;
    let e = BayesOpt::new(s).unwrap_err().to_string();
    assert!(e.contains("robust centre 'loo'"), "{e}");
    for text in ["off", "corrections", "constant:-1.5"] {
        assert_eq!(ExpertPrior::parse(text).unwrap().name(), text);
    }
    for text in ["constant:x", "constant:inf", "oracle"] {
        assert!(ExpertPrior::parse(text).is_err(), "{text}");
    }
    // Every uncorrected evaluation an outlier's neighbour: too few inliers is a clear error.
    let mut few = told("rcgp", ExpertPrior::Corrections);
    for i in 0..18 {
        few.correct(i, 0.0).unwrap();
    }
    let e = few.ask(1).unwrap_err().to_string();
    assert!(e.contains("expert mean: 2 inliers for 3 neighbours"), "{e}");
    // The simulated expert: seeded per observation, clean value plus σ_corr · N(0, 1) · scale.
    let a = simulated_correction(1.0, 2.0, 5, 3);
    assert_eq!(a, simulated_correction(1.0, 2.0, 5, 3));
    assert_ne!(a, simulated_correction(1.0, 2.0, 5, 4));
    assert!(((a - 1.0) / 2.0 - simulated_correction(0.0, 1.0, 5, 3)).abs() < 1e-15);
}
