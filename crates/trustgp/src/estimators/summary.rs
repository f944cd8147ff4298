//! The fit summary: one schema for every model (see the module documentation of
//! [`crate::estimators`] for the fields).

use serde::Serialize;

use super::finite::{all_finite, finite, NonFinite};
use super::kind::ModelKind;
use super::regressor::{Fitted, OutputGp, Regressor, SingleOutput};
use crate::fit::FitReport;
use crate::means::Mean;
use crate::models::approximate::ApproxModel;
use crate::models::computation_aware::Actions;
use crate::models::robust::multi_output::MultiOutputModel;
use crate::selection::{KernelProbability, PeriodInit, PeriodPeak, SelectedModel};

/// A training objective: its name and its value (maximised).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Objective {
    /// `log_marginal_likelihood`, `weighted_loo_cv`, `elbo`, …
    pub name: &'static str,
    /// Its value at the fitted hyperparameters.
    pub value: f64,
}

/// How an approximate model's optimiser ended.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TrainingSummary {
    /// Accepted steps.
    pub iterations: usize,
    /// Objective evaluations.
    pub evaluations: usize,
    /// Whether a convergence rule (not a limit) stopped the run.
    pub converged: bool,
    /// Why it stopped.
    pub message: String,
}

/// One target's part of a fit.
#[derive(Clone, Debug, Serialize)]
pub struct OutputSummary {
    /// The target column.
    pub target: String,
    /// Training rows (entries, for a multi-output model) the output used; `None` for SVGP,
    /// which keeps no training data after loading.
    pub n_train: Option<usize>,
    /// 0-based data rows left out because this target was empty there (per-target models).
    pub missing_target_rows: Vec<usize>,
    /// The fitted kernel expression (a multi-output model: its LMC terms, `; `-separated).
    pub kernel: String,
    /// The noise variance of this output.
    pub noise: f64,
    /// The output's own training objective (per-target models).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objective: Option<Objective>,
    /// The fitted prior mean (per-target models).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean: Option<Mean>,
    /// Robust models: the outlier fraction ε.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epsilon: Option<f64>,
    /// RCGP, MO-RCGP: the soft threshold of the IMQ weight.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub soft_threshold: Option<f64>,
    /// Robust models: training entries whose normalised weight is below one half (their
    /// effective noise is more than four times the model's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub downweighted: Option<usize>,
    /// Sparse models: inducing points.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inducing: Option<usize>,
    /// RRP: training rows given an extra noise variance (the relevance-pursuit support).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub support: Option<usize>,
    /// SVGP: `gaussian` or `student-t`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub likelihood: Option<&'static str>,
    /// Computation-aware models: actions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actions: Option<usize>,
    /// Computation-aware models: `blocks` or `inducing`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action_kind: Option<&'static str>,
    /// Approximate models: how the optimiser ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub training: Option<TrainingSummary>,
    /// Exact and robust conjugate per-target models: one report per L-BFGS start (a failed
    /// start has objective `null` and its error as message).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub starts: Vec<FitReport>,
    /// VBKS: the most probable kernels with their posterior probabilities `q(k)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_posterior: Option<Vec<KernelProbability>>,
    /// VBKS: the kernels of the model average with their weights (summing to 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_average: Option<Vec<AveragedKernel>>,
    /// VBKS: how the PER factors' periods started (absent for a model file that predates it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period_init: Option<PeriodInitSummary>,
}

/// How a VBKS fit started its PER factors' periods, in the inputs' own units.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PeriodInitSummary {
    /// `data` (the training series' periodogram peaks, when the strongest is significant) or `unit` (the spec's
    /// period 1 in standardised units).
    pub method: &'static str,
    /// `data`: the significance level of the peaks' test (Fisher's g-test, sequential).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// `data` with one input column: the column the periods were read from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// The significant peaks, strongest first, periods in the input's units: the `j`-th PER
    /// factor of every kernel starts at the `j`-th.
    pub periods: Vec<PeriodPeak>,
    /// The strongest peak that was not significant (the input's units), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected: Option<PeriodPeak>,
    /// Where every other PER factor starts: the spec's period 1 (standardised) in each input
    /// column's units.
    pub unit_period: Vec<InputPeriod>,
    /// The outcome in words.
    pub note: String,
}

/// A period in one input column's units.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InputPeriod {
    /// The input column.
    pub input: String,
    /// The period in its units.
    pub period: f64,
}

/// The summary of a VBKS fit's initial periods: `scale[j]` turns input `j`'s standardised
/// units into its own.
fn period_init_summary(
    v: &SelectedModel,
    inputs: &[String],
    scale: &[f64],
) -> Option<PeriodInitSummary> {
    let p = v.periods.as_ref()?;
    let raw = |q: &PeriodPeak| PeriodPeak {
        period: q.period * scale[0],
        p_value: q.p_value,
    };
    let unit_period = inputs
        .iter()
        .zip(scale)
        .map(|(input, s)| InputPeriod {
            input: input.clone(),
            period: *s,
        })
        .collect();
    let unit = "the spec's period 1 (standardised units, unit_period in the inputs' units)";
    let mut s = PeriodInitSummary {
        method: p.init.name(),
        alpha: None,
        input: None,
        periods: Vec::new(),
        rejected: None,
        unit_period,
        note: String::new(),
    };
    s.note = match (p.init, &p.search) {
        (PeriodInit::Unit, _) => format!("every PER factor starts at {unit}"),
        (PeriodInit::Data, None) if inputs.len() > 1 => format!(
            "several input columns, no one series to read a period from: every PER factor \
             starts at {unit}"
        ),
        (PeriodInit::Data, None) => "no candidate kernel has a PER factor".into(),
        (PeriodInit::Data, Some(search)) => {
            s.alpha = Some(search.alpha);
            s.input = inputs.first().cloned();
            s.periods = search.peaks.iter().map(raw).collect();
            s.rejected = search.rejected.as_ref().map(raw);
            let test = format!(
                "Fisher's g-test with Whittle's sequential extension at alpha = {}",
                search.alpha
            );
            match (s.periods.len(), &s.rejected) {
                (0, Some(r)) => format!(
                    "no significant periodogram peak ({test}; the strongest, period {:.6}, has \
                     p = {:.3}): every PER factor starts at {unit}",
                    r.period, r.p_value
                ),
                (0, None) => format!(
                    "no periodogram peak in the range of periods looked at (2.5 grid steps to \
                     half the span): every PER factor starts at {unit}"
                ),
                (k, _) => format!(
                    "{k} periodogram peak(s), the strongest significant ({test}; the others \
                     follow it, with their p-values): the j-th PER factor of every kernel \
                     starts at the j-th period, any further one at {unit}"
                ),
            }
        }
    };
    Some(s)
}

/// One kernel of a VBKS model average.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AveragedKernel {
    /// The kernel's canonical structure.
    pub kernel: String,
    /// Its weight in the average.
    pub weight: f64,
    /// The fitted kernel expression.
    pub fitted: String,
    /// Its noise variance.
    pub noise: f64,
}

/// One LMC term of a multi-output model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TermSummary {
    /// Kernel expression on the inputs.
    pub kernel: String,
    /// The coregionalisation matrix B, row by row.
    pub coregionalization: Vec<Vec<f64>>,
}

/// A fitted model in one schema, whatever the model (documented in [`crate::estimators`]).
#[derive(Clone, Debug, Serialize)]
pub struct FitSummary {
    /// The model's name.
    pub model: &'static str,
    /// Training rows.
    pub n: usize,
    /// Input columns.
    pub d: usize,
    /// Target columns.
    pub outputs: Vec<String>,
    /// The training objective: a per-target model's is the sum over its outputs.
    pub objective: Objective,
    /// The log marginal likelihood (the exact family, gp and mogp; equal to the objective).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lml: Option<f64>,
    /// The fitted kernel expression: a multi-output model's LMC terms `; `-separated; a
    /// per-target model's first output's (each output's is in `per_output`).
    pub kernel: String,
    /// The noise variance of each output, always one per output.
    pub noise: Vec<f64>,
    /// The largest jitter any final factorisation needed.
    pub jitter: f64,
    /// Wall-clock seconds of the fit.
    pub fit_seconds: f64,
    /// What the user should know about the fit.
    pub warnings: Vec<String>,
    /// One entry per output.
    pub per_output: Vec<OutputSummary>,
    /// Multi-output models: the LMC terms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terms: Option<Vec<TermSummary>>,
    /// Multi-output models: one report per L-BFGS start.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub starts: Vec<FitReport>,
}

/// How many weights are below one half.
fn downweighted(w: &[f64]) -> usize {
    w.iter().filter(|&&v| v < 0.5).count()
}

/// One output's summary; `inputs` and `scale` (input `j`'s standard deviation, or 1 when the
/// regressor does not standardise) report VBKS's initial periods in the inputs' units.
fn output_summary(o: &OutputGp, inputs: &[String], scale: &[f64]) -> OutputSummary {
    let (name, value) = o.gp.objective();
    let mut s = OutputSummary {
        target: o.target.clone(),
        n_train: o.gp.x().map(|x| x.nrows()),
        missing_target_rows: o.missing_rows.clone(),
        kernel: o.gp.kernel().to_expr(),
        noise: o.gp.noise(),
        objective: Some(Objective { name, value }),
        mean: Some(o.gp.mean()),
        epsilon: None,
        soft_threshold: None,
        downweighted: None,
        inducing: None,
        support: None,
        likelihood: None,
        actions: None,
        action_kind: None,
        training: None,
        starts: o.gp.starts().to_vec(),
        kernel_posterior: None,
        model_average: None,
        period_init: None,
    };
    match &o.gp {
        SingleOutput::Gp(_) => {}
        SingleOutput::Vbks(v) => {
            s.inducing = Some(v.mixture.components()[0].model.inducing().nrows());
            s.kernel_posterior = Some(v.posterior.clone());
            s.period_init = period_init_summary(v, inputs, scale);
            s.model_average = Some(
                v.mixture
                    .components()
                    .iter()
                    .map(|c| AveragedKernel {
                        kernel: c.structure.to_string(),
                        weight: c.weight,
                        fitted: c.model.kernel().to_expr(),
                        noise: c.model.predictive_noise(),
                    })
                    .collect(),
            );
        }
        SingleOutput::Rcgp(g, eps) => {
            s.epsilon = Some(*eps);
            s.soft_threshold = Some(g.weights().thresholds[0]);
            s.downweighted = Some(downweighted(&g.weights().imq.w_hat));
        }
        SingleOutput::Approx(g, eps) => {
            match g {
                ApproxModel::Sparse(m) => s.inducing = Some(m.inducing().nrows()),
                ApproxModel::Rrp(m) => {
                    s.inducing = Some(m.inducing().nrows());
                    s.support = Some(m.support().len());
                }
                ApproxModel::Svgp(m, _) => {
                    s.inducing = Some(m.inducing().nrows());
                    s.likelihood = Some(m.likelihood().0.name());
                }
                ApproxModel::Ca(c) => {
                    s.actions = Some(c.action_count());
                    s.action_kind = Some(match c.actions() {
                        Actions::Blocks(_) => "blocks",
                        Actions::Inducing(_) => "inducing",
                    });
                }
            }
            s.training = g.report().map(|r| TrainingSummary {
                iterations: r.iterations,
                evaluations: r.evaluations,
                converged: r.converged,
                message: r.message.clone(),
            });
            let w = g.weights();
            if !w.is_empty() {
                s.epsilon = Some(*eps);
                s.downweighted = Some(downweighted(&w));
            }
        }
    }
    s
}

/// The summary of a multi-output model's outputs, terms and jitter.
fn joint_parts(
    r: &Regressor,
    model: &MultiOutputModel,
    epsilon: &[f64],
) -> (Vec<OutputSummary>, Vec<TermSummary>, f64) {
    let terms: Vec<TermSummary> = model
        .covariance()
        .terms()
        .iter()
        .map(|t| {
            let b = t.coregion.b();
            TermSummary {
                kernel: t.kernel.to_expr(),
                coregionalization: (0..b.nrows())
                    .map(|i| (0..b.ncols()).map(|j| b[(i, j)]).collect())
                    .collect(),
            }
        })
        .collect();
    let kernel = terms
        .iter()
        .map(|t| t.kernel.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    let (x, weights, jitter) = match model {
        MultiOutputModel::Mogp(g) => (g.posterior().x(), None, g.posterior().cholesky().jitter()),
        MultiOutputModel::Robust(g) => (
            g.posterior().x(),
            Some(g.weights()),
            g.posterior().cholesky().jitter(),
        ),
    };
    // The last column of a training entry is its output's index.
    let task = x.ncols() - 1;
    let noise = model.noise();
    let outputs = r
        .targets
        .iter()
        .enumerate()
        .map(|(k, target)| {
            let entries: Vec<usize> = (0..x.nrows())
                .filter(|&i| x[(i, task)] as usize == k)
                .collect();
            let mut s = OutputSummary {
                target: target.clone(),
                n_train: Some(entries.len()),
                missing_target_rows: Vec::new(),
                kernel: kernel.clone(),
                noise: noise[k.min(noise.len() - 1)],
                objective: None,
                mean: None,
                epsilon: None,
                soft_threshold: None,
                downweighted: None,
                inducing: None,
                support: None,
                likelihood: None,
                actions: None,
                action_kind: None,
                training: None,
                starts: Vec::new(),
                kernel_posterior: None,
                model_average: None,
                period_init: None,
            };
            if let Some(w) = weights {
                s.epsilon = epsilon.get(k).copied();
                s.soft_threshold = w.thresholds.get(k).copied();
                let w_hat: Vec<f64> = entries.iter().map(|&i| w.imq.w_hat[i]).collect();
                s.downweighted = Some(downweighted(&w_hat));
            }
            s
        })
        .collect();
    (outputs, terms, jitter)
}

impl FitSummary {
    /// The summary of a regressor fitted on `n` rows.
    pub fn of(r: &Regressor, n: usize) -> FitSummary {
        let kind = r.kind();
        let (per_output, terms, jitter, starts, objective) = match &r.fitted {
            Fitted::PerTarget(outputs) => {
                let scale = &r.standardizer.x_std;
                let per_output: Vec<OutputSummary> = outputs
                    .iter()
                    .map(|o| output_summary(o, &r.inputs, scale))
                    .collect();
                let (name, _) = outputs[0].gp.objective();
                let value = outputs.iter().map(|o| o.gp.objective().1).sum();
                let jitter = outputs.iter().map(|o| o.gp.jitter()).fold(0.0, f64::max);
                (
                    per_output,
                    None,
                    jitter,
                    Vec::new(),
                    Objective { name, value },
                )
            }
            Fitted::Joint(model, epsilon) => {
                let (per_output, terms, jitter) = joint_parts(r, model, epsilon);
                let (name, value) = model.objective();
                let starts = model.starts().to_vec();
                (
                    per_output,
                    Some(terms),
                    jitter,
                    starts,
                    Objective { name, value },
                )
            }
        };
        let kernel = per_output
            .first()
            .map(|o| o.kernel.clone())
            .unwrap_or_default();
        FitSummary {
            model: kind.name(),
            n,
            d: r.inputs.len(),
            outputs: r.targets.clone(),
            lml: Some(objective.value).filter(|_| ModelKind::has_lml(kind)),
            objective,
            kernel,
            noise: per_output.iter().map(|o| o.noise).collect(),
            jitter,
            fit_seconds: r.fit_seconds,
            warnings: r.warnings.clone(),
            per_output,
            terms,
            starts,
        }
    }

    /// Every number the summary reports is finite.
    ///
    /// # Errors
    /// The first non-finite number, named by its field.
    pub fn check_finite(&self) -> Result<(), NonFinite> {
        finite(self.objective.value, || {
            format!("the training objective ({})", self.objective.name)
        })?;
        all_finite(&self.noise, "the noise variance")?;
        finite(self.jitter, || "the jitter".into())?;
        for o in &self.per_output {
            if let Some(obj) = &o.objective {
                finite(obj.value, || format!("output '{}': {}", o.target, obj.name))?;
            }
            if let Some(t) = o.soft_threshold {
                finite(t, || format!("output '{}': the soft threshold", o.target))?;
            }
            for p in o
                .period_init
                .iter()
                .flat_map(|p| p.periods.iter().chain(&p.rejected))
            {
                finite(p.period, || {
                    format!("output '{}': an initial period", o.target)
                })?;
                finite(p.p_value, || {
                    format!("output '{}': an initial period's p-value", o.target)
                })?;
            }
            for k in o.kernel_posterior.iter().flatten() {
                finite(k.probability, || {
                    format!("output '{}': q({})", o.target, k.kernel)
                })?;
                finite(k.local_elbo, || {
                    format!("output '{}': the local ELBO of {}", o.target, k.kernel)
                })?;
            }
        }
        for (i, t) in self.terms.iter().flatten().enumerate() {
            for row in &t.coregionalization {
                all_finite(row, &format!("term {i}: the coregionalization"))?;
            }
        }
        Ok(())
    }
}
