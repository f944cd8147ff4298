//! Models of one function on the target task of safe transfer learning (`safe-transfer.md`),
//! each a [`FunctionModel`](crate::sequential::safe::FunctionModel) for the safe loop:
//!
//! * [`SingleTaskGp`] — SAL's model: an exact GP on the target data only (§2.2).
//! * [`SourcePriorGp`] — the labelled stand-in for Rothfuss et al. 2022 (§5.1 \[choice\]):
//!   hyperparameters fitted once on the pooled source data, then frozen.
//! * [`LmcTransfer`] — FullTransLMC (§2.7, §2.10): a linear model of coregionalisation over
//!   (sources…, target), every parameter refitted jointly on all the data.
//!
//! All are Type-II ML fits from the previous optimum plus seeded restarts perturbed as the
//! authors' code does (`starts`), configured by [`TransferFitOptions`].

mod lmc;
mod single_task;
mod source_prior;
mod sources;
mod starts;
#[cfg(test)]
mod tests;

pub use lmc::LmcTransfer;
pub use single_task::SingleTaskGp;
pub use source_prior::SourcePriorGp;

use crate::fit::FitOptions;
use crate::models::ModelError;
use crate::optim::LbfgsOptions;

/// Fit settings of the safe-learning models (`safe-transfer.md` §6 \[code\]). The default is
/// the transfer models' (5 restarts, noise std 0.1); [`TransferFitOptions::single_task`] is
/// SAL's (10 restarts, noise std 0.01).
#[derive(Clone, Debug, PartialEq)]
pub struct TransferFitOptions {
    /// Random restarts in addition to the warm start (the previous optimum, or the initial
    /// values on the first fit); each multiplies the initial unconstrained values by
    /// independent U(0.5, 1.5) factors.
    pub restarts: usize,
    /// Initial lengthscale of every kernel in every input dimension (inputs in the unit box).
    pub initial_lengthscale: f64,
    /// Initial standard deviation of every task's observation noise (standardised outputs).
    pub initial_noise_std: f64,
    /// Most L-BFGS iterations of one start.
    pub max_iterations: usize,
    /// Seed of the fits made when a model is built (the source fit of [`SourcePriorGp`]);
    /// the refits of [`FunctionModel::update`](crate::sequential::safe::FunctionModel::update)
    /// take theirs from the call.
    pub seed: u64,
}

impl Default for TransferFitOptions {
    fn default() -> Self {
        TransferFitOptions {
            restarts: 5,
            initial_lengthscale: 0.2,
            initial_noise_std: 0.1,
            max_iterations: LbfgsOptions::default().max_iter,
            seed: 0,
        }
    }
}

impl TransferFitOptions {
    /// SAL's settings: 10 restarts, initial noise std 0.01, the rest as the default.
    pub fn single_task() -> Self {
        TransferFitOptions {
            restarts: 10,
            initial_noise_std: 0.01,
            ..TransferFitOptions::default()
        }
    }

    /// Rejects settings no fit can start from.
    pub fn validate(&self) -> Result<(), ModelError> {
        let positive = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(ModelError::Invalid(format!(
                    "{name} must be a positive number, got {v}"
                )))
            }
        };
        positive("initial_lengthscale", self.initial_lengthscale)?;
        positive("initial_noise_std", self.initial_noise_std)?;
        if self.max_iterations == 0 {
            return Err(ModelError::Invalid(
                "max_iterations must be at least 1".into(),
            ));
        }
        Ok(())
    }

    /// The conjugate models' options of one L-BFGS run from one start (the restarts are
    /// drawn here, not by the driver).
    fn single_start(&self) -> FitOptions {
        FitOptions {
            restarts: 0,
            lbfgs: LbfgsOptions {
                max_iter: self.max_iterations,
                max_evals: 2 * self.max_iterations + 20,
                ..LbfgsOptions::default()
            },
            ..FitOptions::default()
        }
    }
}
