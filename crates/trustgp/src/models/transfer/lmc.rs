//! FullTransLMC (`safe-transfer.md` §2.7, §2.10, §3.2): one function on P source tasks and the
//! target, modelled jointly by a linear model of coregionalisation over the tasks
//! `(source 1, …, source P, target)`,
//!
//! ```text
//! k((x, i), (x', i')) = Σ_{l=1}^{P+1} [B_l]_{i i'} k_l(x, x'),   B_l = W_l W_lᵀ + diag(κ_l),
//! ```
//!
//! `W_l` of size (P+1)×rank (rank 1 by default), per-latent κ_l, each `k_l` a unit-variance
//! Matérn-5/2 with its own ARD lengthscales, and one noise variance per task. Every parameter
//! is refitted jointly on the log marginal likelihood of all the data (sources first, then the
//! target), `O((N_s + N)³)` per evaluation. This is the repo's multi-output GP (MOGP:
//! [`MultiOutputKernel`] on task-indexed inputs, one noise group per task) with the paper's
//! initial values, zero mean and multi-start scheme.

use std::time::Instant;

use faer::{Mat, MatRef};

use super::stack::{
    check_target, not_updated, required_width, stack_sources, tagged, StackedSources,
};
use super::starts::best_start;
use super::{check_task_noise, TransferFitOptions};
use crate::fit::FitReport;
use crate::kernels::{
    BaseKernel, BaseKind, Coregion, Covariance, Kernel, Lengthscale, LmcTerm, MultiOutputKernel,
};
use crate::linalg::parallelism_for;
use crate::means::Mean;
use crate::models::checks::check_test_inputs;
use crate::models::robust::mogp::{
    grouped_log_marginal_likelihood, names, pack, unpack, MultiOutputGp,
};
use crate::models::ModelError;
use crate::posterior::Marginals;
use crate::sequential::safe::{FunctionModel, SourceTask};

/// Share of each task's unit prior variance that the initial `W_l` carry (the rest is κ).
const INITIAL_SHARED_VARIANCE: f64 = 0.9;

/// Entry `i` of the `m`-th orthonormal DCT-II basis vector of length `t`.
fn dct(m: usize, i: usize, t: usize) -> f64 {
    let t_f = t as f64;
    if m == 0 {
        1.0 / t_f.sqrt()
    } else {
        (2.0 / t_f).sqrt() * (std::f64::consts::PI * m as f64 * (i as f64 + 0.5) / t_f).cos()
    }
}

/// The initial LMC over `t` tasks and `d` inputs: `t` latents, each a unit-variance Matérn-5/2
/// with lengthscale `ls` in every dimension; column `k` of `W_l` is
/// `√(0.9 / rank) · c_{(l+k) mod t}` on its free (lower-trapezoid) entries, `c_m` the
/// orthonormal DCT-II basis, and `κ_l = 0.1 / t` for every task. With rank 1,
/// `Σ_l B_l = I`: unit prior variance per task and no net task correlation, while every latent
/// correlates the tasks differently (latent 0 positively across all). Identical latents would
/// stay identical under any gradient method, and a zero `W_l` is a stationary point of the
/// likelihood, so neither is a start.
pub(crate) fn initial_kernel(
    t: usize,
    d: usize,
    rank: usize,
    ls: f64,
) -> Result<MultiOutputKernel, ModelError> {
    let w_scale = (INITIAL_SHARED_VARIANCE / rank as f64).sqrt();
    let terms = (0..t)
        .map(|l| {
            let base = BaseKernel::new(BaseKind::Matern52)
                .with_lengthscale(Lengthscale::Ard(vec![ls; d]))?;
            let mut kernel = Kernel::Base(base);
            // The scale of each latent is carried by B_l (spec §2.7): its variance stays 1.
            kernel.fix_scale();
            let w = Mat::from_fn(t, rank, |i, k| {
                if i >= k {
                    w_scale * dct((l + k) % t, i, t)
                } else {
                    0.0
                }
            });
            let kappa = vec![(1.0 - INITIAL_SHARED_VARIANCE) / t as f64; t];
            Ok(LmcTerm {
                kernel,
                coregion: Coregion::new(w, Some(kappa))?,
            })
        })
        .collect::<Result<Vec<_>, ModelError>>()?;
    Ok(MultiOutputKernel::new(terms)?)
}

/// FullTransLMC: the LMC transfer GP of one function.
#[derive(Clone, Debug)]
pub struct LmcTransfer {
    options: TransferFitOptions,
    rank: usize,
    d: usize,
    n_tasks: usize,
    /// The source tasks in task-indexed form (source p has task index p).
    sources: StackedSources,
    /// The initial kernel, around which the restarts are drawn.
    initial: MultiOutputKernel,
    /// The current parameters (the last optimum, the initial values, or as set).
    kernel: MultiOutputKernel,
    noise: Vec<f64>,
    gp: Option<MultiOutputGp<MultiOutputKernel, Mean>>,
    fit_seconds: f64,
}

impl LmcTransfer {
    /// An LMC over `sources` and the target with rank-1 `W_l` (see
    /// [`LmcTransfer::with_rank`]) and initial values from `options`.
    ///
    /// # Errors
    /// Invalid options; no source task, a source with no rows, non-finite values or
    /// mismatched columns.
    pub fn new(
        sources: Vec<SourceTask>,
        options: TransferFitOptions,
    ) -> Result<LmcTransfer, ModelError> {
        options.validate()?;
        let sources = stack_sources(&sources)?;
        let d = required_width(&sources)?;
        let n_tasks = sources.p + 1;
        let initial = initial_kernel(n_tasks, d, 1, options.initial_lengthscale)?;
        let noise = vec![options.initial_noise_std.powi(2); n_tasks];
        Ok(LmcTransfer {
            rank: 1,
            d,
            n_tasks,
            sources,
            kernel: initial.clone(),
            initial,
            noise,
            gp: None,
            fit_seconds: 0.0,
            options,
        })
    }

    /// The same model with `W_l` of rank `rank` (1 ..= number of tasks); resets the
    /// parameters to their initial values and drops any data.
    pub fn with_rank(self, rank: usize) -> Result<LmcTransfer, ModelError> {
        if rank == 0 || rank > self.n_tasks {
            return Err(ModelError::Invalid(format!(
                "rank must be between 1 and the number of tasks ({}), got {rank}",
                self.n_tasks
            )));
        }
        let initial = initial_kernel(self.n_tasks, self.d, rank, self.options.initial_lengthscale)?;
        Ok(LmcTransfer {
            rank,
            kernel: initial.clone(),
            initial,
            noise: vec![self.options.initial_noise_std.powi(2); self.n_tasks],
            gp: None,
            fit_seconds: 0.0,
            ..self
        })
    }

    /// Number of tasks (sources plus the target, which is the last).
    pub fn n_tasks(&self) -> usize {
        self.n_tasks
    }

    /// The rank of every `W_l`.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The multi-output covariance (current parameters).
    pub fn kernel(&self) -> &MultiOutputKernel {
        &self.kernel
    }

    /// The noise variance of every task (the target's last).
    pub fn noise(&self) -> &[f64] {
        &self.noise
    }

    /// The log marginal likelihood of all the data at the current parameters (`None` before
    /// the first update).
    pub fn lml(&self) -> Option<f64> {
        self.gp.as_ref().map(|g| g.lml())
    }

    /// The optimiser's report of the start that won the last refit (empty before the first
    /// refit, and after an update without one).
    pub fn fit_reports(&self) -> &[FitReport] {
        self.gp.as_ref().map_or(&[], |g| g.starts())
    }

    /// The flat unconstrained parameter vector `[kernel parameters, ln σ²_task …]` (per latent:
    /// `ln ℓ`, the free entries of `W_l`, `ln κ_l`; see [`MultiOutputKernel`]).
    pub fn parameters(&self) -> Vec<f64> {
        pack(&self.kernel, &self.noise).0
    }

    /// Names of the entries of [`LmcTransfer::parameters`].
    pub fn parameter_names(&self) -> Vec<String> {
        names(&self.kernel, self.n_tasks)
    }

    /// Sets the kernel and the per-task noise variances; a model that has data is
    /// re-conditioned on it at once.
    ///
    /// # Errors
    /// A kernel over another number of tasks or inputs, a noise count other than the number of
    /// tasks, a non-positive noise, or a failed factorisation; the model is then unchanged.
    pub fn set_hyperparameters(
        &mut self,
        kernel: MultiOutputKernel,
        noise: Vec<f64>,
    ) -> Result<(), ModelError> {
        if kernel.n_tasks() != self.n_tasks || noise.len() != self.n_tasks {
            return Err(ModelError::Invalid(format!(
                "expected a kernel and noise variances over {} tasks, got {} and {}",
                self.n_tasks,
                kernel.n_tasks(),
                noise.len()
            )));
        }
        check_task_noise(&noise)?;
        kernel.validate_inputs(self.sources.x.as_ref())?;
        if let Some(gp) = &self.gp {
            let x = gp.posterior().x();
            let gp = MultiOutputGp::at(kernel.clone(), Mean::Zero, x, gp.y(), gp.groups(), &noise)?;
            self.gp = Some(gp);
        }
        self.kernel = kernel;
        self.noise = noise;
        Ok(())
    }

    /// The log marginal likelihood `log N((y_s; y_t) | 0, Ω)` of the sources and the target
    /// data `(x, y)` at the flat parameters `params` (laid out as [`LmcTransfer::parameters`]),
    /// with its gradient: the objective that a refit maximises.
    ///
    /// # Errors
    /// Bad target data, a parameter vector of the wrong length or with non-finite entries, or
    /// a failed factorisation.
    pub fn log_marginal_likelihood(
        &self,
        x: MatRef<'_, f64>,
        y: &[f64],
        params: &[f64],
    ) -> Result<(f64, Vec<f64>), ModelError> {
        check_target(x, y, self.d)?;
        let expected = self.kernel.n_params() + self.n_tasks;
        if params.len() != expected {
            return Err(ModelError::Invalid(format!(
                "expected {expected} parameters, got {}",
                params.len()
            )));
        }
        let (kernel, noise) = unpack(&self.kernel, params)?;
        let (xa, ya, group) = self.sources.with_target(x, y);
        grouped_log_marginal_likelihood(
            &kernel,
            &Mean::Zero,
            xa.as_ref(),
            &ya,
            &group,
            &noise,
            parallelism_for(xa.nrows()),
            true,
        )
    }
}

impl FunctionModel for LmcTransfer {
    fn update(
        &mut self,
        x: MatRef<'_, f64>,
        y: &[f64],
        refit: bool,
        seed: u64,
    ) -> Result<(), ModelError> {
        check_target(x, y, self.d)?;
        let (xa, ya, group) = self.sources.with_target(x, y);
        let (xa, ya) = (xa.as_ref(), ya.as_slice());
        let (gp, seconds) = if refit {
            let clock = Instant::now();
            let (init, bounds) = pack(
                &self.initial,
                &vec![self.options.initial_noise_std.powi(2); self.n_tasks],
            );
            let warm = self.parameters();
            let starts = (self.options).starts_from_current(&warm, &init, &bounds, seed);
            let opts = self.options.single_start();
            let gp = best_start(&starts, parallelism_for(xa.nrows()), |v| {
                let (kernel, noise) = unpack(&self.initial, v)?;
                let gp = MultiOutputGp::fit(kernel, Mean::Zero, xa, ya, &group, &noise, &opts)?;
                Ok((gp.lml(), gp))
            })?;
            (gp, clock.elapsed().as_secs_f64())
        } else {
            let gp =
                MultiOutputGp::at(self.kernel.clone(), Mean::Zero, xa, ya, &group, &self.noise)?;
            (gp, 0.0)
        };
        self.kernel = gp.covariance().clone();
        self.noise = gp.noise().to_vec();
        self.gp = Some(gp);
        self.fit_seconds = seconds;
        Ok(())
    }

    fn predict(&self, x: MatRef<'_, f64>) -> Result<Marginals, ModelError> {
        let gp = self.gp.as_ref().ok_or_else(not_updated)?;
        check_test_inputs(x, self.d)?;
        Ok(gp.posterior().marginals(tagged(x, self.sources.p).as_ref()))
    }

    fn noise_variance(&self) -> f64 {
        self.noise[self.n_tasks - 1]
    }

    fn fit_seconds(&self) -> f64 {
        self.fit_seconds
    }

    fn log_evidence(&self) -> Option<f64> {
        self.lml()
    }
}
