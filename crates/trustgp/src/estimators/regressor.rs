//! A regression model as a user sees it: named inputs and targets in original units, the
//! standardiser, and the fitted model — one GP or RCGP per target, or one multi-output model
//! (MOGP, MO-RCGP) over all targets.
//!
//! The models themselves work on standardised data (by default); this layer converts on the
//! way in and out, so predictions are always in the units of the CSV.

use std::time::Instant;

use faer::{Mat, MatRef};

use super::defaults::{
    DEFAULT_EPSILON, DEFAULT_KERNEL, DEFAULT_MULTI_OUTPUT_EPSILON, DEFAULT_MULTI_OUTPUT_KERNEL,
    DEFAULT_MULTI_OUTPUT_ROBUST_TOLERANCE, DEFAULT_VBKS_BATCH, DEFAULT_VBKS_CHECKPOINTS,
    DEFAULT_VBKS_INDUCING, DEFAULT_VBKS_ITERATIONS, DEFAULT_VBKS_KERNELS,
    DEFAULT_VBKS_PREDICT_SAMPLES, DEFAULT_VBKS_TOP,
};
use super::kind::ModelKind;
use crate::data::{Dataset, Standardizer};
use crate::fit::{FitOptions, FitReport};
use crate::kernels::Kernel;
use crate::likelihoods::Likelihood;
use crate::means::Mean;
use crate::models::approximate::{ApproxModel, ApproxOptions};
use crate::models::exact::ExactGp;
use crate::models::hyper::GpHyper;
use crate::models::robust::multi_output::{MultiOutputConfig, MultiOutputKind, MultiOutputModel};
use crate::models::robust::{centred_weights, prior_centred_weights, RobustGp};
use crate::models::ModelError;
use crate::optim::LbfgsOptions;
use crate::posterior::{Marginals, Posterior};
use crate::selection::{KernelSpace, PeriodInit, SelectedModel, Vbks, VbksConfig, VbksMode};

/// What to fit: the checked options of [`super::ModelOptions::check`], with every default
/// filled in. Built directly (as the experiments do), it skips the option checks; the fit
/// still refuses values it cannot use.
#[derive(Clone, Debug)]
pub struct RegressorConfig {
    /// Model.
    pub model: ModelKind,
    /// Kernel expression (see [`Kernel::parse`]); for the multi-output models, one expression
    /// per LMC term separated by `;`. `None` = the model's default.
    pub kernel: Option<String>,
    /// Initial (or, without optimisation, fixed) noise variance in the model's units.
    pub noise: Option<f64>,
    /// Prior mean of the single-output models: `zero`, `constant` or `linear`.
    pub mean: String,
    /// Z-score inputs and targets with the training statistics.
    pub standardize: bool,
    /// Expected outlier fraction of the robust models: one value for all targets, or one per
    /// target. Empty = [`DEFAULT_EPSILON`] (rcgp) or [`DEFAULT_MULTI_OUTPUT_EPSILON`] (mo-rcgp).
    pub epsilon: Vec<f64>,
    /// MO-RCGP: centre the weights on the prior mean (`w_RCGP`) instead of the other outputs.
    pub naive_weight: bool,
    /// Multi-output: one noise variance shared by all outputs.
    pub shared_noise: bool,
    /// Multi-output: rank of the coregionalisation (default: the number of outputs).
    pub rank: Option<usize>,
    /// Optimiser settings and restarts (exact and robust conjugate models).
    pub fit: FitOptions,
    /// Settings of the approximate models (sgpr, svgp, rcsvgp, cagp, rcagp).
    pub approx: ApproxOptions,
    /// Given centres γ of the IMQ weights of rcgp and rcagp (single target), one per data row
    /// in the model's units (standardised when the regressor standardises), instead of the
    /// prior mean; the soft threshold is then the `(1 − ε)` order statistic of `|y − γ|`.
    /// `None` = the prior mean. Bayesian optimisation sets them
    /// (`sequential::bayes_opt::RobustCentre`).
    pub robust_centres: Option<Vec<f64>>,
    /// A fixed constant prior mean of rcgp, rcsvgp and rcagp (single target) in the model's
    /// units (standardised when the regressor standardises), held fixed instead of starting
    /// at (and, for a learned mean, moving from) the targets' mean; the IMQ weights are centred
    /// on it. `None` = the model's own mean. Bayesian optimisation's expert-guided mean
    /// (`rcagp.md` §2.12, `sequential::bayes_opt::ExpertPrior`) sets it.
    pub prior_mean: Option<f64>,
    /// Settings of kernel selection (vbks); its inducing points and minibatch size are
    /// `approx.inducing` and `approx.batch_size`, its seed `fit.seed`.
    pub vbks: VbksOptions,
}

/// Kernel selection's own options (vbks).
#[derive(Clone, Debug, PartialEq)]
pub struct VbksOptions {
    /// The candidate kernels: `k144`, `k12`, or expressions separated by `;`.
    pub kernels: String,
    /// Kernels kept for the model average.
    pub top: usize,
    /// Passes over the data; `None` = [`DEFAULT_VBKS_ITERATIONS`] iterations (at least one
    /// pass).
    pub epochs: Option<usize>,
    /// Point-estimate or full-θ hyperparameters.
    pub mode: VbksMode,
    /// Where the PER factors' periods start (default: the periodogram peaks, when the strongest
    /// is significant).
    pub period_init: PeriodInit,
}

impl Default for VbksOptions {
    fn default() -> Self {
        VbksOptions {
            kernels: DEFAULT_VBKS_KERNELS.into(),
            top: DEFAULT_VBKS_TOP,
            epochs: None,
            mode: VbksMode::Point,
            period_init: PeriodInit::Data,
        }
    }
}

impl VbksOptions {
    /// The VBKS settings for `n` training rows: inducing points and batch size as given (or
    /// the defaults), capped at `n`; iterations from the epochs.
    pub fn config(&self, n: usize, approx: &ApproxOptions, noise: f64, seed: u64) -> VbksConfig {
        let batch_size = approx
            .batch_size
            .unwrap_or(DEFAULT_VBKS_BATCH)
            .clamp(1, n.max(1));
        let per_epoch = n.div_ceil(batch_size).max(1);
        let iterations = match self.epochs {
            Some(e) => e.max(1) * per_epoch,
            None => DEFAULT_VBKS_ITERATIONS.max(per_epoch),
        };
        VbksConfig {
            inducing: approx.inducing.unwrap_or(DEFAULT_VBKS_INDUCING).min(n),
            batch_size,
            iterations,
            checkpoints: DEFAULT_VBKS_CHECKPOINTS,
            noise,
            top: self.top,
            mode: self.mode,
            period_init: self.period_init,
            predict_samples: DEFAULT_VBKS_PREDICT_SAMPLES,
            seed,
            ..VbksConfig::default()
        }
    }
}

impl Default for RegressorConfig {
    fn default() -> Self {
        RegressorConfig {
            model: ModelKind::Gp,
            kernel: None,
            noise: None,
            mean: "zero".into(),
            standardize: true,
            epsilon: Vec::new(),
            naive_weight: false,
            shared_noise: false,
            rank: None,
            fit: FitOptions::default(),
            approx: ApproxOptions::default(),
            robust_centres: None,
            prior_mean: None,
            vbks: VbksOptions::default(),
        }
    }
}

/// A single-output model.
#[derive(Clone, Debug)]
pub enum SingleOutput {
    /// Exact GP.
    Gp(ExactGp),
    /// Robust conjugate GP with its outlier fraction ε.
    Rcgp(RobustGp<Kernel, Mean>, f64),
    /// An approximate model with its outlier fraction ε (used by the robust ones only).
    Approx(ApproxModel, f64),
    /// A kernel selection (VBKS): a model average of per-kernel SVGPs.
    Vbks(Box<SelectedModel>),
}

impl SingleOutput {
    /// The kernel.
    pub fn kernel(&self) -> &Kernel {
        match self {
            SingleOutput::Gp(g) => &g.hyper().kernel,
            SingleOutput::Rcgp(g, _) => g.covariance(),
            SingleOutput::Approx(g, _) => g.kernel(),
            SingleOutput::Vbks(v) => v.mixture.components()[0].model.kernel(),
        }
    }

    /// The noise variance (for a Student-t SVGP, the variance of its likelihood).
    pub fn noise(&self) -> f64 {
        match self {
            SingleOutput::Gp(g) => g.hyper().noise,
            SingleOutput::Rcgp(g, _) => g.noise()[0],
            SingleOutput::Approx(g, _) => g.noise(),
            SingleOutput::Vbks(v) => v.noise(),
        }
    }

    /// The prior mean.
    pub fn mean(&self) -> Mean {
        match self {
            SingleOutput::Gp(g) => g.hyper().mean.clone(),
            SingleOutput::Rcgp(g, _) => g.posterior().mean().clone(),
            SingleOutput::Approx(g, _) => g.mean(),
            SingleOutput::Vbks(_) => Mean::Zero,
        }
    }

    /// Name and value of the training objective.
    pub fn objective(&self) -> (&'static str, f64) {
        match self {
            SingleOutput::Gp(g) => ("log_marginal_likelihood", g.lml()),
            SingleOutput::Rcgp(g, _) => ("weighted_loo_cv", g.objective()),
            SingleOutput::Approx(g, _) => g.objective(),
            SingleOutput::Vbks(v) => ("vbks_elbo", v.elbo),
        }
    }

    /// The jitter of the final factorisation.
    pub fn jitter(&self) -> f64 {
        match self {
            SingleOutput::Gp(g) => g.jitter(),
            SingleOutput::Rcgp(g, _) => g.posterior().cholesky().jitter(),
            SingleOutput::Approx(ApproxModel::Sparse(g), _) => g.jitter(),
            SingleOutput::Approx(ApproxModel::Rrp(g), _) => g.jitter(),
            SingleOutput::Approx(..) | SingleOutput::Vbks(_) => 0.0,
        }
    }

    /// The training inputs as the model saw them (none for SVGP, which keeps only its
    /// inducing inputs).
    pub fn x(&self) -> Option<MatRef<'_, f64>> {
        match self {
            SingleOutput::Gp(g) => Some(g.posterior().x()),
            SingleOutput::Rcgp(g, _) => Some(g.posterior().x()),
            SingleOutput::Approx(ApproxModel::Sparse(g), _) => Some(g.x()),
            SingleOutput::Approx(ApproxModel::Ca(g), _) => Some(g.x()),
            SingleOutput::Approx(ApproxModel::Rrp(g), _) => Some(g.x()),
            SingleOutput::Approx(ApproxModel::Svgp(..), _) | SingleOutput::Vbks(_) => None,
        }
    }

    /// Optimiser reports of the L-BFGS starts (exact and robust conjugate models).
    pub fn starts(&self) -> &[FitReport] {
        match self {
            SingleOutput::Gp(g) => g.starts(),
            SingleOutput::Rcgp(g, _) => g.starts(),
            SingleOutput::Approx(..) | SingleOutput::Vbks(_) => &[],
        }
    }

    /// What the user should know about the fit's kept optimiser run (see
    /// [`FitReport::warnings`]); nothing for a model that was not optimised.
    pub fn fit_warnings(&self) -> Vec<String> {
        let kept = match self {
            SingleOutput::Approx(g, _) => g.report(),
            SingleOutput::Vbks(_) => None,
            _ => crate::fit::best(self.starts()),
        };
        kept.map(FitReport::warnings).unwrap_or_default()
    }

    /// The latent posterior (in the model's units).
    pub fn posterior(&self) -> Result<&dyn Posterior, ModelError> {
        Ok(match self {
            SingleOutput::Gp(g) => g,
            SingleOutput::Rcgp(g, _) => g,
            SingleOutput::Approx(ApproxModel::Sparse(g), _) => g,
            SingleOutput::Approx(ApproxModel::Svgp(g, _), _) => g,
            SingleOutput::Approx(ApproxModel::Ca(g), _) => g,
            SingleOutput::Approx(ApproxModel::Rrp(g), _) => g,
            SingleOutput::Vbks(_) => {
                return Err(ModelError::Invalid(
                    "model 'vbks' is a mixture of sparse GPs, not one Gaussian posterior: use a \
                     single-kernel model here"
                        .into(),
                ))
            }
        })
    }

    /// Latent marginals at standardised inputs `xs`.
    fn latent(&self, xs: MatRef<'_, f64>) -> Result<Marginals, ModelError> {
        match self {
            SingleOutput::Gp(g) => g.predict(xs, true),
            SingleOutput::Rcgp(g, _) => Ok(g.predict(xs, true, &vec![0; xs.nrows()])),
            SingleOutput::Approx(g, _) => g.predict(xs),
            SingleOutput::Vbks(v) => v.mixture.predict(xs, true),
        }
    }

    /// The observation model of a new `y` (in the model's units): Gaussian with the noise
    /// variance σ² for the exact GP, RCGP (whose weights only shape the fit), SGPR, RCSVGP,
    /// CaGP and RCaGP; the SVGP's own likelihood (Gaussian or Student-t); for VBKS, Gaussian
    /// with the kept kernels' weighted mean noise variance, which gives the model average's
    /// predictive moments for `y` exactly (see [`SelectedModel::noise`]).
    ///
    /// # Errors
    /// If a loaded SVGP's likelihood parameters are out of their domain.
    pub fn likelihood(&self) -> Result<Box<dyn Likelihood>, ModelError> {
        match self {
            SingleOutput::Gp(g) => Ok(Box::new(g.likelihood())),
            SingleOutput::Rcgp(g, _) => Ok(Box::new(g.likelihood(0))),
            SingleOutput::Approx(g, _) => g.likelihood(),
            SingleOutput::Vbks(v) => crate::likelihoods::Gaussian::new(v.noise())
                .map(|g| Box::new(g) as Box<dyn Likelihood>)
                .map_err(|e| ModelError::Invalid(e.to_string())),
        }
    }
}

/// One target's fitted model and the training rows it used.
#[derive(Clone, Debug)]
pub struct OutputGp {
    /// Target column name.
    pub target: String,
    /// The fitted model (on standardised data when standardisation is on).
    pub gp: SingleOutput,
    /// Rows of the training data whose target was missing and which this output therefore
    /// did not use (0-based data rows).
    pub missing_rows: Vec<usize>,
}

/// The fitted model(s).
#[derive(Clone, Debug)]
pub enum Fitted {
    /// One model per target.
    PerTarget(Vec<OutputGp>),
    /// One multi-output model over all targets, with its outlier fractions (robust models).
    Joint(Box<MultiOutputModel>, Vec<f64>),
}

/// Predictions of one output in original units.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputPrediction {
    /// Target column name.
    pub target: String,
    /// Predictive mean.
    pub mean: Vec<f64>,
    /// Predictive standard deviation (of a new noisy observation unless latent was asked for).
    pub std: Vec<f64>,
}

/// A fitted regression model: standardiser plus the fitted model(s).
#[derive(Clone, Debug)]
pub struct Regressor {
    /// Input column names, in model order.
    pub inputs: Vec<String>,
    /// Target column names.
    pub targets: Vec<String>,
    /// The standardiser (identity if standardisation was off).
    pub standardizer: Standardizer,
    /// The fitted model(s).
    pub fitted: Fitted,
    /// Wall-clock seconds the fit took.
    pub fit_seconds: f64,
    /// Things the user should know about the fit (e.g. constant columns left unscaled).
    pub warnings: Vec<String>,
}

/// The optimiser settings of an MO-RCGP fit: `fit`, with the stopping tolerances set to
/// [`DEFAULT_MULTI_OUTPUT_ROBUST_TOLERANCE`] if both are still L-BFGS's defaults (a caller who
/// sets either keeps their own).
fn robust_multi_output_fit(fit: &FitOptions) -> FitOptions {
    let mut fit = fit.clone();
    let default = LbfgsOptions::default();
    if fit.lbfgs.f_rel_tol == default.f_rel_tol && fit.lbfgs.grad_tol == default.grad_tol {
        fit.lbfgs.f_rel_tol = DEFAULT_MULTI_OUTPUT_ROBUST_TOLERANCE;
        fit.lbfgs.grad_tol = DEFAULT_MULTI_OUTPUT_ROBUST_TOLERANCE;
    }
    fit
}

/// The outlier fraction of each of `t` targets from the user's list (empty: `default`; one
/// value: for every target).
fn epsilons(given: &[f64], t: usize, default: f64) -> Result<Vec<f64>, ModelError> {
    let eps = match given.len() {
        0 => vec![default; t],
        1 => vec![given[0]; t],
        n if n == t => given.to_vec(),
        n => {
            return Err(ModelError::Invalid(format!(
                "{n} epsilon values for {t} targets (give one, or one per target)"
            )))
        }
    };
    if let Some(e) = eps.iter().find(|e| !(0.0..1.0).contains(*e)) {
        return Err(ModelError::Invalid(format!(
            "epsilon {e} is not an outlier fraction in [0, 1)"
        )));
    }
    Ok(eps)
}

impl Regressor {
    /// Fit the configured model to the targets of `data`.
    pub fn fit(data: &Dataset, cfg: &RegressorConfig) -> Result<Regressor, ModelError> {
        Self::fit_observed(data, cfg, &mut |_, _, _| {})
    }

    /// [`Regressor::fit`], calling `observe(target, evaluation, objective)` after every
    /// objective evaluation of the approximate models (for a progress display).
    pub fn fit_observed(
        data: &Dataset,
        cfg: &RegressorConfig,
        observe: &mut dyn FnMut(usize, usize, f64),
    ) -> Result<Regressor, ModelError> {
        Self::fit_reporting(data, cfg, observe, &mut |_| {})
    }

    /// [`Regressor::fit_observed`], also calling `status(text)` with a line on the state of
    /// the fit where a model has more to say than its objective (vbks: the leading kernels
    /// and their probabilities at every checkpoint).
    pub fn fit_reporting(
        data: &Dataset,
        cfg: &RegressorConfig,
        observe: &mut dyn FnMut(usize, usize, f64),
        status: &mut dyn FnMut(&str),
    ) -> Result<Regressor, ModelError> {
        let start = Instant::now();
        cfg.check_robust_centres(data)
            .and_then(|()| cfg.check_prior_mean(data))
            .map_err(|e| ModelError::Invalid(e.to_string()))?;
        let (standardizer, mut warnings) = if cfg.standardize {
            let (st, constant) = Standardizer::fit(data.x.as_ref(), data.y.as_ref())?;
            (st, constant.warnings(&data.input_names, &data.target_names))
        } else {
            (
                Standardizer::identity(data.d(), data.n_targets()),
                Vec::new(),
            )
        };
        let xs = standardizer.transform_x(data.x.as_ref());
        let ys = standardizer.transform_y(data.y.as_ref());
        let noise = cfg.initial_noise();
        if !(noise.is_finite() && noise > 0.0) {
            return Err(ModelError::Invalid(format!(
                "noise must be a positive variance, got {noise}"
            )));
        }
        let fitted = match cfg.model {
            ModelKind::Mogp | ModelKind::MoRcgp => {
                let t = data.n_targets();
                let epsilon = epsilons(&cfg.epsilon, t, DEFAULT_MULTI_OUTPUT_EPSILON)?;
                let expr = cfg.kernel.as_deref().unwrap_or(DEFAULT_MULTI_OUTPUT_KERNEL);
                let kernels = expr
                    .split(';')
                    .map(Kernel::parse)
                    .collect::<Result<Vec<_>, _>>()?;
                let kind = match (cfg.model, cfg.naive_weight) {
                    (ModelKind::Mogp, _) => MultiOutputKind::Mogp,
                    (_, false) => MultiOutputKind::MoRcgp,
                    (_, true) => MultiOutputKind::MoRcgpNaive,
                };
                let mo = MultiOutputConfig {
                    kind,
                    kernels,
                    rank: cfg.rank,
                    shared_noise: cfg.shared_noise,
                    noise,
                    epsilon: epsilon.clone(),
                    mcd_support: None,
                    task_means: None,
                    fit: match kind {
                        MultiOutputKind::Mogp => cfg.fit.clone(),
                        _ => robust_multi_output_fit(&cfg.fit),
                    },
                };
                let model = MultiOutputModel::fit(xs.as_ref(), ys.as_ref(), &mo)?;
                if let Some(kept) = crate::fit::best(model.starts()) {
                    warnings.extend(kept.warnings());
                }
                let missing = (0..data.n())
                    .filter(|&i| (0..t).any(|k| !ys[(i, k)].is_finite()))
                    .count();
                if missing > 0 {
                    warnings.push(format!(
                        "{missing} row(s) miss some targets; the multi-output model used their \
                         observed targets only"
                    ));
                }
                Fitted::Joint(Box::new(model), epsilon)
            }
            _ => Fitted::PerTarget(fit_per_target(
                data,
                &xs,
                &ys,
                noise,
                cfg,
                &mut warnings,
                observe,
                status,
            )?),
        };
        Ok(Regressor {
            inputs: data.input_names.clone(),
            targets: data.target_names.clone(),
            standardizer,
            fitted,
            fit_seconds: start.elapsed().as_secs_f64(),
            warnings,
        })
    }

    /// The fitted model's kind.
    pub fn kind(&self) -> ModelKind {
        match &self.fitted {
            Fitted::PerTarget(o) => match o.first().map(|o| &o.gp) {
                Some(SingleOutput::Rcgp(..)) => ModelKind::Rcgp,
                Some(SingleOutput::Approx(g, _)) => ModelKind::of_approximate(g.kind()),
                Some(SingleOutput::Vbks(_)) => ModelKind::Vbks,
                _ => ModelKind::Gp,
            },
            Fitted::Joint(model, _) => match **model {
                MultiOutputModel::Mogp(_) => ModelKind::Mogp,
                MultiOutputModel::Robust(_) => ModelKind::MoRcgp,
            },
        }
    }

    /// The model's name (one of [`ModelKind::NAMES`]).
    pub fn model_name(&self) -> &'static str {
        self.kind().name()
    }

    /// The closed-form leave-one-out RMSE of each exact-GP output on its training targets (in
    /// the model's, i.e. standardised, units); `None` unless the model is `gp`.
    pub fn exact_loo_rmse(&self) -> Option<Vec<f64>> {
        self.outputs()
            .iter()
            .map(|o| match &o.gp {
                SingleOutput::Gp(g) => {
                    let (y, loo) = (g.y(), g.loo());
                    let sse: f64 = y.iter().zip(&loo.mean).map(|(a, b)| (a - b).powi(2)).sum();
                    Some((sse / y.len() as f64).sqrt())
                }
                _ => None,
            })
            .collect::<Option<Vec<f64>>>()
            .filter(|v| !v.is_empty())
    }

    /// The per-target models (empty for a multi-output model).
    pub fn outputs(&self) -> &[OutputGp] {
        match &self.fitted {
            Fitted::PerTarget(o) => o,
            Fitted::Joint(..) => &[],
        }
    }

    /// The observation model of each output, in the model's (standardised) units: predicting
    /// `y` is `likelihoods()[t].predict_marginals(latent marginals)`.
    ///
    /// # Errors
    /// If a loaded SVGP's likelihood parameters are out of their domain.
    pub fn likelihoods(&self) -> Result<Vec<Box<dyn Likelihood>>, ModelError> {
        match &self.fitted {
            Fitted::PerTarget(outputs) => outputs.iter().map(|o| o.gp.likelihood()).collect(),
            Fitted::Joint(model, _) => Ok(model
                .likelihoods()
                .into_iter()
                .map(|l| Box::new(l) as Box<dyn Likelihood>)
                .collect()),
        }
    }

    /// Raw test inputs `x` checked (one column per input, every entry finite) and
    /// standardised.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] naming the width expected, or the first non-finite entry.
    pub fn standardized_inputs(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>, ModelError> {
        if x.ncols() != self.inputs.len() {
            return Err(ModelError::Invalid(format!(
                "expected {} input columns ({}), got {}",
                self.inputs.len(),
                self.inputs.join(", "),
                x.ncols()
            )));
        }
        if let Some((i, j)) = (0..x.nrows())
            .flat_map(|i| (0..x.ncols()).map(move |j| (i, j)))
            .find(|&(i, j)| !x[(i, j)].is_finite())
        {
            return Err(ModelError::Invalid(format!(
                "test input row {i}, column '{}' is {} (expected a finite number)",
                self.inputs[j],
                x[(i, j)]
            )));
        }
        Ok(self.standardizer.transform_x(x))
    }

    /// Predict every output at raw (original-unit) inputs `x`, whose columns are in the order
    /// of [`Regressor::inputs`].
    pub fn predict(
        &self,
        x: MatRef<'_, f64>,
        latent: bool,
    ) -> Result<Vec<OutputPrediction>, ModelError> {
        let xs = self.standardized_inputs(x)?;
        let marginals: Vec<Marginals> = match &self.fitted {
            Fitted::PerTarget(outputs) => outputs
                .iter()
                .map(|o| o.gp.latent(xs.as_ref()))
                .collect::<Result<_, _>>()?,
            Fitted::Joint(model, _) => model.predict(xs.as_ref()),
        };
        let likelihoods = self.likelihoods()?;
        let marginals = marginals.into_iter().zip(&likelihoods).map(|(m, lik)| {
            if latent {
                m
            } else {
                lik.predict_marginals(&m)
            }
        });
        Ok(marginals
            .enumerate()
            .map(|(t, m)| OutputPrediction {
                target: self.targets[t].clone(),
                mean: m
                    .mean
                    .iter()
                    .map(|&v| self.standardizer.inverse_y_mean(t, v))
                    .collect(),
                std: m
                    .var
                    .iter()
                    .map(|&v| self.standardizer.inverse_y_std(t, v.sqrt()))
                    .collect(),
            })
            .collect())
    }
}

/// One exact GP or RCGP per target, each on the rows where its target is observed.
#[allow(clippy::too_many_arguments)]
fn fit_per_target(
    data: &Dataset,
    xs: &Mat<f64>,
    ys: &Mat<f64>,
    noise: f64,
    cfg: &RegressorConfig,
    warnings: &mut Vec<String>,
    observe: &mut dyn FnMut(usize, usize, f64),
    status: &mut dyn FnMut(&str),
) -> Result<Vec<OutputGp>, ModelError> {
    let kernel = Kernel::parse(cfg.kernel.as_deref().unwrap_or(DEFAULT_KERNEL))?;
    let epsilon = epsilons(&cfg.epsilon, data.n_targets(), DEFAULT_EPSILON)?;
    let mut outputs = Vec::with_capacity(data.n_targets());
    for (t, name) in data.target_names.iter().enumerate() {
        let (rows, missing_rows): (Vec<usize>, Vec<usize>) =
            (0..data.n()).partition(|&i| ys[(i, t)].is_finite());
        if rows.is_empty() {
            return Err(ModelError::Invalid(format!(
                "target '{name}' has no observed values"
            )));
        }
        let x = Mat::from_fn(rows.len(), data.d(), |i, j| xs[(rows[i], j)]);
        let y: Vec<f64> = rows.iter().map(|&i| ys[(i, t)]).collect();
        let mut mean = Mean::by_name(&cfg.mean, data.d())?;
        if let Mean::Constant { c } = &mut mean {
            *c = y.iter().sum::<f64>() / y.len() as f64;
        }
        if let Some(c) = cfg.prior_mean {
            mean = Mean::Constant { c };
        }
        let gp = match cfg.model {
            ModelKind::Vbks => {
                let selected =
                    fit_vbks(&x, &y, noise, cfg, &mut |i, f| observe(t, i, f), &mut |s| {
                        status(&format!("target '{name}': {s}"))
                    })?;
                let failed = selected.1;
                if failed > 0 {
                    warnings.push(format!(
                        "target '{name}': {failed} candidate kernel(s) failed to train (their \
                         kernel matrix could not be factorised) and have probability 0"
                    ));
                }
                SingleOutput::Vbks(Box::new(selected.0))
            }
            kind if kind.approximate().is_some() => {
                let mut k = kernel.clone();
                k.initialize(x.as_ref())?;
                let approx = kind.approximate().expect("checked by the guard");
                let mut opts = cfg.approx.clone();
                opts.fixed_mean |= cfg.prior_mean.is_some();
                if let Some(c) = &cfg.robust_centres {
                    opts.centres = Some(rows.iter().map(|&i| c[i]).collect());
                }
                let g = ApproxModel::fit(
                    approx,
                    x.as_ref(),
                    &y,
                    k,
                    mean,
                    noise,
                    epsilon[t],
                    &opts,
                    cfg.fit.seed,
                    &mut |i, f| observe(t, i, f),
                )?;
                SingleOutput::Approx(g, epsilon[t])
            }
            ModelKind::Rcgp => {
                let mut k = kernel.clone();
                k.initialize(x.as_ref())?;
                let prior = mean.eval(x.as_ref());
                let group = vec![0; y.len()];
                let w = match &cfg.robust_centres {
                    Some(c) => centred_weights(
                        &y,
                        rows.iter().map(|&i| c[i]).collect(),
                        &group,
                        &epsilon[t..=t],
                    )?,
                    None => prior_centred_weights(&y, &prior, &group, &epsilon[t..=t])?,
                };
                if !w.floored.is_empty() {
                    warnings.push(format!(
                        "target '{name}': the robust soft threshold hit its floor (many equal \
                         residuals); weights may be extreme"
                    ));
                }
                let fixed = w.clone();
                let gp = RobustGp::fit(
                    k,
                    mean,
                    x.as_ref(),
                    &y,
                    &group,
                    &[noise],
                    w,
                    |_, _| Ok(fixed.clone()),
                    &cfg.fit,
                )?;
                SingleOutput::Rcgp(gp, epsilon[t])
            }
            _ => {
                let init = GpHyper {
                    kernel: kernel.clone(),
                    mean,
                    noise,
                };
                SingleOutput::Gp(ExactGp::fit(x.as_ref(), &y, init, &cfg.fit)?)
            }
        };
        warnings.extend(
            gp.fit_warnings()
                .into_iter()
                .chain(cfg.approx.capped_at(x.nrows()))
                .map(|w| format!("target '{name}': {w}")),
        );
        if !missing_rows.is_empty() {
            warnings.push(format!(
                "target '{name}': {} row(s) with an empty cell were left out of its fit \
                 (0-based data rows {missing_rows:?})",
                missing_rows.len()
            ));
        }
        outputs.push(OutputGp {
            target: name.clone(),
            gp,
            missing_rows,
        });
    }
    Ok(outputs)
}

/// Runs VBKS on one target's (standardised) rows: the model average and the number of
/// candidate kernels that failed.
fn fit_vbks(
    x: &Mat<f64>,
    y: &[f64],
    noise: f64,
    cfg: &RegressorConfig,
    observe: &mut dyn FnMut(usize, f64),
    status: &mut dyn FnMut(&str),
) -> Result<(SelectedModel, usize), ModelError> {
    let space = KernelSpace::parse(&cfg.vbks.kernels)?;
    let config = cfg.vbks.config(x.nrows(), &cfg.approx, noise, cfg.fit.seed);
    let run = Vbks::fit(x.as_ref(), y, &space, &config, &mut |c| {
        observe(c.iteration, c.elbo);
        let mut order: Vec<usize> = (0..c.probabilities.len()).collect();
        order.sort_by(|&a, &b| c.probabilities[b].total_cmp(&c.probabilities[a]));
        let leaders: Vec<String> = order
            .iter()
            .take(3)
            .map(|&i| format!("{} {:.2}", space.kernels()[i], c.probabilities[i]))
            .collect();
        status(&format!(
            "iteration {}/{} ({:.1} passes over the data), leading kernels: {}",
            c.iteration,
            config.iterations,
            c.data_fraction,
            leaders.join(", ")
        ));
    })?;
    let failed = run.failures().iter().filter(|f| f.is_some()).count();
    Ok((SelectedModel::of(&run)?, failed))
}
