//! The front end of the library: what a command-line tool or a Python binding needs to turn a
//! user's request into a fitted model and back into numbers, with the same validation and
//! defaults for all of them.
//!
//! * [`kind`] — [`ModelKind`], the one list of model names.
//! * [`options`] — [`ModelOptions`] (as the user gave them) → [`ModelOptions::check`] →
//!   [`RegressorConfig`] (checked, defaults filled in); [`APPLICABILITY`] says which option
//!   applies to which model. [`RegressorConfig::check_data`] checks what needs the data.
//! * [`defaults`] — every default value, in one place.
//! * [`classifier`] — [`Classifier`]: GP classification (labels as text, sorted classes, class
//!   probabilities), its options, metrics and model file.
//! * [`cost`] — the estimated time and memory of a fit, and the advice that follows.
//! * [`regressor`] — [`Regressor`]: standardiser plus the fitted model(s), predictions in the
//!   units of the data.
//! * [`mod@joint`] — [`Regressor::predict_joint`]: one output's joint predictive distribution.
//! * [`summary`] — [`FitSummary`], the one schema of a fit's report.
//! * [`file`](mod@file) — versioned JSON model files: saving, loading, and the checks and
//!   rebuilding of a model from its record; [`record`] — the tagged per-model records of
//!   version 2 (version-1 files still load).
//! * [`mod@finite`], [`mod@format`] — no non-finite number is printed; numbers print short and exact.
//!
//! # The fit summary
//!
//! [`FitSummary`] serialises to one JSON object of the same shape for every model:
//!
//! | field | type | meaning |
//! |---|---|---|
//! | `model` | string | the model's name (`gp`, `rcgp`, `mogp`, …) |
//! | `n`, `d` | integer | training rows, input columns |
//! | `outputs` | list of strings | the target columns |
//! | `objective` | {`name`, `value`} | the training objective (maximised); per-target models: the sum over outputs |
//! | `lml` | number | gp and mogp only: the log marginal likelihood (= `objective.value`) |
//! | `kernel` | string | the fitted kernel expression (multi-output: LMC terms `; `-separated; per-target: the first output's) |
//! | `noise` | list of numbers | the noise variance of each output, always one per output |
//! | `jitter` | number | the largest jitter a final factorisation needed |
//! | `fit_seconds` | number | wall-clock seconds of the fit |
//! | `warnings` | list of strings | what the user should know (also printed on stderr) |
//! | `per_output` | list of objects | per output: `target`, `n_train`, `missing_target_rows`, `kernel`, `noise`, and where they apply `objective`, `mean`, `epsilon`, `soft_threshold`, `downweighted`, `inducing`, `likelihood`, `actions`, `action_kind`, `training`, `starts`; vbks: `kernel_posterior`, `model_average`, `period_init` (the rule, `data` or `unit`, and the initial periods with their p-values) |
//! | `terms` | list of objects | multi-output models: each LMC term's `kernel` and `coregionalization` matrix |
//! | `starts` | list of objects | multi-output models: one report per L-BFGS start |
//!
//! Numbers in original units are never in the summary — the hyperparameters are those of the
//! model, which sees standardised data unless standardisation is off — with one exception:
//! vbks's `period_init` gives its initial periods in the input column's own units (a period
//! is read against the data's time axis).

pub mod classifier;
mod classifier_file;
pub mod cost;
pub mod defaults;
pub mod file;
pub mod finite;
pub mod format;
pub mod joint;
pub mod kind;
pub mod options;
pub mod record;
pub mod regressor;
pub mod summary;

pub use classifier::{
    classification_metrics, Classifier, ClassifierConfig, ClassifierError, ClassifierModel,
    ClassifierOptions, Inference,
};
pub use classifier_file::{
    classifier_from_str, classifier_to_str, load_classifier, save_classifier,
};
pub use cost::{physical_memory, Advice, FitCost};
pub use defaults::*;
pub use file::{load, load_str, save, save_str, ModelFileError};
pub use finite::{check_predictions, finite, NonFinite};
pub use format::{format_number, shorten};
pub use kind::ModelKind;
pub use options::{applies_to, ModelOptions, OptionsError, APPLICABILITY};
pub use regressor::{OutputPrediction, Regressor, RegressorConfig};
pub use summary::FitSummary;
