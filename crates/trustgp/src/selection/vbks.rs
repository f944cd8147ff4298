//! VBKS: variational Bayesian kernel selection for sparse GP regression (Teng et al. 2020;
//! spec `vbks.md` §2, §4), with point-estimate hyperparameters (spec §2.13, [`VbksMode::Point`])
//! or a Gaussian posterior over every kernel's log-hyperparameters ([`VbksMode::Full`], module
//! `full_theta`). All kernels of a run use the same mode (their `L_i` are compared).
//!
//! Every candidate kernel `k_i` gets its own sparse variational GP on the **shared, fixed**
//! inducing inputs `Z` (a seeded uniform subset of the training inputs, none at the origin,
//! where a LIN factor would zero a row of `K_ZZ`). Its local ELBO `L_i` is the standard SVGP
//! ELBO ([`Svgp`]: whitened, which in point mode is an equivalent reparameterisation, spec
//! §7.14), maximised on its own: the full ELBO (8) is `E_q(g)[Σ π_i L_i] − KL(q(g)‖p(g))`,
//! whose maximiser in each kernel's parameters is that of `L_i` whatever `q(g)`, so each
//! kernel is trained with its own, unweighted gradient (spec §2.8) and no kernel waits for
//! another. All kernels see the same minibatch sequence (one seed), and training is split into
//! stages; after each stage (a checkpoint) every `L*_i` is estimated on one fixed evaluation
//! subset `E` shared by all kernels (common random numbers, spec §4.1), `q(g)` is refitted
//! (warm-started, and also cold from the prior, keeping the better: the objective is
//! multimodal, see [`KernelBelief::refit_warm_or_cold`]) and the kernel posterior `q(k)` is
//! computed by Monte Carlo (eq. 13).
//!
//! After training, the top kernels are kept (pruning, spec §2.12): `q(g)` restricted to them
//! is refitted against their `L*` (nothing is retrained) and its `q̃(k)` weighs the model
//! average. VBKS-s predicts with the single most probable kernel.
//!
//! Memory is `O(K·M²)` (each candidate's `M×M` factors), never `O(n²)`; the cost of an
//! iteration does not depend on `n`. Candidates are trained in parallel (rayon), each
//! deterministically, so a seeded run gives bit-identical results whatever the threads.
//! Each PER factor starts at a period read off the training series' periodogram
//! ([`PeriodInit::Data`], a choice beside the spec's `p = 1`; see `periods`): the ELBO is
//! multimodal in the period, and from 1 a short cycle is never found. A peak must pass a
//! significance test (Fisher–Whittle at [`VbksConfig::period_alpha`]); without one the
//! factor starts at the spec's 1.
//! A kernel whose `K_ZZ` cannot be factorised even with the largest jitter is excluded
//! (`L*_i = −∞`, `q(k_i) = 0`; spec §7.2) and its error recorded.

use std::time::Instant;

use faer::{Mat, MatRef};
use rand::rngs::StdRng;
use rand::seq::index::sample;
use rand::SeedableRng;
use rayon::prelude::*;

use crate::fit::Optimizer;
use crate::kernels::Kernel;
use crate::means::Mean;
use crate::models::checks::check_training_data;
use crate::models::inducing::InducingInit;
use crate::models::svgp::{one_thread, Svgp, SvgpConfig, SvgpLikelihood};
use crate::models::ModelError;

use super::belief::{BeliefConfig, KernelBelief};
use super::full_theta::{standard_normals, FullTheta, Stage};
use super::mixture::{Component, Mixture};
use super::periods::{initial_periods, InitialPeriods, PeriodInit, DEFAULT_PERIOD_ALPHA};
use super::settle::Settle;
use super::space::KernelSpace;
use super::SelectionError;

/// Settings of [`Vbks::fit`] (defaults: spec §2.14 where it makes a choice).
#[derive(Clone, Debug, PartialEq)]
pub struct VbksConfig {
    /// Inducing points `M`, shared by all kernels (at most `n`; default 100).
    pub inducing: usize,
    /// Minibatch size `B` (default 128; values above `n` mean the full data).
    pub batch_size: usize,
    /// SGA iterations `T` of every kernel (default 1000).
    pub iterations: usize,
    /// Number of checkpoints, evenly spaced, the last at iteration `T` (default 10).
    pub checkpoints: usize,
    /// Adam's learning rate for every kernel's parameters (default 0.01).
    pub lr: f64,
    /// Natural-gradient steps for each `q(u_i)` between Adam's steps on the hyperparameters
    /// (default true: in point mode they reach the same optimum of `L_i` much sooner, and
    /// each stage ends at the exact optimum of `q(u_i)` for the hyperparameters reached).
    /// Full-θ mode trains `q(u_i)` by Adam with the rest, and with this flag ends each stage
    /// at the exact optimum of `q(u_i)` for the `q(θ_i)` reached (`eval_samples` draws).
    pub natural_gradients: bool,
    /// The initial noise variance of every kernel (standardised units, default 0.1).
    pub noise: f64,
    /// Size of the evaluation subset `E` on which every `L*_i` is estimated (default 10⁴;
    /// all the data when `n` is smaller).
    pub eval_size: usize,
    /// The `q(g)` refits and the kernel posterior.
    pub belief: BeliefConfig,
    /// Kernels kept for the model average (default 10; all if fewer).
    pub top: usize,
    /// Pruning during training (spec §2.12 applied early, default `None`: all kernels train
    /// to the end): after this many checkpoints only the `top` most probable kernels go on
    /// training. The others keep their model and their last `L*_i` (neither is retrained,
    /// as §2.12 says), so `q(g)` is still refitted over all `K`, and the cost of a later
    /// iteration is that of `top` kernels instead of `K`.
    pub prune_after: Option<usize>,
    /// The iteration of the first checkpoint (default `None`: all `checkpoints` evenly
    /// spaced). With `Some(t₁)` the first stage is `t₁` iterations and the remaining
    /// `checkpoints − 1` are evenly spaced over the rest; with `prune_after = Some(1)` the
    /// whole space trains for a short first stage and only the `top` kernels after it.
    pub first_checkpoint: Option<usize>,
    /// Point mode with natural gradients: the rows of the pass that ends each stage by setting
    /// every `q(u_i)` to its optimum for the hyperparameters reached (default `None`: every
    /// row, exact). `Some(r)`: a seeded uniform subset of `r` rows per stage, the same for all
    /// kernels, scaled by `n/r` — that pass costs `M²` per row and kernel, as much as
    /// `n/B` minibatch steps' worth of data products on a long series.
    pub final_q_rows: Option<usize>,
    /// Point-estimate or full-θ hyperparameters (default point).
    pub mode: VbksMode,
    /// Full-θ mode: hyperparameter samples `S_eval` of every `L*_i` estimate (default 16; the
    /// same draws for every checkpoint, spec §2.14).
    pub eval_samples: usize,
    /// Full-θ mode: hyperparameter samples `S_pred` of each kept kernel's predictive (default
    /// 256, spec §2.11); the model average holds one sparse GP per sample.
    pub predict_samples: usize,
    /// How training settles over its last stretch: a decaying learning rate and (full-θ
    /// mode) iterate averaging (default `None`: the spec's constant-rate Adam, §2.8; see
    /// [`Settle`]).
    pub settle: Option<Settle>,
    /// Full-θ mode: `θ`-draws per training step, `S_train` (default 1, spec §2.7).
    pub theta_samples: usize,
    /// How each PER factor's period starts (default [`PeriodInit::Data`]: the training
    /// series' periodogram peaks when there is one input column; [`PeriodInit::Unit`] is the
    /// spec's 1, §3.6).
    pub period_init: PeriodInit,
    /// [`PeriodInit::Data`]: the significance level a periodogram peak must reach to be an
    /// initial period (default [`DEFAULT_PERIOD_ALPHA`] = 0.01; in (0, 1)).
    pub period_alpha: f64,
    /// The master seed: inducing inputs, minibatches, evaluation subset and `q(g)` have their
    /// own streams derived from it.
    pub seed: u64,
}

/// How VBKS treats each kernel's hyperparameters (spec §2.13, §4.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VbksMode {
    /// Point estimates (type-II ML, `C_θ = 0`): each `L_i` is the SVGP ELBO.
    #[default]
    Point,
    /// A Gaussian `q(θ_i)` over the log-hyperparameters with prior `N(0, I)`; `L_i` includes
    /// `−KL(q(θ_i) ‖ p(θ_i))` (spec §2.6), which penalises hyperparameters the data do not
    /// pin down.
    Full,
}

impl std::str::FromStr for VbksMode {
    type Err = SelectionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "point" => Ok(VbksMode::Point),
            "full" => Ok(VbksMode::Full),
            other => Err(SelectionError::Invalid(format!(
                "mode: expected point or full, got '{other}'"
            ))),
        }
    }
}

impl Default for VbksConfig {
    fn default() -> Self {
        VbksConfig {
            inducing: 100,
            batch_size: 128,
            iterations: 1000,
            checkpoints: 10,
            lr: 0.01,
            natural_gradients: true,
            noise: 0.1,
            eval_size: 10_000,
            belief: BeliefConfig::default(),
            top: 10,
            prune_after: None,
            first_checkpoint: None,
            final_q_rows: None,
            mode: VbksMode::Point,
            eval_samples: 16,
            predict_samples: 256,
            settle: None,
            theta_samples: 1,
            period_init: PeriodInit::Data,
            period_alpha: DEFAULT_PERIOD_ALPHA,
            seed: 0,
        }
    }
}

/// The state of a run at a checkpoint (what the progress display and Fig. 2 show).
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    /// Iterations done so far.
    pub iteration: usize,
    /// The share of the data used so far, `t·B/n` (may exceed 1 after one pass).
    pub data_fraction: f64,
    /// Seconds spent training the kernels so far (checkpoint work excluded).
    pub train_seconds: f64,
    /// The local ELBO estimates `L*_i` (`−∞` for a failed kernel).
    pub local_elbos: Vec<f64>,
    /// The kernel posterior `q(k)`.
    pub probabilities: Vec<f64>,
    /// The full ELBO (8) estimated at the refitted `q(g)`.
    pub elbo: f64,
}

/// Independent streams of the master seed (spec §7.11).
pub(super) fn stream(seed: u64, tag: u64) -> u64 {
    // SplitMix64's finaliser: distinct tags give unrelated seeds.
    let mut z = seed ^ tag.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const INDUCING_STREAM: u64 = 1;
const EVAL_STREAM: u64 = 2;
const BELIEF_STREAM: u64 = 3;
const BATCH_STREAM: u64 = 4;
const RANDOM_STREAM: u64 = 5;
const THETA_STREAM: u64 = 6;
const EVAL_THETA_STREAM: u64 = 7;
const PREDICT_STREAM: u64 = 8;
const Q_U_STREAM: u64 = 9;
const FINAL_Q_STREAM: u64 = 10;
/// The BO baseline's initial designs and fallback draws (`kernel_bo`).
pub(super) const BO_DESIGN_STREAM: u64 = 11;
/// The BO baseline's 200-row subset of the kernel distances.
pub(super) const BO_SUBSET_STREAM: u64 = 12;
/// The BO baseline's hyperparameter draws of the kernel distances.
pub(super) const BO_THETA_STREAM: u64 = 13;

/// Inputs closer to the origin than this are never inducing inputs (spec §7.3).
const ORIGIN_GUARD: f64 = 1e-8;

/// A fitted VBKS run: every candidate's SVGP, the local ELBOs, `q(g)`, `q(k)`, the history of
/// checkpoints, and the model average over the top kernels.
#[derive(Clone, Debug)]
pub struct Vbks {
    space: KernelSpace,
    models: Vec<Option<Svgp>>,
    full: Vec<Option<FullTheta>>,
    mode: VbksMode,
    predict_samples: usize,
    seed: u64,
    failures: Vec<Option<String>>,
    belief: KernelBelief,
    history: Vec<Checkpoint>,
    top: Vec<usize>,
    top_weights: Vec<f64>,
    periods: InitialPeriods,
}

impl Vbks {
    /// Runs VBKS on inputs `x` (n×d) and targets `y` (both already standardised as the spec
    /// asks, §3.6) over the candidate `space`; `observe` is called at every checkpoint.
    ///
    /// # Errors
    /// [`SelectionError::Invalid`] for bad data or settings (naming which), or when every
    /// kernel fails; [`SelectionError::Model`] for an SVGP error that is not a factorisation
    /// failure of one kernel.
    pub fn fit(
        x: MatRef<'_, f64>,
        y: &[f64],
        space: &KernelSpace,
        config: &VbksConfig,
        observe: &mut dyn FnMut(&Checkpoint),
    ) -> Result<Vbks, SelectionError> {
        check_training_data(x, y)?;
        check_config(config, x.nrows())?;
        let n = x.nrows();
        let z = inducing_inputs(x, config.inducing, config.seed)?;
        let eval = eval_rows(n, config.eval_size, config.seed);
        let k = space.len();
        let (kernels, periods) = initial_kernels(space, x, y, config)?;
        let mut models: Vec<Option<Svgp>> = vec![None; k];
        let mut full: Vec<Option<FullTheta>> = vec![None; k];
        let mut failures: Vec<Option<String>> = vec![None; k];
        let mut belief = KernelBelief::prior(k);
        let mut history: Vec<Checkpoint> = Vec::new();
        let mut train_seconds = 0.0;
        let stages = stage_ends(
            config.iterations,
            config.checkpoints,
            config.first_checkpoint,
        );
        let mut done = 0;
        // Kernels still training (pruning freezes the others).
        let mut active = vec![true; k];
        let mut last_local: Option<Vec<f64>> = None;
        for (stage, &end) in stages.iter().enumerate() {
            if config.prune_after == Some(stage) {
                if let Some(last) = history.last() {
                    let keep = top_indices(&last.probabilities, config.top);
                    active = (0..k).map(|i| keep.contains(&i)).collect();
                }
            }
            // With at least one training kernel per core, each trains on one thread: the
            // cores are busy with kernels already, nested splitting only adds overhead.
            let busy = active.iter().filter(|a| **a).count() >= rayon::current_num_threads();
            let steps = end - done;
            let lr = match &config.settle {
                Some(s) => s.stage_lr(config.lr, (done, end), config.iterations),
                None => config.lr,
            };
            let average_from = config
                .settle
                .and_then(|s| s.average_from((done, end), config.iterations));
            let batch_seed = stream(stream(config.seed, BATCH_STREAM), stage as u64);
            let start = Instant::now();
            match config.mode {
                VbksMode::Point => {
                    let final_rows = final_q_rows(n, config, stage);
                    let final_rows = final_rows.as_deref();
                    let svgp = SvgpConfig {
                        likelihood: SvgpLikelihood::Gaussian,
                        inducing: z.nrows(),
                        init: InducingInit::Given(z.clone()),
                        learn_inducing: false,
                        batch_size: config.batch_size,
                        optimizer: Optimizer::adam_fixed_steps(steps, lr),
                        natural_gradients: config.natural_gradients,
                        // One minibatch stream per stage, the same for every kernel.
                        seed: batch_seed,
                    };
                    let trained: Vec<Result<Svgp, ModelError>> = (0..k)
                        .into_par_iter()
                        .map(|i| {
                            if failures[i].is_some() || !active[i] {
                                return Err(ModelError::Invalid(String::new()));
                            }
                            let mut quiet = |_: usize, _: f64| {};
                            let mut train = || match &models[i] {
                                None => Svgp::fit_with(
                                    (x, y),
                                    kernels[i].clone(),
                                    Mean::Zero,
                                    config.noise,
                                    &svgp,
                                    final_rows,
                                    &mut quiet,
                                ),
                                Some(m) => m.refine_with((x, y), &svgp, final_rows, &mut quiet),
                            };
                            if busy {
                                one_thread(train)
                            } else {
                                train()
                            }
                        })
                        .collect();
                    absorb(trained, &mut models, &mut failures, &active)?;
                }
                VbksMode::Full => {
                    let trained: Vec<Result<FullTheta, ModelError>> = (0..k)
                        .into_par_iter()
                        .map(|i| {
                            if failures[i].is_some() || !active[i] {
                                return Err(ModelError::Invalid(String::new()));
                            }
                            let eta_seed = stream(
                                stream(stream(config.seed, THETA_STREAM), stage as u64),
                                kernel_tag(space, i),
                            );
                            let train = || -> Result<FullTheta, ModelError> {
                                let from = match &full[i] {
                                    Some(f) => f.clone(),
                                    None => {
                                        let mut kernel = kernels[i].clone();
                                        kernel.initialize(x)?;
                                        FullTheta::new(kernel, z.clone(), config.noise)?
                                    }
                                };
                                let trained = from.train_stage(
                                    (x, y),
                                    &Stage {
                                        steps,
                                        lr,
                                        batch_size: config.batch_size,
                                        seeds: (batch_seed, eta_seed),
                                        average_from,
                                        theta_samples: config.theta_samples,
                                    },
                                )?;
                                if !config.natural_gradients {
                                    return Ok(trained);
                                }
                                // The stage ends at the exact optimum of q(u) for q(θ), as
                                // point mode's natural-gradient pass does for its θ.
                                let seed = stream(
                                    stream(stream(config.seed, Q_U_STREAM), stage as u64),
                                    kernel_tag(space, i),
                                );
                                let etas =
                                    standard_normals(config.eval_samples, trained.n_theta(), seed);
                                trained.with_optimal_q_u((x, y), &etas)
                            };
                            if busy {
                                one_thread(train)
                            } else {
                                train()
                            }
                        })
                        .collect();
                    absorb(trained, &mut full, &mut failures, &active)?;
                }
            }
            train_seconds += start.elapsed().as_secs_f64();
            let mut local = match config.mode {
                VbksMode::Point => local_elbos(&models, &active, x, y, &eval)?,
                VbksMode::Full => full_local_elbos(&full, &active, (x, y), &eval, (space, config)),
            };
            if let Some(last) = &last_local {
                // A frozen kernel keeps its last estimate (spec §2.12: not re-estimated).
                for i in (0..k).filter(|&i| !active[i]) {
                    local[i] = last[i];
                }
            }
            last_local = Some(local.clone());
            let seed_g = stream(stream(config.seed, BELIEF_STREAM), stage as u64);
            if stage == 0 {
                belief.refit(&local, config.belief.cold_steps, &config.belief, seed_g)?;
            } else {
                // F is multimodal: see `KernelBelief::refit_warm_or_cold`.
                belief.refit_warm_or_cold(&local, &config.belief, seed_g)?;
            }
            let probabilities =
                belief.probabilities(config.belief.posterior_samples, seed_g, Some(&local));
            let checkpoint = Checkpoint {
                iteration: end,
                data_fraction: (end * config.batch_size.min(n)) as f64 / n as f64,
                train_seconds,
                elbo: full_elbo(&belief, &local, &config.belief, seed_g),
                local_elbos: local,
                probabilities,
            };
            observe(&checkpoint);
            history.push(checkpoint);
            done = end;
        }
        let last = history.last().expect("at least one checkpoint");
        let top = top_indices(&last.probabilities, config.top);
        let seed_g = stream(stream(config.seed, BELIEF_STREAM), u64::MAX);
        let top_weights = pruned_weights(&belief, &last.local_elbos, &top, &config.belief, seed_g)?;
        if config.mode == VbksMode::Full {
            // `models()` shows each kernel's sparse GP at the mean of q(θ).
            for (slot, f) in models.iter_mut().zip(&full) {
                *slot = match f {
                    Some(f) => Some(f.svgp_at(&vec![0.0; f.n_theta()])?),
                    None => None,
                };
            }
        }
        Ok(Vbks {
            space: space.clone(),
            models,
            full,
            mode: config.mode,
            predict_samples: config.predict_samples,
            seed: config.seed,
            failures,
            belief,
            history,
            top,
            top_weights,
            periods,
        })
    }

    /// The candidate space.
    pub fn space(&self) -> &KernelSpace {
        &self.space
    }

    /// How the PER factors' periods started (in the units of the inputs given to
    /// [`Vbks::fit`]), with the periodogram's peaks and their p-values.
    pub fn initial_periods(&self) -> &InitialPeriods {
        &self.periods
    }

    /// Every kernel's fitted SVGP (`None` for a kernel that failed); in full-θ mode the SVGP
    /// at the mean of `q(θ_i)`.
    pub fn models(&self) -> &[Option<Svgp>] {
        &self.models
    }

    /// Full-θ mode: every kernel's `q(u_i)`, `q(θ_i)` and noise (`None` for a failed kernel;
    /// all `None` in point mode).
    pub fn full_models(&self) -> &[Option<FullTheta>] {
        &self.full
    }

    /// The hyperparameter mode of the run.
    pub fn mode(&self) -> VbksMode {
        self.mode
    }

    /// Why each failed kernel failed (`None` for kernels that trained).
    pub fn failures(&self) -> &[Option<String>] {
        &self.failures
    }

    /// The final `q(g)`.
    pub fn belief(&self) -> &KernelBelief {
        &self.belief
    }

    /// Every checkpoint, in order.
    pub fn history(&self) -> &[Checkpoint] {
        &self.history
    }

    /// The final kernel posterior `q(k)` over the whole space.
    pub fn probabilities(&self) -> &[f64] {
        &self
            .history
            .last()
            .expect("a fitted run has checkpoints")
            .probabilities
    }

    /// The final local ELBO estimates `L*`.
    pub fn local_elbos(&self) -> &[f64] {
        &self
            .history
            .last()
            .expect("a fitted run has checkpoints")
            .local_elbos
    }

    /// The kept kernels (by decreasing `q(k)`) and their weights `q̃(k)` after pruning.
    pub fn top(&self) -> (&[usize], &[f64]) {
        (&self.top, &self.top_weights)
    }

    /// The model average over the kept kernels, weighted by `q̃(k)` (VBKS's prediction).
    ///
    /// # Errors
    /// Never for a fitted run (the kept kernels all trained); kept for a stable signature.
    pub fn mixture(&self) -> Result<Mixture, SelectionError> {
        self.mixture_of(&self.top, &self.top_weights)
    }

    /// The single most probable kernel with weight 1 (VBKS-s, spec §2.12).
    ///
    /// # Errors
    /// As for [`Vbks::mixture`].
    pub fn single_best(&self) -> Result<Mixture, SelectionError> {
        self.mixture_of(&self.top[..1], &[1.0])
    }

    fn mixture_of(&self, idx: &[usize], weights: &[f64]) -> Result<Mixture, SelectionError> {
        if self.mode == VbksMode::Full {
            return self.full_mixture_of(idx, weights);
        }
        let components = idx
            .iter()
            .zip(weights)
            .map(|(&i, &w)| {
                let model = self.models[i].clone().ok_or_else(|| {
                    SelectionError::Invalid(format!("kernel {} failed to train", i + 1))
                })?;
                Ok(Component {
                    structure: self.space.kernels()[i].clone(),
                    index: i,
                    weight: w,
                    model,
                })
            })
            .collect::<Result<Vec<_>, SelectionError>>()?;
        Ok(Mixture::new(components)?)
    }
}

impl Vbks {
    /// Full-θ mode's model average: each kernel's predictive is the equal-weight mixture over
    /// `S_pred` samples of `q(θ_i)` (the law of total variance of spec §2.11), so kernel `i`
    /// contributes `S_pred` components of weight `w_i / S_pred` (seeded per kernel).
    fn full_mixture_of(&self, idx: &[usize], weights: &[f64]) -> Result<Mixture, SelectionError> {
        let s = self.predict_samples.max(1);
        let mut components = Vec::with_capacity(idx.len() * s);
        for (&i, &w) in idx.iter().zip(weights) {
            let model = self.full[i].as_ref().ok_or_else(|| {
                SelectionError::Invalid(format!("kernel {} failed to train", i + 1))
            })?;
            let seed = stream(
                stream(self.seed, PREDICT_STREAM),
                kernel_tag(&self.space, i),
            );
            for eta in standard_normals(s, model.n_theta(), seed) {
                components.push(Component {
                    structure: self.space.kernels()[i].clone(),
                    index: i,
                    weight: w / s as f64,
                    model: model.svgp_at(&eta)?,
                });
            }
        }
        Ok(Mixture::new(components)?)
    }
}

/// A kernel's own random stream tag (spec §7.11): derived from its canonical structure (FNV-1a),
/// not its position, so a kernel draws the same numbers in any candidate space (T3 holds in
/// full-θ mode too).
fn kernel_tag(space: &KernelSpace, i: usize) -> u64 {
    space.kernels()[i]
        .to_string()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// Every kernel of `space` at VBKS's initial hyperparameters on inputs `x` (n×d): the same
/// periods for every kernel, its j-th PER factor starting at the j-th peak of the series
/// `(x, y)` ([`initial_periods`] under `config`'s rule and level), so a kernel starts alike in
/// any candidate space (spec T3); and those periods.
pub(super) fn initial_kernels(
    space: &KernelSpace,
    x: MatRef<'_, f64>,
    y: &[f64],
    config: &VbksConfig,
) -> Result<(Vec<Kernel>, InitialPeriods), SelectionError> {
    let most = space.kernels().iter().map(|s| s.period_count()).max();
    let periods = initial_periods(
        config.period_init,
        x,
        y,
        most.unwrap_or(0),
        config.period_alpha,
    );
    let starts = periods.periods();
    let kernels = space
        .kernels()
        .iter()
        .map(|s| s.instantiate_with_periods(x.ncols(), &starts))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((kernels, periods))
}

/// Moves each trained kernel's result into its slot; a kernel's numerical failure excludes it
/// (recorded in `failures`), any other error ends the run. Inactive or failed kernels are
/// skipped.
fn absorb<T>(
    trained: Vec<Result<T, ModelError>>,
    slots: &mut [Option<T>],
    failures: &mut [Option<String>],
    active: &[bool],
) -> Result<(), SelectionError> {
    for (i, result) in trained.into_iter().enumerate() {
        if failures[i].is_some() || !active[i] {
            continue;
        }
        match result {
            Ok(m) => slots[i] = Some(m),
            Err(e) if is_kernel_failure(&e) => {
                failures[i] = Some(e.to_string());
                slots[i] = None;
            }
            Err(e) => return Err(SelectionError::Model(e)),
        }
    }
    Ok(())
}

/// Full-θ mode's `L*_i` (spec §4.1 `EstimateLocalELBO`): `S_eval` fixed draws per kernel
/// (the same at every checkpoint), on the shared evaluation subset. A kernel whose estimate
/// fails numerically gets `−∞`; inactive kernels NaN (the caller fills them in).
fn full_local_elbos(
    full: &[Option<FullTheta>],
    active: &[bool],
    data: (MatRef<'_, f64>, &[f64]),
    eval: &Option<Vec<usize>>,
    (space, config): (&KernelSpace, &VbksConfig),
) -> Vec<f64> {
    full.par_iter()
        .zip(active)
        .enumerate()
        .map(|(i, (f, &a))| match f {
            _ if !a => f64::NAN,
            None => f64::NEG_INFINITY,
            Some(f) => {
                let seed = stream(stream(config.seed, EVAL_THETA_STREAM), kernel_tag(space, i));
                let etas = standard_normals(config.eval_samples, f.n_theta(), seed);
                match f.local_elbo(data, eval.as_deref(), &etas) {
                    Ok(v) if v.is_finite() => v,
                    _ => f64::NEG_INFINITY,
                }
            }
        })
        .collect()
}

/// The Random baseline (VBKS paper §6.2): one kernel drawn uniformly from `space` with the
/// seed, trained alone as a single-kernel sparse GP with VBKS's settings. Returns the kernel's
/// index and the run.
///
/// # Errors
/// As for [`Vbks::fit`].
pub fn random_baseline(
    x: MatRef<'_, f64>,
    y: &[f64],
    space: &KernelSpace,
    config: &VbksConfig,
) -> Result<(usize, Vbks), SelectionError> {
    let mut rng = StdRng::seed_from_u64(stream(config.seed, RANDOM_STREAM));
    let i = sample(&mut rng, space.len(), 1).index(0);
    let single = KernelSpace::new(vec![space.kernels()[i].clone()])?;
    let run = Vbks::fit(x, y, &single, config, &mut |_| {})?;
    Ok((i, run))
}

pub(super) fn check_config(config: &VbksConfig, n: usize) -> Result<(), SelectionError> {
    let bad = |what: String| Err(SelectionError::Invalid(what));
    if config.inducing == 0 || config.inducing > n {
        return bad(format!(
            "inducing: expected between 1 and the number of training rows ({n}), got {}",
            config.inducing
        ));
    }
    if config.batch_size == 0 {
        return bad("batch size: expected at least 1, got 0".into());
    }
    if config.iterations == 0 {
        return bad("iterations: expected at least 1, got 0".into());
    }
    if config.checkpoints == 0 {
        return bad("checkpoints: expected at least 1, got 0".into());
    }
    if !(config.lr.is_finite() && config.lr > 0.0) {
        return bad(format!(
            "learning rate: expected a positive number, got {}",
            config.lr
        ));
    }
    if !(config.noise.is_finite() && config.noise > 0.0) {
        return bad(format!(
            "initial noise: expected a positive variance, got {}",
            config.noise
        ));
    }
    if config.mode == VbksMode::Full && (config.eval_samples == 0 || config.predict_samples == 0) {
        return bad(format!(
            "full-θ mode: expected at least one hyperparameter sample for the local ELBOs and \
             for prediction, got {} and {}",
            config.eval_samples, config.predict_samples
        ));
    }
    if config.mode == VbksMode::Full && config.theta_samples == 0 {
        return bad("θ-samples per step: expected at least 1, got 0".into());
    }
    if let Some(s) = &config.settle {
        s.validate().map_err(SelectionError::Invalid)?;
        if s.average && config.mode == VbksMode::Point {
            return bad(
                "settle: iterate averaging needs full-θ mode (point mode's sparse GPs keep \
                 their own optimiser state); use average = false with mode point"
                    .into(),
            );
        }
    }
    if !(config.period_alpha > 0.0 && config.period_alpha < 1.0) {
        return bad(format!(
            "period alpha: expected a significance level in (0, 1), got {}",
            config.period_alpha
        ));
    }
    if config.eval_size == 0 {
        return bad("evaluation subset: expected at least 1 row, got 0".into());
    }
    if config.top == 0 {
        return bad("top: expected at least 1 kernel to average, got 0".into());
    }
    if let Some(t1) = config.first_checkpoint {
        if t1 == 0 || t1 >= config.iterations {
            return bad(format!(
                "first checkpoint: expected an iteration between 1 and the iterations - 1 ({}), \
                 got {t1}",
                config.iterations.saturating_sub(1)
            ));
        }
        if config.checkpoints < 2 {
            return bad(format!(
                "first checkpoint: needs at least 2 checkpoints (the last ends the run), got {}",
                config.checkpoints
            ));
        }
    }
    if config.final_q_rows == Some(0) {
        return bad("final q rows: expected at least 1 row, got 0".into());
    }
    if config.final_q_rows.is_some() && config.mode == VbksMode::Full {
        return bad(
            "final q rows: only point mode ends its stages with a natural-gradient pass; \
             full-θ mode's closing q(u) update reads every row"
                .into(),
        );
    }
    if config.prune_after == Some(0) {
        return bad(
            "prune after: expected at least 1 checkpoint before pruning (q(k) must exist), \
             got 0"
                .into(),
        );
    }
    let b = &config.belief;
    if !(b.lr.is_finite() && b.lr > 0.0) || b.samples == 0 || b.posterior_samples == 0 {
        return bad("kernel belief: expected a positive learning rate and sample counts".into());
    }
    Ok(())
}

/// The iteration at which each stage ends: `checkpoints` evenly spaced ends, the last `T`
/// (fewer when `T < checkpoints`); with a `first` checkpoint `t₁ < T`, `t₁` and then
/// `checkpoints − 1` evenly spaced ends over `(t₁, T]`.
fn stage_ends(iterations: usize, checkpoints: usize, first: Option<usize>) -> Vec<usize> {
    let (start, c) = match first {
        Some(t1) if checkpoints > 1 && t1 < iterations => (t1, checkpoints - 1),
        _ => (0, checkpoints),
    };
    let rest = iterations - start;
    let c = c.min(rest);
    let mut ends: Vec<usize> = (start > 0).then_some(start).into_iter().collect();
    ends.extend((1..=c).map(|s| start + s * rest / c));
    ends.dedup();
    ends
}

/// The rows of stage `stage`'s closing natural-gradient pass (`None`: all rows).
fn final_q_rows(n: usize, config: &VbksConfig, stage: usize) -> Option<Vec<usize>> {
    let r = config.final_q_rows?;
    if r >= n {
        return None;
    }
    let seed = stream(stream(config.seed, FINAL_Q_STREAM), stage as u64);
    let mut rows = sample(&mut StdRng::seed_from_u64(seed), n, r).into_vec();
    rows.sort_unstable();
    Some(rows)
}

/// `m` inducing inputs drawn uniformly without replacement from the rows of `x` that are not
/// at the origin (seeded), in the order drawn.
fn inducing_inputs(x: MatRef<'_, f64>, m: usize, seed: u64) -> Result<Mat<f64>, SelectionError> {
    let eligible: Vec<usize> = (0..x.nrows())
        .filter(|&i| {
            (0..x.ncols())
                .map(|j| x[(i, j)].powi(2))
                .sum::<f64>()
                .sqrt()
                >= ORIGIN_GUARD
        })
        .collect();
    if eligible.len() < m {
        return Err(SelectionError::Invalid(format!(
            "inducing: {m} inducing inputs asked for, but only {} training inputs are away from \
             the origin",
            eligible.len()
        )));
    }
    let mut rng = StdRng::seed_from_u64(stream(seed, INDUCING_STREAM));
    let picked = sample(&mut rng, eligible.len(), m);
    Ok(Mat::from_fn(m, x.ncols(), |a, j| {
        x[(eligible[picked.index(a)], j)]
    }))
}

/// The shared evaluation subset `E`: all rows when `n ≤ size`, else a seeded uniform subset.
fn eval_rows(n: usize, size: usize, seed: u64) -> Option<Vec<usize>> {
    if n <= size {
        return None;
    }
    let mut rng = StdRng::seed_from_u64(stream(seed, EVAL_STREAM));
    let mut rows = sample(&mut rng, n, size).into_vec();
    rows.sort_unstable();
    Some(rows)
}

/// `L*_i` of every active kernel on the evaluation subset (`−∞` for failed kernels, NaN for
/// inactive ones, which the caller fills in), in parallel.
fn local_elbos(
    models: &[Option<Svgp>],
    active: &[bool],
    x: MatRef<'_, f64>,
    y: &[f64],
    eval: &Option<Vec<usize>>,
) -> Result<Vec<f64>, SelectionError> {
    let values: Vec<Result<f64, ModelError>> = models
        .par_iter()
        .zip(active)
        .map(|(m, &a)| match m {
            _ if !a => Ok(f64::NAN),
            None => Ok(f64::NEG_INFINITY),
            Some(m) => match eval {
                None => m.elbo(x, y),
                Some(rows) => m.elbo_minibatch(x, y, rows),
            },
        })
        .collect();
    let values = values.into_iter().collect::<Result<Vec<_>, _>>()?;
    // A non-finite estimate (a kernel driven to a degenerate point) counts as a failure.
    Ok(values
        .into_iter()
        .zip(active)
        .map(|(v, &a)| {
            if v.is_finite() || !a {
                v
            } else {
                f64::NEG_INFINITY
            }
        })
        .collect())
}

/// The full ELBO (8) at `q(g)`: `E_q(g)[π·L*] − KL`, by Monte Carlo.
fn full_elbo(belief: &KernelBelief, l_star: &[f64], config: &BeliefConfig, seed: u64) -> f64 {
    let mut rng = StdRng::seed_from_u64(seed);
    let k = belief.len();
    let etas: Vec<Vec<f64>> = (0..config.samples.max(1))
        .map(|_| {
            (0..k)
                .map(|_| rand_distr::Distribution::sample(&rand_distr::StandardNormal, &mut rng))
                .collect()
        })
        .collect();
    belief.objective(l_star, &etas).0
}

/// The indices of the `top` largest probabilities (ties: lower index first), positive ones
/// only (at least one).
fn top_indices(q: &[f64], top: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..q.len()).collect();
    order.sort_by(|&a, &b| q[b].total_cmp(&q[a]).then(a.cmp(&b)));
    let positive = q.iter().filter(|v| **v > 0.0).count().max(1);
    order.truncate(top.min(positive));
    order
}

/// `q̃(k)` over the kept kernels: `q(g)` restricted to them, refitted warm against their `L*`
/// (spec §2.12), and eq. 13.
fn pruned_weights(
    belief: &KernelBelief,
    l_star: &[f64],
    top: &[usize],
    config: &BeliefConfig,
    seed: u64,
) -> Result<Vec<f64>, SelectionError> {
    if top.len() == 1 {
        return Ok(vec![1.0]);
    }
    let mut pruned = belief.restrict(top)?;
    let kept: Vec<f64> = top.iter().map(|&i| l_star[i]).collect();
    pruned.refit_warm_or_cold(&kept, config, seed)?;
    Ok(pruned.probabilities(config.posterior_samples, seed, Some(&kept)))
}

/// Whether an SVGP error is one kernel's numerical failure (excluded) rather than a problem of
/// the data or settings (reported).
fn is_kernel_failure(e: &ModelError) -> bool {
    matches!(
        e,
        ModelError::Linalg(_) | ModelError::Optim(_) | ModelError::Kernel(_)
    )
}
