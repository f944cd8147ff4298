//! trustgp: trustworthy Gaussian processes.
//!
//! The library is organised around one conjugate core (see [`models::conjugate`]): the exact GP
//! and the robust models built on it differ only in how they build the kernel matrix, the
//! diagonal noise term and the shifted target.
//!
//! * [`kernels`] — covariance functions as expressions (`const * se + per`), with hyperparameter
//!   and input gradients.
//! * [`means`] — zero, constant and linear prior means.
//! * [`likelihoods`] — observation models (Gaussian, Student-t, IMQ pseudo-likelihood).
//! * [`linalg`] — Cholesky with recorded jitter escalation, solves, log-determinants.
//! * [`data`] — CSV input, standardisation, splits and metrics.
//! * [`optim`] — L-BFGS with box bounds.
//! * [`fit`] — the fitting driver: options, restarts, progress, one report type and its warnings.
//! * [`robust`] — observation weights and centring of the robust conjugate GPs.
//! * [`models`] — the GP models.
//! * [`estimators`] — the front end: model kinds, checked options and defaults, fit summaries,
//!   model files.
//! * [`posterior`] — the [`Posterior`](posterior::Posterior) interface every fitted latent
//!   model implements, and the linear-Gaussian form behind it.
//! * [`robust`] — tools of the robust models: robust covariance estimation (FastMCD).
//! * [`sequential`] — sequential decisions on a posterior: acquisition functions (EI, LogEI, PI,
//!   UCB) with input gradients.
//! * [`verify`] — certified bounds of predictions over boxes of inputs, by branch and bound.
//! * [`report`] — figures for people: SVG line plots of runs with ±1 std bands.

pub mod data;
pub mod estimators;
pub mod fit;
pub mod kernels;
pub mod likelihoods;
pub mod linalg;
pub mod means;
pub mod models;
pub mod optim;
pub mod posterior;
pub mod report;
pub mod robust;
pub mod selection;
pub mod sequential;
pub mod verify;

/// The matrix type used throughout: column-major, `f64`, one row per observation.
pub use faer::Mat;
