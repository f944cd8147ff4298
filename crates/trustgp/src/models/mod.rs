//! Gaussian-process models, one folder per capability.
//!
//! * [`exact`] — exact GP regression: log marginal likelihood, fitting, prediction, LOO.
//! * [`robust`] — the robust conjugate GPs (RCGP, MO-RCGP): weights, two-step fit and the
//!   weighted LOO-CV objective; the multi-output GP with grouped noise (MOGP, ICM/LMC) whose
//!   grouped fit they share; fitting from a target matrix with missing entries; task-indexed data.
//! * [`laplace`] — the Laplace approximation for any likelihood, and the Student-t GP on it.
//! * [`classification`] — binary GP classification (Bernoulli likelihood) by Laplace or EP.
//! * [`classification`] — multi-class Laplace (softmax), and the sparse FIC/DTC/VAR posteriors
//!   for regression and EP classification.
//! * [`sparse`] — sparse GPs with a collapsed bound: SGPR and the robust RCSVGP.
//! * [`svgp`] — stochastic variational GP (Gaussian or Student-t likelihood), minibatch-trained.
//! * [`relevance_pursuit`] — SGPR with relevance pursuit (RRP): sparse per-point extra noise
//!   found by a greedy search, so that gross outliers stop pulling the fit.
//! * [`computation_aware`] — CaGP and RCaGP: computation-aware (robust) GPs with block or inducing-point actions.
//! * [`transfer`] — the models of one function in safe transfer learning: SAL's single-task GP,
//!   the source-prior stand-in, FullTransLMC, FullTransHGP and EffTransHGP (frozen, cached
//!   source part; two-step Cholesky).
//!
//! Shared by several of them:
//!
//! * [`conjugate`] — the posterior shared by every model with a Gaussian conjugate form.
//! * [`hyper`] — kernel, noise and mean hyperparameters of the Gaussian-likelihood models.
//! * [`inducing`] — initial inducing inputs of the sparse models.
//! * [`approximate`] — the approximate models (SGPR, SVGP, RCSVGP, CaGP, RCaGP) behind one interface.

pub mod approximate;
pub(crate) mod checks;
pub mod classification;
pub mod computation_aware;
pub mod conjugate;
pub mod exact;
pub mod hyper;
pub mod inducing;
pub mod laplace;
pub mod relevance_pursuit;
pub mod robust;
pub mod sparse;
pub mod svgp;
pub mod transfer;

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
