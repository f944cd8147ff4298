//! The model kinds a user can name, and what each one is.
//!
//! This enum is the one list of models the front end knows: the option checks, the summaries,
//! the cost estimate and the model files all dispatch on it.

use crate::models::approximate::ApproxKind;

/// Which model to fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModelKind {
    /// Exact GP per target.
    Gp,
    /// Robust conjugate GP per target.
    Rcgp,
    /// Multi-output GP over all targets.
    Mogp,
    /// Multi-output robust conjugate GP over all targets.
    MoRcgp,
    /// Sparse GP regression (Titsias' collapsed bound) per target.
    Sgpr,
    /// Stochastic variational GP per target.
    Svgp,
    /// Robust conjugate sparse GP per target.
    Rcsvgp,
    /// Computation-aware GP per target.
    Cagp,
    /// Robust computation-aware GP per target.
    Rcagp,
    /// Sparse GP regression with relevance pursuit (per-point extra noise) per target.
    Rrp,
    /// GP classification (labels in the target column; binary Laplace or EP). Not a
    /// regression model: it is fitted by [`Classifier`](super::classifier::Classifier) and is
    /// not in [`ModelKind::ALL`].
    Gpc,
    /// Kernel selection by variational Bayesian model averaging (VBKS) per target: a model
    /// average of per-kernel sparse variational GPs over the most probable kernels.
    Vbks,
}

impl ModelKind {
    /// Every model, in the order of [`ModelKind::NAMES`].
    pub const ALL: [ModelKind; 11] = [
        ModelKind::Gp,
        ModelKind::Rcgp,
        ModelKind::Mogp,
        ModelKind::MoRcgp,
        ModelKind::Sgpr,
        ModelKind::Svgp,
        ModelKind::Rcsvgp,
        ModelKind::Cagp,
        ModelKind::Rcagp,
        ModelKind::Rrp,
        ModelKind::Vbks,
    ];

    /// Every model name this build fits.
    pub const NAMES: &'static [&'static str] = &[
        "gp", "rcgp", "mogp", "mo-rcgp", "sgpr", "svgp", "rcsvgp", "cagp", "rcagp", "rrp", "vbks",
    ];

    /// The model named on the command line (one of [`ModelKind::NAMES`]).
    pub fn parse(name: &str) -> Option<ModelKind> {
        if name == "gpc" {
            return Some(ModelKind::Gpc);
        }
        let i = Self::NAMES.iter().position(|n| *n == name)?;
        Some(Self::ALL[i])
    }

    /// The model's name.
    pub fn name(self) -> &'static str {
        if self == ModelKind::Gpc {
            return "gpc";
        }
        let i = Self::ALL.iter().position(|k| *k == self).unwrap_or(0);
        Self::NAMES[i]
    }

    /// The approximate model this is, if it is one.
    pub fn approximate(self) -> Option<ApproxKind> {
        match self {
            ModelKind::Sgpr => Some(ApproxKind::Sgpr),
            ModelKind::Svgp => Some(ApproxKind::Svgp),
            ModelKind::Rcsvgp => Some(ApproxKind::Rcsvgp),
            ModelKind::Cagp => Some(ApproxKind::Cagp),
            ModelKind::Rcagp => Some(ApproxKind::Rcagp),
            ModelKind::Rrp => Some(ApproxKind::Rrp),
            _ => None,
        }
    }

    /// The kind of a fitted approximate model.
    pub fn of_approximate(kind: ApproxKind) -> ModelKind {
        match kind {
            ApproxKind::Sgpr => ModelKind::Sgpr,
            ApproxKind::Svgp => ModelKind::Svgp,
            ApproxKind::Rcsvgp => ModelKind::Rcsvgp,
            ApproxKind::Cagp => ModelKind::Cagp,
            ApproxKind::Rcagp => ModelKind::Rcagp,
            ApproxKind::Rrp => ModelKind::Rrp,
        }
    }

    /// Whether the model is a classifier (fitted by
    /// [`Classifier`](super::classifier::Classifier), not by the regressor).
    pub fn is_classifier(self) -> bool {
        self == ModelKind::Gpc
    }

    /// Whether the model is robust (has an outlier fraction ε).
    pub fn is_robust(self) -> bool {
        matches!(
            self,
            ModelKind::Rcgp | ModelKind::MoRcgp | ModelKind::Rcsvgp | ModelKind::Rcagp
        )
    }

    /// Whether one model covers all targets jointly (MOGP, MO-RCGP) rather than one per target.
    pub fn is_multi_output(self) -> bool {
        matches!(self, ModelKind::Mogp | ModelKind::MoRcgp)
    }

    /// Whether the model is trained by its log marginal likelihood (the exact family), so that
    /// its summary carries `lml`.
    pub fn has_lml(self) -> bool {
        matches!(self, ModelKind::Gp | ModelKind::Mogp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_kinds_correspond_one_to_one() {
        for (kind, name) in ModelKind::ALL.iter().zip(ModelKind::NAMES) {
            assert_eq!(kind.name(), *name);
            assert_eq!(ModelKind::parse(name), Some(*kind));
            if let Some(a) = kind.approximate() {
                assert_eq!(ModelKind::of_approximate(a), *kind);
            }
        }
        assert_eq!(ModelKind::parse("gpc"), Some(ModelKind::Gpc));
        assert_eq!(ModelKind::Gpc.name(), "gpc");
        assert!(ModelKind::Gpc.is_classifier() && !ModelKind::ALL.contains(&ModelKind::Gpc));
        assert_eq!(ModelKind::parse("GP"), None);
        assert_eq!(ModelKind::parse(""), None);
    }
}
