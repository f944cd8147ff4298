//! The stored state of a [`BayesOpt`] run: one JSON object with a format tag and version, the
//! settings, the observations (and the expert's corrections, if any), the trust region and the design and optimiser positions.
//! Numbers are written in their shortest exact form (`serde_json`'s `float_roundtrip`), so a
//! resumed run proposes bit for bit the same points.

use serde_json::{Map, Value};

use super::super::turbo::LENGTH_MAX;
use super::BayesOpt;
use crate::models::ModelError;

/// The `format` tag of a stored state.
pub const STATE_FORMAT: &str = "trustgp-bayes-opt";
/// The version of the stored state this build writes and reads.
pub const STATE_VERSION: u64 = 1;

/// A state-file error.
fn invalid(msg: String) -> ModelError {
    ModelError::Invalid(format!("Bayesian optimisation state: {msg}"))
}

impl BayesOpt {
    /// The state as a JSON object (see the module documentation of `state`).
    ///
    /// # Errors
    /// [`ModelError::Invalid`] if serialisation fails (it does not for a valid state).
    pub fn to_json(&self) -> Result<String, ModelError> {
        let mut object = Map::new();
        object.insert("format".into(), Value::from(STATE_FORMAT));
        object.insert("version".into(), Value::from(STATE_VERSION));
        let Value::Object(fields) =
            serde_json::to_value(self).map_err(|e| invalid(e.to_string()))?
        else {
            return Err(invalid("the state did not serialise to an object".into()));
        };
        object.extend(fields);
        serde_json::to_string_pretty(&Value::Object(object)).map_err(|e| invalid(e.to_string()))
    }

    /// A run resumed from [`BayesOpt::to_json`]'s text.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] naming what is wrong: not JSON, another format or version, a
    /// missing or unknown field, settings that do not check, observations of the wrong shape,
    /// non-finite or outside the box, or a trust region that does not fit the method and box.
    pub fn from_json(text: &str) -> Result<Self, ModelError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| invalid(format!("not valid JSON ({e})")))?;
        let Value::Object(mut object) = value else {
            return Err(invalid("expected a JSON object".into()));
        };
        match object.remove("format") {
            Some(Value::String(f)) if f == STATE_FORMAT => {}
            other => {
                return Err(invalid(format!(
                    "format is {}, expected \"{STATE_FORMAT}\"",
                    other.map_or("missing".into(), |v| v.to_string())
                )))
            }
        }
        match object.remove("version").and_then(|v| v.as_u64()) {
            Some(STATE_VERSION) => {}
            other => {
                return Err(invalid(format!(
                    "version {}, this build reads version {STATE_VERSION}",
                    other.map_or("missing".into(), |v| v.to_string())
                )))
            }
        }
        let bo: BayesOpt =
            serde_json::from_value(Value::Object(object)).map_err(|e| invalid(e.to_string()))?;
        bo.settings.check().map_err(|e| invalid(e.to_string()))?;
        bo.check_observations()?;
        bo.check_trust_region()?;
        Ok(bo)
    }

    /// The observations have one point and two finite values each, every point inside the box;
    /// each correction names an observation, once, with a finite value.
    fn check_observations(&self) -> Result<(), ModelError> {
        self.check_points(&self.x, &self.y, &self.y_clean, "observation")
            .map_err(invalid)?;
        for (k, c) in self.corrections.iter().enumerate() {
            if c.index >= self.y.len() || !c.value.is_finite() {
                return Err(invalid(format!(
                    "correction {k} names observation {} with value {}, expected one of the {} \
                     observations and a finite value",
                    c.index,
                    c.value,
                    self.y.len()
                )));
            }
            if self.corrections[..k].iter().any(|o| o.index == c.index) {
                return Err(invalid(format!(
                    "observation {} is corrected twice",
                    c.index
                )));
            }
        }
        Ok(())
    }

    /// A trust region exactly for the methods that use one, of the box's dimension, with a side
    /// length in `(0, L_max]`.
    fn check_trust_region(&self) -> Result<(), ModelError> {
        let method = self.settings.method;
        match (&self.trust_region, method.uses_trust_region()) {
            (None, false) => Ok(()),
            (Some(region), true) => {
                let d = self.settings.bounds.len();
                if region.dim() != d {
                    return Err(invalid(format!(
                        "the trust region has dimension {}, the box {d}",
                        region.dim()
                    )));
                }
                let l = region.length();
                if !(l > 0.0 && l <= LENGTH_MAX) {
                    return Err(invalid(format!(
                        "the trust region's side length is {l}, expected in (0, {LENGTH_MAX}]"
                    )));
                }
                Ok(())
            }
            (region, _) => Err(invalid(format!(
                "method {} {} a trust region",
                method.name(),
                if region.is_some() {
                    "cannot have"
                } else {
                    "needs"
                }
            ))),
        }
    }
}
