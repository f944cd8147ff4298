//! Where a robust surrogate (rcgp, rcagp) centres its IMQ weights in Bayesian optimisation.
//!
//! RCGP's weight `w = β (1 + (y − γ)²/c²)^(−1/2)` is centred on the prior mean `γ = m(x)`
//! (`rcagp.md` §2.1). When maximising, the best points are extreme values too: with the
//! asymmetric outliers of the paper (`+U(1σ̄, 2σ̄)`) the prior-centred weight cannot tell them
//! apart: on a Hartmann6 run (150 evaluations, 28 outliers) the injected outliers got a mean
//! weight `ŵ` of 0.80 and the ten best clean points 0.73 (leave-one-out centres: 0.58 and
//! 0.93). [`RobustCentre::Loo`] centres each observation on its leave-one-out mean under a
//! first, non-robust fit (the exact GP with the surrogate's kernel and mean): an outlier sits
//! far above what its neighbours predict, a good point near other good points does not. The
//! soft threshold is then the `(1 − ε)` order statistic of `|y − γ|`, the residuals from those
//! centres. This is an expert-free analogue of §2.12's corrected mean, our choice rather than
//! the paper's; the default stays [`RobustCentre::Prior`] because in BO runs it did not win
//! overall (the numbers are in `docs/decisions.md`).

use serde::{Deserialize, Serialize};

use super::surrogate::fit_surrogate;
use crate::data::Dataset;
use crate::estimators::regressor::{Fitted, SingleOutput};
use crate::models::ModelError;

/// The models whose weights [`RobustCentre`] places.
pub const CENTRED_MODELS: [&str; 2] = ["rcgp", "rcagp"];

/// Where a robust surrogate centres its IMQ weights (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RobustCentre {
    /// The prior mean (RCGP's weight, `rcagp.md` §2.1).
    #[default]
    Prior,
    /// The leave-one-out mean of each observation under a first exact-GP fit.
    Loo,
}

impl RobustCentre {
    /// Every centre, in the order of [`RobustCentre::NAMES`].
    pub const ALL: [RobustCentre; 2] = [RobustCentre::Prior, RobustCentre::Loo];
    /// The names [`RobustCentre::parse`] accepts.
    pub const NAMES: [&'static str; 2] = ["prior", "loo"];

    /// Parses a centre name.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] for any other name, listing the accepted ones.
    pub fn parse(name: &str) -> Result<Self, ModelError> {
        match Self::NAMES.iter().position(|n| *n == name) {
            Some(i) => Ok(Self::ALL[i]),
            None => Err(ModelError::Invalid(format!(
                "unknown robust centre '{name}' (expected one of {})",
                Self::NAMES.join(", ")
            ))),
        }
    }

    /// The name [`RobustCentre::parse`] accepts.
    pub fn name(self) -> &'static str {
        Self::NAMES[Self::ALL.iter().position(|c| *c == self).unwrap_or(0)]
    }

    /// The given centres of the model `name` fitted to `data` (standardised units, one per
    /// row), or `None` when its weights stay on the prior mean: for [`RobustCentre::Prior`]
    /// and for models outside [`CENTRED_MODELS`] (which have no weights, or, rcsvgp, no given
    /// centres).
    ///
    /// # Errors
    /// The errors of the first fit ([`loo_centres`]).
    pub fn centres(
        self,
        name: &str,
        seed: u64,
        data: &Dataset,
    ) -> Result<Option<Vec<f64>>, ModelError> {
        match self {
            RobustCentre::Loo if CENTRED_MODELS.contains(&name) => {
                loo_centres(seed, data).map(Some)
            }
            _ => Ok(None),
        }
    }
}

/// The leave-one-out mean of every row of `data`'s one target under the exact GP surrogate
/// (`fit_surrogate("gp", seed, data)`), in its standardised units, which are those of every
/// surrogate fitted to the same data.
///
/// # Errors
/// The fit's errors; [`ModelError::Invalid`] if the fit is not one exact GP.
pub fn loo_centres(seed: u64, data: &Dataset) -> Result<Vec<f64>, ModelError> {
    let first = fit_surrogate("gp", seed, data)?;
    match &first.fitted {
        Fitted::PerTarget(outputs) => match outputs.as_slice() {
            [output] if output.missing_rows.is_empty() => match &output.gp {
                SingleOutput::Gp(gp) => Ok(gp.loo().mean),
                _ => Err(ModelError::Invalid(
                    "the leave-one-out centres need an exact GP fit".into(),
                )),
            },
            _ => Err(ModelError::Invalid(
                "the leave-one-out centres need one target observed on every row".into(),
            )),
        },
        _ => Err(ModelError::Invalid(
            "the leave-one-out centres need a single-output fit".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use faer::Mat;

    use super::*;
    use crate::models::exact::ExactGp;
    use crate::sequential::bayes_opt::fit_surrogate_with;

    /// A maximisation run's data on [0, 1]: a peak at 0.7 that the optimiser has sampled
    /// densely (its best points are the highest values), a sine elsewhere, and asymmetric
    /// outliers (+2) at rows 3, 9, 13 and 27 of the even grid, away from the peak and each
    /// among clean neighbours.
    fn maximisation_data() -> (Dataset, Vec<usize>, usize) {
        let f = |t: f64| 3.0 * (-((t - 0.7) / 0.08).powi(2)).exp() + 0.3 * (6.0 * t).sin();
        let mut xs: Vec<f64> = (0..30).map(|i| i as f64 / 29.0).collect();
        xs.extend((0..12).map(|i| 0.64 + 0.01 * i as f64));
        let outliers = vec![3, 9, 13, 27];
        let y: Vec<f64> = xs
            .iter()
            .enumerate()
            .map(|(i, &t)| f(t) + if outliers.contains(&i) { 2.0 } else { 0.0 })
            .collect();
        let best = (0..y.len())
            .filter(|i| !outliers.contains(i))
            .max_by(|&a, &b| y[a].total_cmp(&y[b]))
            .unwrap();
        let n = xs.len();
        let data = Dataset {
            input_names: vec!["x".into()],
            target_names: vec!["y".into()],
            x: Mat::from_fn(n, 1, |i, _| xs[i]),
            y: Mat::from_fn(n, 1, |i, _| y[i]),
        };
        (data, outliers, best)
    }

    /// The normalised weights `ŵ` of the fitted surrogate `name`.
    fn weights(name: &str, data: &Dataset, centre: RobustCentre) -> Vec<f64> {
        use crate::models::approximate::ApproxModel;
        let model = fit_surrogate_with(name, 0, data, None, centre, None).unwrap();
        let Fitted::PerTarget(outputs) = &model.fitted else {
            panic!("single output")
        };
        match &outputs[0].gp {
            SingleOutput::Rcgp(gp, _) => gp.weights().imq.w_hat.clone(),
            SingleOutput::Approx(ApproxModel::Ca(gp), _) => {
                gp.weights().iter().map(|w| w / gp.beta()).collect()
            }
            _ => panic!("{name} is not robust"),
        }
    }

    #[test]
    fn leave_one_out_centres_are_refits_without_the_row() {
        let (data, _, _) = maximisation_data();
        let centres = loo_centres(4, &data).unwrap();
        let first = fit_surrogate("gp", 4, &data).unwrap();
        let Fitted::PerTarget(outputs) = &first.fitted else {
            panic!("single output")
        };
        let SingleOutput::Gp(gp) = &outputs[0].gp else {
            panic!("exact GP")
        };
        let st = &first.standardizer;
        let xs = st.transform_x(data.x.as_ref());
        let ys: Vec<f64> = (0..data.n())
            .map(|i| (data.y[(i, 0)] - st.y_mean[0]) / st.y_std[0])
            .collect();
        let n = data.n();
        for i in 0..n {
            let keep: Vec<usize> = (0..n).filter(|&j| j != i).collect();
            let x = Mat::from_fn(n - 1, 1, |r, c| xs[(keep[r], c)]);
            let y: Vec<f64> = keep.iter().map(|&j| ys[j]).collect();
            let without = ExactGp::at(gp.hyper().clone(), x.as_ref(), &y, gp.extra_diag()).unwrap();
            let at = Mat::from_fn(1, 1, |_, c| xs[(i, c)]);
            let want = without.predict(at.as_ref(), true).unwrap().mean[0];
            assert!(
                (centres[i] - want).abs() < 1e-7 * want.abs().max(1.0),
                "row {i}: {} vs {want}",
                centres[i]
            );
        }
    }

    /// The prior centre weighs the best point below the outliers (both are extreme values);
    /// the leave-one-out centre weighs every outlier below the best point and below the
    /// median clean point, for RCGP and RCaGP alike.
    #[test]
    fn leave_one_out_centres_tell_outliers_from_the_best_points() {
        let (data, outliers, best) = maximisation_data();
        for name in CENTRED_MODELS {
            let prior = weights(name, &data, RobustCentre::Prior);
            let mean_outlier = outliers.iter().map(|&i| prior[i]).sum::<f64>() / 4.0;
            assert!(prior[best] < mean_outlier, "{name}: {prior:?}");
            let loo = weights(name, &data, RobustCentre::Loo);
            let mut clean: Vec<f64> = (0..loo.len())
                .filter(|i| !outliers.contains(i))
                .map(|i| loo[i])
                .collect();
            clean.sort_by(f64::total_cmp);
            let median = clean[clean.len() / 2];
            for &o in &outliers {
                assert!(
                    loo[o] < loo[best] && loo[o] < median,
                    "{name}: outlier {o} has weight {} (best {}, median {median})",
                    loo[o],
                    loo[best]
                );
            }
        }
    }

    /// Given centres reach the regressor only for rcgp and rcagp, one per row.
    #[test]
    fn the_regressor_checks_given_centres() {
        use crate::estimators::{ModelKind, Regressor, RegressorConfig};
        let (data, _, _) = maximisation_data();
        let fit = |model, centres: Vec<f64>| {
            let cfg = RegressorConfig {
                model,
                robust_centres: Some(centres),
                ..RegressorConfig::default()
            };
            Regressor::fit(&data, &cfg).map(|_| ())
        };
        let n = data.n();
        let e = fit(ModelKind::Gp, vec![0.0; n]).unwrap_err().to_string();
        assert!(e.contains("apply to rcgp and rcagp, not gp"), "{e}");
        let e = fit(ModelKind::Rcgp, vec![0.0; 3]).unwrap_err().to_string();
        assert!(e.contains(&format!("({n} rows), got 3 centres")), "{e}");
        let mut bad = vec![0.0; n];
        bad[5] = f64::NAN;
        let e = fit(ModelKind::Rcgp, bad).unwrap_err().to_string();
        assert!(e.contains("entry 5"), "{e}");
        assert!(fit(ModelKind::Rcgp, vec![0.0; n]).is_ok());
    }

    #[test]
    fn centres_apply_to_the_robust_models_with_given_centres_only() {
        let (data, _, _) = maximisation_data();
        for name in ["gp", "cagp", "rcsvgp", "svgp"] {
            assert_eq!(RobustCentre::Loo.centres(name, 0, &data).unwrap(), None);
        }
        for name in CENTRED_MODELS {
            assert_eq!(RobustCentre::Prior.centres(name, 0, &data).unwrap(), None);
            let c = RobustCentre::Loo.centres(name, 0, &data).unwrap().unwrap();
            assert_eq!(c, loo_centres(0, &data).unwrap());
        }
        for c in RobustCentre::ALL {
            assert_eq!(RobustCentre::parse(c.name()).unwrap(), c);
        }
        let e = RobustCentre::parse("knn").unwrap_err().to_string();
        assert!(
            e.contains("unknown robust centre 'knn'") && e.contains("prior, loo"),
            "{e}"
        );
    }
}
