//! The expert-guided robust prior mean in Bayesian optimisation (`rcagp.md` §2.12, §3.5 step
//! 11; the RCaGP paper's §5 and Fig. 5).
//!
//! In BO the "expert" is whoever can look at an evaluation and say "this one is wrong, it
//! should have been about ȳ": the user of an ask/tell loop ([`BayesOpt::correct`](super::BayesOpt::correct)),
//! or, in the benchmarks, the simulated expert of the paper's ablation, who identifies exactly
//! the injected outliers and reports their clean value plus `N(0, σ²_corr)` noise
//! ([`simulated_correction`]). With [`ExpertPrior::Corrections`] every proposal turns the
//! corrections told so far into the constant mean of §2.12
//! ([`expert_mean`](crate::robust::expert_mean)) and fits the robust surrogate (rcgp, rcsvgp,
//! rcagp) with that mean held fixed: it is the GP's prior mean and the centre of the IMQ
//! weights. Before the first correction the surrogate is the one without the expert's mean,
//! bit for bit. [`ExpertPrior::Constant`] is a mean the user gives outright.
//!
//! Units: the surrogate is fitted to standardised targets (negated when minimising), so the
//! mean is computed there: targets and corrections standardised with the surrogate's
//! statistics, which makes `σ²_corr = 1` a variance in units of the targets' spread (the
//! reference code's normalised BO units), and the neighbours of each outlier are the nearest
//! evaluations in the box scaled to the unit cube.

use faer::Mat;
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

use crate::models::ModelError;
use crate::robust::{expert_mean, ExpertCorrection, ExpertSettings};

/// The surrogates whose prior mean the expert sets: the robust ones, where the mean also
/// centres the IMQ weights.
pub const EXPERT_MODELS: [&str; 3] = ["rcgp", "rcsvgp", "rcagp"];

/// How often the simulated expert of the paper's BO runs is asked: every 20 evaluations
/// (`rcagp.md` Table S4: `T/20` corrections).
pub const EXPERT_EVERY: usize = 20;

/// Where a BO run's robust surrogate takes an expert-guided prior mean from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind", deny_unknown_fields)]
pub enum ExpertPrior {
    /// No expert: the surrogate's own mean (the default).
    #[default]
    Off,
    /// A constant prior mean given by the user, in the objective's units.
    Constant {
        /// The mean.
        value: f64,
    },
    /// The mean of §2.12 from the corrections told with
    /// [`BayesOpt::correct`](super::BayesOpt::correct); none yet = no expert.
    Corrections,
}

/// One expert correction of a BayesOpt run: the observation it flags as an outlier and the
/// value the expert says it should have had (objective units).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Correction {
    /// The observation (0-based, in the order told).
    pub index: usize,
    /// The corrected value.
    pub value: f64,
}

impl ExpertPrior {
    /// Parses `off`, `constant:V` or `corrections`.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] for anything else, or a constant that is not a finite number.
    pub fn parse(text: &str) -> Result<Self, ModelError> {
        match text.split_once(':') {
            None if text == "off" => Ok(ExpertPrior::Off),
            None if text == "corrections" => Ok(ExpertPrior::Corrections),
            Some(("constant", v)) => match v.trim().parse::<f64>() {
                Ok(value) if value.is_finite() => Ok(ExpertPrior::Constant { value }),
                _ => Err(ModelError::Invalid(format!(
                    "expert mean 'constant:{v}': expected a finite number after 'constant:'"
                ))),
            },
            _ => Err(ModelError::Invalid(format!(
                "unknown expert mean '{text}' (expected off, constant:VALUE or corrections)"
            ))),
        }
    }

    /// The text [`ExpertPrior::parse`] reads back.
    pub fn name(self) -> String {
        match self {
            ExpertPrior::Off => "off".into(),
            ExpertPrior::Constant { value } => format!("constant:{value}"),
            ExpertPrior::Corrections => "corrections".into(),
        }
    }

    /// The prior mean in the surrogate's standardised units, or `None` for no expert (off, or
    /// no correction yet). `ys` are the surrogate's standardised targets, `to_model` maps a
    /// value of the objective to those units, `unit_x` are the evaluated points scaled to the
    /// unit cube.
    ///
    /// # Errors
    /// The errors of [`expert_mean`] (e.g. fewer uncorrected evaluations than neighbours).
    pub fn in_model_units(
        self,
        corrections: &[Correction],
        unit_x: &Mat<f64>,
        ys: &[f64],
        to_model: impl Fn(f64) -> f64,
    ) -> Result<Option<f64>, ModelError> {
        match self {
            ExpertPrior::Off => Ok(None),
            ExpertPrior::Constant { value } => Ok(Some(to_model(value))),
            ExpertPrior::Corrections if corrections.is_empty() => Ok(None),
            ExpertPrior::Corrections => {
                let given: Vec<ExpertCorrection> = corrections
                    .iter()
                    .map(|c| ExpertCorrection {
                        index: c.index,
                        corrected: to_model(c.value),
                    })
                    .collect();
                expert_mean(unit_x.as_ref(), ys, &given, &ExpertSettings::default())
                    .map(|m| Some(m.constant))
                    .map_err(|e| ModelError::Invalid(format!("expert mean: {e}")))
            }
        }
    }
}

/// The simulated expert's correction of observation `index` ("perfect outlier correction",
/// `rcagp.md` §2.12): its clean value plus `N(0, σ²_corr)` noise, `σ²_corr = 1` in
/// standardised units, i.e. `scale · z` in the objective's units for the run's target scale
/// `scale`; `z` is seeded by `(seed, index)`, so a correction does not depend on when it is
/// asked for.
pub fn simulated_correction(clean: f64, scale: f64, seed: u64, index: usize) -> f64 {
    let mut rng = StdRng::seed_from_u64(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index as u64);
    let z: f64 = StandardNormal.sample(&mut rng);
    clean + scale * z * crate::robust::EXPERT_CORRECTION_VARIANCE.sqrt()
}
