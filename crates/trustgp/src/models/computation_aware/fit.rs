//! Input checks, the flat parameter vector and the training loop of [`CaGp`].
//!
//! The optimiser's vector is `[log θ_kernel…, log σ², m0 (if learned), Θ (block after block,
//! block actions only)]`.

use faer::MatRef;

use super::action_set::ActionSet;
use super::actions::BlockActions;
use super::elbo::{forward, gradient, Gradient, State};
use super::likelihood::Weighting;
use super::{ActionKind, CaConfig, CaGp};
use crate::fit::maximize;
use crate::kernels::Kernel;
use crate::models::checks::check_training_data;
use crate::models::hyper::NOISE_BOUNDS;
use crate::models::ModelError;
use crate::robust::soft_threshold;

/// Lower bound of the noise variance during training (spec §2.0).
pub(crate) const NOISE_FLOOR: f64 = 1e-4;

/// Rejects kernels that do not fit `x` and white-noise terms: the noise is `σ²` (through `D`),
/// and a white term would need row identity in the streamed `k(X, X_b)` blocks.
pub(crate) fn check_kernel(kernel: &Kernel, x: MatRef<'_, f64>) -> Result<(), ModelError> {
    kernel.validate(x.ncols())?;
    if !kernel.is_initialized() {
        return Err(ModelError::Invalid(
            "the kernel has unset lengthscales: call Kernel::initialize first".to_string(),
        ));
    }
    if kernel.has_white() {
        return Err(ModelError::Invalid(
            "CaGP/RCaGP model the noise through σ²; remove the white term from the kernel"
                .to_string(),
        ));
    }
    Ok(())
}

/// Rejects a value that is not a positive finite number.
pub(crate) fn check_positive(what: &str, v: f64) -> Result<(), ModelError> {
    if v > 0.0 && v.is_finite() {
        Ok(())
    } else {
        Err(ModelError::Invalid(format!(
            "{what} must be positive and finite, got {v}"
        )))
    }
}

/// Given IMQ centres are for RCaGP (`robust`), one finite value per training row (`n`).
pub(crate) fn check_centres(robust: bool, centre: &[f64], n: usize) -> Result<(), ModelError> {
    if !robust {
        return Err(ModelError::Invalid(
            "given centres of the IMQ weights apply to rcagp, not cagp (which has no weights)"
                .to_string(),
        ));
    }
    if centre.len() != n {
        return Err(ModelError::Invalid(format!(
            "expected one IMQ centre per training row ({n}), got {}",
            centre.len()
        )));
    }
    if let Some(j) = centre.iter().position(|v| !v.is_finite()) {
        return Err(ModelError::Invalid(format!(
            "the IMQ centre of training row {j} is {} (expected a finite number)",
            centre[j]
        )));
    }
    Ok(())
}

/// The weighting of RCaGP (`robust`) or CaGP.
pub(crate) fn weighting(robust: bool, beta: f64, c: f64) -> Weighting {
    if robust {
        Weighting::Imq { beta, c }
    } else {
        Weighting::Constant
    }
}

/// Which entries of the flat vector exist.
pub(super) struct Layout {
    pub(super) n_kernel: usize,
    pub(super) learn_mean: bool,
    pub(super) learn_noise: bool,
}

impl Layout {
    /// The flat vector of `s`.
    pub(super) fn to_vec(&self, s: &State) -> Vec<f64> {
        let mut v = s.kernel.log_params();
        v.push(s.noise.ln());
        if self.learn_mean {
            v.push(s.mean);
        }
        v.extend(s.actions.flat());
        v
    }

    /// Bounds: the kernel's own, `σ² ∈ [1e-4, NOISE_BOUNDS.1]` (or a box of zero width at its
    /// value when it is not learned), the rest free.
    pub(super) fn bounds(&self, s: &State) -> Vec<(f64, f64)> {
        let mut b = s.kernel.log_bounds();
        b.push(if self.learn_noise {
            (NOISE_FLOOR.ln(), NOISE_BOUNDS.1.ln())
        } else {
            (s.noise.ln(), s.noise.ln())
        });
        let free = usize::from(self.learn_mean) + s.actions.flat().len();
        b.extend(std::iter::repeat_n(
            (f64::NEG_INFINITY, f64::INFINITY),
            free,
        ));
        b
    }

    /// `template` with the parameters of `v`.
    pub(super) fn state(&self, template: &State, v: &[f64]) -> Result<State, ModelError> {
        let mut s = template.clone();
        s.kernel.set_log_params(&v[..self.n_kernel])?;
        s.noise = v[self.n_kernel].exp();
        let mut at = self.n_kernel + 1;
        if self.learn_mean {
            s.mean = v[at];
            at += 1;
        }
        s.actions.set_flat(&v[at..]);
        Ok(s)
    }

    /// The gradient laid out like the flat vector.
    pub(super) fn grad_vec(&self, g: Gradient) -> Vec<f64> {
        let mut v = g.kernel;
        v.push(g.log_noise);
        if self.learn_mean {
            v.push(g.mean);
        }
        v.extend(g.actions);
        v
    }
}

impl CaGp {
    /// Fits CaGP or RCaGP (`config.robust`) to inputs `x` (n×d) and targets `y` by maximising
    /// the ELBO over the kernel's log-hyperparameters, `log σ²`, the constant mean (initialised
    /// to `config.mean`, default `mean(y)`, trained if `config.learn_mean`) and the actions (seeded N(0, 1/k)). The
    /// kernel's current hyperparameters and `noise` are the starting point. The soft threshold
    /// is the `(1 − ε)` order statistic of `|y − γ|` (`γ` the given centres of
    /// `config.centres`, else the initial mean) and stays fixed. `observe` sees every
    /// ELBO evaluation. The returned model's caches are computed at the final parameters.
    ///
    /// # Errors
    /// [`ModelError::Invalid`] for bad inputs or settings; the optimiser's and the
    /// factorisation's errors.
    pub fn fit(
        x: MatRef<'_, f64>,
        y: &[f64],
        kernel: Kernel,
        noise: f64,
        config: &CaConfig,
        observe: &mut dyn FnMut(usize, f64),
    ) -> Result<CaGp, ModelError> {
        check_training_data(x, y)?;
        check_kernel(&kernel, x)?;
        check_positive("noise variance", noise)?;
        check_positive("beta", config.beta)?;
        let n = x.nrows();
        if config.actions == 0 || config.actions > n {
            return Err(ModelError::Invalid(format!(
                "the number of actions must be between 1 and the number of training rows \
                 ({n}), got {}",
                config.actions
            )));
        }
        if !(config.epsilon > 0.0 && config.epsilon < 1.0) {
            return Err(ModelError::Invalid(format!(
                "epsilon must be in (0, 1), got {}",
                config.epsilon
            )));
        }
        if let Some(centre) = &config.centres {
            check_centres(config.robust, centre, n)?;
        }
        let m0 = match config.mean {
            Some(m) if m.is_finite() => m,
            Some(m) => {
                return Err(ModelError::Invalid(format!(
                    "the prior mean must be finite, got {m}"
                )))
            }
            None => y.iter().sum::<f64>() / n as f64,
        };
        // c is an order statistic (as for RCGP in this library), not the spec's interpolated
        // quantile: interpolation lets c grow with an outlier that sits next to the quantile.
        let resid: Vec<f64> = match &config.centres {
            Some(centre) => y.iter().zip(centre).map(|(v, g)| v - g).collect(),
            None => y.iter().map(|v| v - m0).collect(),
        };
        let (c, _) = soft_threshold(&resid, config.epsilon)
            .ok_or_else(|| ModelError::Invalid("cannot set the soft threshold".to_string()))?;
        let template = State {
            kernel,
            noise,
            mean: m0,
            actions: match config.action_kind {
                ActionKind::Blocks => {
                    ActionSet::Blocks(BlockActions::random(n, config.actions, config.seed))
                }
                ActionKind::Inducing => ActionSet::Inducing {
                    z: config
                        .inducing_init
                        .select(x, config.actions, config.seed)?,
                    learn: config.learn_inducing,
                },
            },
            weighting: weighting(config.robust, config.beta, c),
            centre: config.centres.clone(),
        };
        let layout = Layout {
            n_kernel: template.kernel.n_params(),
            learn_mean: config.learn_mean,
            learn_noise: config.learn_noise,
        };
        let objective = |v: &[f64]| -> Result<(f64, Vec<f64>), ModelError> {
            let s = layout.state(&template, v)?;
            let fw = forward(x, y, &s)?;
            let g = gradient(x, &s, &fw);
            Ok((fw.elbo, layout.grad_vec(g)))
        };
        // The mean and the actions are free: only the hyperparameters can end on a bound.
        let mut names = template.kernel.param_names();
        names.push("noise".into());
        let (best, report) = maximize(
            objective,
            &layout.to_vec(&template),
            &layout.bounds(&template),
            &names,
            &config.optimizer,
            observe,
        )?;
        let state = layout.state(&template, &best)?;
        CaGp::build(
            x.to_owned(),
            y.to_vec(),
            state,
            c,
            config.beta,
            Some(report),
        )
    }
}
