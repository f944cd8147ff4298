//! EULBO: joint optimisation of a variational model and the next query point or batch
//! (`rcagp.md` §2.11, §3.5 step 9; Maus et al., 2024).
//!
//! The objective is
//!
//! ```text
//! L(ϑ, S, x) = s · ELBO(ϑ, S) + E_{q(f(x))}[ln softplus(f(x) − y*)],
//! ```
//!
//! the model's ELBO plus the softplus expected utility
//! ([`SoftplusEi`]) under the model's **posterior**
//! predictive at `x` (the spec's fix: the reference evaluated it under the prior), with
//! `s = 1` ([`ElboScale::Sum`], the paper's) or `1/n` ([`ElboScale::PerDatum`], §6.9: the
//! utility then weighs as much as one datum's share of the ELBO, not `1/n` of it). A batch of
//! `q > 1` points (the start `x0` holds `q` rows) uses the Monte Carlo batch form of §2.11,
//! `E[max_j ln softplus(f(x_j) − y*)]` under the joint predictive, with
//! [`EulboOptions::mc_samples`] base samples fixed for the whole run
//! ([`BatchSoftplusEi`]), and the query step moves every point of the batch.
//!
//! [`optimize`] follows the reference code's loop:
//!
//! 1. warm start: `warm_start_epochs` Adam steps (`model_lr`) of plain ELBO ascent;
//! 2. epochs (at most `max_epochs`), each a **model step** (Adam, `model_lr`, on the kernel's
//!    log-hyperparameters, `log σ²`, the mean if trained and the block actions, at fixed `x`)
//!    then a **query step** (Adam, `query_lr`, on `x` at the new model), each gradient's norm
//!    clipped at `clip` separately and `x` projected onto the box after every step; the run
//!    ends when the epoch's objective has failed to improve on the best epoch so far
//!    `patience` times in all (not necessarily in a row), the first epoch counting as an
//!    improvement;
//! 3. a numerical failure (a factorisation error, or a non-finite value or gradient) restores
//!    the model and `x0`, divides both learning rates by 10 and starts again, at most
//!    `max_restores` times; when every try fails, the starting model and `x0` are returned.
//!
//! The result is the `(model, x)` of the last epoch (`rcagp.md` §3.5 step 9, as the reference
//! code): the start is restored only after numerical failures, never because its objective
//! is higher. A surrogate fitted to its ELBO optimum (SVGP with its thousand-odd variational
//! parameters) loses ELBO to Adam's first steps, which move every parameter by about
//! `model_lr` whatever its gradient, far more than the query steps gain in utility; keeping
//! the best of the start and the epochs then returned `x0` every time (issue 22, see
//! `docs/decisions.md`). Everything is deterministic (full-batch ELBO, Gauss–Hermite
//! expectation or seeded quasi-random base samples): the same inputs give the same result bit
//! for bit.
//!
//! The models: CaGP and RCaGP ([`CaGp`](crate::models::computation_aware::CaGp)) with block
//! actions (trained) or inducing-point actions (fixed inducing inputs, `S = k(X, Z)` moving
//! with the kernel; re-draw block actions for a new training set with
//! [`Actions::random_blocks`](crate::models::computation_aware::Actions::random_blocks));
//! RCSVGP and SGPR ([`SparseGp`](crate::models::sparse::SparseGp), the collapsed bounds,
//! inducing inputs trained); SVGP ([`SvgpOnData`]: the uncollapsed
//! [`Svgp`](crate::models::svgp::Svgp) with its training data, the variational parameters
//! trained with the rest). Batches (`q > 1`) need the joint predictive's covariance adjoint,
//! which every one of them propagates.
//!
//! A caller reproducing `rcagp.md` §3.5 fits the model (the warm start then plays the spec's
//! 10 epochs of ELBO ascent), takes `x0` from an EI/qEI maximisation in the box or TuRBO
//! region, and passes that box as `bounds`:
//!
//! ```no_run
//! # use trustgp::models::computation_aware::CaGp;
//! # use trustgp::sequential::eulbo::{optimize, EulboOptions};
//! # fn run(model: &CaGp, x0: &[f64], bounds: &[(f64, f64)], best_y: f64) {
//! let result = optimize(model, x0, bounds, best_y, &EulboOptions::default()).unwrap();
//! let (next, refined_model) = (result.x, result.model);
//! # }
//! ```

mod adam;
#[cfg(test)]
mod batch_tests;
mod cagp;
#[cfg(test)]
mod converged_tests;
mod objective;
mod sparse;
mod svgp;
#[cfg(test)]
mod tests;

pub use self::svgp::SvgpOnData;

use faer::MatRef;

use self::adam::Adam;
use self::objective::QueryUtility;
use self::objective::{evaluate, Evaluation};
use crate::models::computation_aware::{JointAdjoints, JointEvaluation};
use crate::models::ModelError;
use crate::sequential::acquisition::{BatchSoftplusEi, SoftplusEi, EULBO_MC_SAMPLES};

/// Which optional model parameters EULBO trains.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trainable {
    /// The constant prior mean (frozen in the spec's BO setting).
    pub mean: bool,
    /// The noise variance.
    pub noise: bool,
    /// The inducing inputs of RCSVGP/SGPR (CaGP's inducing-point actions stay fixed).
    pub inducing: bool,
}

/// A variational model that EULBO can optimise jointly with a query point.
pub trait EulboModel: Sized {
    /// Number of training rows (the `n` of [`ElboScale::PerDatum`]).
    fn n_data(&self) -> usize;

    /// Number of input columns.
    fn input_dim(&self) -> usize;

    /// The trainable parameters as one vector.
    ///
    /// # Errors
    /// [`ModelError`] if the model's parameters cannot be represented (out of their domain).
    fn parameters(&self, learn: Trainable) -> Result<Vec<f64>, ModelError>;

    /// Box constraints of [`EulboModel::parameters`] (fixed entries have a box of zero width).
    ///
    /// # Errors
    /// As for [`EulboModel::parameters`].
    fn parameter_bounds(&self, learn: Trainable) -> Result<Vec<(f64, f64)>, ModelError>;

    /// The model at parameters `v`.
    ///
    /// # Errors
    /// [`ModelError`] for a bad vector or a failed factorisation.
    fn with_parameters(&self, v: &[f64], learn: Trainable) -> Result<Self, ModelError>;

    /// The ELBO at `v`, the latent predictive at the rows of `xq`, and the gradients of
    /// `elbo_weight · ELBO + U` in `v` and of `U` in `xq`, where `adjoints` gives `U`'s
    /// derivatives in the joint predictive's mean and covariance.
    ///
    /// # Errors
    /// [`ModelError`] for bad inputs or a failed factorisation.
    fn joint_evaluation(
        &self,
        v: &[f64],
        learn: Trainable,
        elbo_weight: f64,
        xq: MatRef<'_, f64>,
        adjoints: JointAdjoints<'_>,
    ) -> Result<JointEvaluation, ModelError>;
}

/// The weight of the ELBO against the utility (`rcagp.md` §2.6, §6.9).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ElboScale {
    /// The ELBO as a sum over the data (the paper's).
    #[default]
    Sum,
    /// The ELBO divided by the number of training rows (GPyTorch's and Wenger et al.'s).
    PerDatum,
}

/// Settings of [`optimize`]; the defaults are the reference code's.
#[derive(Clone, Debug, PartialEq)]
pub struct EulboOptions {
    /// Adam learning rate of the model parameters (0.01).
    pub model_lr: f64,
    /// Adam learning rate of the query point (0.001).
    pub query_lr: f64,
    /// Gradient-norm clipping, applied to the model and the query gradients separately (2.0).
    pub clip: f64,
    /// Epochs of plain ELBO ascent before the joint epochs (10).
    pub warm_start_epochs: usize,
    /// Most joint epochs (30).
    pub max_epochs: usize,
    /// Joint epochs without improvement of the best epoch objective, counted cumulatively,
    /// that end the run (3).
    pub patience: usize,
    /// Most restarts after numerical failures, each with both learning rates divided by 10 (8).
    pub max_restores: usize,
    /// The weight of the ELBO against the utility.
    pub elbo_scale: ElboScale,
    /// Which optional parameters are trained (mean frozen, noise and inducing inputs trained:
    /// the BO setting).
    pub learn: Trainable,
    /// Base samples of the batch utility (`q > 1`; the reference code's 64).
    pub mc_samples: usize,
    /// Seed of the batch utility's quasi-random base samples (drawn once per run).
    pub mc_seed: u32,
}

impl Default for EulboOptions {
    fn default() -> Self {
        EulboOptions {
            model_lr: 0.01,
            query_lr: 0.001,
            clip: 2.0,
            warm_start_epochs: 10,
            max_epochs: 30,
            patience: 3,
            max_restores: 8,
            elbo_scale: ElboScale::Sum,
            learn: Trainable {
                mean: false,
                noise: true,
                inducing: true,
            },
            mc_samples: EULBO_MC_SAMPLES,
            mc_seed: 0,
        }
    }
}

/// One joint epoch of the final try.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EulboEpoch {
    /// The objective at the epoch's end.
    pub objective: f64,
    /// The ELBO (unscaled) at the epoch's end.
    pub elbo: f64,
    /// The softplus expected utility at the epoch's end.
    pub utility: f64,
}

/// What [`optimize`] found.
#[derive(Clone, Debug)]
pub struct EulboResult<M> {
    /// The query point, or the batch row after row (`q·d` values), after the last epoch.
    pub x: Vec<f64>,
    /// The model after the last epoch.
    pub model: M,
    /// The objective after the last epoch (it may be below [`EulboResult::start_objective`]:
    /// see the module notes).
    pub objective: f64,
    /// The objective of the starting model at `x0`.
    pub start_objective: f64,
    /// The joint epochs of the final try.
    pub trace: Vec<EulboEpoch>,
    /// How many numerical failures restored the start and shrank the learning rates (0 when
    /// the first try succeeded).
    pub restores: usize,
    /// The learning rates `(model, query)` of the final try.
    pub learning_rates: (f64, f64),
    /// Whether every try failed, so that the starting model and `x0` are returned.
    pub failed: bool,
}

/// Where a try ended: the model, the query and the objective after its last epoch.
struct Reached {
    objective: f64,
    v: Vec<f64>,
    x: Vec<f64>,
}

/// A try that ran to the end, or the numerical failure that stopped it.
enum Try {
    Done(Reached, Vec<EulboEpoch>),
    Failed,
}

/// The fixed inputs of a run.
struct Problem<'a, M> {
    model: &'a M,
    /// The box of every coordinate of the batch (the box repeated `q` times).
    bounds: Vec<(f64, f64)>,
    param_bounds: Vec<(f64, f64)>,
    utility: QueryUtility,
    elbo_weight: f64,
    opts: &'a EulboOptions,
}

impl<M: EulboModel> Problem<'_, M> {
    /// The objective at `(v, x)`; `None` for a numerical failure.
    fn eval(&self, v: &[f64], x: &[f64], with_utility: bool) -> Option<Evaluation> {
        evaluate(
            self.model,
            v,
            self.opts.learn,
            self.elbo_weight,
            x,
            &self.utility,
            with_utility,
        )
        .ok()
        .filter(Evaluation::is_finite)
    }

    /// One try from `(v0, x0)` with learning rates `lr = (model, query)`.
    fn run(&self, v0: &[f64], x0: &[f64], lr: (f64, f64)) -> Try {
        let opts = self.opts;
        let (mut v, mut x) = (v0.to_vec(), x0.to_vec());
        let mut model_adam = Adam::new(v.len(), lr.0, opts.clip);
        let mut query_adam = Adam::new(x.len(), lr.1, opts.clip);
        // Warm start: the loss is −s·ELBO.
        for _ in 0..opts.warm_start_epochs {
            let Some(ev) = self.eval(&v, &x, false) else {
                return Try::Failed;
            };
            let loss_grad: Vec<f64> = ev.d_parameters.iter().map(|g| -g).collect();
            model_adam.step(&mut v, &loss_grad, &self.param_bounds);
        }
        let Some(mut ev) = self.eval(&v, &x, true) else {
            return Try::Failed;
        };
        let mut trace = Vec::new();
        // Patience counts epochs that fail to beat the best epoch of this loop (the first
        // always does). The start does not compete: a model at its ELBO optimum loses more
        // ELBO to Adam's first steps (each parameter moves by about the learning rate) than
        // the query steps gain in utility (an SVGP surrogate on Hartmann6: −28.7 nats on the
        // first step, about +0.005 per epoch), so comparing with the start would stop the
        // loop at once and return `x0` every time (issue 22).
        let mut best = f64::NEG_INFINITY;
        let mut failures = 0;
        for _ in 0..opts.max_epochs {
            let loss_grad: Vec<f64> = ev.d_parameters.iter().map(|g| -g).collect();
            model_adam.step(&mut v, &loss_grad, &self.param_bounds);
            let Some(mid) = self.eval(&v, &x, true) else {
                return Try::Failed;
            };
            let loss_grad: Vec<f64> = mid.d_x.iter().map(|g| -g).collect();
            query_adam.step(&mut x, &loss_grad, &self.bounds);
            let Some(end) = self.eval(&v, &x, true) else {
                return Try::Failed;
            };
            ev = end;
            trace.push(EulboEpoch {
                objective: ev.objective,
                elbo: ev.elbo,
                utility: ev.utility,
            });
            if ev.objective > best {
                best = ev.objective;
            } else {
                failures += 1;
                if failures >= opts.patience {
                    break;
                }
            }
        }
        Try::Done(
            Reached {
                objective: ev.objective,
                v,
                x,
            },
            trace,
        )
    }
}

/// Checks the options.
fn check_options(opts: &EulboOptions) -> Result<(), ModelError> {
    for (what, v) in [
        ("model_lr", opts.model_lr),
        ("query_lr", opts.query_lr),
        ("clip", opts.clip),
    ] {
        if !(v > 0.0 && v.is_finite()) {
            return Err(ModelError::Invalid(format!(
                "EULBO option {what} must be positive and finite, got {v}"
            )));
        }
    }
    if opts.patience == 0 {
        return Err(ModelError::Invalid(
            "EULBO option patience must be at least 1, got 0".into(),
        ));
    }
    Ok(())
}

/// Checks the box and the start (`q ≥ 1` points of `d` coordinates, row after row), and
/// projects the start into the box (a start from another optimiser may sit outside by
/// rounding). Returns the projected start and `q`.
fn checked_start(
    x0: &[f64],
    bounds: &[(f64, f64)],
    d: usize,
) -> Result<(Vec<f64>, usize), ModelError> {
    if x0.is_empty() || d == 0 || x0.len() % d != 0 || bounds.len() != d {
        return Err(ModelError::Invalid(format!(
            "EULBO needs a start of q ≥ 1 points and bounds for the model's {d} inputs, got {} \
             start values and {} bounds",
            x0.len(),
            bounds.len()
        )));
    }
    if let Some(c) = (0..d).find(|&c| {
        let (lo, hi) = bounds[c];
        !(lo.is_finite() && hi.is_finite() && lo <= hi)
    }) {
        return Err(ModelError::Invalid(format!(
            "EULBO bounds of input {c} must be finite with lower ≤ upper, got {:?}",
            bounds[c]
        )));
    }
    if let Some(k) = x0.iter().position(|v| !v.is_finite()) {
        return Err(ModelError::Invalid(format!(
            "EULBO start point {} has a non-finite input {}: {}",
            k / d,
            k % d,
            x0[k]
        )));
    }
    let projected = x0
        .iter()
        .enumerate()
        .map(|(k, v)| v.clamp(bounds[k % d].0, bounds[k % d].1))
        .collect();
    Ok((projected, x0.len() / d))
}

/// Jointly optimises `model` and a query point, or a batch of `q` points, from `x0` (`q`
/// rows of the model's inputs, row after row) in the box `bounds` (model input units, one per
/// input; a start outside the box is projected into it) with the softplus utility over
/// `incumbent` (the reference passes the best standardised observation, `trustgp bo` the best
/// posterior mean: [`crate::sequential::bayes_opt::eulbo_incumbent`]); see the module notes
/// for the loop.
///
/// # Errors
/// [`ModelError::Invalid`] for bad options, a start or box of the wrong length or not finite,
/// or a non-finite incumbent; the model's error if the objective cannot be evaluated at the
/// start (nothing to restore to).
pub fn optimize<M: EulboModel>(
    model: &M,
    x0: &[f64],
    bounds: &[(f64, f64)],
    incumbent: f64,
    opts: &EulboOptions,
) -> Result<EulboResult<M>, ModelError> {
    check_options(opts)?;
    let (x0, q) = checked_start(x0, bounds, model.input_dim())?;
    let utility = if q == 1 {
        QueryUtility::Single(SoftplusEi::new(incumbent)?)
    } else {
        QueryUtility::Batch(BatchSoftplusEi::new(
            incumbent,
            q,
            opts.mc_samples,
            opts.mc_seed,
        )?)
    };
    let problem = Problem {
        model,
        bounds: bounds.iter().copied().cycle().take(x0.len()).collect(),
        param_bounds: model.parameter_bounds(opts.learn)?,
        utility,
        elbo_weight: match opts.elbo_scale {
            ElboScale::Sum => 1.0,
            ElboScale::PerDatum => 1.0 / model.n_data() as f64,
        },
        opts,
    };
    let v0 = model.parameters(opts.learn)?;
    let start = evaluate(
        model,
        &v0,
        opts.learn,
        problem.elbo_weight,
        &x0,
        &problem.utility,
        true,
    )?;
    if !start.is_finite() {
        return Err(ModelError::Invalid(format!(
            "the EULBO objective is not finite at the start ({})",
            start.objective
        )));
    }
    let mut lr = (opts.model_lr, opts.query_lr);
    let mut restores = 0;
    loop {
        if let Try::Done(end, trace) = problem.run(&v0, &x0, lr) {
            return Ok(EulboResult {
                model: model.with_parameters(&end.v, opts.learn)?,
                x: end.x,
                objective: end.objective,
                start_objective: start.objective,
                trace,
                restores,
                learning_rates: lr,
                failed: false,
            });
        }
        if restores == opts.max_restores {
            break;
        }
        restores += 1;
        lr = (lr.0 / 10.0, lr.1 / 10.0);
    }
    Ok(EulboResult {
        model: model.with_parameters(&v0, opts.learn)?,
        x: x0,
        objective: start.objective,
        start_objective: start.objective,
        trace: Vec::new(),
        restores,
        learning_rates: lr,
        failed: true,
    })
}
