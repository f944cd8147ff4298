//! Ask/tell Bayesian optimisation: a [`BayesOpt`] object that proposes points of a box
//! ([`BayesOpt::ask`]) and records their evaluations ([`BayesOpt::tell`]), for loops driven by
//! the user's own experiment.
//!
//! * Until `n_init` evaluations have been told, `ask` returns points of a seeded
//!   Owen-scrambled Sobol design; the sequence continues across calls, so no point repeats.
//! * Afterwards `ask` fits the surrogate (any single-output registry model, `gp` by default,
//!   on standardised data; minimisation negates the targets), maps the search box into the
//!   model's standardised input units and maximises the acquisition there (see [`propose`]).
//! * With [`Method::Dpp`] (and [`Method::DppTurbo`]) the surrogate's inducing inputs (or
//!   dense actions) are chosen from the training inputs by a quality-weighted DPP first
//!   ([`dpp_surrogate`]).
//! * With [`Method::Turbo`] (and [`Method::EulboTurbo`], [`Method::DppTurbo`]) the search box
//!   is the TuRBO trust region centred at the incumbent: the evaluated input with the best
//!   posterior mean of the fitted surrogate ([`surrogate_incumbent`]), not the best noisy
//!   observation, which may be an outlier; every `tell` after the initial design updates the
//!   region with the batch's clean values, and a collapsed region restarts (`rcagp.md` §3.5).
//! * With an expert-guided prior mean ([`ExpertPrior`], `rcagp.md` §2.12) the robust
//!   surrogates (rcgp, rcsvgp, rcagp) are fitted with that mean held fixed: a constant the
//!   user gives, or the mean built from the expert's corrections ([`BayesOpt::correct`]).
//! * The whole state (settings, observations, expert corrections, trust region, design index
//!   and the count of model-based asks, which seeds the optimiser) is plain data: [`BayesOpt::to_json`] and
//!   [`BayesOpt::from_json`] store and resume a run bit for bit.

mod design;
mod dpp_step;
#[cfg(test)]
mod dpp_tests;
mod eulbo_step;
mod expert;
#[cfg(test)]
mod expert_tests;
mod propose;
mod robust_centre;
mod state;
mod surrogate;
#[cfg(test)]
mod surrogate_tests;
#[cfg(test)]
mod tests;

use faer::Mat;
use serde::{Deserialize, Serialize};

pub use self::design::design_point;
pub use self::dpp_step::{
    dpp_quality, dpp_surrogate, DppSurrogate, DPP_INDUCING, DPP_MODELS, DPP_QUALITY_FLOOR,
};
pub use self::eulbo_step::{eulbo_incumbent, eulbo_refine, EULBO_MODELS};
pub use self::expert::{
    simulated_correction, Correction, ExpertPrior, EXPERT_EVERY, EXPERT_MODELS,
};
pub use self::propose::{propose, Proposed};
pub use self::robust_centre::{loo_centres, RobustCentre, CENTRED_MODELS};
pub use self::state::{STATE_FORMAT, STATE_VERSION};
pub use self::surrogate::{
    fit_surrogate, fit_surrogate_with, latent_posterior, surrogate_incumbent, surrogate_kind,
    FREE_NOISE_SURROGATES, SURROGATE_KERNEL, SURROGATE_MEAN,
};
use super::suggest::{Bound, SuggestAcquisition};
use super::turbo::TrustRegion;
use crate::data::{Dataset, Standardizer};
use crate::estimators::Regressor;
use crate::models::ModelError;

/// How points are chosen once the initial design is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// The acquisition is maximised over the whole box.
    Standard,
    /// The acquisition is maximised inside a TuRBO trust region around the incumbent.
    Turbo,
    /// EULBO: the acquisition's point and the surrogate (one of [`EULBO_MODELS`]) are then
    /// optimised jointly under the softplus expected utility, over the whole box.
    Eulbo,
    /// EULBO inside a TuRBO trust region.
    EulboTurbo,
    /// DPP-BO: the surrogate (one of [`DPP_MODELS`]) is fitted with [`DPP_INDUCING`] inducing
    /// inputs (or dense actions) chosen from the training inputs by a quality-weighted DPP,
    /// then the acquisition is maximised over the whole box.
    Dpp,
    /// DPP-BO inside a TuRBO trust region.
    DppTurbo,
}

impl Method {
    /// Every method, in the order of [`Method::NAMES`].
    pub const ALL: [Method; 6] = [
        Method::Standard,
        Method::Turbo,
        Method::Eulbo,
        Method::EulboTurbo,
        Method::Dpp,
        Method::DppTurbo,
    ];
    /// The names [`Method::parse`] accepts.
    pub const NAMES: [&'static str; 6] = [
        "standard",
        "turbo",
        "eulbo",
        "eulbo-turbo",
        "dpp",
        "dpp-turbo",
    ];

    /// Parses a method name.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] for any other name, listing the accepted ones.
    pub fn parse(name: &str) -> Result<Self, ModelError> {
        match Self::NAMES.iter().position(|n| *n == name) {
            Some(i) => Ok(Self::ALL[i]),
            None => Err(ModelError::Invalid(format!(
                "unknown method '{name}' (expected one of {})",
                Self::NAMES.join(", ")
            ))),
        }
    }

    /// The name [`Method::parse`] accepts.
    pub fn name(self) -> &'static str {
        Self::NAMES[Self::ALL.iter().position(|m| *m == self).unwrap_or(0)]
    }

    /// Whether points are searched inside a TuRBO trust region.
    pub fn uses_trust_region(self) -> bool {
        matches!(self, Method::Turbo | Method::EulboTurbo | Method::DppTurbo)
    }

    /// Whether the acquisition's point is refined by EULBO.
    pub fn uses_eulbo(self) -> bool {
        matches!(self, Method::Eulbo | Method::EulboTurbo)
    }

    /// Whether the surrogate's inducing inputs are chosen by the DPP.
    pub fn uses_dpp(self) -> bool {
        matches!(self, Method::Dpp | Method::DppTurbo)
    }
}

/// The settings of a run; they are part of its stored state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoSettings {
    /// The box: one named input each, in order.
    pub bounds: Vec<Bound>,
    /// The objective's name (the target column of the surrogate's data). Default `y`.
    pub target: String,
    /// Minimise the objective instead of maximising it. Default false.
    pub minimize: bool,
    /// The surrogate: a single-output model name of the registry. Default `gp`.
    pub model: String,
    /// The acquisition. Default LogEI.
    pub acquisition: SuggestAcquisition,
    /// Whole box or trust region. Default [`Method::Standard`].
    pub method: Method,
    /// Evaluations of the initial design before the surrogate takes over (at least 1).
    /// Default 10.
    pub n_init: usize,
    /// Seed of the design, the surrogate's fit and the optimiser. Default 0.
    pub seed: u32,
    /// Where rcgp and rcagp centre their IMQ weights (other models have no given centres).
    /// Default [`RobustCentre::Prior`].
    #[serde(default)]
    pub robust_centre: RobustCentre,
    /// The expert-guided prior mean of rcgp, rcsvgp and rcagp (`rcagp.md` §2.12). Default
    /// [`ExpertPrior::Off`].
    #[serde(default)]
    pub expert_mean: ExpertPrior,
}

impl BoSettings {
    /// The default settings on the box `bounds`.
    pub fn new(bounds: Vec<Bound>) -> Self {
        BoSettings {
            bounds,
            target: "y".into(),
            minimize: false,
            model: "gp".into(),
            acquisition: SuggestAcquisition::LogEi,
            method: Method::Standard,
            n_init: 10,
            seed: 0,
            robust_centre: RobustCentre::Prior,
            expert_mean: ExpertPrior::Off,
        }
    }

    /// Checks the box (at least one input, distinct names, finite ends with `lo < hi`), the
    /// model, and `n_init ≥ 1`.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] naming the offending setting.
    pub fn check(&self) -> Result<(), ModelError> {
        let invalid = |msg: String| Err(ModelError::Invalid(msg));
        if self.bounds.is_empty() {
            return invalid("Bayesian optimisation needs at least one bound".into());
        }
        for (i, b) in self.bounds.iter().enumerate() {
            if !(b.lo.is_finite() && b.hi.is_finite() && b.lo < b.hi) {
                return invalid(format!(
                    "bound of '{}' must be finite with lo < hi, got [{}, {}]",
                    b.name, b.lo, b.hi
                ));
            }
            if self.bounds[..i].iter().any(|o| o.name == b.name) {
                return invalid(format!("input '{}' is bounded more than once", b.name));
            }
        }
        if self.n_init == 0 {
            return invalid("n_init must be at least 1".into());
        }
        surrogate_kind(&self.model)?;
        if self.method.uses_eulbo() && !EULBO_MODELS.contains(&self.model.as_str()) {
            return invalid(format!(
                "method {} trains the surrogate with the query point and needs model {} \
                 (got '{}')",
                self.method.name(),
                EULBO_MODELS.join(", "),
                self.model
            ));
        }
        if self.method.uses_dpp() && !DPP_MODELS.contains(&self.model.as_str()) {
            return Err(dpp_step::unsupported(self.method.name(), &self.model));
        }
        if self.expert_mean != ExpertPrior::Off {
            if !EXPERT_MODELS.contains(&self.model.as_str()) {
                return invalid(format!(
                    "the expert-guided prior mean applies to the robust models {} (got '{}')",
                    EXPERT_MODELS.join(", "),
                    self.model
                ));
            }
            if self.robust_centre != RobustCentre::Prior {
                return invalid(format!(
                    "the expert-guided prior mean centres the robust weights itself; it cannot \
                     be combined with robust centre '{}'",
                    self.robust_centre.name()
                ));
            }
            if let ExpertPrior::Constant { value } = self.expert_mean {
                if !value.is_finite() {
                    return invalid(format!("the expert's constant mean {value} is not finite"));
                }
            }
        }
        Ok(())
    }
}

/// What [`BayesOpt::ask`] returns.
#[derive(Clone, Debug)]
pub struct Proposal {
    /// The points, one value per bound each, inside the box (and the trust region).
    pub points: Vec<Vec<f64>>,
    /// The acquisition's value at the batch (model units); `None` for design points.
    pub acquisition_value: Option<f64>,
    /// The fitted surrogate (on the negated targets when minimising); `None` for design
    /// points.
    pub model: Option<Regressor>,
    /// The trust region searched, `(lower, upper)` in the box's units (methods with a trust region).
    pub region: Option<(Vec<f64>, Vec<f64>)>,
}

/// An ask/tell Bayesian optimisation run (see the module documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BayesOpt {
    settings: BoSettings,
    /// Evaluated points, one per observation.
    x: Vec<Vec<f64>>,
    /// The values the surrogate sees (the user's direction).
    y: Vec<f64>,
    /// The clean values (equal to `y` unless told otherwise), which the trust region follows.
    y_clean: Vec<f64>,
    /// TuRBO's region (methods with a trust region only).
    trust_region: Option<TrustRegion>,
    /// The index of the next design point.
    design_index: u32,
    /// How many times the surrogate has proposed points: the optimiser's seed offset.
    model_asks: u32,
    /// The expert's corrections ([`BayesOpt::correct`]), in the order given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    corrections: Vec<Correction>,
}

impl BayesOpt {
    /// A run with `settings` and no observations.
    ///
    /// # Errors
    /// As for [`BoSettings::check`].
    pub fn new(settings: BoSettings) -> Result<Self, ModelError> {
        settings.check()?;
        let trust_region = if settings.method.uses_trust_region() {
            Some(
                TrustRegion::new(settings.bounds.len())
                    .map_err(|e| ModelError::Invalid(e.to_string()))?,
            )
        } else {
            None
        };
        Ok(BayesOpt {
            settings,
            x: Vec::new(),
            y: Vec::new(),
            y_clean: Vec::new(),
            trust_region,
            design_index: 0,
            model_asks: 0,
            corrections: Vec::new(),
        })
    }

    /// The settings.
    pub fn settings(&self) -> &BoSettings {
        &self.settings
    }

    /// The evaluated points, in the order told.
    pub fn x(&self) -> &[Vec<f64>] {
        &self.x
    }

    /// The values told (those the surrogate sees).
    pub fn y(&self) -> &[f64] {
        &self.y
    }

    /// The clean values told ([`BayesOpt::tell_corrupted`]), else the values themselves.
    pub fn y_clean(&self) -> &[f64] {
        &self.y_clean
    }

    /// TuRBO's trust region (methods with a trust region only).
    pub fn trust_region(&self) -> Option<&TrustRegion> {
        self.trust_region.as_ref()
    }

    /// The expert's corrections, in the order given.
    pub fn corrections(&self) -> &[Correction] {
        &self.corrections
    }

    /// The expert flags observation `index` (0-based, in the order told) as an outlier whose
    /// value should have been `value` (objective units); a second correction of the same
    /// observation replaces the first. With [`ExpertPrior::Corrections`] the next proposals
    /// fit the robust surrogate with the expert-guided mean of `rcagp.md` §2.12.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] for an observation not told yet or a value that is not finite.
    pub fn correct(&mut self, index: usize, value: f64) -> Result<(), ModelError> {
        let n = self.y.len();
        if index >= n {
            return Err(ModelError::Invalid(format!(
                "correct: observation {index} does not exist ({n} told, 0-based)"
            )));
        }
        if !value.is_finite() {
            return Err(ModelError::Invalid(format!(
                "correct: the corrected value of observation {index} is {value}, expected a \
                 finite number"
            )));
        }
        match self.corrections.iter_mut().find(|c| c.index == index) {
            Some(c) => c.value = value,
            None => self.corrections.push(Correction { index, value }),
        }
        Ok(())
    }

    /// Forgets every correction (a caller that re-reads all of them, as `trustgp suggest`).
    pub fn clear_corrections(&mut self) {
        self.corrections.clear();
    }

    /// The expert-guided prior mean of the surrogate fitted to `data` (this run's observations
    /// as [`BayesOpt::surrogate_data`] gives them), in its standardised units; `None` without
    /// one.
    fn expert_prior_mean(&self, data: &Dataset) -> Result<Option<f64>, ModelError> {
        if self.settings.expert_mean == ExpertPrior::Off {
            return Ok(None);
        }
        // The regressor standardises with the same statistics.
        let (st, _) = Standardizer::fit(data.x.as_ref(), data.y.as_ref())?;
        let (y_mean, y_std, sign) = (st.y_mean[0], st.y_std[0], self.sign());
        let ys: Vec<f64> = (0..data.n())
            .map(|i| (data.y[(i, 0)] - y_mean) / y_std)
            .collect();
        let (lo, hi) = self.box_ends();
        let unit_x = Mat::from_fn(self.x.len(), lo.len(), |i, c| {
            (self.x[i][c] - lo[c]) / (hi[c] - lo[c])
        });
        self.settings
            .expert_mean
            .in_model_units(&self.corrections, &unit_x, &ys, |v| {
                (sign * v - y_mean) / y_std
            })
    }

    /// Records evaluations `y[i]` at points `x[i]`.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] for an empty batch, lengths that differ, a point with the wrong
    /// number of coordinates, a non-finite coordinate or value, or a coordinate outside the
    /// box; the message names the point (1-based within the batch) and the input.
    pub fn tell(&mut self, x: &[Vec<f64>], y: &[f64]) -> Result<(), ModelError> {
        self.tell_corrupted(x, y, y)
    }

    /// [`BayesOpt::tell`] for benchmarks with corrupted observations: the surrogate sees `y`,
    /// the trust region follows the clean values `y_clean` (as in `rcagp.md` §3.5, step 11).
    ///
    /// # Errors
    /// As for [`BayesOpt::tell`], and `y_clean` of another length or not finite.
    pub fn tell_corrupted(
        &mut self,
        x: &[Vec<f64>],
        y: &[f64],
        y_clean: &[f64],
    ) -> Result<(), ModelError> {
        if x.is_empty() {
            return Err(ModelError::Invalid("tell: the batch has no points".into()));
        }
        self.check_points(x, y, y_clean, "point")
            .map_err(|e| ModelError::Invalid(format!("tell: {e}")))?;
        let sign = self.sign();
        if let Some(region) = self.trust_region.as_mut() {
            // The initial design does not move the region; later batches are judged against
            // the best clean value before them.
            if self.y.len() >= self.settings.n_init {
                let best = self
                    .y_clean
                    .iter()
                    .map(|v| sign * v)
                    .fold(f64::NEG_INFINITY, f64::max);
                let batch: Vec<f64> = y_clean.iter().map(|v| sign * v).collect();
                region
                    .update_with(&batch, best)
                    .map_err(|e| ModelError::Invalid(e.to_string()))?;
                if region.needs_restart() {
                    region.restart();
                }
            }
        }
        self.x.extend(x.iter().cloned());
        self.y.extend_from_slice(y);
        self.y_clean.extend_from_slice(y_clean);
        Ok(())
    }

    /// Checks points and values against the box (see [`BayesOpt::tell`]); the message
    /// calls the `i`-th point `{noun} i` (1-based).
    fn check_points(
        &self,
        x: &[Vec<f64>],
        y: &[f64],
        y_clean: &[f64],
        noun: &str,
    ) -> Result<(), String> {
        if y.len() != x.len() || y_clean.len() != x.len() {
            return Err(format!(
                "{} points but {} values and {} clean values",
                x.len(),
                y.len(),
                y_clean.len()
            ));
        }
        let bounds = &self.settings.bounds;
        for (i, row) in x.iter().enumerate() {
            let at = format!("{noun} {}", i + 1);
            if row.len() != bounds.len() {
                let names: Vec<&str> = bounds.iter().map(|b| b.name.as_str()).collect();
                return Err(format!(
                    "{at} has {} coordinates, expected {} ({})",
                    row.len(),
                    bounds.len(),
                    names.join(", ")
                ));
            }
            for (v, b) in row.iter().zip(bounds) {
                // Written so that NaN fails.
                if !(b.lo <= *v && *v <= b.hi) {
                    return Err(format!(
                        "{at}, input '{}': {v} is not inside [{}, {}]",
                        b.name, b.lo, b.hi
                    ));
                }
            }
            for (what, v) in [("value", y[i]), ("clean value", y_clean[i])] {
                if !v.is_finite() {
                    return Err(format!("{at}: the {what} {v} is not finite"));
                }
            }
        }
        Ok(())
    }

    /// `q` points to evaluate next: points of the initial design while fewer than `n_init`
    /// evaluations have been told, else the surrogate's proposal.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] for `q = 0`, or once the design is exhausted (2³² points);
    /// the errors of the fit and of [`propose`].
    pub fn ask(&mut self, q: usize) -> Result<Proposal, ModelError> {
        if q == 0 {
            return Err(ModelError::Invalid("ask needs q ≥ 1 points".into()));
        }
        if self.y.len() < self.settings.n_init {
            return self.design(q);
        }
        let proposal = self.surrogate_proposal(q)?;
        self.model_asks = self.model_asks.wrapping_add(1);
        Ok(proposal)
    }

    /// The box's `(lower, upper)` ends.
    fn box_ends(&self) -> (Vec<f64>, Vec<f64>) {
        self.settings.bounds.iter().map(|b| (b.lo, b.hi)).unzip()
    }

    /// TuRBO's region around the evaluated point `self.x[centre]`, `(lower, upper)` in the
    /// box's units.
    fn trust_region_box(&self, centre: usize) -> Result<(Vec<f64>, Vec<f64>), ModelError> {
        let region = self
            .trust_region
            .as_ref()
            .ok_or_else(|| ModelError::Invalid("method turbo has no trust region".into()))?;
        let (lower, upper) = self.box_ends();
        region
            .bounds(&self.x[centre], &lower, &upper)
            .map_err(|e| ModelError::Invalid(e.to_string()))
    }

    /// The surrogate, fitted to every observation, proposes `q` points of the whole box or,
    /// for the methods with one, of the trust region around the surrogate's incumbent: the
    /// search box is mapped into the model's standardised input units, the acquisition
    /// maximised there by [`propose`], and the points mapped back.
    fn surrogate_proposal(&self, q: usize) -> Result<Proposal, ModelError> {
        let data = self.surrogate_data();
        let fit_seed = u64::from(self.settings.seed);
        let prior_mean = self.expert_prior_mean(&data)?;
        let model = if self.settings.method.uses_dpp() {
            dpp_surrogate(
                &self.settings.model,
                fit_seed,
                &data,
                self.settings.robust_centre,
                prior_mean,
            )?
            .model
        } else {
            fit_surrogate_with(
                &self.settings.model,
                fit_seed,
                &data,
                None,
                self.settings.robust_centre,
                prior_mean,
            )?
        };
        let posterior = latent_posterior(&model)?;
        let st = &model.standardizer;
        let xs = st.transform_x(data.x.as_ref());
        // Where the surrogate proposes: the whole box or the trust region, centred at the
        // evaluated input with the best posterior mean (the rows of `xs` are `self.x`'s).
        let region = if self.settings.method.uses_trust_region() {
            let (centre, _) = surrogate_incumbent(&model, xs.as_ref())?;
            Some(self.trust_region_box(centre)?)
        } else {
            None
        };
        let (lo, hi) = region.clone().unwrap_or_else(|| self.box_ends());
        let unit: Vec<(f64, f64)> = (0..lo.len())
            .map(|c| {
                let to_unit = |v: f64| (v - st.x_mean[c]) / st.x_std[c];
                (to_unit(lo[c]), to_unit(hi[c]))
            })
            .collect();
        let seed = self.settings.seed.wrapping_add(self.model_asks);
        let proposed = propose(
            posterior,
            xs.as_ref(),
            &unit,
            q,
            self.settings.acquisition,
            seed,
        )?;
        let proposed = if self.settings.method.uses_eulbo() {
            // EULBO starts from the acquisition's point, with the targets as the model sees them.
            let ys: Vec<f64> = (0..data.n())
                .map(|i| (data.y[(i, 0)] - st.y_mean[0]) / st.y_std[0])
                .collect();
            let (points, value) =
                eulbo_refine(&model, xs.as_ref(), &ys, &proposed.points, &unit, seed)?;
            Proposed {
                points,
                value: Some(value),
            }
        } else {
            proposed
        };
        // Back to the box's units; the clamp guards the rounding of the round trip.
        let points = proposed
            .points
            .iter()
            .map(|p| {
                p.iter()
                    .enumerate()
                    .map(|(c, v)| (st.x_mean[c] + st.x_std[c] * v).clamp(lo[c], hi[c]))
                    .collect()
            })
            .collect();
        Ok(Proposal {
            points,
            acquisition_value: proposed.value,
            model: Some(model),
            region,
        })
    }

    /// `q` new points of the initial design. The sequence continues after the points already
    /// asked for and after the evaluations told, so a stateless caller that tells its rows
    /// again still gets a new point.
    fn design(&mut self, q: usize) -> Result<Proposal, ModelError> {
        let told = u32::try_from(self.y.len()).unwrap_or(u32::MAX);
        let first = self.design_index.max(told);
        let end = u32::try_from(q)
            .ok()
            .and_then(|q| first.checked_add(q))
            .ok_or_else(|| {
                ModelError::Invalid(format!(
                    "the initial design has no {q} points left after point {first}"
                ))
            })?;
        let points = (first..end)
            .map(|i| design_point(&self.settings.bounds, i, self.settings.seed))
            .collect();
        self.design_index = end;
        Ok(Proposal {
            points,
            acquisition_value: None,
            model: None,
            region: None,
        })
    }

    /// `+1` when maximising, `−1` when minimising.
    fn sign(&self) -> f64 {
        if self.settings.minimize {
            -1.0
        } else {
            1.0
        }
    }

    /// The observations as the surrogate's data (targets negated when minimising).
    fn surrogate_data(&self) -> Dataset {
        let (n, d) = (self.x.len(), self.settings.bounds.len());
        let sign = self.sign();
        Dataset {
            input_names: self
                .settings
                .bounds
                .iter()
                .map(|b| b.name.clone())
                .collect(),
            target_names: vec![self.settings.target.clone()],
            x: Mat::from_fn(n, d, |i, c| self.x[i][c]),
            y: Mat::from_fn(n, 1, |i, _| sign * self.y[i]),
        }
    }
}
