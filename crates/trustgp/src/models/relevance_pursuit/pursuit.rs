//! The greedy relevance-pursuit loop (Ament et al. 2024 as the RCaGP paper uses it; spec
//! §2.10, schedule [choice]):
//!
//! 1. start with the support `S = ∅` and `ρ = 0`;
//! 2. optimise the hyperparameters, the inducing inputs and `log ρ_S` together (the configured
//!    optimiser: the paper's 50 Adam steps at learning rate 0.01, or L-BFGS);
//! 3. give every point outside `S` its own best `ρ_j` (the others held) and add the
//!    `κ = ⌈0.05 n⌉` with the largest (only those with `ρ_j > 0`), starting them there;
//! 4. repeat while `|S| ≤ 0.3 n`, and keep the round with the best bound.

use faer::MatRef;

use super::loo::{best_rho, leave_one_out_at};
use super::objective::{Layout, Params, Problem, LOG_RHO_BOUNDS};
use super::{PursuitRound, RelevancePursuit, RrpConfig};
use crate::fit::maximize;
use crate::kernels::Kernel;
use crate::means::Mean;
use crate::models::checks::check_training_data;
use crate::models::sparse::check_model;
use crate::models::sparse::collapsed::Wanted;
use crate::models::ModelError;

impl RelevancePursuit {
    /// Fit to inputs `x` (n×d) and targets `y`, starting from `kernel` (initialised from the
    /// data if it has data-driven defaults), `mean` and noise variance `noise`, calling
    /// `observe(evaluation, bound)` after every evaluation of the bound (numbered across rounds).
    ///
    /// # Errors
    /// Non-finite or inconsistent data, bad settings (`inducing` 0, `expansion` outside (0, 1],
    /// `max_support` outside [0, 1)), or an optimiser that cannot start.
    pub fn fit(
        x: MatRef<'_, f64>,
        y: &[f64],
        kernel: Kernel,
        mean: Mean,
        noise: f64,
        config: &RrpConfig,
        observe: &mut dyn FnMut(usize, f64),
    ) -> Result<RelevancePursuit, ModelError> {
        check_training_data(x, y)?;
        if config.inducing == 0 {
            return Err(ModelError::Invalid(
                "the number of inducing inputs must be at least 1".into(),
            ));
        }
        if !(config.expansion > 0.0 && config.expansion <= 1.0) {
            return Err(ModelError::Invalid(format!(
                "the support expansion (fraction of the rows added per round) must lie in \
                 (0, 1], got {}",
                config.expansion
            )));
        }
        if !(config.max_support >= 0.0 && config.max_support < 1.0) {
            return Err(ModelError::Invalid(format!(
                "the largest support (fraction of the rows) must lie in [0, 1), got {}",
                config.max_support
            )));
        }
        let mut kernel = kernel;
        kernel.initialize(x)?;
        check_model(x.ncols(), &kernel, &mean, noise)?;

        let n = y.len();
        let z0 = config.init.select(x, config.inducing.min(n), config.seed)?;
        let m = z0.nrows();
        let kappa = ((config.expansion * n as f64).ceil() as usize).max(1);
        let largest = (config.max_support * n as f64).floor() as usize;
        let layout = Layout {
            n_kernel: kernel.n_params(),
            n_mean: mean.n_params(),
            z_shape: (m, x.ncols()),
            learn_z: config.learn_inducing,
        };
        let wanted = if config.learn_inducing {
            Wanted::All
        } else {
            Wanted::FixedInducing
        };
        let problem = Problem { x, y };
        let fixed_noise = (!config.learn_noise).then_some(noise);
        let fixed_mean = (!config.learn_mean).then(|| mean.clone());
        let mut hyper_names = kernel.param_names();
        hyper_names.push("noise".into());
        hyper_names.extend(mean.param_names());

        let mut params = Params {
            z: z0,
            kernel,
            noise,
            mean,
            rho: vec![0.0; n],
        };
        let mut support: Vec<usize> = Vec::new();
        let mut rounds = Vec::new();
        let mut kept: Option<RelevancePursuit> = None;
        let mut evaluations = 0;
        loop {
            let objective = |v: &[f64]| -> Result<(f64, Vec<f64>), ModelError> {
                let p = layout.unpack(v, &params, &support, n)?;
                let e = problem.evaluate(
                    &p.kernel,
                    &p.mean,
                    p.noise,
                    p.z.as_ref(),
                    &p.rho,
                    &support,
                    wanted,
                )?;
                Ok((e.value, e.grad.unwrap_or_default()))
            };
            let bounds = layout.bounds(
                &params.kernel,
                fixed_noise,
                fixed_mean.as_ref(),
                support.len(),
            );
            // The inducing inputs and ρ are not reported at their bounds, only the
            // hyperparameters are named.
            let v0 = layout.pack(&params, &support);
            let mut observe_round = |e: usize, f: f64| observe(evaluations + e, f);
            let (best, report) = maximize(
                objective,
                &v0,
                &bounds,
                &hyper_names,
                &config.optimizer,
                &mut observe_round,
            )?;
            evaluations += report.evaluations;
            params = layout.unpack(&best, &params, &support, n)?;
            let e = problem.evaluate(
                &params.kernel,
                &params.mean,
                params.noise,
                params.z.as_ref(),
                &params.rho,
                &[],
                Wanted::Value,
            )?;
            rounds.push(PursuitRound {
                support: support.len(),
                bound: e.value,
            });
            if kept.as_ref().is_none_or(|k| e.value > k.bound) {
                kept = Some(RelevancePursuit {
                    x: x.to_owned(),
                    y: y.to_vec(),
                    kernel: params.kernel.clone(),
                    mean: params.mean.clone(),
                    noise: params.noise,
                    z: params.z.clone(),
                    rho: params.rho.clone(),
                    factors: e.factors.clone(),
                    bound: e.value,
                    report: Some(report),
                    rounds: Vec::new(),
                });
            }
            let room = largest.saturating_sub(support.len());
            if room == 0 {
                break;
            }
            let loo = leave_one_out_at(
                x,
                y,
                &params.kernel,
                &params.mean,
                params.noise,
                params.z.as_ref(),
                &params.rho,
                &e.factors,
            );
            // Outside the support ρ_j = 0, so the leave-one-out variance is V⁰_j itself.
            let mut candidates: Vec<(usize, f64)> = (0..n)
                .filter(|&j| params.rho[j] == 0.0)
                .map(|j| {
                    let r = best_rho(
                        loo.residual[j],
                        loo.variance[j],
                        loo.nystrom_gap[j],
                        params.noise,
                        config.update,
                    );
                    (j, r)
                })
                .filter(|&(_, r)| r > LOG_RHO_BOUNDS.0.exp())
                .collect();
            if candidates.is_empty() {
                break;
            }
            candidates.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            for &(j, r) in candidates.iter().take(kappa.min(room)) {
                params.rho[j] = r.min(LOG_RHO_BOUNDS.1.exp());
                support.push(j);
            }
        }
        let mut model = kept.expect("the loop runs at least one round");
        model.rounds = rounds;
        Ok(model)
    }
}
