//! The safe set (`safe-transfer.md` §2.3): a candidate is safe when, for every constraint, the
//! β-scaled bound of the constrained output's model holds, `μ − √β s ≥ T` for a lower threshold
//! and `μ + √β s ≤ U` for an upper one.
//!
//! `s` is the predictive standard deviation of the *noisy* output, `√(σ²_N(x) + σ²_noise)`, by
//! default (App. E, used in all of the paper's experiments), or the latent `σ_N(x)` in the
//! noise-free form. The noisy set is a subset of the noise-free one. The equivalent probability
//! form is `Φ((μ − T)/s) ≥ 1 − α` with `α = 1 − Φ(√β)`.
//!
//! A two-sided constraint `L ≤ z ≤ U` is two one-sided checks by default; the authors' code
//! instead requires `Φ((U − μ)/s) − Φ((L − μ)/s) ≥ 1 − α` ([`TwoSidedRule::Joint`]), slightly
//! stricter, and identical when one bound is absent.

use serde::{Deserialize, Serialize};

use super::error::{invalid, SafeError};
use super::Constraint;
use crate::posterior::Marginals;
use crate::sequential::acquisition::normal::{cdf, quantile};

/// The default `β` (`√β = 2`, `α = 1 − Φ(2) ≈ 0.02275`), as in all of the paper's experiments.
pub const DEFAULT_BETA: f64 = 4.0;

/// How a constraint with both a lower and an upper threshold is checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TwoSidedRule {
    /// Both one-sided bounds must hold (`safe-transfer.md` §2.3, a choice).
    #[default]
    Separate,
    /// `Φ((U − μ)/s) − Φ((L − μ)/s) ≥ 1 − α` (the authors' code).
    Joint,
}

/// How the safe set is decided.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SafeSetOptions {
    /// The confidence scale `β > 0`: a bound is `μ ∓ √β s`. Default [`DEFAULT_BETA`].
    pub beta: f64,
    /// Whether `s` includes the observation noise (the noisy form of App. E). Default true.
    pub noisy: bool,
    /// How two-sided constraints are checked. Default [`TwoSidedRule::Separate`].
    pub two_sided: TwoSidedRule,
}

impl Default for SafeSetOptions {
    fn default() -> Self {
        SafeSetOptions {
            beta: DEFAULT_BETA,
            noisy: true,
            two_sided: TwoSidedRule::Separate,
        }
    }
}

impl SafeSetOptions {
    /// The default options with `β` from the per-constraint unsafe tolerance `alpha`
    /// ([`beta_from_alpha`]).
    ///
    /// # Errors
    /// As for [`beta_from_alpha`].
    pub fn with_alpha(alpha: f64) -> Result<Self, SafeError> {
        Ok(SafeSetOptions {
            beta: beta_from_alpha(alpha)?,
            ..SafeSetOptions::default()
        })
    }
}

/// The per-constraint unsafe tolerance `α = 1 − Φ(√β)` of the confidence scale `beta`
/// (computed as `Φ(−√β)`, which keeps its relative accuracy for large `β`).
///
/// # Errors
/// [`SafeError::Invalid`] unless `beta` is finite and positive (`β ≤ 0` would certify points
/// whose mean is below the threshold).
pub fn alpha_from_beta(beta: f64) -> Result<f64, SafeError> {
    if !(beta.is_finite() && beta > 0.0) {
        return invalid(format!(
            "beta must be a finite number above 0 (the safe set is μ − √β·s ≥ T; 4 is the \
             default), got {beta}"
        ));
    }
    Ok(cdf(-beta.sqrt()))
}

/// The confidence scale `β = (Φ⁻¹(1 − α))²` of the per-constraint unsafe tolerance `alpha`.
///
/// # Errors
/// [`SafeError::Invalid`] unless `0 < alpha < 0.5` (`α ≥ 0.5` means `√β ≤ 0`: no safety).
pub fn beta_from_alpha(alpha: f64) -> Result<f64, SafeError> {
    if !(alpha > 0.0 && alpha < 0.5) {
        return invalid(format!(
            "alpha (the tolerated probability of an unsafe query per constraint) must lie in \
             (0, 0.5), got {alpha}"
        ));
    }
    // Φ⁻¹(1 − α) = −Φ⁻¹(α): the lower tail is where the quantile is accurate.
    Ok(quantile(alpha).powi(2))
}

/// One constraint's verdict at one candidate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConstraintCheck {
    /// Whether the constraint's β-scaled bound holds.
    pub safe: bool,
    /// The model's probability that the constraint holds, `P(T ≤ z ≤ U)` (with `s` as in the
    /// check; one-sided when one bound is absent).
    pub probability: f64,
}

/// The constraints and the rule that decide which candidates are safe, checked once.
#[derive(Clone, Debug, PartialEq)]
pub struct SafeSet {
    constraints: Vec<Constraint>,
    sqrt_beta: f64,
    alpha: f64,
    noisy: bool,
    two_sided: TwoSidedRule,
}

impl SafeSet {
    /// The safe set of `constraints` on a task with `n_outputs` modelled output columns.
    ///
    /// # Errors
    /// [`SafeError::Invalid`] for a bad `β` ([`alpha_from_beta`]), no constraint, a constraint
    /// on a column that does not exist, with no threshold, a threshold that is not finite, or
    /// `lower ≥ upper`.
    pub fn new(
        constraints: Vec<Constraint>,
        n_outputs: usize,
        options: &SafeSetOptions,
    ) -> Result<SafeSet, SafeError> {
        let alpha = alpha_from_beta(options.beta)?;
        if constraints.is_empty() {
            return invalid("a safe set needs at least one constraint, got none");
        }
        for (i, c) in constraints.iter().enumerate() {
            if c.output >= n_outputs {
                return invalid(format!(
                    "constraint {i} is on output column {}, but there are {n_outputs} output \
                     columns (0-based)",
                    c.output
                ));
            }
            if c.lower.is_none() && c.upper.is_none() {
                return invalid(format!(
                    "constraint {i} (output column {}) has neither a lower nor an upper threshold",
                    c.output
                ));
            }
            for (name, t) in [("lower", c.lower), ("upper", c.upper)] {
                if let Some(t) = t.filter(|t| !t.is_finite()) {
                    return invalid(format!(
                        "constraint {i} (output column {}): the {name} threshold must be finite, \
                         got {t}",
                        c.output
                    ));
                }
            }
            if let (Some(lo), Some(hi)) = (c.lower, c.upper) {
                if lo >= hi {
                    return invalid(format!(
                        "constraint {i} (output column {}): the lower threshold {lo} must be \
                         below the upper threshold {hi}",
                        c.output
                    ));
                }
            }
        }
        Ok(SafeSet {
            constraints,
            sqrt_beta: options.beta.sqrt(),
            alpha,
            noisy: options.noisy,
            two_sided: options.two_sided,
        })
    }

    /// The constraints.
    pub fn constraints(&self) -> &[Constraint] {
        &self.constraints
    }

    /// `√β`.
    pub fn sqrt_beta(&self) -> f64 {
        self.sqrt_beta
    }

    /// `α = 1 − Φ(√β)`.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Whether the check uses the noisy predictive standard deviation.
    pub fn noisy(&self) -> bool {
        self.noisy
    }

    /// The standard deviation `s` the check uses, from the latent variance `latent_var`
    /// (clamped at 0; NaN stays NaN, so it is never safe) and the observation noise variance
    /// `noise_var`.
    pub fn check_sd(&self, latent_var: f64, noise_var: f64) -> f64 {
        // `f64::max` would turn a NaN variance into 0, i.e. into certainty.
        let latent = if latent_var < 0.0 { 0.0 } else { latent_var };
        let var = latent + if self.noisy { noise_var } else { 0.0 };
        var.sqrt()
    }

    /// Constraint `c` at a candidate where its output's model has mean `mean`, latent variance
    /// `latent_var` and noise variance `noise_var`. A NaN mean or variance is never safe.
    ///
    /// # Panics
    /// If `c` is not a constraint index.
    pub fn check(&self, c: usize, mean: f64, latent_var: f64, noise_var: f64) -> ConstraintCheck {
        let con = &self.constraints[c];
        let s = self.check_sd(latent_var, noise_var);
        let lower_ok = con.lower.is_none_or(|t| mean - self.sqrt_beta * s >= t);
        let upper_ok = con.upper.is_none_or(|u| mean + self.sqrt_beta * s <= u);
        // P(T ≤ z ≤ U) = P(z ≤ U) − P(z < T).
        let probability = con.upper.map_or(1.0, |u| at_most(u, mean, s))
            - con.lower.map_or(0.0, |t| below(t, mean, s));
        let safe = match (con.lower, con.upper, self.two_sided) {
            (Some(_), Some(_), TwoSidedRule::Joint) => probability >= 1.0 - self.alpha,
            _ => lower_ok && upper_ok,
        };
        ConstraintCheck { safe, probability }
    }

    /// Whether candidate `i` passes every constraint, given the marginals of each output's
    /// model (`marginals[j]` for output column `j`) and their noise variances.
    pub fn is_safe(&self, marginals: &[Marginals], noise: &[f64], i: usize) -> bool {
        (0..self.constraints.len()).all(|c| {
            let j = self.constraints[c].output;
            self.check(c, marginals[j].mean[i], marginals[j].var[i], noise[j])
                .safe
        })
    }

    /// The safety probability of candidate `i` under each constraint (as [`SafeSet::is_safe`]).
    pub fn probabilities(&self, marginals: &[Marginals], noise: &[f64], i: usize) -> Vec<f64> {
        (0..self.constraints.len())
            .map(|c| {
                let j = self.constraints[c].output;
                self.check(c, marginals[j].mean[i], marginals[j].var[i], noise[j])
                    .probability
            })
            .collect()
    }
}

/// `P(z ≤ v)` for `z ~ N(mean, s²)`, a point mass at `mean` when `s = 0`.
fn at_most(v: f64, mean: f64, s: f64) -> f64 {
    if s > 0.0 {
        cdf((v - mean) / s)
    } else if mean <= v {
        1.0
    } else if mean > v {
        0.0
    } else {
        f64::NAN
    }
}

/// `P(z < v)` for `z ~ N(mean, s²)`, a point mass at `mean` when `s = 0`.
fn below(v: f64, mean: f64, s: f64) -> f64 {
    if s > 0.0 {
        cdf((v - mean) / s)
    } else if mean < v {
        1.0
    } else if mean >= v {
        0.0
    } else {
        f64::NAN
    }
}
