//! Regression models through the estimators: the form equals the model's own predictions, and
//! the data-units bounds hold at sampled data-units points.

use faer::Mat;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::data::Dataset;
use crate::estimators::{ModelKind, Regressor, RegressorConfig};
use crate::verify::bnb::BnbOptions;
use crate::verify::quantity::Quantity;
use crate::verify::regression::{regressor_form, verify_regressor};

fn data(n: usize, seed: u64) -> Dataset {
    let mut rng = StdRng::seed_from_u64(seed);
    let x = Mat::from_fn(n, 2, |_, j| rng.random_range(0.0..10.0) * (1.0 + j as f64));
    let y = Mat::from_fn(n, 1, |i, _| {
        100.0 + 20.0 * (x[(i, 0)] * 0.5).sin() - 0.8 * x[(i, 1)] + rng.random_range(-1.0..1.0)
    });
    Dataset {
        input_names: vec!["a".into(), "b".into()],
        target_names: vec!["y".into()],
        x,
        y,
    }
}

#[test]
fn forms_match_model_predictions_and_data_unit_bounds_hold() {
    let ds = data(60, 1);
    for model in [
        ModelKind::Gp,
        ModelKind::Rcgp,
        ModelKind::Sgpr,
        ModelKind::Svgp,
        ModelKind::Cagp,
    ] {
        let mut cfg = RegressorConfig {
            model,
            ..RegressorConfig::default()
        };
        cfg.kernel = Some("se".into());
        cfg.fit.restarts = 0;
        cfg.approx.inducing = Some(20);
        let reg = Regressor::fit(&ds, &cfg).unwrap_or_else(|e| panic!("{model:?}: {e}"));
        let form = regressor_form(&reg, 0).unwrap();
        let xq = Mat::from_fn(5, 2, |i, j| 1.0 + i as f64 + 2.0 * j as f64);
        let pred = reg.predict(xq.as_ref(), true).unwrap();
        let xs = reg.standardizer.transform_x(xq.as_ref());
        let m = form.moments(xs.as_ref());
        for (i, mi) in m.iter().enumerate() {
            let mean = reg.standardizer.inverse_y_mean(0, mi.mean);
            assert!(
                (mean - pred[0].mean[i]).abs() < 1e-8 * (1.0 + mean.abs()),
                "{model:?} mean"
            );
            // Variances agree up to the cancellation in k(x,x) − q(x) (prior variance ≈ 1).
            let ys = reg.standardizer.y_std[0];
            let var_model = (pred[0].std[i] / ys).powi(2);
            assert!(
                (m[i].var - var_model).abs() < 1e-8,
                "{model:?} var {} vs {var_model}",
                m[i].var
            );
        }
        let x0 = [4.0, 9.0];
        for q in [Quantity::Mean, Quantity::Variance] {
            let v = verify_regressor(&reg, 0, q, &x0, 0.7, None, &BnbOptions::default()).unwrap();
            let mut rng = StdRng::seed_from_u64(5);
            let pts = Mat::from_fn(3000, 2, |_, j| x0[j] + rng.random_range(-0.7..=0.7));
            let p = reg.predict(pts.as_ref(), true).unwrap();
            for i in 0..3000 {
                let val = match q {
                    Quantity::Mean => p[0].mean[i],
                    _ => p[0].std[i] * p[0].std[i],
                };
                let ys = reg.standardizer.y_std[0];
                let tol = 1e-9 * (1.0 + val.abs())
                    + if q == Quantity::Variance {
                        1e-8 * ys * ys
                    } else {
                        0.0
                    };
                assert!(
                    v.lower - tol <= val && val <= v.upper + tol,
                    "{model:?} {q:?}: {} {val} {}",
                    v.lower,
                    v.upper
                );
            }
            assert!(v
                .argmin
                .iter()
                .zip(&x0)
                .all(|(a, c)| (a - c).abs() <= 0.7 + 1e-12));
            assert!(v.lower <= v.min_found && v.max_found <= v.upper);
        }
        // A probability on a regression model is refused.
        let err = verify_regressor(
            &reg,
            0,
            Quantity::Probability(crate::verify::BinaryLink::Probit),
            &x0,
            0.1,
            None,
            &BnbOptions::default(),
        );
        assert!(err.unwrap_err().to_string().contains("classifier"));
    }
}
