//! Gaussian-process models.
//!
//! * [`computation_aware`] — CaGP and RCaGP: computation-aware (robust) GPs with block or inducing-point actions.
//! * [`approximate`] — the approximate models (SGPR, SVGP, RCSVGP, CaGP, RCaGP) behind one interface.
//! * [`conjugate`] — the posterior shared by every model with a Gaussian conjugate form.
//! * [`exact`] — exact GP regression: log marginal likelihood, fitting, prediction, LOO.
//! * [`mogp`] — Gaussian GP with grouped noise: the multi-output GP (ICM/LMC).
//! * [`weighted_loo`], [`robust`] — the robust conjugate GPs (RCGP, MO-RCGP): weighted
//!   LOO-CV objective, weights and two-step fit.
//! * [`multi_output`] — fitting MOGP and MO-RCGP from a target matrix with missing entries.
//! * [`tasks`] — multi-output data as task-indexed entries.
//! * [`student_t`] — Student-t likelihood GP by the Laplace approximation.
//! * [`sparse`] — sparse GPs with a collapsed bound: SGPR and the robust RCSVGP.
//! * [`inducing`] — initial inducing inputs of the sparse models.
//! * [`svgp`] — stochastic variational GP (Gaussian or Student-t likelihood), minibatch-trained.

pub mod approximate;
mod checks;
pub mod computation_aware;
pub mod conjugate;
mod evidence;
pub mod exact;
pub mod hyper;
pub mod inducing;
pub mod mogp;
pub mod multi_output;
pub mod robust;
mod scale_profile;
pub mod sparse;
pub mod student_t;
pub mod svgp;
pub mod tasks;
pub mod weighted_loo;

use crate::data::DataError;
use crate::kernels::KernelError;
use crate::linalg::LinalgError;
use crate::means::MeanError;
use crate::optim::OptimError;

/// Errors of model building, fitting and prediction.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// A kernel problem.
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// A mean-function problem.
    #[error(transparent)]
    Mean(#[from] MeanError),
    /// A data problem.
    #[error(transparent)]
    Data(#[from] DataError),
    /// A factorisation problem.
    #[error(transparent)]
    Linalg(#[from] LinalgError),
    /// The optimiser could not run.
    #[error("optimiser: {0}")]
    Optim(#[from] OptimError),
    /// Inputs or parameters that do not make sense (the message says which and why).
    #[error("{0}")]
    Invalid(String),
}
