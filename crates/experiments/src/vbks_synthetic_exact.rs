//! `experiments vbks-synthetic --exact-evidence`: would exact type-II maximum likelihood pick
//! the generating kernel on the synthetic data of spec §6.1?
//!
//! VBKS's local ELBO `L*` lower-bounds a kernel's log evidence (with `M` inducing points, a
//! minibatch estimate and, in full-θ mode, the KL of `q(θ)`). If an exact GP, fitted by maximum
//! likelihood on all 1000 rows, already prefers another structure, then no improvement of the
//! variational machinery can make the generating kernel win; if it prefers the truth, the
//! approximation is what loses it. For every kernel of the space this fits an exact GP
//! (zero mean, the inputs and outputs divided by their std as VBKS sees them) from the spec's
//! initial hyperparameters, from the periodogram's periods and from seeded random restarts,
//! and keeps the best log marginal likelihood. The generating kernel is also evaluated at its
//! true hyperparameters (in the same standardised units) and refitted from there. Each line
//! gives the log evidence, the number of hyperparameters and BIC's penalised value
//! `L − ½ p ln n`, a crude Occam factor, and the Laplace approximation of the evidence with the
//! kernel's log-hyperparameters integrated out under VBKS's prior `N(0, I)` (spec §2.3; the
//! noise stays a point estimate, as VBKS's `ρ`): the maximum a posteriori `θ̂` of
//! `log p(y | θ) + log N(θ; 0, I)`, then `log p(y | θ̂) − ½‖θ̂‖² − ½ log det H`, with `H` the
//! Hessian of the negative log joint in `θ` (central differences of the analytic gradient).
//! That is what full-θ VBKS's local ELBO approaches with a Gaussian `q(θ)` and exact `q(u)`.

use faer::Mat;
use faer::MatRef;
use serde_json::json;
use trustgp::fit::FitOptions;
use trustgp::kernels::{Kernel, ProductVariance};
use trustgp::linalg::{Cholesky, Parallelism};
use trustgp::means::Mean;
use trustgp::models::exact::{log_marginal_likelihood, ExactGp};
use trustgp::models::hyper::GpHyper;
use trustgp::optim::{minimize_lbfgsb, LbfgsOptions};
use trustgp::selection::{dominant_periods, KernelSpace, Structure};

type BoxError = Box<dyn std::error::Error>;

/// Noise variance every fit starts from (spec §3.6: 0.1 in standardised units).
const INITIAL_NOISE: f64 = 0.1;

/// One synthetic data set, standardised as VBKS sees it, with what it takes to express the
/// generating kernel in those units.
pub struct Standardised<'a> {
    /// The generating structure's name (as in the space).
    pub name: &'a str,
    /// Inputs divided by their std.
    pub x: MatRef<'a, f64>,
    /// Outputs divided by their std.
    pub y: &'a [f64],
    /// The generating kernel at its true hyperparameters, in the standardised units.
    pub truth: Kernel,
    /// The generating noise variance, in the standardised units.
    pub truth_noise: f64,
    /// The generating period, in the standardised units.
    pub truth_period: f64,
}

/// The expression of a generating kernel whose raw inputs are divided by `sx` and raw outputs
/// by `sy`: lengthscales of rq and periods of per are divided by `sx` (per's own lengthscale
/// acts on `sin(π r / p)` and has no unit), lin's variance gains `sx² / sy²` (one lin factor
/// per true kernel, which carries the output scale).
pub fn standardised_truth(index: usize, sx: f64, sy: f64) -> Result<Kernel, BoxError> {
    let p = std::f64::consts::TAU / sx;
    let expr = match index {
        0 => format!(
            "per(var=0.01, ls=1, period={p}) * lin(var={}) * rq(var=0.01, ls={}, alpha=1)",
            sx * sx / (9.0 * sy * sy),
            8.0 / sx
        ),
        1 => format!(
            "(per(var=0.01, ls=2, period={p}) + rq(var=0.01, ls={}, alpha=1)) * lin(var={})",
            3.0 / sx,
            sx * sx / (25.0 * sy * sy)
        ),
        _ => return Err(format!("no true kernel {index}").into()),
    };
    Ok(Kernel::parse_with(&expr, ProductVariance::EveryFactor)?)
}

/// Fit every kernel of `space` exactly on `data`; one JSON line per kernel, then a summary.
pub fn run(
    space: &KernelSpace,
    data: &Standardised,
    restarts: usize,
    seed: u64,
) -> Result<(), BoxError> {
    let n = data.y.len();
    let col: Vec<f64> = (0..n).map(|i| data.x[(i, 0)]).collect();
    let periods = dominant_periods(&col, data.y, 3);
    let hyper = |kernel: Kernel, noise: f64| GpHyper {
        kernel,
        mean: Mean::Zero,
        noise,
    };
    let truth_at_true = log_marginal_likelihood(
        &hyper(data.truth.clone(), data.truth_noise),
        data.x,
        data.y,
        0.0,
        Parallelism::Sequential,
        false,
    )?
    .value;
    let truth = Structure::parse(data.name)?;
    let mut rows = Vec::new();
    for structure in space.kernels() {
        let mut starts = vec![("spec", structure.instantiate(1)?)];
        if !periods.is_empty() {
            starts.push((
                "periodogram",
                structure.instantiate_with_periods(1, &periods)?,
            ));
        }
        starts.push((
            "true period",
            structure.instantiate_with_periods(1, &[data.truth_period; 3])?,
        ));
        let is_truth = *structure == truth;
        if is_truth {
            starts.push(("true hyperparameters", data.truth.clone()));
        }
        let mut best: Option<(f64, &str, ExactGp)> = None;
        for (label, kernel) in starts {
            let noise = if label == "true hyperparameters" {
                data.truth_noise
            } else {
                INITIAL_NOISE
            };
            let options = FitOptions {
                restarts,
                seed,
                profile_scale: false,
                ..FitOptions::default()
            };
            match ExactGp::fit(data.x, data.y, hyper(kernel, noise), &options) {
                Ok(gp) if best.as_ref().is_none_or(|b| gp.lml() > b.0) => {
                    best = Some((gp.lml(), label, gp));
                }
                Ok(_) => {}
                Err(e) => eprintln!("{structure} from the {label} start: {e}"),
            }
        }
        let Some((lml, label, gp)) = best else {
            continue;
        };
        let laplace = laplace_evidence(gp.hyper(), data.x, data.y);
        if let Err(e) = &laplace {
            eprintln!("{structure}: no Laplace evidence: {e}");
        }
        let laplace = laplace.ok();
        let p = gp.hyper().n_params();
        let line = json!({
            "true_kernel": data.name,
            "kernel": structure.to_string(),
            "is_truth": is_truth,
            "log_evidence": lml,
            "parameters": p,
            "bic_value": lml - 0.5 * p as f64 * (n as f64).ln(),
            "noise": gp.hyper().noise,
            "best_start": label,
            "fitted": gp.hyper().kernel.to_string(),
            "laplace_log_evidence": laplace.as_ref().map(|l| l.value),
            "map_log_likelihood": laplace.as_ref().map(|l| l.lml),
            "map_at_a_bound": laplace.as_ref().map(|l| l.at_bound),
            "map": laplace.as_ref().map(|l| l.kernel.clone()),
        });
        println!("{line}");
        rows.push(line);
    }
    let best_of = |key: &str| {
        rows.iter()
            .max_by(|a, b| {
                a[key]
                    .as_f64()
                    .unwrap_or(f64::NEG_INFINITY)
                    .total_cmp(&b[key].as_f64().unwrap_or(f64::NEG_INFINITY))
            })
            .map(|r| r["kernel"].clone())
    };
    println!(
        "{}",
        json!({
            "true_kernel": data.name,
            "truth_at_true_hyperparameters": truth_at_true,
            "largest_log_evidence": best_of("log_evidence"),
            "largest_bic_value": best_of("bic_value"),
            "largest_laplace_log_evidence": best_of("laplace_log_evidence"),
            "periodogram_periods": periods,
            "restarts": restarts,
        })
    );
    Ok(())
}

/// The Laplace approximation of `log ∫ p(y | θ) N(θ; 0, I) dθ` over the kernel's
/// log-hyperparameters, the noise held at its maximum a posteriori value.
struct Laplace {
    /// The approximate log evidence.
    value: f64,
    /// `log p(y | θ̂)` at the maximum a posteriori point.
    lml: f64,
    /// Whether a hyperparameter of `θ̂` sits at its bound (the approximation is then rough).
    at_bound: bool,
    /// The kernel at `θ̂`.
    kernel: String,
}

/// Step of the central differences of the gradient (in log-hyperparameters).
const HESSIAN_STEP: f64 = 1e-4;

fn laplace_evidence(start: &GpHyper, x: MatRef<'_, f64>, y: &[f64]) -> Result<Laplace, BoxError> {
    let k = start.kernel.n_params();
    // The negative log joint (without the prior's constant) and its gradient in the flat vector.
    let neg_joint = |v: &[f64]| -> Result<(f64, Vec<f64>), String> {
        let h = start.with_vec(v).map_err(|e| e.to_string())?;
        let l = log_marginal_likelihood(&h, x, y, 0.0, Parallelism::Sequential, true)
            .map_err(|e| e.to_string())?;
        let prior: f64 = v[..k].iter().map(|t| 0.5 * t * t).sum();
        let mut g: Vec<f64> = l.grad.iter().map(|d| -d).collect();
        for (gi, t) in g.iter_mut().zip(&v[..k]) {
            *gi += t;
        }
        Ok((prior - l.value, g))
    };
    let bounds = start.bounds();
    let options = LbfgsOptions {
        max_iter: 2000,
        max_evals: 5000,
        ..LbfgsOptions::default()
    };
    let map = minimize_lbfgsb(neg_joint, &start.to_vec(), &bounds, &options)?;
    let v = map.x;
    let at_bound = v[..k]
        .iter()
        .zip(&bounds)
        .any(|(t, (lo, hi))| *t <= lo + 1e-6 || *t >= hi - 1e-6);
    let mut hessian = Mat::<f64>::zeros(k, k);
    for j in 0..k {
        let (mut up, mut down) = (v.clone(), v.clone());
        up[j] += HESSIAN_STEP;
        down[j] -= HESSIAN_STEP;
        let (gu, gd) = (neg_joint(&up)?.1, neg_joint(&down)?.1);
        for i in 0..k {
            hessian[(i, j)] = (gu[i] - gd[i]) / (2.0 * HESSIAN_STEP);
        }
    }
    let symmetric = Mat::from_fn(k, k, |i, j| 0.5 * (hessian[(i, j)] + hessian[(j, i)]));
    let chol = Cholesky::factor(
        &symmetric,
        "the Hessian at the MAP",
        Parallelism::Sequential,
    )?;
    if chol.jitter() > 0.0 {
        return Err(format!(
            "the Hessian at the MAP is not positive definite (jitter {:e})",
            chol.jitter()
        )
        .into());
    }
    let h = start.with_vec(&v)?;
    let lml = log_marginal_likelihood(&h, x, y, 0.0, Parallelism::Sequential, false)?.value;
    Ok(Laplace {
        value: -map.f - 0.5 * chol.log_det(),
        lml,
        at_bound,
        kernel: h.kernel.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vbks_synthetic::TRUE_KERNELS;
    use faer::Mat;

    /// The standardised truth on `x / sx` is the raw truth on `x`, divided by `sy²`.
    #[test]
    fn the_standardised_truth_is_the_raw_kernel_in_standardised_units() {
        let (sx, sy) = (5.7, 0.07);
        let x = Mat::from_fn(12, 1, |i, _| -9.5 + 1.7 * i as f64);
        let xs = Mat::from_fn(12, 1, |i, _| x[(i, 0)] / sx);
        for (t, (_, expr)) in TRUE_KERNELS.iter().enumerate() {
            let raw = Kernel::parse_with(expr, ProductVariance::EveryFactor)
                .unwrap()
                .matrix(x.as_ref());
            let ours = standardised_truth(t, sx, sy).unwrap().matrix(xs.as_ref());
            for i in 0..12 {
                for j in 0..12 {
                    let want = raw[(i, j)] / (sy * sy);
                    let scale = raw[(i, i)].abs().max(raw[(j, j)].abs()) / (sy * sy);
                    assert!(
                        (ours[(i, j)] - want).abs() <= 1e-12 * scale.max(1e-300),
                        "kernel {t}, ({i}, {j}): {} vs {want}",
                        ours[(i, j)]
                    );
                }
            }
        }
    }

    /// On a one-hyperparameter kernel the Laplace evidence agrees with brute-force quadrature
    /// of `p(y | θ) N(θ; 0, 1)` over `θ = log σ²_lin` (at the MAP noise).
    #[test]
    fn the_laplace_evidence_matches_quadrature_on_one_hyperparameter() {
        let n = 60;
        let x = Mat::from_fn(n, 1, |i, _| -1.0 + 2.0 * i as f64 / (n - 1) as f64);
        let y: Vec<f64> = (0..n)
            .map(|i| 0.8 * x[(i, 0)] + 0.3 * (7.0 * i as f64).sin())
            .collect();
        let start = GpHyper {
            kernel: Kernel::parse_with("lin", ProductVariance::EveryFactor).unwrap(),
            mean: Mean::Zero,
            noise: 0.1,
        };
        let laplace = laplace_evidence(&start, x.as_ref(), &y).unwrap();
        assert!(!laplace.at_bound);
        // log p(y | θ, σ²) + log N(θ; 0, 1) with θ = log σ²_lin.
        let log_joint = |theta: f64, log_noise: f64| {
            let h = start.with_vec(&[theta, log_noise]).unwrap();
            log_marginal_likelihood(&h, x.as_ref(), &y, 0.0, Parallelism::Sequential, false)
                .unwrap()
                .value
                - 0.5 * theta * theta
                - 0.5 * (2.0 * std::f64::consts::PI).ln()
        };
        // The MAP (θ̂, log σ̂²), found independently by a coarse-to-fine pattern search.
        let (mut best_t, mut best_n) = (0.0, (0.1f64).ln());
        for step in [0.5, 0.1, 0.02, 0.004, 0.0008, 0.00016] {
            for _ in 0..40 {
                let mut moved = false;
                for (dt, dn) in [(step, 0.0), (-step, 0.0), (0.0, step), (0.0, -step)] {
                    if log_joint(best_t + dt, best_n + dn) > log_joint(best_t, best_n) {
                        best_t += dt;
                        best_n += dn;
                        moved = true;
                    }
                }
                if !moved {
                    break;
                }
            }
        }
        // ∫ exp(log_joint(θ, n̂)) dθ by the trapezoid rule on [θ̂ − 8, θ̂ + 8].
        let h = 0.002;
        let values: Vec<f64> = (0..=8000)
            .map(|i| log_joint(best_t - 8.0 + h * i as f64, best_n))
            .collect();
        let top = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = values.iter().map(|v| (v - top).exp()).sum::<f64>() * h;
        let quadrature = top + sum.ln();
        assert!(
            (laplace.value - quadrature).abs() < 0.02,
            "Laplace {} vs quadrature {quadrature}",
            laplace.value
        );
    }
}
