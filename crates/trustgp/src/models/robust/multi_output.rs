//! Fitting the multi-output models from an input matrix and a target matrix with missing
//! entries: the MOGP (log marginal likelihood) and MO-RCGP (two-step weighted LOO-CV), both on
//! an ICM/LMC kernel, as the MO-RCGP paper sets them up.
//!
//! Initialisation (spec §2.8): every coregionalisation starts from a robust estimate of the
//! covariance of the output rows (FastMCD on the complete rows, split evenly over the LMC
//! terms), the kernels from the data or the user's expression, the noise variances from the
//! user (default 0.1). The MO-RCGP weights are centred with that estimate while fitting and with
//! the fitted `B + Σ` afterwards.

use faer::{Mat, MatRef};

use super::mogp::MultiOutputGp;
use super::tasks::{all_outputs, TaskEntries};
use super::{conditional_weights, prior_centred_weights, RobustGp, RobustWeights};
use crate::fit::FitOptions;
use crate::fit::FitReport;
use crate::kernels::{Coregion, Covariance, Kernel, LmcTerm, MultiOutputKernel};
use crate::likelihoods::Gaussian;
use crate::means::{PriorMean, TaskMean};
use crate::models::ModelError;
use crate::posterior::Marginals;
use crate::robust::{fast_mcd, median_in_place, McdOptions};

/// Which multi-output model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MultiOutputKind {
    /// Gaussian likelihood, fitted by the log marginal likelihood.
    Mogp,
    /// MO-RCGP with the `w_MORCGP` weight (centred on the other outputs).
    MoRcgp,
    /// MO-RCGP with the naive `w_RCGP` weight (centred on the prior mean).
    MoRcgpNaive,
}

/// What to fit.
#[derive(Clone, Debug)]
pub struct MultiOutputConfig {
    /// Model.
    pub kind: MultiOutputKind,
    /// One kernel per LMC term (one: ICM), on the ordinary inputs.
    pub kernels: Vec<Kernel>,
    /// Rank of each coregionalisation (`None`: the number of outputs).
    pub rank: Option<usize>,
    /// One noise variance for all outputs instead of one each.
    pub shared_noise: bool,
    /// Initial noise variance.
    pub noise: f64,
    /// Expected outlier fraction per output (robust models).
    pub epsilon: Vec<f64>,
    /// FastMCD support fraction (`None`: clip(1 − Σε, 0.5, 1)).
    pub mcd_support: Option<f64>,
    /// Prior mean of each output (`None`: the mean of its observed values for MOGP, the
    /// FastMCD location of the output rows for MO-RCGP).
    pub task_means: Option<Vec<f64>>,
    /// Optimiser settings.
    pub fit: FitOptions,
}

/// A fitted multi-output model.
#[derive(Clone, Debug)]
pub enum MultiOutputModel {
    /// The Gaussian MOGP.
    Mogp(Box<MultiOutputGp<MultiOutputKernel, TaskMean>>),
    /// MO-RCGP (either weight).
    Robust(Box<RobustGp<MultiOutputKernel, TaskMean>>),
}

/// The covariance `C = K(x, x) + Σ` of one row of outputs at input `x0` (for a stationary
/// kernel, at every input).
fn row_covariance(
    k: &MultiOutputKernel,
    x0: MatRef<'_, f64>,
    noise: &[f64],
    shared: bool,
) -> Mat<f64> {
    let t = k.n_tasks();
    let rows = all_outputs(x0, t);
    let mut c = k.matrix(rows.as_ref());
    for i in 0..t {
        c[(i, i)] += noise[if shared { 0 } else { i }];
    }
    c
}

/// Everything a multi-output fit starts from: the task-indexed entries, the prior mean, the
/// robust row covariance, the initial kernel, noise groups and
/// noise variances. Public so that other multi-output likelihoods (the Student-t baseline) start
/// exactly where MOGP and MO-RCGP do.
#[derive(Clone, Debug)]
pub struct MultiOutputStart {
    /// The observed entries.
    pub entries: TaskEntries,
    /// Prior mean of each output.
    pub mean: TaskMean,
    /// FastMCD covariance of the complete output rows.
    pub row_covariance: Mat<f64>,
    /// The initial multi-output kernel.
    pub kernel: MultiOutputKernel,
    /// Noise group of each entry.
    pub group: Vec<usize>,
    /// Initial noise variance of each group.
    pub noise: Vec<f64>,
}

impl MultiOutputStart {
    /// The starting point for inputs `x` (N×d) and targets `y` (N×T, NaN = missing).
    pub fn new(
        x: MatRef<'_, f64>,
        y: MatRef<'_, f64>,
        cfg: &MultiOutputConfig,
    ) -> Result<MultiOutputStart, ModelError> {
        let t = y.ncols();
        let bad = |m: String| Err(ModelError::Invalid(m));
        if t == 0 || x.nrows() != y.nrows() {
            return bad(format!(
                "{} input rows and {} target rows with {t} outputs",
                x.nrows(),
                y.nrows()
            ));
        }
        if cfg.kernels.is_empty() {
            return bad("a multi-output model needs at least one kernel".into());
        }
        if cfg.kind != MultiOutputKind::Mogp && cfg.epsilon.len() != t {
            return bad(format!(
                "{} epsilon values for {t} outputs",
                cfg.epsilon.len()
            ));
        }
        let e = TaskEntries::new(x, y);
        for tt in 0..t {
            if !e.task.contains(&tt) {
                return bad(format!("output {tt} has no observed values"));
            }
        }
        // Prior mean: given, else each output's observed mean (MOGP) or the robust location
        // (MO-RCGP).
        if let Some(m) = &cfg.task_means {
            if m.len() != t || m.iter().any(|v| !v.is_finite()) {
                return bad(format!("expected {t} finite prior means, got {m:?}"));
            }
        }
        let means: Vec<f64> = (0..t)
            .map(|tt| {
                let v: Vec<f64> = (0..e.len())
                    .filter(|&j| e.task[j] == tt)
                    .map(|j| e.y[j])
                    .collect();
                v.iter().sum::<f64>() / v.len() as f64
            })
            .collect();
        let (location, c0) = robust_rows(&e, cfg)?;
        // The robust models centre on a robust location: the plain mean of outputs with
        // one-sided outliers is itself pulled towards them.
        let default_means = if cfg.kind == MultiOutputKind::Mogp {
            means
        } else {
            location
        };
        let mean = TaskMean(cfg.task_means.clone().unwrap_or(default_means));
        let q = cfg.kernels.len();
        let rank = cfg.rank.unwrap_or(t);
        let share = Mat::from_fn(t, t, |i, j| c0[(i, j)] / q as f64);
        let terms = cfg
            .kernels
            .iter()
            .map(|k| {
                let mut k = k.clone();
                // B carries the output scales; a kernel scale would only add a flat direction.
                k.fix_scale();
                k.initialize(x)?;
                Ok(LmcTerm {
                    kernel: k,
                    coregion: Coregion::from_covariance(share.as_ref(), rank)?,
                })
            })
            .collect::<Result<Vec<_>, ModelError>>()?;
        let cov = MultiOutputKernel::new(terms)?;
        cov.validate_inputs(e.x.as_ref())?;
        let group = e.noise_groups(cfg.shared_noise);
        let noise = vec![cfg.noise; if cfg.shared_noise { 1 } else { t }];
        Ok(MultiOutputStart {
            entries: e,
            mean,
            row_covariance: c0,
            kernel: cov,
            group,
            noise,
        })
    }
}

impl MultiOutputModel {
    /// Fit to inputs `x` (N×d) and targets `y` (N×T, NaN = missing).
    pub fn fit(
        x: MatRef<'_, f64>,
        y: MatRef<'_, f64>,
        cfg: &MultiOutputConfig,
    ) -> Result<MultiOutputModel, ModelError> {
        let MultiOutputStart {
            entries: e,
            mean,
            row_covariance: c0,
            kernel: cov,
            group,
            noise,
        } = MultiOutputStart::new(x, y, cfg)?;
        let prior = mean.eval(e.x.as_ref());
        let x0 = x.subrows(0, 1);
        match cfg.kind {
            MultiOutputKind::Mogp => Ok(MultiOutputModel::Mogp(Box::new(MultiOutputGp::fit(
                cov,
                mean,
                e.x.as_ref(),
                &e.y,
                &group,
                &noise,
                &cfg.fit,
            )?))),
            MultiOutputKind::MoRcgp => {
                let initial = conditional_weights(&e, &prior, c0.as_ref(), &cfg.epsilon)?;
                let reweight =
                    |k: &MultiOutputKernel, s: &[f64]| -> Result<RobustWeights, ModelError> {
                        let c = row_covariance(k, x0, s, cfg.shared_noise);
                        conditional_weights(&e, &prior, c.as_ref(), &cfg.epsilon)
                    };
                Ok(MultiOutputModel::Robust(Box::new(RobustGp::fit(
                    cov,
                    mean,
                    e.x.as_ref(),
                    &e.y,
                    &group,
                    &noise,
                    initial,
                    reweight,
                    &cfg.fit,
                )?)))
            }
            MultiOutputKind::MoRcgpNaive => {
                let initial = prior_centred_weights(&e.y, &prior, &e.task, &cfg.epsilon)?;
                let fixed = initial.clone();
                Ok(MultiOutputModel::Robust(Box::new(RobustGp::fit(
                    cov,
                    mean,
                    e.x.as_ref(),
                    &e.y,
                    &group,
                    &noise,
                    initial,
                    |_, _| Ok(fixed.clone()),
                    &cfg.fit,
                )?)))
            }
        }
    }

    /// Latent marginals of every output at the rows of `xs` (M×d): one [`Marginals`] per
    /// output. Those of new observations are `likelihoods()[t].predict_marginals(…)`.
    pub fn predict(&self, xs: MatRef<'_, f64>) -> Vec<Marginals> {
        let t = self.covariance().n_tasks();
        let m = xs.nrows();
        let xa = all_outputs(xs, t);
        let groups = vec![0; m * t];
        let all = match self {
            MultiOutputModel::Mogp(g) => g.predict(xa.as_ref(), true, &groups),
            MultiOutputModel::Robust(g) => g.predict(xa.as_ref(), true, &groups),
        };
        (0..t)
            .map(|tt| Marginals {
                mean: all.mean[tt * m..(tt + 1) * m].to_vec(),
                var: all.var[tt * m..(tt + 1) * m].to_vec(),
            })
            .collect()
    }

    /// The fitted multi-output kernel.
    pub fn covariance(&self) -> &MultiOutputKernel {
        match self {
            MultiOutputModel::Mogp(g) => g.covariance(),
            MultiOutputModel::Robust(g) => g.covariance(),
        }
    }

    /// The observation model of each output: Gaussian with that output's noise variance (the
    /// shared one under `shared_noise`).
    pub fn likelihoods(&self) -> Vec<Gaussian> {
        let t = self.covariance().n_tasks();
        let shared = self.noise().len() == 1;
        let fit = match self {
            MultiOutputModel::Mogp(g) => &***g,
            MultiOutputModel::Robust(g) => &***g,
        };
        (0..t)
            .map(|k| fit.likelihood(if shared { 0 } else { k }))
            .collect()
    }

    /// The fitted noise variances (one, or one per output).
    pub fn noise(&self) -> &[f64] {
        match self {
            MultiOutputModel::Mogp(g) => g.noise(),
            MultiOutputModel::Robust(g) => g.noise(),
        }
    }

    /// The optimiser's report of each start (empty if the hyperparameters were not fitted).
    pub fn starts(&self) -> &[FitReport] {
        match self {
            MultiOutputModel::Mogp(g) => g.starts(),
            MultiOutputModel::Robust(g) => g.starts(),
        }
    }

    /// The training objective's name and value.
    pub fn objective(&self) -> (&'static str, f64) {
        match self {
            MultiOutputModel::Mogp(g) => ("log_marginal_likelihood", g.lml()),
            MultiOutputModel::Robust(g) => ("weighted_loo_cv", g.objective()),
        }
    }
}

/// A robust location and covariance of the output rows: FastMCD on the complete rows, used to
/// initialise `B`, to centre the MO-RCGP weights while fitting and (robust models) as the prior
/// mean. Without enough complete rows for MCD, each output's median and squared scaled MAD
/// over its observed values (outputs then start uncorrelated).
fn robust_rows(
    e: &TaskEntries,
    cfg: &MultiOutputConfig,
) -> Result<(Vec<f64>, Mat<f64>), ModelError> {
    let y = e.to_matrix(&e.y);
    let t = y.ncols();
    let complete: Vec<usize> = (0..y.nrows())
        .filter(|&i| (0..t).all(|s| y[(i, s)].is_finite()))
        .collect();
    if complete.len() <= t + 1 {
        let (loc, var): (Vec<f64>, Vec<f64>) = (0..t)
            .map(|s| {
                let v: Vec<f64> = (0..y.nrows())
                    .map(|i| y[(i, s)])
                    .filter(|v| v.is_finite())
                    .collect();
                let mut v = v;
                let med = median_in_place(&mut v);
                let mut dev: Vec<f64> = v.iter().map(|x| (x - med).abs()).collect();
                let mad = median_in_place(&mut dev);
                let scale = 1.4826 * mad;
                (med, if scale > 0.0 { scale * scale } else { 1.0 })
            })
            .unzip();
        return Ok((
            loc,
            Mat::from_fn(t, t, |i, j| if i == j { var[i] } else { 0.0 }),
        ));
    }
    let z = Mat::from_fn(complete.len(), t, |i, s| y[(complete[i], s)]);
    let eps_sum: f64 = if cfg.kind == MultiOutputKind::Mogp {
        0.0
    } else {
        cfg.epsilon.iter().sum()
    };
    let support = cfg.mcd_support.unwrap_or((1.0 - eps_sum).clamp(0.5, 1.0));
    let est = fast_mcd(
        z.as_ref(),
        &McdOptions {
            support_fraction: support,
            seed: cfg.fit.seed,
            ..McdOptions::default()
        },
    )
    .map_err(|err| ModelError::Invalid(format!("robust output covariance: {err}")))?;
    Ok((est.location, est.covariance))
}
