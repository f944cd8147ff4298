//! Kernel selection: the kernel grammar and candidate spaces (`K144`, `K12`, user lists), and
//! VBKS — variational Bayesian kernel selection over per-kernel sparse GPs, with a posterior
//! over kernels and Bayesian model averaging over the most probable ones (spec `vbks.md`); and
//! its baselines: VBKS-s, Random, and BO over kernels ([`KernelBo`], Malkomes et al. 2016).

mod belief;
mod fisher;
mod fitted;
mod full_theta;
#[cfg(test)]
mod full_theta_tests;
mod grammar;
mod hellinger;
mod kernel_bo;
mod kernel_distance;
mod kernel_surrogate;
mod mixture;
mod periods;
mod settle;
mod space;
mod vbks;

use thiserror::Error;

pub use self::belief::{softmax, BeliefConfig, KernelBelief};
pub use self::fisher::{fisher_p_value, whittle_p_values};
pub use self::fitted::{KernelProbability, SelectedModel, LISTED_KERNELS};
pub use self::full_theta::{FullTheta, Stage, THETA_INIT_SD, THETA_PRIOR_MEAN, THETA_PRIOR_SD};
pub use self::grammar::Structure;
pub use self::hellinger::Gaussian;
pub use self::kernel_bo::{BoStep, KernelBo, KernelBoConfig};
pub use self::kernel_distance::kernel_distances;
pub use self::kernel_surrogate::KernelGp;
pub use self::mixture::{mixture_moments, Component, Mixture};
pub use self::periods::{
    dominant_periods, initial_periods, periodogram_peaks, InitialPeriods, PeriodInit, PeriodPeak,
    PeriodSearch, DEFAULT_PERIOD_ALPHA,
};
pub use self::settle::Settle;
pub use self::space::{KernelSpace, BASES};
pub use self::vbks::{random_baseline, Checkpoint, Vbks, VbksConfig, VbksMode};

use crate::kernels::KernelError;
use crate::models::ModelError;

/// What can go wrong in kernel selection.
#[derive(Debug, Error)]
pub enum SelectionError {
    /// A kernel expression that does not parse.
    #[error("kernel {expr}: {source}")]
    Kernel {
        /// The expression (and where it sits in a list).
        expr: String,
        /// The parser's error.
        source: KernelError,
    },
    /// Settings or data that do not make sense (the message says which and why).
    #[error("{0}")]
    Invalid(String),
    /// An error of a candidate's sparse GP.
    #[error(transparent)]
    Model(#[from] ModelError),
}

impl From<SelectionError> for ModelError {
    fn from(e: SelectionError) -> Self {
        match e {
            SelectionError::Model(m) => m,
            other => ModelError::Invalid(other.to_string()),
        }
    }
}
