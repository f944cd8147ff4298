//! Acquisitions of safe learning, maximised over the safe set only: predictive entropy for
//! safe active learning (`safe-transfer.md` §2.4) and UCB or LogEI on the target for safe
//! Bayesian optimisation (§2.5).
//!
//! The entropy of a Gaussian is `½ ln(2πe σ²)`; it uses the latent variance `σ²_N(x)` (the
//! paper), or the noisy `σ²_N(x) + σ²_noise` (the authors' code), floored at
//! [`VARIANCE_FLOOR`]. Summing over the modelled functions (the default) rewards learning all
//! of them; the maximum is Berkenkamp et al.'s variant; target-only is the classic one.

use faer::MatRef;
use serde::{Deserialize, Serialize};

use super::error::{invalid, SafeError};
use super::FunctionModel;
use crate::posterior::Marginals;
use crate::sequential::acquisition::{
    standard_deviation, Improvement, ImprovementKind, MarginalUtility, UpperConfidenceBound,
};

/// Variances are floored here before the entropy's logarithm (§6).
pub const VARIANCE_FLOOR: f64 = 1e-12;

/// Which acquisition ranks the safe candidates (larger is better).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum SafeAcquisition {
    /// `Σ_g H_g(x)` over every modelled function (Eq. 8; the default).
    #[default]
    EntropySum,
    /// `max_g H_g(x)`.
    EntropyMax,
    /// `H_f(x)`, the target's entropy only.
    EntropyTarget,
    /// Safe UCB on the target, `μ_f + √β σ_f` (maximising; `−μ_f + √β σ_f` when minimising).
    Ucb {
        /// The exploration weight `β ≥ 0`.
        beta: f64,
    },
    /// Safe LogEI on the target over the incumbent, the best posterior mean at the evaluated
    /// target inputs.
    LogEi,
}

/// The acquisition and its settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AcquisitionOptions {
    /// Which acquisition. Default [`SafeAcquisition::EntropySum`].
    pub kind: SafeAcquisition,
    /// Entropies from the noisy predictive variance instead of the latent one. Default false.
    pub noisy_entropy: bool,
    /// UCB and LogEI minimise the target instead of maximising it. Default false.
    pub minimize: bool,
}

/// `½ ln(2πe max(var, VARIANCE_FLOOR))`, the entropy of a Gaussian of variance `var`.
pub fn gaussian_entropy(var: f64) -> f64 {
    let floored = if var > VARIANCE_FLOOR {
        var
    } else {
        VARIANCE_FLOOR
    };
    0.5 * (2.0 * std::f64::consts::PI * std::f64::consts::E * floored).ln()
}

/// An acquisition ready to evaluate on the marginals of the models: the options checked and,
/// for LogEI, the incumbent computed.
#[derive(Clone, Debug, PartialEq)]
pub struct PreparedAcquisition {
    options: AcquisitionOptions,
    ucb: Option<UpperConfidenceBound>,
    improvement: Option<Improvement>,
}

impl PreparedAcquisition {
    /// The acquisition of `options` for `models` (`models[0]` is the target's), whose target
    /// inputs are the rows of `target_x` (for LogEI's incumbent; unused otherwise).
    ///
    /// # Errors
    /// [`SafeError::Invalid`] for a negative or non-finite UCB `β`, or LogEI without evaluated
    /// inputs; [`SafeError::Model`] if the target's model cannot predict at `target_x`.
    pub fn new(
        options: &AcquisitionOptions,
        models: &[&dyn FunctionModel],
        target_x: MatRef<'_, f64>,
    ) -> Result<PreparedAcquisition, SafeError> {
        let mut ucb = None;
        let mut improvement = None;
        match options.kind {
            SafeAcquisition::Ucb { beta } => {
                ucb = Some(
                    UpperConfidenceBound::new(beta)
                        .map_err(|e| SafeError::Invalid(format!("safe UCB acquisition: {e}")))?,
                );
            }
            SafeAcquisition::LogEi => {
                let Some(target) = models.first() else {
                    return invalid("LogEI needs the target's model, got no models");
                };
                if target_x.nrows() == 0 {
                    return invalid("LogEI's incumbent needs at least one evaluated target input");
                }
                let m = target.predict(target_x).map_err(SafeError::model(0))?;
                // The incumbent on the maximised scale: −μ when minimising.
                let sign = if options.minimize { -1.0 } else { 1.0 };
                let best = m
                    .mean
                    .iter()
                    .map(|&mu| sign * mu)
                    .fold(f64::NEG_INFINITY, f64::max);
                improvement = Some(
                    Improvement::new(ImprovementKind::LogExpected, best).map_err(|e| {
                        SafeError::Invalid(format!("LogEI's incumbent (best posterior mean): {e}"))
                    })?,
                );
            }
            _ => {}
        }
        Ok(PreparedAcquisition {
            options: options.clone(),
            ucb,
            improvement,
        })
    }

    /// The options.
    pub fn options(&self) -> &AcquisitionOptions {
        &self.options
    }

    /// The value at candidate `i`, from the marginals of every model (`marginals[j]` for output
    /// column `j`, the target first) and their noise variances.
    pub fn value(&self, marginals: &[Marginals], noise: &[f64], i: usize) -> f64 {
        let entropy = |j: usize| {
            let extra = if self.options.noisy_entropy {
                noise[j]
            } else {
                0.0
            };
            gaussian_entropy(marginals[j].var[i] + extra)
        };
        let sign = if self.options.minimize { -1.0 } else { 1.0 };
        let target = |u: &dyn MarginalUtility| {
            let sd = standard_deviation(marginals[0].var[i]).0;
            u.utility(sign * marginals[0].mean[i], sd).value
        };
        match self.options.kind {
            SafeAcquisition::EntropySum => (0..marginals.len()).map(entropy).sum(),
            SafeAcquisition::EntropyMax => (0..marginals.len())
                .map(entropy)
                .fold(f64::NEG_INFINITY, f64::max),
            SafeAcquisition::EntropyTarget => entropy(0),
            SafeAcquisition::Ucb { .. } => target(self.ucb.as_ref().expect("built in new")),
            SafeAcquisition::LogEi => target(self.improvement.as_ref().expect("built in new")),
        }
    }
}
