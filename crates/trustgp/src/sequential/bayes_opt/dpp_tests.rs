//! DPP-BO: the surrogate is fitted on exactly the DPP's picks among the training inputs, the
//! quality is the normalised EI, and the proposal is `propose` on that fitted surrogate.

use faer::Mat;

use super::super::acquisition::normal::{cdf, pdf};
use super::super::dpp::{dpp_select, DPP_RESIDUAL_TOLERANCE};
use super::tests::{branin, branin_bounds, message};
use super::*;
use crate::estimators::regressor::{Fitted, SingleOutput};
use crate::linalg::{Cholesky, Parallelism};
use crate::models::approximate::{ApproxKind, ApproxModel, ApproxOptions};
use crate::models::computation_aware::Actions;
use crate::models::inducing::InducingInit;

/// A run with `model` and `method` that has told a 30-point design of Branin.
fn told(model: &str, method: Method, acquisition: SuggestAcquisition) -> BayesOpt {
    let mut settings = BoSettings::new(branin_bounds());
    settings.n_init = 30;
    settings.model = model.into();
    settings.method = method;
    settings.acquisition = acquisition;
    settings.seed = 5;
    let mut bo = BayesOpt::new(settings).unwrap();
    let design = bo.ask(30).unwrap().points;
    let y: Vec<f64> = design.iter().map(|x| branin(x)).collect();
    bo.tell(&design, &y).unwrap();
    bo
}

/// The inducing inputs of a fitted sparse model, or the `Z` of a CaGP's dense actions.
fn inducing_of(model: &Regressor) -> Mat<f64> {
    let Fitted::PerTarget(outputs) = &model.fitted else {
        panic!("not single-output")
    };
    match &outputs[0].gp {
        SingleOutput::Approx(ApproxModel::Ca(g), _) => match g.actions() {
            Actions::Inducing(z) => z,
            Actions::Blocks(_) => panic!("block actions"),
        },
        SingleOutput::Approx(a, _) => a.inducing().unwrap(),
        _ => panic!("not an approximate model"),
    }
}

/// For every model DPP-BO serves: the fitted surrogate's inducing inputs are exactly the
/// training rows a by-hand DPP selection picks (quality: EI from the marginals by its closed
/// form, over the best posterior mean, divided by its maximum), and the proposal is `propose`
/// on that surrogate, bit for bit.
#[test]
fn the_surrogate_is_fitted_on_the_dpp_picks_and_proposes_with_propose() {
    for (model, method) in [
        ("sgpr", Method::Dpp),
        ("svgp", Method::Dpp),
        ("rcsvgp", Method::DppTurbo),
        ("cagp", Method::Dpp),
        ("rcagp", Method::DppTurbo),
    ] {
        let mut bo = told(model, method, SuggestAcquisition::LogEi);
        let data = bo.surrogate_data();
        let seed = bo.settings.seed.wrapping_add(bo.model_asks);
        let p = bo.ask(1).unwrap();
        // The quality by hand, under a first fit of the same model.
        let first = fit_surrogate(model, 5, &data).unwrap();
        let xs = first.standardizer.transform_x(data.x.as_ref());
        let marginals = latent_posterior(&first)
            .unwrap()
            .marginals(xs.as_ref())
            .unwrap();
        let best = marginals
            .mean
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        let ei: Vec<f64> = (0..30)
            .map(|i| {
                let sd = marginals.var[i].sqrt();
                let z = (marginals.mean[i] - best) / sd;
                sd * (pdf(z) + z * cdf(z))
            })
            .collect();
        let top = ei.iter().copied().fold(0.0, f64::max);
        let quality = dpp_quality(latent_posterior(&first).unwrap(), xs.as_ref()).unwrap();
        for i in 0..30 {
            let want = (ei[i] / top).max(DPP_QUALITY_FLOOR);
            assert!(
                (quality[i] - want).abs() <= 1e-12,
                "{model} row {i}: {} vs {want}",
                quality[i],
            );
        }
        let Fitted::PerTarget(outputs) = &first.fitted else {
            panic!()
        };
        let picks = dpp_select(
            xs.as_ref(),
            outputs[0].gp.kernel(),
            &quality,
            DPP_INDUCING,
            DPP_RESIDUAL_TOLERANCE,
        )
        .unwrap()
        .indices;
        assert!(!picks.is_empty() && picks.len() <= DPP_INDUCING, "{model}");
        // Every slot of |Z| is filled unless the kernel is numerically of lower rank on the
        // training inputs: then each row left out is in the span of the picks (relative
        // residual variance at the threshold's order; the dense solve loses digits, hence the
        // slack). Before the qualities' floor and the scale-free threshold a confident
        // surrogate could stop at one pick with every other row far from the span.
        if picks.len() < DPP_INDUCING {
            let k = outputs[0].gp.kernel().matrix(xs.as_ref());
            let s = Mat::from_fn(picks.len(), picks.len(), |a, b| k[(picks[a], picks[b])]);
            let chol = Cholesky::exact(s, Parallelism::Sequential).unwrap();
            for i in (0..30).filter(|i| !picks.contains(i)) {
                let col: Vec<f64> = picks.iter().map(|&p| k[(i, p)]).collect();
                let explained: f64 = col
                    .iter()
                    .zip(chol.solve_vec(&col))
                    .map(|(a, b)| a * b)
                    .sum();
                let rel = (k[(i, i)] - explained) / k[(i, i)];
                assert!(
                    rel < 1e-4,
                    "{model}: row {i} left out at relative residual {rel}"
                );
            }
        }
        // The fitted surrogate's inducing inputs are those training rows, in the DPP's order.
        let fitted = p.model.as_ref().unwrap();
        assert_eq!(fitted.model_name(), model);
        let z = inducing_of(fitted);
        let want = Mat::from_fn(picks.len(), 2, |i, c| xs[(picks[i], c)]);
        assert_eq!(z, want, "{model}: inducing inputs are not the DPP's picks");
        assert_eq!(
            dpp_surrogate(model, 5, &data, RobustCentre::Prior, None)
                .unwrap()
                .rows,
            picks,
            "{model}"
        );
        // The proposal is `propose` on the fitted surrogate, in the searched box.
        let st = &fitted.standardizer;
        let (lo, hi) = p.region.clone().unwrap_or_else(|| bo.box_ends());
        assert_eq!(p.region.is_some(), method.uses_trust_region());
        let unit: Vec<(f64, f64)> = (0..2)
            .map(|c| {
                (
                    (lo[c] - st.x_mean[c]) / st.x_std[c],
                    (hi[c] - st.x_mean[c]) / st.x_std[c],
                )
            })
            .collect();
        let by_hand = propose(
            latent_posterior(fitted).unwrap(),
            xs.as_ref(),
            &unit,
            1,
            SuggestAcquisition::LogEi,
            seed,
        )
        .unwrap();
        let x: Vec<f64> = (0..2)
            .map(|c| (st.x_mean[c] + st.x_std[c] * by_hand.points[0][c]).clamp(lo[c], hi[c]))
            .collect();
        assert_eq!(p.points, vec![x], "{model}");
        assert_eq!(
            p.acquisition_value.unwrap().to_bits(),
            by_hand.value.unwrap().to_bits(),
            "{model}"
        );
    }
}

/// Batches and Thompson sampling go through `propose` on the DPP surrogate too.
#[test]
fn dpp_batches_and_thompson_sampling_are_propose_on_the_dpp_surrogate() {
    for acquisition in [SuggestAcquisition::QLogEi, SuggestAcquisition::Ts] {
        let mut bo = told("cagp", Method::Dpp, acquisition);
        let data = bo.surrogate_data();
        let seed = bo.settings.seed.wrapping_add(bo.model_asks);
        let p = bo.ask(2).unwrap();
        let fitted = dpp_surrogate("cagp", 5, &data, RobustCentre::Prior, None)
            .unwrap()
            .model;
        let st = &fitted.standardizer;
        let xs = st.transform_x(data.x.as_ref());
        let (lo, hi) = bo.box_ends();
        let unit: Vec<(f64, f64)> = (0..2)
            .map(|c| {
                (
                    (lo[c] - st.x_mean[c]) / st.x_std[c],
                    (hi[c] - st.x_mean[c]) / st.x_std[c],
                )
            })
            .collect();
        let by_hand = propose(
            latent_posterior(&fitted).unwrap(),
            xs.as_ref(),
            &unit,
            2,
            acquisition,
            seed,
        )
        .unwrap();
        let points: Vec<Vec<f64>> = by_hand
            .points
            .iter()
            .map(|q| {
                (0..2)
                    .map(|c| (st.x_mean[c] + st.x_std[c] * q[c]).clamp(lo[c], hi[c]))
                    .collect()
            })
            .collect();
        assert_eq!(p.points, points, "{acquisition:?}");
        assert_eq!(p.points.len(), 2);
    }
}

/// Models without inducing inputs are clear errors, at the settings and at the fit.
#[test]
fn dpp_needs_a_model_with_inducing_inputs() {
    for method in [Method::Dpp, Method::DppTurbo] {
        for model in ["gp", "rcgp", "rrp"] {
            let mut s = BoSettings::new(branin_bounds());
            s.method = method;
            s.model = model.into();
            let e = message(BayesOpt::new(s));
            assert!(
                e.contains(&format!("method {}", method.name()))
                    && e.contains("sgpr, svgp, rcsvgp, cagp, rcagp")
                    && e.contains(&format!("'{model}'")),
                "{e}"
            );
        }
    }
    assert_eq!(Method::parse("dpp-turbo").unwrap(), Method::DppTurbo);
    let bo = told("svgp", Method::Dpp, SuggestAcquisition::LogEi);
    let data = bo.surrogate_data();
    assert!(
        message(dpp_surrogate("gp", 0, &data, RobustCentre::Prior, None))
            .contains("needs model sgpr")
    );
    let z = Mat::from_fn(3, 2, |i, c| (i + c) as f64 / 10.0);
    let e = message(fit_surrogate_with(
        "gp",
        0,
        &data,
        Some(z.clone()),
        RobustCentre::Prior,
        None,
    ));
    assert!(e.contains("'gp' has no inducing inputs"), "{e}");
    let e = message(fit_surrogate_with(
        "rrp",
        0,
        &data,
        Some(z),
        RobustCentre::Prior,
        None,
    ));
    assert!(e.contains("not rrp"), "{e}");
}

/// Given inducing inputs are checked: at least one row, the inputs' columns, finite.
#[test]
fn given_inducing_inputs_are_checked() {
    let x = Mat::from_fn(5, 2, |i, j| (i * 2 + j) as f64);
    let z = Mat::from_fn(2, 2, |i, j| (i + j) as f64 + 0.5);
    // Given inputs are used as they are, whatever the requested count.
    assert_eq!(
        InducingInit::Given(z.clone())
            .select(x.as_ref(), 9, 0)
            .unwrap(),
        z
    );
    let e = message(InducingInit::Given(Mat::zeros(0, 2)).select(x.as_ref(), 1, 0));
    assert!(e.contains("at least one row of 2 inputs, got 0×2"), "{e}");
    let e = message(InducingInit::Given(Mat::zeros(2, 3)).select(x.as_ref(), 1, 0));
    assert!(e.contains("got 2×3"), "{e}");
    let mut bad = z.clone();
    bad[(1, 0)] = f64::NAN;
    let e = message(InducingInit::Given(bad).select(x.as_ref(), 1, 0));
    assert!(e.contains("inducing input 2, column 1: NaN"), "{e}");
    // CaGP takes them as the Z of inducing-point actions only.
    let y: Vec<f64> = (0..5).map(|i| (i as f64).sin()).collect();
    let opts = ApproxOptions {
        inducing_inputs: Some(z),
        ..ApproxOptions::default()
    };
    let mut kernel = crate::kernels::Kernel::parse("matern52").unwrap();
    kernel.initialize(x.as_ref()).unwrap();
    let e = message(ApproxModel::fit(
        ApproxKind::Cagp,
        x.as_ref(),
        &y,
        kernel,
        crate::means::Mean::Zero,
        0.1,
        0.2,
        &opts,
        0,
        &mut |_, _| {},
    ));
    assert!(e.contains("use action kind inducing, not blocks"), "{e}");
}
