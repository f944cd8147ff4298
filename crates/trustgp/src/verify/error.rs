//! Errors of the verification layer.

use thiserror::Error;

/// What went wrong while setting up or running a verification.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum VerifyError {
    /// The kernel has a part with no bounded decomposition (named).
    #[error("verify: kernel `{0}` is not supported (supported: se, matern12, matern32, matern52, rq, per, const, and their sums and products)")]
    UnsupportedKernel(String),
    /// The model has no linear-Gaussian form over a single-output kernel.
    #[error("verify: {0}")]
    UnsupportedModel(String),
    /// A bad argument: names the parameter and what was expected.
    #[error("verify: {0}")]
    Invalid(String),
}
