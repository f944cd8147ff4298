//! The error of the safe-learning layer.

use crate::data::DataError;
use crate::models::ModelError;

/// What went wrong in a safe proposal or a safe-learning run.
#[derive(Debug, thiserror::Error)]
pub enum SafeError {
    /// No candidate passes every safety constraint. Nothing is proposed: a safe learner never
    /// falls back to a point its models do not certify.
    #[error(
        "the safe set is empty: no candidate passes every safety constraint, so no point is \
         proposed (an unsafe point is never proposed)"
    )]
    EmptySafeSet,
    /// The model of one output column failed (building, fitting or predicting).
    #[error("model of output column {output}: {source}")]
    Model {
        /// The output column whose model failed.
        output: usize,
        /// What the model said.
        #[source]
        source: ModelError,
    },
    /// A data problem (standardisation, metrics).
    #[error(transparent)]
    Data(#[from] DataError),
    /// Options or inputs that do not make sense (the message says which and why).
    #[error("{0}")]
    Invalid(String),
}

impl SafeError {
    /// The error of the model of output column `output`.
    pub(crate) fn model(output: usize) -> impl FnOnce(ModelError) -> SafeError {
        move |source| SafeError::Model { output, source }
    }
}

/// `Err(SafeError::Invalid(message))`.
pub(crate) fn invalid<T>(message: impl Into<String>) -> Result<T, SafeError> {
    Err(SafeError::Invalid(message.into()))
}
