//! The scalable models of `bench-scale`, at settings that suit 36k rows.

use std::time::Instant;

use faer::Mat;
use serde_json::json;
use trustgp::fit::Optimizer;
use trustgp::kernels::Kernel;
use trustgp::means::Mean;
use trustgp::models::computation_aware::{CaConfig, CaGp};
use trustgp::models::sparse::{SparseConfig, SparseGp, SparseKind};
use trustgp::models::svgp::{Svgp, SvgpConfig};

type BoxError = Box<dyn std::error::Error>;

/// A scalable model run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScaleModel {
    /// SGPR.
    Sgpr,
    /// SVGP trained to convergence.
    Svgp,
    /// SVGP for a fixed number of epochs.
    SvgpEpochs(usize),
    /// CaGP.
    Cagp,
    /// RCaGP.
    Rcagp,
}

impl ScaleModel {
    /// Parses `sgpr`, `svgp`, `cagp` or `rcagp`.
    pub fn parse(s: &str) -> Result<ScaleModel, String> {
        Ok(match s {
            "sgpr" => ScaleModel::Sgpr,
            "svgp" => ScaleModel::Svgp,
            "cagp" => ScaleModel::Cagp,
            "rcagp" => ScaleModel::Rcagp,
            _ => return Err(format!("unknown model {s} (sgpr, svgp, cagp, rcagp)")),
        })
    }
}

/// Sizes and iteration limits of the scalable runs.
#[derive(Clone, Copy, Debug)]
pub struct ScaleSettings {
    /// Inducing points of SGPR and SVGP.
    pub inducing: usize,
    /// Actions of CaGP and RCaGP.
    pub actions: usize,
    /// Optimiser iterations (L-BFGS) of the deterministic objectives; Adam steps of SVGP on
    /// kin40k are ten times as many.
    pub iterations: usize,
    /// SVGP minibatch size.
    pub batch_size: usize,
}

/// What a run produced.
pub struct ScaleRun {
    /// Test predictive means.
    pub mean: Vec<f64>,
    /// Training seconds.
    pub seconds: f64,
    /// Model-specific details (settings, objective, iterations).
    pub detail: serde_json::Value,
}

/// The ARD kernel every scalable run starts from, initialised on the training inputs.
fn kernel(x: &Mat<f64>) -> Result<Kernel, BoxError> {
    let mut k = Kernel::parse(trustgp::estimators::DEFAULT_KERNEL)?;
    k.initialize(x.as_ref())?;
    Ok(k)
}

/// Fits `model` and predicts `xte`.
pub fn fit_scale_model(
    model: ScaleModel,
    x: &Mat<f64>,
    y: &[f64],
    xte: &Mat<f64>,
    settings: &ScaleSettings,
) -> Result<ScaleRun, BoxError> {
    let k = kernel(x)?;
    let noise = trustgp::estimators::DEFAULT_NOISE;
    let mut evals = 0usize;
    let mut last = f64::NAN;
    let t0 = Instant::now();
    let mut observe = |i: usize, f: f64| {
        evals = i;
        last = f;
        if i % 100 == 0 {
            eprintln!(
                "  {model:?}: evaluation {i}, objective {f:.4}, {:.0} s",
                t0.elapsed().as_secs_f64()
            );
        }
    };
    let (mean, detail) = match model {
        ScaleModel::Sgpr => {
            let cfg = SparseConfig {
                kind: SparseKind::Sgpr,
                inducing: settings.inducing,
                optimizer: Optimizer::lbfgs(settings.iterations),
                ..SparseConfig::default()
            };
            let gp = SparseGp::fit(x.as_ref(), y, k, Mean::Zero, noise, &cfg, &mut observe)?;
            let detail = json!({"inducing": settings.inducing, "bound": gp.bound(),
                                "noise": gp.noise(), "report": format!("{:?}", gp.report())});
            (gp.predict(xte.as_ref()).mean, detail)
        }
        ScaleModel::Cagp | ScaleModel::Rcagp => {
            let cfg = CaConfig {
                robust: model == ScaleModel::Rcagp,
                actions: settings.actions,
                optimizer: Optimizer::lbfgs(settings.iterations),
                ..CaConfig::default()
            };
            let gp = CaGp::fit(x.as_ref(), y, k, noise, &cfg, &mut observe)?;
            let detail = json!({"actions": settings.actions, "elbo": gp.elbo(),
                                "noise": gp.noise(), "report": format!("{:?}", gp.report())});
            (gp.predict(xte.as_ref()).mean, detail)
        }
        ScaleModel::Svgp | ScaleModel::SvgpEpochs(_) => {
            let n = y.len();
            let optimizer = match model {
                ScaleModel::SvgpEpochs(e) => {
                    let steps = e * n.div_ceil(settings.batch_size);
                    Optimizer::adam_fixed_steps(steps, 0.01)
                }
                _ => Optimizer::adam_early_stopping(10 * settings.iterations, 0.01, 100, 1e-5),
            };
            let cfg = SvgpConfig {
                inducing: settings.inducing.min(n),
                batch_size: settings.batch_size,
                optimizer,
                ..SvgpConfig::default()
            };
            let gp = Svgp::fit(x.as_ref(), y, k, Mean::Zero, noise, &cfg, &mut observe)?;
            let detail = json!({"inducing": cfg.inducing, "batch_size": cfg.batch_size,
                                "noise": gp.predictive_noise(), "report": format!("{:?}", gp.report())});
            (gp.predict(xte.as_ref()).mean, detail)
        }
    };
    Ok(ScaleRun {
        mean,
        seconds: t0.elapsed().as_secs_f64(),
        detail: json!({"settings": detail, "evaluations": evals, "last_objective": last}),
    })
}
