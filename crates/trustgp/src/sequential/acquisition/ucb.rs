//! The upper confidence bound `μ + √β σ`.

use super::{finite, MarginalUtility, Utility};
use crate::models::ModelError;

/// The upper confidence bound `μ + √β σ` (Srinivas et al., 2010): the `Φ(√β)` quantile of the
/// posterior marginal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UpperConfidenceBound {
    sqrt_beta: f64,
}

impl UpperConfidenceBound {
    /// The bound with exploration weight `beta ≥ 0`.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] if `beta` is negative or not finite.
    pub fn new(beta: f64) -> Result<Self, ModelError> {
        let beta = finite(beta, "UCB's beta")?;
        if beta < 0.0 {
            return Err(ModelError::Invalid(format!(
                "UCB's beta must be at least 0, got {beta}"
            )));
        }
        Ok(UpperConfidenceBound {
            sqrt_beta: beta.sqrt(),
        })
    }
}

impl MarginalUtility for UpperConfidenceBound {
    fn utility(&self, mean: f64, sd: f64) -> Utility {
        Utility {
            value: mean + self.sqrt_beta * sd,
            d_mean: 1.0,
            d_sd: self.sqrt_beta,
        }
    }
}
