//! Robust conjugate GPs: RCGP (one output) and MO-RCGP (several), on any covariance.
//!
//! Each observed entry j gets an IMQ weight `ŵ_j` (see [`crate::robust`]) and so the effective
//! noise `σ²_j/ŵ_j²` and the shifted target `y_j − m_j − σ²_j g_j`; the posterior is the
//! [conjugate core](crate::models::conjugate) with that diagonal and target. Two centrings exist:
//!
//! * [`prior_centred_weights`] — γ = prior mean (the RCGP weight, `w_RCGP`);
//! * [`centred_weights`] — γ given per entry (Bayesian optimisation centres it on
//!   leave-one-out means, `sequential::bayes_opt::RobustCentre`);
//! * [`conditional_weights`] — γ = conditional mean of the entry given the other outputs
//!   observed at the same input (`w_MORCGP`), from a T×T row covariance `C`.
//!
//! The soft threshold of output t is the `(1 − ε_t)` order statistic of `|y − γ|` over its
//! entries. Fitting is the two-step procedure of the MO-RCGP paper: weights are computed once
//! (from a robust covariance estimate for `w_MORCGP`) and frozen while the weighted LOO-CV
//! objective is maximised over the covariance parameters and noise variances (`β_t = σ_t/√2`
//! follows σ_t; their common scale profiled out, see [`profiled_weighted_loo`]); then the weights are recomputed from the fitted model and the final posterior
//! is built with them.

use faer::MatRef;

use crate::models::conjugate::ConjugatePosterior;
use crate::models::ModelError;
pub use loo_covariance::LooCovariance;
use mogp::{check_entries, maximize_grouped_profiled, GroupedFit};
use tasks::TaskEntries;
use weighted_loo::{
    loo_predictive, profiled_weighted_loo, weighted_loo, Derivatives, LooPredictive, RobustTerms,
};

mod loo_covariance;
pub mod mogp;
pub mod multi_output;
pub mod tasks;
pub mod weighted_loo;
use crate::fit::FitOptions;
use crate::fit::FitReport;
use crate::linalg::parallelism_for;
use crate::means::PriorMean;
use crate::robust::{conditional_centres, soft_threshold, ImqWeights};

/// The weights of every training entry and how they were made.
#[derive(Clone, Debug, PartialEq)]
pub struct RobustWeights {
    /// Normalised weights and score corrections.
    pub imq: ImqWeights,
    /// The centre γ of each entry.
    pub centre: Vec<f64>,
    /// The soft threshold c_t of each output.
    pub thresholds: Vec<f64>,
    /// Outputs whose threshold hit the floor (tied or zero residuals); worth a warning.
    pub floored: Vec<usize>,
}

/// Weights from given centres `centre` (one per entry) with per-output thresholds from
/// `epsilon`: the `(1 − ε_t)` order statistic of `|y − γ|` over output t's entries.
///
/// # Errors
/// [`ModelError::Invalid`] for centres or tasks not one per entry, a non-finite centre, an
/// `ε` outside [0, 1) or an output without entries.
pub fn centred_weights(
    y: &[f64],
    centre: Vec<f64>,
    task: &[usize],
    epsilon: &[f64],
) -> Result<RobustWeights, ModelError> {
    if centre.len() != y.len() || task.len() != y.len() {
        return Err(ModelError::Invalid(format!(
            "robust weights: {} entries but {} centres and {} task labels",
            y.len(),
            centre.len(),
            task.len()
        )));
    }
    if let Some(j) = centre.iter().position(|v| !v.is_finite()) {
        return Err(ModelError::Invalid(format!(
            "robust weights: the centre of entry {j} is {} (expected a finite number)",
            centre[j]
        )));
    }
    let mut thresholds = Vec::with_capacity(epsilon.len());
    let mut floored = Vec::new();
    for (t, &eps) in epsilon.iter().enumerate() {
        let resid: Vec<f64> = (0..y.len())
            .filter(|&j| task[j] == t)
            .map(|j| y[j] - centre[j])
            .collect();
        let (c, was_floored) = soft_threshold(&resid, eps).ok_or_else(|| {
            ModelError::Invalid(format!(
                "output {t}: cannot set its soft threshold (epsilon {eps} must be in [0, 1) \
                 and the output needs at least one observation)"
            ))
        })?;
        if was_floored {
            floored.push(t);
        }
        thresholds.push(c);
    }
    let c: Vec<f64> = task.iter().map(|&t| thresholds[t]).collect();
    Ok(RobustWeights {
        imq: ImqWeights::new(y, &centre, &c),
        centre,
        thresholds,
        floored,
    })
}

/// The RCGP weight: every entry centred on its prior mean.
pub fn prior_centred_weights(
    y: &[f64],
    prior: &[f64],
    task: &[usize],
    epsilon: &[f64],
) -> Result<RobustWeights, ModelError> {
    centred_weights(y, prior.to_vec(), task, epsilon)
}

/// The MO-RCGP weight: every entry centred on its conditional mean given the other outputs
/// observed in its row, under the row covariance `row_cov` (T×T).
pub fn conditional_weights(
    entries: &TaskEntries,
    prior: &[f64],
    row_cov: MatRef<'_, f64>,
    epsilon: &[f64],
) -> Result<RobustWeights, ModelError> {
    let y = entries.to_matrix(&entries.y);
    let m = entries.to_matrix(prior);
    let g = conditional_centres(y.as_ref(), m.as_ref(), row_cov)?;
    let centre: Vec<f64> = (0..entries.len())
        .map(|k| g[(entries.row[k], entries.task[k])])
        .collect();
    centred_weights(&entries.y, centre, &entries.task, epsilon)
}

/// A fitted robust conjugate GP.
#[derive(Clone, Debug)]
pub struct RobustGp<C, M> {
    fit: GroupedFit<C, M>,
    weights: RobustWeights,
    fit_weights: RobustWeights,
    objective: f64,
}

impl<C, M> std::ops::Deref for RobustGp<C, M> {
    type Target = GroupedFit<C, M>;
    fn deref(&self) -> &GroupedFit<C, M> {
        &self.fit
    }
}

impl<C: LooCovariance, M: PriorMean> RobustGp<C, M> {
    /// Fit by the two-step procedure: maximise the weighted LOO-CV objective with `initial`
    /// weights frozen, then recompute the weights with `reweight(fitted covariance, fitted
    /// noise)` and build the posterior with them.
    #[allow(clippy::too_many_arguments)]
    pub fn fit(
        cov: C,
        mean: M,
        x: MatRef<'_, f64>,
        y: &[f64],
        group: &[usize],
        noise: &[f64],
        initial: RobustWeights,
        reweight: impl Fn(&C, &[f64]) -> Result<RobustWeights, ModelError>,
        opts: &FitOptions,
    ) -> Result<Self, ModelError> {
        check_entries(x, y, group, noise)?;
        check_weights(&initial, y.len())?;
        let prior = mean.eval(x);
        let (cov, noise, starts) = if opts.optimize {
            let terms = RobustTerms {
                y,
                prior: &prior,
                group,
                weights: &initial.imq,
            };
            optimize(&cov, noise, x, &terms, opts)?
        } else {
            (cov, noise.to_vec(), Vec::new())
        };
        let weights = reweight(&cov, &noise)?;
        let mut gp = Self::at(cov, mean, x, y, group, &noise, weights)?;
        gp.fit_weights = initial;
        gp.fit.starts = starts;
        Ok(gp)
    }

    /// The robust GP at fixed parameters and weights.
    pub fn at(
        cov: C,
        mean: M,
        x: MatRef<'_, f64>,
        y: &[f64],
        group: &[usize],
        noise: &[f64],
        weights: RobustWeights,
    ) -> Result<Self, ModelError> {
        check_entries(x, y, group, noise)?;
        check_weights(&weights, y.len())?;
        let prior = mean.eval(x);
        let terms = RobustTerms {
            y,
            prior: &prior,
            group,
            weights: &weights.imq,
        };
        let par = parallelism_for(x.nrows());
        let objective = weighted_loo(&cov, x, &terms, noise, par, Derivatives::None)?.value;
        let (d, z) = terms.noise_and_targets(noise);
        let posterior = ConjugatePosterior::new(cov, mean, x.to_owned(), &z, &d, par)?;
        Ok(RobustGp {
            fit: GroupedFit::new(posterior, noise, group, y),
            fit_weights: weights.clone(),
            weights,
            objective,
        })
    }

    /// The weights of the final posterior.
    pub fn weights(&self) -> &RobustWeights {
        &self.weights
    }

    /// The (frozen) weights the hyperparameters were fitted with.
    pub fn fit_weights(&self) -> &RobustWeights {
        &self.fit_weights
    }

    /// The weighted LOO-CV objective at the final parameters and weights.
    pub fn objective(&self) -> f64 {
        self.objective
    }

    /// The closed-form leave-one-out predictive of every training entry.
    pub fn loo(&self) -> Result<LooPredictive, ModelError> {
        let x = self.posterior().x();
        let prior = self.posterior().mean().eval(x);
        let terms = RobustTerms {
            y: self.y(),
            prior: &prior,
            group: self.groups(),
            weights: &self.weights.imq,
        };
        loo_predictive(
            self.covariance(),
            x,
            &terms,
            self.noise(),
            parallelism_for(x.nrows()),
        )
    }
}

/// Maximise the weighted LOO-CV objective over the covariance parameters and `ln σ²` from
/// `cov` and `noise`, with their common scale profiled out when `opts.profile_scale` (see
/// [`profiled_weighted_loo`] and [`maximize_grouped_profiled`]).
fn optimize<C: LooCovariance>(
    cov: &C,
    noise: &[f64],
    x: MatRef<'_, f64>,
    terms: &RobustTerms<'_>,
    opts: &FitOptions,
) -> Result<(C, Vec<f64>, Vec<FitReport>), ModelError> {
    let par = parallelism_for(x.nrows());
    let derivatives = |want_fisher: bool| {
        if want_fisher {
            Derivatives::GradientAndFisher
        } else {
            Derivatives::Gradient
        }
    };
    maximize_grouped_profiled(
        cov,
        noise,
        opts,
        par,
        |c, s, want_fisher| {
            let o = weighted_loo(c, x, terms, s, par, derivatives(want_fisher))?;
            Ok((o.value, o.grad, o.fisher))
        },
        |c, s, want_fisher| {
            let o = profiled_weighted_loo(c, x, terms, s, par, derivatives(want_fisher))?;
            Ok((o.loo.value, o.loo.grad, o.scale, o.loo.fisher))
        },
    )
}

fn check_weights(w: &RobustWeights, n: usize) -> Result<(), ModelError> {
    if w.imq.w_hat.len() != n || w.imq.g.len() != n {
        return Err(ModelError::Invalid(format!(
            "{} weights for {n} training entries",
            w.imq.w_hat.len()
        )));
    }
    if let Some(j) = w
        .imq
        .w_hat
        .iter()
        .position(|v| !(v.is_finite() && *v > 0.0))
    {
        return Err(ModelError::Invalid(format!(
            "weight of entry {j} is {} (expected a positive number)",
            w.imq.w_hat[j]
        )));
    }
    Ok(())
}
