//! Models of one function on the target task of safe transfer learning (`safe-transfer.md`
//! §2.2, §2.6–2.10, §3.1–3.4, §5.1), each a
//! [`FunctionModel`](crate::sequential::safe::FunctionModel) for the safe loop:
//!
//! * [`SingleTaskGp`] — SAL's model: an exact GP on the target data only (§2.2).
//! * [`SourcePriorGp`] — the labelled stand-in for Rothfuss et al. 2022 (§5.1 \[choice\]):
//!   hyperparameters fitted once on the pooled source data, then frozen.
//! * [`LmcTransfer`] — FullTransLMC (§2.7, §2.10): a linear model of coregionalisation over
//!   (sources…, target), every parameter refitted jointly on all the data.
//! * [`HgpTransfer`] — FullTransHGP: the hierarchical kernel ([`HierarchicalKernel`]), every
//!   parameter (all levels, one noise per task) refitted jointly on the full likelihood.
//! * [`EfficientHgp`] — EffTransHGP (Alg. 3): the source group fitted once on the source data
//!   and frozen, its Cholesky factor cached, the target rows appended by the two-step
//!   factorisation ([`BlockCholesky`](crate::linalg::BlockCholesky)), the target group fitted
//!   on the conditional likelihood `log p(y_t | y_s)` at a cost independent of `N_s`.
//!
//! All are Type-II ML fits from the previous optimum plus seeded restarts perturbed as the
//! authors' code does (`starts`), configured by [`TransferFitOptions`]. Data are stacked as
//! task-indexed inputs: source task `s` (in the given order) is task `s`, the target is task
//! `P` (the number of sources).

mod efficient;
mod hgp;
mod lmc;
mod single_task;
mod source_prior;
mod stack;
mod starts;
#[cfg(test)]
mod tests;

pub use efficient::EfficientHgp;
pub use hgp::HgpTransfer;
pub use lmc::LmcTransfer;
pub use single_task::SingleTaskGp;
pub use source_prior::SourcePriorGp;

use std::sync::atomic::AtomicBool;

use faer::MatRef;

use self::starts::start_points;
use crate::fit::restarts::{maximize_from_starts, Evaluation};
use crate::fit::FitOptions;
use crate::kernels::HierarchicalKernel;
use crate::linalg::Parallelism;
use crate::means::Mean;
use crate::models::robust::mogp::{grouped_log_marginal_likelihood, names, pack, unpack};
use crate::models::ModelError;
use crate::optim::LbfgsOptions;

/// Fitting options of the transfer GPs (defaults: the authors' code, `safe-transfer.md` §6).
#[derive(Clone, Debug, PartialEq)]
pub struct TransferFitOptions {
    /// Random restarts in addition to the start from the initial values (and from the
    /// previous optimum, when refitting).
    pub restarts: usize,
    /// Initial lengthscale of every kernel, in every input dimension.
    pub initial_lengthscale: f64,
    /// Initial noise standard deviation of every task.
    pub initial_noise_std: f64,
    /// Initial variance of the source kernels (every level but the target's).
    pub initial_source_variance: f64,
    /// Initial variance of the target kernel (the last level).
    pub initial_target_variance: f64,
    /// Random restarts of a refit that starts from a previous optimum. `None` (the default):
    /// `restarts`, as the authors' code does (it resets the model before every refit). `Some(r)`:
    /// a warm refit, GPflow-style, from the previous optimum, the initial values and `r`
    /// perturbations of them; with `r = 0` a refit is two L-BFGS-B runs instead of
    /// `restarts + 2` (see docs/decisions.md, "warm refits").
    pub warm_restarts: Option<usize>,
    /// Iteration limit of each L-BFGS-B run.
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
            initial_source_variance: 1.0,
            initial_target_variance: 0.1,
            warm_restarts: None,
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

    /// Checks that every initial value is a positive finite number and that L-BFGS may iterate.
    ///
    /// # Errors
    /// Names the offending option.
    pub fn validate(&self) -> Result<(), ModelError> {
        let positive = [
            ("initial_lengthscale", self.initial_lengthscale),
            ("initial_noise_std", self.initial_noise_std),
            ("initial_source_variance", self.initial_source_variance),
            ("initial_target_variance", self.initial_target_variance),
        ];
        for (name, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Err(ModelError::Invalid(format!(
                    "{name} must be a positive number, got {v}"
                )));
            }
        }
        if self.max_iterations == 0 {
            return Err(ModelError::Invalid(
                "max_iterations must be at least 1".into(),
            ));
        }
        Ok(())
    }

    /// The hierarchical kernel with `levels` levels at the initial values: the last level is
    /// the target's (variance `initial_target_variance`), the others are sources'.
    pub(crate) fn initial_kernel(
        &self,
        d: usize,
        levels: usize,
    ) -> Result<HierarchicalKernel, ModelError> {
        let mut variances = vec![self.initial_source_variance; levels];
        if let Some(last) = variances.last_mut() {
            *last = self.initial_target_variance;
        }
        Ok(HierarchicalKernel::matern52(
            d,
            self.initial_lengthscale,
            &variances,
        )?)
    }

    /// The initial noise variance of every task.
    pub(crate) fn initial_noise(&self) -> f64 {
        self.initial_noise_std * self.initial_noise_std
    }

    fn lbfgs(&self) -> LbfgsOptions {
        LbfgsOptions {
            max_iter: self.max_iterations,
            max_evals: 2 * self.max_iterations,
            ..LbfgsOptions::default()
        }
    }

    /// The random restarts of a fit: `warm_restarts` (if set) when it refits from a previous
    /// optimum, else `restarts`.
    fn restarts_for(&self, refit: bool) -> usize {
        match (refit, self.warm_restarts) {
            (true, Some(r)) => r,
            _ => self.restarts,
        }
    }

    /// The start points of a fit: `x0`, then `warm` (the previous optimum, if any), then
    /// [`TransferFitOptions::restarts_for`] copies of `x0` whose entries are each multiplied by
    /// a seeded draw from U(0.5, 1.5), clamped to `bounds`. (As in the authors' code, the
    /// perturbation acts on the unconstrained values, here logarithms, so a parameter whose
    /// initial value is 1 stays there; the other starts still move it.)
    fn starts(
        &self,
        x0: &[f64],
        warm: Option<&[f64]>,
        bounds: &[(f64, f64)],
        seed: u64,
    ) -> Vec<Vec<f64>> {
        let warm = warm.filter(|w| *w != x0);
        let restarts = self.restarts_for(warm.is_some());
        let mut starts = start_points(warm.unwrap_or(x0), x0, bounds, restarts, seed);
        if warm.is_some() {
            starts.insert(0, x0.to_vec());
        }
        starts
    }

    /// The start points of the models whose first start is `warm` (the current values: the
    /// previous optimum, or `init` before any fit), then the restarts around `init`. When
    /// `warm` differs from `init` this is a refit: [`TransferFitOptions::restarts_for`] it,
    /// and a warm refit (`warm_restarts` set) also starts from `init` itself, as
    /// [`TransferFitOptions::starts`] does.
    pub(crate) fn starts_from_current(
        &self,
        warm: &[f64],
        init: &[f64],
        bounds: &[(f64, f64)],
        seed: u64,
    ) -> Vec<Vec<f64>> {
        let refit = warm != init;
        let mut starts = start_points(warm, init, bounds, self.restarts_for(refit), seed);
        if refit && self.warm_restarts.is_some() {
            starts.insert(1, init.to_vec());
        }
        starts
    }

    /// Maximise `objective` (value and gradient over a flat vector, or why the point failed)
    /// from [`TransferFitOptions::starts`]; returns the best point.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn maximize(
        &self,
        objective: impl Fn(&[f64]) -> Result<(f64, Vec<f64>), ModelError> + Sync,
        x0: &[f64],
        warm: Option<&[f64]>,
        bounds: &[(f64, f64)],
        names: &[String],
        seed: u64,
        par: Parallelism,
    ) -> Result<Vec<f64>, ModelError> {
        let starts = self.starts(x0, warm, bounds, seed);
        let never = AtomicBool::new(false);
        let flat = |v: &[f64], _: bool| -> Result<Evaluation, String> {
            objective(v)
                .map(|(f, g)| (f, g, None))
                .map_err(|e| e.to_string())
        };
        let (best, _) =
            maximize_from_starts(&never, flat, &starts, bounds, names, &self.lbfgs(), par)?;
        Ok(best)
    }

    /// Fit a hierarchical kernel and one noise variance per group jointly by the full log
    /// marginal likelihood of `y` at the task-indexed inputs `x` (zero prior mean), from
    /// `(kernel, noise)` and, if given, the previous optimum `warm`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fit_joint(
        &self,
        kernel: &HierarchicalKernel,
        noise: &[f64],
        warm: Option<(&HierarchicalKernel, &[f64])>,
        x: MatRef<'_, f64>,
        y: &[f64],
        group: &[usize],
        seed: u64,
        par: Parallelism,
    ) -> Result<(HierarchicalKernel, Vec<f64>), ModelError> {
        let (x0, bounds) = pack(kernel, noise);
        let warm = warm.map(|(k, s)| pack(k, s).0);
        let names = names(kernel, noise.len());
        let objective = |v: &[f64]| {
            let (k, s) = unpack(kernel, v)?;
            grouped_log_marginal_likelihood(&k, &Mean::Zero, x, y, group, &s, par, true)
        };
        let best = self.maximize(objective, &x0, warm.as_deref(), &bounds, &names, seed, par)?;
        let (k, s) = unpack(kernel, &best)?;
        Ok((k, s))
    }
    /// The conjugate models' options of one L-BFGS run from one start (the restarts are
    /// drawn here, not by the driver).
    fn single_start(&self) -> FitOptions {
        FitOptions {
            restarts: 0,
            lbfgs: self.lbfgs(),
            ..FitOptions::default()
        }
    }
}

/// Checks the shape of a hierarchical kernel and its noise variances against the number of
/// tasks and (when known) of input columns.
fn check_kernel(
    kernel: &HierarchicalKernel,
    noise: &[f64],
    tasks: usize,
    d: Option<usize>,
) -> Result<(), ModelError> {
    if kernel.n_tasks() != tasks || noise.len() != tasks {
        return Err(ModelError::Invalid(format!(
            "expected a hierarchical kernel with {tasks} levels and {tasks} noise variances \
             (one per source task and the target), got {} levels and {} noise variances",
            kernel.n_tasks(),
            noise.len()
        )));
    }
    check_task_noise(noise)?;
    if let Some(d) = d {
        for k in kernel.levels() {
            k.validate(d)?;
        }
    }
    Ok(())
}

/// Checks one noise variance per task: each finite and positive.
pub(crate) fn check_task_noise(noise: &[f64]) -> Result<(), ModelError> {
    match noise.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
        Some(t) => Err(ModelError::Invalid(format!(
            "noise variance of task {t} is {} (expected a positive number)",
            noise[t]
        ))),
        None => Ok(()),
    }
}
