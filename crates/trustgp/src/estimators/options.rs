//! The options of a fit as a user gives them, checked once: [`ModelOptions`] (unchecked, every
//! field as typed by the user, `None` = the default) → [`ModelOptions::check`] →
//! [`RegressorConfig`] (checked, defaults filled in), the `ParamGuard` pattern of linfa.
//!
//! [`APPLICABILITY`] says which option applies to which model; an option given to a model it
//! does not apply to is an error rather than silently ignored. Errors name the option as the
//! command line spells it (`--kernel`, `--epsilon`, …).

use super::defaults::{
    DEFAULT_ADAM_PATIENCE, DEFAULT_ADAM_STEPS, DEFAULT_ADAM_TOLERANCE, DEFAULT_KERNEL,
    DEFAULT_LBFGS_ITERATIONS, DEFAULT_LEARNING_RATE, DEFAULT_MULTI_OUTPUT_KERNEL, DEFAULT_NOISE,
    DEFAULT_VBKS_KERNELS, DEFAULT_VBKS_TOP, MAX_RESTARTS,
};
use super::format::{format_number, shorten, shorten_to, MESSAGE_LIMIT};
use super::kind::ModelKind;
use super::regressor::{RegressorConfig, VbksOptions};
use crate::data::Dataset;
use crate::fit::FitOptions;
use crate::fit::Optimizer;
use crate::kernels::Kernel;
use crate::means::Mean;
use crate::models::approximate::ApproxOptions;
use crate::models::computation_aware::ActionKind;
use crate::selection::{KernelSpace, PeriodInit, VbksMode};

/// An option the user gave that cannot be used: which one, and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{option}: {message}")]
pub struct OptionsError {
    /// The option as the command line spells it, with the offending value when there is one.
    pub option: String,
    /// What is wrong and what was expected.
    pub message: String,
}

fn err<T>(option: impl Into<String>, message: impl Into<String>) -> Result<T, OptionsError> {
    Err(OptionsError {
        option: option.into(),
        message: message.into(),
    })
}

/// Reads the value of `option`, one of two names of which `first` is the default: whether it
/// is `second`.
fn second_of_two(
    option: &str,
    value: Option<&str>,
    first: &str,
    second: &str,
) -> Result<bool, OptionsError> {
    match value {
        None => Ok(false),
        Some(v) if v == first => Ok(false),
        Some(v) if v == second => Ok(true),
        Some(other) => err(
            format!("{option} {}", shorten(other)),
            format!("expected {first} or {second}"),
        ),
    }
}

use ModelKind::{Cagp, MoRcgp, Mogp, Rcagp, Rcgp, Rcsvgp, Rrp, Sgpr, Svgp, Vbks};

/// The robust models (an outlier fraction ε).
const ROBUST: &[ModelKind] = &[Rcgp, MoRcgp, Rcsvgp, Rcagp];
/// The models over all targets jointly.
const MULTI_OUTPUT: &[ModelKind] = &[Mogp, MoRcgp];
/// The models with inducing points.
const SPARSE: &[ModelKind] = &[Sgpr, Svgp, Rcsvgp, Rrp, Vbks];
/// The computation-aware models.
const COMPUTATION_AWARE: &[ModelKind] = &[Cagp, Rcagp];
/// The models trained by a generic optimiser loop.
const APPROXIMATE: &[ModelKind] = &[Sgpr, Svgp, Rcsvgp, Cagp, Rcagp, Rrp];

/// Which model-specific option applies to which models; every option not listed applies to
/// every model.
pub const APPLICABILITY: &[(&str, &[ModelKind])] = &[
    ("--epsilon", ROBUST),
    ("--weight", &[MoRcgp]),
    ("--shared-noise", MULTI_OUTPUT),
    ("--rank", MULTI_OUTPUT),
    ("--inducing", SPARSE),
    ("--actions", COMPUTATION_AWARE),
    ("--action-kind", COMPUTATION_AWARE),
    ("--batch-size", &[Svgp, Vbks]),
    ("--likelihood", &[Svgp]),
    ("--free-noise", &[Rcsvgp, Rcagp]),
    ("--optimizer", APPROXIMATE),
    ("--iterations", APPROXIMATE),
    ("--lr", APPROXIMATE),
    ("--kernels", &[Vbks]),
    ("--top", &[Vbks]),
    ("--epochs", &[Vbks]),
    ("--mode", &[Vbks]),
    ("--period-init", &[Vbks]),
];

/// The models an option of [`APPLICABILITY`] applies to (every model for the others).
pub fn applies_to(option: &str) -> &'static [ModelKind] {
    APPLICABILITY
        .iter()
        .find(|(o, _)| *o == option)
        .map_or(&ModelKind::ALL, |(_, kinds)| kinds)
}

/// A fit's options as the user gave them; `None` (or empty, or `false`) = the default.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelOptions {
    /// Model name, one of [`ModelKind::NAMES`].
    pub model: String,
    /// Kernel expression; for the multi-output models one per LMC term, separated by `;`.
    pub kernel: Option<String>,
    /// Initial noise variance (standardised units unless standardisation is off).
    pub noise: Option<f64>,
    /// Prior mean: `zero`, `constant` or `linear`.
    pub mean: Option<String>,
    /// Random restarts besides the initial start, at most [`MAX_RESTARTS`].
    pub restarts: usize,
    /// Seed of every random step.
    pub seed: u64,
    /// Optimise the hyperparameters (`false`: keep the initial ones).
    pub optimize: bool,
    /// Z-score inputs and targets with the training statistics.
    pub standardize: bool,
    /// Robust models: outlier fraction, one value or one per target.
    pub epsilon: Vec<f64>,
    /// MO-RCGP: `morcgp` (centre on the other outputs) or `rcgp` (centre on the prior mean).
    pub weight: Option<String>,
    /// Multi-output models: one noise variance shared by all outputs.
    pub shared_noise: bool,
    /// Multi-output models: rank of the coregionalisation.
    pub rank: Option<usize>,
    /// Sparse models: number of inducing points.
    pub inducing: Option<usize>,
    /// Computation-aware models: number of actions.
    pub actions: Option<usize>,
    /// Computation-aware models: `blocks` or `inducing`.
    pub action_kind: Option<String>,
    /// SVGP: `gaussian` or `student-t`.
    pub likelihood: Option<String>,
    /// Approximate models: `lbfgs` or `adam`.
    pub optimizer: Option<String>,
    /// Approximate models: maximum iterations (Adam: steps).
    pub iterations: Option<usize>,
    /// Approximate models with Adam: learning rate.
    pub lr: Option<f64>,
    /// SVGP: minibatch size.
    pub batch_size: Option<usize>,
    /// RCSVGP, RCaGP: learn the noise from the model's own bound.
    pub free_noise: bool,
    /// VBKS: the candidate kernels, `k144`, `k12` or expressions separated by `;`.
    pub kernels: Option<String>,
    /// VBKS: kernels kept for the model average.
    pub top: Option<usize>,
    /// VBKS: passes over the data.
    pub epochs: Option<usize>,
    /// VBKS: hyperparameters as point estimates (`point`) or with a Gaussian posterior
    /// over each kernel's log-hyperparameters (`full`).
    pub mode: Option<String>,
    /// VBKS: where the PER factors' periods start: `data` (the training series' significant
    /// periodogram peaks) or `unit` (the spec's period 1 in standardised units).
    pub period_init: Option<String>,
}

impl Default for ModelOptions {
    fn default() -> Self {
        ModelOptions {
            model: ModelKind::Gp.name().into(),
            kernel: None,
            noise: None,
            mean: None,
            restarts: 0,
            seed: 0,
            optimize: true,
            standardize: true,
            epsilon: Vec::new(),
            weight: None,
            shared_noise: false,
            rank: None,
            inducing: None,
            actions: None,
            action_kind: None,
            likelihood: None,
            optimizer: None,
            iterations: None,
            lr: None,
            batch_size: None,
            free_noise: false,
            kernels: None,
            top: None,
            epochs: None,
            mode: None,
            period_init: None,
        }
    }
}

impl ModelOptions {
    /// Check every option against the model and fill in the defaults. What needs the data (the
    /// kernel's input columns, one ε per target) is checked by [`RegressorConfig::check_data`].
    ///
    /// # Errors
    /// The first option that is unknown, out of range, or given to a model it does not apply to.
    pub fn check(&self) -> Result<RegressorConfig, OptionsError> {
        let Some(model) = ModelKind::parse(&self.model) else {
            return err(
                format!("--model {}", shorten(&self.model)),
                format!(
                    "unknown model (available: {}, gpc)",
                    ModelKind::NAMES.join(", ")
                ),
            );
        };
        if model.is_classifier() {
            return err(
                format!("--model {}", model.name()),
                "is a classifier: fit it with estimators::Classifier (ClassifierOptions)",
            );
        }
        // Each option the user gave, with its value as typed (empty for a switch).
        let text = |v: &Option<String>| v.as_deref().map(shorten);
        let number = |v: Option<usize>| v.map(|v| v.to_string());
        let switch = |on: bool| Some(String::new()).filter(|_| on);
        let epsilon = self.epsilon.iter().map(|e| format_number(*e));
        let given = [
            (
                "--epsilon",
                Some(epsilon.collect::<Vec<_>>().join(",")).filter(|e| !e.is_empty()),
            ),
            ("--weight", text(&self.weight)),
            ("--shared-noise", switch(self.shared_noise)),
            ("--rank", number(self.rank)),
            ("--inducing", number(self.inducing)),
            ("--actions", number(self.actions)),
            ("--action-kind", text(&self.action_kind)),
            ("--batch-size", number(self.batch_size)),
            ("--likelihood", text(&self.likelihood)),
            ("--free-noise", switch(self.free_noise)),
            ("--optimizer", text(&self.optimizer)),
            ("--iterations", number(self.iterations)),
            ("--lr", self.lr.map(format_number)),
            ("--kernels", text(&self.kernels)),
            ("--top", number(self.top)),
            ("--epochs", number(self.epochs)),
            ("--mode", text(&self.mode)),
            ("--period-init", text(&self.period_init)),
        ];
        for (option, value) in &given {
            let Some(value) = value else { continue };
            let kinds = applies_to(option);
            if !kinds.contains(&model) {
                let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
                return err(
                    format!("{option} {value}").trim_end().to_string(),
                    format!("applies to {}, not {}", names.join(", "), model.name()),
                );
            }
        }
        if self.restarts > MAX_RESTARTS {
            return err(
                format!("--restarts {}", self.restarts),
                format!(
                    "at most {MAX_RESTARTS} restarts (each is a full optimisation; more rarely \
                     improve the fit)"
                ),
            );
        }
        if let Some(noise) = self.noise.filter(|v| !(v.is_finite() && *v > 0.0)) {
            return err(
                format!("--noise {}", format_number(noise)),
                "expected a positive, finite noise variance",
            );
        }
        if let Some(e) = self.epsilon.iter().find(|e| !(0.0..1.0).contains(*e)) {
            return err(
                format!("--epsilon {}", format_number(*e)),
                "not an outlier fraction in [0, 1)",
            );
        }
        if self.rank == Some(0) {
            return err("--rank 0", "the coregionalisation needs rank at least 1");
        }
        self.check_kernel(model)?;
        let vbks = self.vbks_options(model)?;
        let naive_weight = second_of_two("--weight", self.weight.as_deref(), "morcgp", "rcgp")?;
        let mean = self.mean(model)?;
        Ok(RegressorConfig {
            model,
            kernel: self.kernel.clone(),
            noise: self.noise,
            mean,
            standardize: self.standardize,
            epsilon: self.epsilon.clone(),
            naive_weight,
            shared_noise: self.shared_noise,
            rank: self.rank,
            fit: FitOptions {
                optimize: self.optimize,
                restarts: self.restarts,
                seed: self.seed,
                ..FitOptions::default()
            },
            approx: self.approx_options(model)?,
            robust_centres: None,
            prior_mean: None,
            vbks,
        })
    }

    /// VBKS's own options (their applicability is already checked), and the general options
    /// that mean nothing to it refused by name.
    fn vbks_options(&self, model: ModelKind) -> Result<VbksOptions, OptionsError> {
        if model != Vbks {
            return Ok(VbksOptions::default());
        }
        if let Some(k) = &self.kernel {
            return err(
                format!("--kernel '{}'", shorten(k)),
                "vbks chooses the kernel: give its candidates with --kernels (k144, k12 or \
                 expressions separated by `;`)",
            );
        }
        if self.restarts > 0 {
            return err(
                format!("--restarts {}", self.restarts),
                "vbks trains every candidate kernel once (no restarts)",
            );
        }
        if !self.optimize {
            return err("--no-optimize", "vbks selects kernels by training them");
        }
        let kernels = self
            .kernels
            .clone()
            .unwrap_or_else(|| DEFAULT_VBKS_KERNELS.into());
        if let Err(e) = KernelSpace::parse(&kernels) {
            return err(
                format!("--kernels '{}'", shorten(&kernels)),
                shorten_to(&e.to_string(), MESSAGE_LIMIT),
            );
        }
        let top = self.top.unwrap_or(DEFAULT_VBKS_TOP);
        if top == 0 {
            return err("--top 0", "the model average needs at least one kernel");
        }
        if self.epochs == Some(0) {
            return err("--epochs 0", "need at least one pass over the data");
        }
        let mode = match self.mode.as_deref() {
            None | Some("point") => VbksMode::Point,
            Some("full") => VbksMode::Full,
            Some(other) => {
                return err(
                    format!("--mode {}", shorten(other)),
                    "expected point or full",
                )
            }
        };
        let period_init = match self.period_init.as_deref() {
            None | Some("data") => PeriodInit::Data,
            Some("unit") => PeriodInit::Unit,
            Some(other) => {
                return err(
                    format!("--period-init {}", shorten(other)),
                    "expected data or unit",
                )
            }
        };
        Ok(VbksOptions {
            kernels,
            top,
            epochs: self.epochs,
            mode,
            period_init,
        })
    }

    /// The kernel expression(s) parse; errors say they are about `--kernel`.
    fn check_kernel(&self, model: ModelKind) -> Result<(), OptionsError> {
        let Some(expr) = &self.kernel else {
            return Ok(());
        };
        let parts: Vec<&str> = if model.is_multi_output() {
            expr.split(';').collect()
        } else {
            vec![expr.as_str()]
        };
        for part in parts {
            if let Err(e) = Kernel::parse(part) {
                return err(
                    format!("--kernel '{}'", shorten(part)),
                    shorten_to(&e.to_string(), MESSAGE_LIMIT),
                );
            }
        }
        Ok(())
    }

    /// The prior mean's name: the user's, checked, or the model's default.
    fn mean(&self, model: ModelKind) -> Result<String, OptionsError> {
        match self.mean.as_deref() {
            Some(m) if model.is_multi_output() && m != "zero" => err(
                format!("--mean {}", shorten(m)),
                "the multi-output models use each output's training mean as prior mean",
            ),
            Some(m) if model == Vbks && m != "zero" => err(
                format!("--mean {}", shorten(m)),
                "vbks uses a zero prior mean on the (standardised) targets",
            ),
            Some(m) => match Mean::by_name(m, 1) {
                Ok(_) => Ok(m.to_string()),
                Err(e) => err(format!("--mean {}", shorten(m)), e.to_string()),
            },
            None if model.approximate().is_some() => Ok("constant".into()),
            None => Ok("zero".into()),
        }
    }

    /// The approximate models' settings (the applicability of each flag is already checked).
    fn approx_options(&self, model: ModelKind) -> Result<ApproxOptions, OptionsError> {
        let given = self.action_kind.as_deref();
        let action_kind = if second_of_two("--action-kind", given, "blocks", "inducing")? {
            ActionKind::Inducing
        } else {
            ActionKind::Blocks
        };
        let likelihood = self.likelihood.as_deref();
        let student_t = second_of_two("--likelihood", likelihood, "gaussian", "student-t")?;
        for (option, value, what) in [
            (
                "--inducing",
                self.inducing,
                "need at least one inducing point",
            ),
            ("--actions", self.actions, "need at least one action"),
            (
                "--batch-size",
                self.batch_size,
                "need at least one row per batch",
            ),
        ] {
            if value == Some(0) {
                return err(format!("{option} 0"), what);
            }
        }
        let lr = self.lr.unwrap_or(DEFAULT_LEARNING_RATE);
        if !(lr.is_finite() && lr > 0.0) {
            return err(
                format!("--lr {}", format_number(lr)),
                "expected a positive learning rate",
            );
        }
        let adam = |it: Option<usize>| {
            Some(Optimizer::adam_early_stopping(
                it.unwrap_or(DEFAULT_ADAM_STEPS),
                lr,
                DEFAULT_ADAM_PATIENCE,
                DEFAULT_ADAM_TOLERANCE,
            ))
        };
        let lbfgs = |it: Option<usize>| -> Result<Option<Optimizer>, OptionsError> {
            if self.lr.is_some() {
                return err("--lr", "applies to --optimizer adam");
            }
            Ok(Some(Optimizer::lbfgs(
                it.unwrap_or(DEFAULT_LBFGS_ITERATIONS),
            )))
        };
        let optimizer = match (self.optimizer.as_deref(), self.iterations) {
            (None, None) if self.lr.is_none() => None,
            (Some("lbfgs"), it) => lbfgs(it)?,
            (Some("adam"), it) => adam(it),
            (None, it) if model == Svgp => adam(it),
            (None, it) => lbfgs(it)?,
            (Some(other), _) => {
                return err(
                    format!("--optimizer {}", shorten(other)),
                    "expected lbfgs or adam",
                )
            }
        };
        Ok(ApproxOptions {
            inducing: self.inducing,
            actions: self.actions,
            action_kind,
            student_t,
            optimizer,
            batch_size: self.batch_size,
            free_noise: self.free_noise,
            inducing_inputs: None,
            centres: None,
            fixed_mean: false,
        })
    }
}

impl RegressorConfig {
    /// Check the options that depend on the data: the kernel's input columns and the number
    /// of outlier fractions.
    ///
    /// # Errors
    /// An option that does not fit the data, named as the command line spells it.
    pub fn check_data(&self, data: &Dataset) -> Result<(), OptionsError> {
        let default = if self.model.is_multi_output() {
            DEFAULT_MULTI_OUTPUT_KERNEL
        } else {
            DEFAULT_KERNEL
        };
        let expr = self.kernel.as_deref().unwrap_or(default);
        let parts: Vec<&str> = if self.model.is_multi_output() {
            expr.split(';').collect()
        } else {
            vec![expr]
        };
        for part in parts {
            let checked = Kernel::parse(part).and_then(|k| k.validate(data.d()));
            if let Err(e) = checked {
                return err(
                    format!("--kernel '{}'", shorten(part)),
                    shorten_to(&e.to_string(), MESSAGE_LIMIT),
                );
            }
        }
        let (given, t) = (self.epsilon.len(), data.n_targets());
        if given > 1 && given != t {
            return err(
                "--epsilon",
                format!("{given} epsilon values for {t} targets (give one, or one per target)"),
            );
        }
        self.check_robust_centres(data)?;
        if let Some(rank) = self.rank.filter(|&r| r > t) {
            return err(
                format!("--rank {rank}"),
                format!("at most the number of targets ({t})"),
            );
        }
        Ok(())
    }

    /// Given robust centres ([`RegressorConfig::robust_centres`]) are for rcgp or rcagp on one
    /// target, one per data row.
    ///
    /// # Errors
    /// The first of these that does not hold.
    pub fn check_robust_centres(&self, data: &Dataset) -> Result<(), OptionsError> {
        let t = data.n_targets();
        if let Some(centres) = &self.robust_centres {
            if !matches!(self.model, ModelKind::Rcgp | ModelKind::Rcagp) {
                return err(
                    "robust centres",
                    format!(
                        "given IMQ centres apply to rcgp and rcagp, not {}",
                        self.model.name()
                    ),
                );
            }
            if t != 1 || centres.len() != data.n() {
                return err(
                    "robust centres",
                    format!(
                        "expected one centre per data row of one target ({} rows), got {} \
                         centres for {t} targets",
                        data.n(),
                        centres.len()
                    ),
                );
            }
        }
        Ok(())
    }

    /// A fixed prior mean ([`RegressorConfig::prior_mean`]) is a finite number, for rcgp,
    /// rcsvgp or rcagp on one target.
    ///
    /// # Errors
    /// The first of these that does not hold.
    pub fn check_prior_mean(&self, data: &Dataset) -> Result<(), OptionsError> {
        let Some(m) = self.prior_mean else {
            return Ok(());
        };
        if !matches!(
            self.model,
            ModelKind::Rcgp | ModelKind::Rcsvgp | ModelKind::Rcagp
        ) {
            return err(
                "prior mean",
                format!(
                    "a fixed prior mean (the expert-guided mean) applies to rcgp, rcsvgp and \
                     rcagp, not {}",
                    self.model.name()
                ),
            );
        }
        if !m.is_finite() || data.n_targets() != 1 {
            return err(
                "prior mean",
                format!(
                    "expected a finite constant for one target, got {m} for {} targets",
                    data.n_targets()
                ),
            );
        }
        Ok(())
    }

    /// The initial noise variance the fit starts from.
    pub fn initial_noise(&self) -> f64 {
        self.noise.unwrap_or(DEFAULT_NOISE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(edit: impl Fn(&mut ModelOptions)) -> Result<RegressorConfig, OptionsError> {
        let mut o = ModelOptions::default();
        edit(&mut o);
        o.check()
    }

    fn message(edit: impl Fn(&mut ModelOptions)) -> String {
        check(edit).unwrap_err().to_string()
    }

    #[test]
    fn defaults_follow_the_model() {
        let gp = check(|_| {}).unwrap();
        assert_eq!((gp.model, gp.mean.as_str()), (ModelKind::Gp, "zero"));
        assert!(gp.fit.optimize && gp.fit.restarts == 0 && gp.standardize);
        assert_eq!(gp.approx, ApproxOptions::default());
        let sgpr = check(|o| o.model = "sgpr".into()).unwrap();
        assert_eq!(sgpr.mean, "constant");
        assert_eq!(sgpr.approx.optimizer, None);
        let svgp = check(|o| {
            o.model = "svgp".into();
            o.iterations = Some(7);
        })
        .unwrap();
        assert_eq!(
            svgp.approx.optimizer,
            Some(Optimizer::adam_early_stopping(7, 0.01, 50, 1e-5))
        );
        let cagp = check(|o| {
            o.model = "cagp".into();
            o.iterations = Some(9);
            o.action_kind = Some("inducing".into());
        })
        .unwrap();
        assert_eq!(cagp.approx.optimizer, Some(Optimizer::lbfgs(9)));
        assert_eq!(cagp.approx.action_kind, ActionKind::Inducing);
    }

    #[test]
    fn every_model_specific_option_is_refused_elsewhere() {
        for (option, kinds) in APPLICABILITY {
            for kind in ModelKind::ALL {
                let r = check(|o| {
                    o.model = kind.name().into();
                    match *option {
                        "--epsilon" => o.epsilon = vec![0.1],
                        "--weight" => o.weight = Some("rcgp".into()),
                        "--shared-noise" => o.shared_noise = true,
                        "--rank" => o.rank = Some(1),
                        "--inducing" => o.inducing = Some(3),
                        "--actions" => o.actions = Some(3),
                        "--action-kind" => o.action_kind = Some("blocks".into()),
                        "--batch-size" => o.batch_size = Some(3),
                        "--likelihood" => o.likelihood = Some("gaussian".into()),
                        "--free-noise" => o.free_noise = true,
                        "--optimizer" => o.optimizer = Some("adam".into()),
                        "--iterations" => o.iterations = Some(3),
                        "--lr" => {
                            o.optimizer = Some("adam".into());
                            o.lr = Some(0.1)
                        }
                        "--kernels" => o.kernels = Some("se; per".into()),
                        "--top" => o.top = Some(2),
                        "--epochs" => o.epochs = Some(2),
                        "--mode" => o.mode = Some("point".into()),
                        "--period-init" => o.period_init = Some("unit".into()),
                        other => panic!("no case for {other}"),
                    }
                });
                assert_eq!(
                    r.is_ok(),
                    kinds.contains(&kind),
                    "{option} on {kind:?}: {r:?}"
                );
                if let Err(e) = r {
                    assert!(
                        e.option.starts_with(option) || e.option.starts_with("--optimizer"),
                        "{e}"
                    );
                    assert!(e.message.contains(kind.name()), "{e}");
                }
            }
        }
    }

    /// Each two-valued option: absent or its first name is the default, its second name the
    /// alternative, anything else an error naming the option and both names.
    #[test]
    fn two_valued_options_read_both_names_and_refuse_others() {
        type Set = fn(&mut ModelOptions, &str);
        type Get = fn(&RegressorConfig) -> bool;
        let cases: [(&str, &str, &str, &str, Set, Get); 3] = [
            (
                "mo-rcgp",
                "--weight",
                "morcgp",
                "rcgp",
                |o, v| o.weight = Some(v.into()),
                |c| c.naive_weight,
            ),
            (
                "cagp",
                "--action-kind",
                "blocks",
                "inducing",
                |o, v| o.action_kind = Some(v.into()),
                |c| c.approx.action_kind == ActionKind::Inducing,
            ),
            (
                "svgp",
                "--likelihood",
                "gaussian",
                "student-t",
                |o, v| o.likelihood = Some(v.into()),
                |c| c.approx.student_t,
            ),
        ];
        for (model, option, first, second, set, get) in cases {
            let with = |v: Option<&str>| {
                check(|o| {
                    o.model = model.into();
                    if let Some(v) = v {
                        set(o, v);
                    }
                })
            };
            assert!(!get(&with(None).unwrap()), "{option} default");
            assert!(!get(&with(Some(first)).unwrap()), "{option} {first}");
            assert!(get(&with(Some(second)).unwrap()), "{option} {second}");
            let e = with(Some("odd")).unwrap_err();
            assert_eq!(e.option, format!("{option} odd"));
            assert_eq!(e.message, format!("expected {first} or {second}"));
        }
    }

    #[test]
    fn period_init_reads_data_and_unit_and_refuses_others() {
        let with = |v: Option<&str>| {
            check(|o| {
                o.model = "vbks".into();
                o.period_init = v.map(Into::into);
            })
        };
        assert_eq!(with(None).unwrap().vbks.period_init, PeriodInit::Data);
        assert_eq!(
            with(Some("data")).unwrap().vbks.period_init,
            PeriodInit::Data
        );
        assert_eq!(
            with(Some("unit")).unwrap().vbks.period_init,
            PeriodInit::Unit
        );
        let e = with(Some("fft")).unwrap_err();
        assert_eq!(e.option, "--period-init fft");
        assert_eq!(e.message, "expected data or unit");
        // Reaches the VBKS settings.
        let cfg = with(Some("unit")).unwrap();
        let vc = cfg.vbks.config(100, &cfg.approx, 0.1, 0);
        assert_eq!(vc.period_init, PeriodInit::Unit);
    }

    #[test]
    fn bad_values_name_their_option() {
        type Edit = Box<dyn Fn(&mut ModelOptions)>;
        let cases: Vec<(Edit, &str)> = vec![
            (Box::new(|o| o.model = "bogus".into()), "--model bogus"),
            (Box::new(|o| o.restarts = 1_000_000), "--restarts 1000000"),
            (Box::new(|o| o.noise = Some(-1.0)), "--noise -1"),
            (Box::new(|o| o.noise = Some(f64::NAN)), "--noise NaN"),
            (
                Box::new(|o| o.kernel = Some("se + ".into())),
                "--kernel 'se + '",
            ),
            (Box::new(|o| o.mean = Some("cubic".into())), "--mean cubic"),
            (
                Box::new(|o| {
                    o.model = "rcgp".into();
                    o.epsilon = vec![1e-300, 1.2];
                }),
                "--epsilon 1.2",
            ),
            (
                Box::new(|o| {
                    o.model = "mogp".into();
                    o.kernel = Some("se; gauss".into());
                }),
                "--kernel ' gauss'",
            ),
            (
                Box::new(|o| {
                    o.model = "mogp".into();
                    o.mean = Some("constant".into());
                }),
                "--mean constant",
            ),
            (
                Box::new(|o| {
                    o.model = "svgp".into();
                    o.lr = Some(-1e-300);
                }),
                "--lr -1e-300",
            ),
            (
                Box::new(|o| {
                    o.model = "sgpr".into();
                    o.optimizer = Some("lbfgs".into());
                    o.lr = Some(0.1);
                }),
                "--lr",
            ),
            (
                Box::new(|o| {
                    o.model = "sgpr".into();
                    o.inducing = Some(0);
                }),
                "--inducing 0",
            ),
        ];
        for (edit, option) in cases {
            let e = check(edit).unwrap_err();
            assert_eq!(e.option, option, "{e}");
        }
        assert!(check(|o| o.restarts = MAX_RESTARTS).is_ok());
        let long = "q".repeat(100_000);
        let m = message(|o| o.kernel = Some(long.clone()));
        assert!(m.len() < 600, "{m}");
        assert!(m.starts_with("--kernel 'qqq"), "{m}");
    }
}
