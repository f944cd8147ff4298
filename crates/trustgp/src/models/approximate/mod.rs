//! The approximate single-output models behind one interface, as the regressor and the model
//! files use them: SGPR and RCSVGP ([`SparseGp`]), SVGP and Student-t SVGP ([`Svgp`]), CaGP and
//! RCaGP ([`CaGp`]), and SGPR with relevance pursuit ([`RelevancePursuit`]).

mod record;
mod robust_start;

use faer::{Mat, MatRef};

use super::computation_aware::{ActionKind, CaConfig, CaGp};
use super::inducing::InducingInit;
use super::relevance_pursuit::{RelevancePursuit, RrpConfig};
use super::sparse::{SparseConfig, SparseGp, SparseKind};
use super::svgp::{Svgp, SvgpConfig, SvgpLikelihood};
use super::ModelError;
use crate::fit::{FitReport, Optimizer};
use crate::kernels::Kernel;
use crate::likelihoods::{Gaussian, Likelihood};
use crate::means::Mean;
use crate::posterior::Marginals;

pub use record::ApproxRecord;
pub use robust_start::{robust_start, START_ROWS};

/// Which approximate model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApproxKind {
    /// Titsias' collapsed sparse GP.
    Sgpr,
    /// Stochastic variational GP.
    Svgp,
    /// Robust conjugate sparse GP (collapsed).
    Rcsvgp,
    /// Computation-aware GP.
    Cagp,
    /// Robust computation-aware GP.
    Rcagp,
    /// SGPR with relevance pursuit (sparse per-point extra noise).
    Rrp,
}

/// User settings of the approximate models; `None` = the model's default.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ApproxOptions {
    /// Inducing points (sgpr, svgp, rcsvgp, rrp).
    pub inducing: Option<usize>,
    /// Actions (cagp, rcagp).
    pub actions: Option<usize>,
    /// Block or inducing-point actions (cagp, rcagp).
    pub action_kind: ActionKind,
    /// SVGP with a Student-t likelihood instead of the Gaussian.
    pub student_t: bool,
    /// The optimiser (default: L-BFGS for the deterministic objectives, Adam for SVGP).
    pub optimizer: Option<Optimizer>,
    /// SVGP minibatch size.
    pub batch_size: Option<usize>,
    /// RCSVGP and RCaGP: train every hyperparameter from the user's start, the noise variance
    /// and the mean included, with β = 1 (the RCaGP paper), instead of trustgp's default of
    /// fixing both at an exact RCGP's estimate (see [`robust_start`]).
    pub free_noise: bool,
    /// Given inducing inputs (one row each, in the model's units: standardised when the
    /// regressor standardises), held fixed: the inducing inputs of sgpr, svgp and rcsvgp, or
    /// the `Z` of the dense actions `S = k(X, Z)` of cagp and rcagp (which then need
    /// [`ActionKind::Inducing`]). Their number replaces `inducing`/`actions`. DPP-BO chooses
    /// them (`sequential::bayes_opt`).
    pub inducing_inputs: Option<Mat<f64>>,
    /// RCaGP: given centres of the IMQ weights, one per training row in the model's units,
    /// instead of the prior mean (also those of the exact RCGP of [`robust_start`]). Bayesian
    /// optimisation sets them (`sequential::bayes_opt::RobustCentre`).
    pub centres: Option<Vec<f64>>,
    /// Hold the given constant prior mean fixed (rcsvgp, rcagp: the expert-guided mean of
    /// Bayesian optimisation): never trained, and cagp and rcagp start from it instead of the
    /// targets' mean, so their IMQ weights are centred on it.
    pub fixed_mean: bool,
}

impl ApproxOptions {
    /// What the fit on `n` rows does not use as asked: inducing points, actions and the batch
    /// size are capped at the number of training rows (more than `n` of them add nothing), and
    /// the user is told so rather than left to find it in the summary.
    pub fn capped_at(&self, n: usize) -> Vec<String> {
        [
            ("--inducing", "inducing points", self.inducing),
            ("--actions", "actions", self.actions),
            ("--batch-size", "rows per batch", self.batch_size),
        ]
        .into_iter()
        .filter_map(|(flag, what, asked)| {
            asked
                .filter(|&a| a > n)
                .map(|a| format!("{flag} {a}: only {n} training rows, so {n} {what} are used"))
        })
        .collect()
    }
}

/// A fitted approximate model.
#[derive(Clone, Debug)]
pub enum ApproxModel {
    /// SGPR or RCSVGP.
    Sparse(SparseGp),
    /// SVGP (Gaussian or Student-t likelihood) with its ELBO at the end of training (it keeps
    /// no training data, so the ELBO cannot be recomputed after loading).
    Svgp(Svgp, f64),
    /// CaGP or RCaGP.
    Ca(CaGp),
    /// SGPR with relevance pursuit.
    Rrp(RelevancePursuit),
}

/// Checks that a kernel has no `white` term, which would double the noise of the approximate
/// models (they own σ²) and break their streamed cross-covariances.
fn check_kernel(kernel: &Kernel) -> Result<(), ModelError> {
    if kernel.to_expr().contains("white") {
        return Err(ModelError::Invalid(
            "the approximate models carry the noise variance themselves: remove the 'white' \
             term from the kernel and use --noise"
                .into(),
        ));
    }
    Ok(())
}

/// Where [`ApproxOptions::inducing_inputs`] go: `(inducing init, learn the inducing inputs,
/// their number)` of `kind`, given its default number `m` and whether it learns them.
///
/// # Errors
/// Given inputs for RRP (whose inducing inputs are its own), or for block actions.
fn inducing_setup(
    kind: ApproxKind,
    opts: &ApproxOptions,
    default: (InducingInit, bool, usize),
) -> Result<(InducingInit, bool, usize), ModelError> {
    let Some(z) = &opts.inducing_inputs else {
        return Ok(default);
    };
    let given = (InducingInit::Given(z.clone()), false, z.nrows());
    match kind {
        ApproxKind::Sgpr | ApproxKind::Svgp | ApproxKind::Rcsvgp => Ok(given),
        ApproxKind::Cagp | ApproxKind::Rcagp if opts.action_kind == ActionKind::Inducing => {
            Ok(given)
        }
        ApproxKind::Cagp | ApproxKind::Rcagp => Err(ModelError::Invalid(
            "given inducing inputs are the Z of inducing-point actions S = k(X, Z): use action \
             kind inducing, not blocks"
                .into(),
        )),
        ApproxKind::Rrp => Err(ModelError::Invalid(
            "given inducing inputs apply to sgpr, svgp, rcsvgp, cagp and rcagp, not rrp".into(),
        )),
    }
}

impl ApproxModel {
    /// Fits `kind` to standardised data with an initialised kernel. `epsilon` is the robust
    /// models' outlier fraction; `observe(evaluation, objective)` sees every evaluation.
    ///
    /// # Errors
    /// Invalid settings or data, a failed factorisation or optimiser start.
    #[allow(clippy::too_many_arguments)]
    pub fn fit(
        kind: ApproxKind,
        x: MatRef<'_, f64>,
        y: &[f64],
        kernel: Kernel,
        mean: Mean,
        noise: f64,
        epsilon: f64,
        opts: &ApproxOptions,
        seed: u64,
        observe: &mut dyn FnMut(usize, f64),
    ) -> Result<ApproxModel, ModelError> {
        check_kernel(&kernel)?;
        let n = y.len();
        let robust = matches!(kind, ApproxKind::Rcsvgp | ApproxKind::Rcagp);
        if opts.centres.is_some() && kind != ApproxKind::Rcagp {
            return Err(ModelError::Invalid(format!(
                "given centres of the IMQ weights apply to rcagp, not {kind:?}"
            )));
        }
        // (kernel, mean, noise, β, learn the noise and the mean)
        let (kernel, mean, noise, beta, learn) = if robust && !opts.free_noise {
            let centres = opts.centres.as_deref();
            let (k, s2) = robust_start(x, y, &kernel, &mean, noise, epsilon, centres, seed)?;
            (k, mean, s2, (s2 / 2.0).sqrt(), false)
        } else {
            (kernel, mean, noise, 1.0, true)
        };
        match kind {
            ApproxKind::Sgpr | ApproxKind::Rcsvgp => {
                let mut cfg = SparseConfig {
                    kind: if kind == ApproxKind::Sgpr {
                        SparseKind::Sgpr
                    } else {
                        SparseKind::Rcsvgp
                    },
                    epsilon,
                    beta,
                    learn_noise: learn,
                    learn_mean: learn && !opts.fixed_mean,
                    seed,
                    ..SparseConfig::default()
                };
                let m = opts.inducing.unwrap_or(cfg.inducing);
                (cfg.init, cfg.learn_inducing, cfg.inducing) =
                    inducing_setup(kind, opts, (cfg.init, cfg.learn_inducing, m))?;
                cfg.optimizer = opts.optimizer.clone().unwrap_or(cfg.optimizer);
                Ok(ApproxModel::Sparse(SparseGp::fit(
                    x, y, kernel, mean, noise, &cfg, observe,
                )?))
            }
            ApproxKind::Rrp => {
                let mut cfg = RrpConfig {
                    seed,
                    ..RrpConfig::default()
                };
                let m = opts.inducing.unwrap_or(cfg.inducing);
                (cfg.init, cfg.learn_inducing, cfg.inducing) =
                    inducing_setup(kind, opts, (cfg.init, cfg.learn_inducing, m))?;
                cfg.optimizer = opts.optimizer.clone().unwrap_or(cfg.optimizer);
                Ok(ApproxModel::Rrp(RelevancePursuit::fit(
                    x, y, kernel, mean, noise, &cfg, observe,
                )?))
            }
            ApproxKind::Svgp => {
                let mut cfg = SvgpConfig {
                    likelihood: if opts.student_t {
                        SvgpLikelihood::StudentT
                    } else {
                        SvgpLikelihood::Gaussian
                    },
                    seed,
                    ..SvgpConfig::default()
                };
                let m = opts.inducing.unwrap_or(cfg.inducing).min(n);
                (cfg.init, cfg.learn_inducing, cfg.inducing) =
                    inducing_setup(kind, opts, (cfg.init, cfg.learn_inducing, m))?;
                cfg.batch_size = opts.batch_size.unwrap_or(cfg.batch_size).min(n);
                cfg.optimizer = match &opts.optimizer {
                    Some(o) => o.clone(),
                    // Data that fit in one batch make the ELBO deterministic: L-BFGS needs a
                    // few hundred evaluations where Adam needs thousands of steps.
                    None if cfg.batch_size == n => Optimizer::lbfgs(500),
                    None => cfg.optimizer,
                };
                if matches!(cfg.optimizer, Optimizer::Lbfgs(_)) {
                    cfg.natural_gradients = false;
                }
                let g = Svgp::fit(x, y, kernel, mean, noise, &cfg, observe)?;
                // The optimiser's last value is a minibatch estimate; report the full ELBO.
                let elbo = g.elbo(x, y)?;
                Ok(ApproxModel::Svgp(g, elbo))
            }
            ApproxKind::Cagp | ApproxKind::Rcagp => {
                if !matches!(mean, Mean::Constant { .. } | Mean::Zero) {
                    return Err(ModelError::Invalid(
                        "cagp and rcagp take a constant prior mean (learned); drop --mean linear"
                            .into(),
                    ));
                }
                let mut cfg = CaConfig {
                    robust: kind == ApproxKind::Rcagp,
                    epsilon,
                    centres: opts.centres.clone(),
                    beta,
                    learn_noise: learn,
                    learn_mean: learn && !opts.fixed_mean,
                    mean: match (&mean, opts.fixed_mean) {
                        (Mean::Constant { c }, true) => Some(*c),
                        _ => None,
                    },
                    seed,
                    action_kind: opts.action_kind,
                    ..CaConfig::default()
                };
                let i = opts.actions.unwrap_or(cfg.actions).min(n);
                (cfg.inducing_init, cfg.learn_inducing, cfg.actions) =
                    inducing_setup(kind, opts, (cfg.inducing_init, cfg.learn_inducing, i))?;
                cfg.optimizer = opts.optimizer.clone().unwrap_or(cfg.optimizer);
                Ok(ApproxModel::Ca(CaGp::fit(
                    x, y, kernel, noise, &cfg, observe,
                )?))
            }
        }
    }

    /// The model's kind.
    pub fn kind(&self) -> ApproxKind {
        match self {
            ApproxModel::Sparse(g) if g.kind() == SparseKind::Sgpr => ApproxKind::Sgpr,
            ApproxModel::Sparse(_) => ApproxKind::Rcsvgp,
            ApproxModel::Svgp(..) => ApproxKind::Svgp,
            ApproxModel::Ca(g) if g.robust() => ApproxKind::Rcagp,
            ApproxModel::Ca(_) => ApproxKind::Cagp,
            ApproxModel::Rrp(_) => ApproxKind::Rrp,
        }
    }

    /// The kernel.
    pub fn kernel(&self) -> &Kernel {
        match self {
            ApproxModel::Sparse(g) => g.kernel(),
            ApproxModel::Svgp(g, _) => g.kernel(),
            ApproxModel::Ca(g) => g.kernel(),
            ApproxModel::Rrp(g) => g.kernel(),
        }
    }

    /// The variance a new observation adds to the latent variance (σ², or the Student-t
    /// likelihood's variance).
    pub fn noise(&self) -> f64 {
        match self {
            ApproxModel::Sparse(g) => g.noise(),
            ApproxModel::Svgp(g, _) => g.predictive_noise(),
            ApproxModel::Ca(g) => g.noise(),
            ApproxModel::Rrp(g) => g.noise(),
        }
    }

    /// The prior mean.
    pub fn mean(&self) -> Mean {
        match self {
            ApproxModel::Sparse(g) => g.mean().clone(),
            ApproxModel::Svgp(g, _) => g.mean().clone(),
            ApproxModel::Ca(g) => Mean::Constant { c: g.mean() },
            ApproxModel::Rrp(g) => g.mean().clone(),
        }
    }

    /// Name and value of the training objective.
    pub fn objective(&self) -> (&'static str, f64) {
        match self {
            ApproxModel::Sparse(g) => ("collapsed_bound", g.bound()),
            ApproxModel::Svgp(_, elbo) => ("elbo", *elbo),
            ApproxModel::Ca(g) => ("elbo", g.elbo()),
            ApproxModel::Rrp(g) => ("collapsed_bound", g.bound()),
        }
    }

    /// The training report, when the model was fitted in this process.
    pub fn report(&self) -> Option<&FitReport> {
        match self {
            ApproxModel::Sparse(g) => g.report(),
            ApproxModel::Svgp(g, _) => g.report(),
            ApproxModel::Ca(g) => g.report(),
            ApproxModel::Rrp(g) => g.report(),
        }
    }

    /// The robust models' normalised weights `ŵ = w/β ∈ (0, 1]` of the training rows (empty
    /// for the others).
    pub fn weights(&self) -> Vec<f64> {
        let (w, beta) = match self {
            ApproxModel::Sparse(g) if g.kind() == SparseKind::Rcsvgp => (g.weights(), g.beta()),
            ApproxModel::Ca(g) if g.robust() => (g.weights(), g.beta()),
            _ => return Vec::new(),
        };
        w.into_iter().map(|v| v / beta).collect()
    }

    /// Latent marginals at standardised inputs `xs` (those of new observations are
    /// [`ApproxModel::likelihood`]`.predict_marginals(…)`).
    ///
    /// # Errors
    /// If `xs` does not have the training inputs' number of columns.
    pub fn predict(&self, xs: MatRef<'_, f64>) -> Result<Marginals, ModelError> {
        let d = self.input_dim();
        if xs.ncols() != d {
            return Err(ModelError::Invalid(format!(
                "expected {d} input columns, got {}",
                xs.ncols()
            )));
        }
        Ok(match self {
            ApproxModel::Sparse(g) => g.predict(xs),
            ApproxModel::Svgp(g, _) => g.predict(xs),
            ApproxModel::Ca(g) => g.predict(xs),
            ApproxModel::Rrp(g) => g.predict(xs),
        })
    }

    /// The observation model a new `y` follows: Gaussian with the noise variance σ² (SGPR,
    /// CaGP, and the robust RCSVGP and RCaGP, whose IMQ weights only shape the fit: a new point
    /// has no weight; RRP, whose extra noise belongs to its training points only), or the SVGP's
    /// own likelihood (Gaussian or Student-t).
    ///
    /// # Errors
    /// If a loaded SVGP's likelihood parameters are out of their domain.
    pub fn likelihood(&self) -> Result<Box<dyn Likelihood>, ModelError> {
        Ok(match self {
            ApproxModel::Sparse(g) => Box::new(Gaussian::fitted(g.noise())),
            ApproxModel::Svgp(g, _) => g.observation_likelihood()?,
            ApproxModel::Ca(g) => Box::new(Gaussian::fitted(g.noise())),
            ApproxModel::Rrp(g) => Box::new(Gaussian::fitted(g.noise())),
        })
    }

    /// Number of input columns.
    pub fn input_dim(&self) -> usize {
        match self {
            ApproxModel::Sparse(g) => g.inducing().ncols(),
            ApproxModel::Svgp(g, _) => g.inducing().ncols(),
            ApproxModel::Ca(g) => g.x().ncols(),
            ApproxModel::Rrp(g) => g.inducing().ncols(),
        }
    }

    /// Inducing inputs (sparse models) or nothing.
    pub fn inducing(&self) -> Option<Mat<f64>> {
        match self {
            ApproxModel::Sparse(g) => Some(g.inducing().to_owned()),
            ApproxModel::Svgp(g, _) => Some(g.inducing().to_owned()),
            ApproxModel::Ca(_) => None,
            ApproxModel::Rrp(g) => Some(g.inducing().to_owned()),
        }
    }
}
