//! Adam with projection onto the box, for stochastic objectives.

use std::collections::VecDeque;

use super::bounds;
use super::error::OptimError;
use super::objective::{Eval, Evaluator, Objective};
use super::result::{OptimResult, StopReason};

/// Times a step is halved after the objective fails at its end point before giving up.
const MAX_BACKOFFS: usize = 10;

/// Settings for [`minimize_adam`].
#[derive(Debug, Clone, PartialEq)]
pub struct AdamOptions {
    /// Learning rate (step size), > 0.
    pub lr: f64,
    /// Decay rate of the first-moment estimate, in `[0, 1)`.
    pub beta1: f64,
    /// Decay rate of the second-moment estimate, in `[0, 1)`.
    pub beta2: f64,
    /// Denominator offset guarding against division by a vanishing second moment, > 0.
    pub eps: f64,
    /// Maximum number of iterations.
    pub max_iter: usize,
    /// Stop when the mean of `f` over the last `window` iterations improves on the mean over the
    /// `window` before by at most this fraction of `max(|means|, 1)`. Means rather than single
    /// values because a stochastic `f` fluctuates from step to step.
    pub f_rel_tol: f64,
    /// Window length for the early-stopping test, ≥ 1.
    pub window: usize,
}

impl Default for AdamOptions {
    fn default() -> Self {
        AdamOptions {
            lr: 0.01,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            max_iter: 1000,
            f_rel_tol: 1e-6,
            window: 50,
        }
    }
}

impl AdamOptions {
    fn validate(&self) -> Result<(), OptimError> {
        let valid = self.lr > 0.0
            && self.lr.is_finite()
            && (0.0..1.0).contains(&self.beta1)
            && (0.0..1.0).contains(&self.beta2)
            && self.eps > 0.0
            && self.f_rel_tol >= 0.0
            && self.window >= 1;
        if valid {
            Ok(())
        } else {
            Err(OptimError::InvalidOptions(format!("{self:?}")))
        }
    }
}

/// Whether the mean of the newer half of `history` (two windows of `f`) improved on the older
/// half by at most `tol` relative.
fn plateaued(history: &VecDeque<f64>, window: usize, tol: f64) -> bool {
    if history.len() < 2 * window {
        return false;
    }
    let older = history.iter().take(window).sum::<f64>() / window as f64;
    let newer = history.iter().skip(window).sum::<f64>() / window as f64;
    older - newer <= tol * older.abs().max(newer.abs()).max(1.0)
}

/// Minimises `obj` over the box `bounds` with Adam, projecting every iterate into the box.
///
/// Returns the final iterate (not the lowest `f` seen, which for a stochastic objective would be
/// biased towards lucky evaluations). If the objective fails at a step's end point the step is
/// halved, up to a limit, without updating the moment estimates.
///
/// # Errors
/// Invalid inputs or options, a failed evaluation at the starting point, or a gradient of the
/// wrong length.
pub fn minimize_adam<O: Objective>(
    mut obj: O,
    x0: &[f64],
    bounds: &[(f64, f64)],
    opts: &AdamOptions,
) -> Result<OptimResult, OptimError> {
    opts.validate()?;
    bounds::validate(x0, bounds)?;
    let mut x = x0.to_vec();
    bounds::project(&mut x, bounds);
    let mut ev = Evaluator::new(&mut obj, usize::MAX);
    let mut current = match ev.eval(&x)? {
        Eval::Valid(point) => point,
        Eval::Failed(msg) => return Err(OptimError::StartFailed(msg)),
    };
    let n = x.len();
    let (mut m, mut v) = (vec![0.0; n], vec![0.0; n]);
    let mut history = VecDeque::from([current.f]);
    // β₁ᵗ and β₂ᵗ, kept as running products for the bias corrections (Kingma & Ba, Algorithm 1).
    let (mut beta1_t, mut beta2_t) = (1.0, 1.0);
    let mut n_iter = 0;
    let reason = 'iterate: loop {
        if n_iter >= opts.max_iter {
            break StopReason::MaxIterations;
        }
        if ev.exhausted() {
            break ev.exhausted_reason();
        }
        beta1_t *= opts.beta1;
        beta2_t *= opts.beta2;
        // The moments start at zero, so they are biased towards it by a factor 1 − βᵗ.
        let (c1, c2) = (1.0 - beta1_t, 1.0 - beta2_t);
        let step: Vec<f64> = m
            .iter_mut()
            .zip(v.iter_mut())
            .zip(&current.g)
            .map(|((mi, vi), &g)| {
                *mi = opts.beta1 * *mi + (1.0 - opts.beta1) * g;
                *vi = opts.beta2 * *vi + (1.0 - opts.beta2) * g * g;
                opts.lr * (*mi / c1) / ((*vi / c2).sqrt() + opts.eps)
            })
            .collect();
        let (mut scale, mut backoffs) = (1.0, 0);
        let next = loop {
            let mut trial: Vec<f64> = current
                .x
                .iter()
                .zip(&step)
                .map(|(xi, si)| xi - scale * si)
                .collect();
            bounds::project(&mut trial, bounds);
            match ev.eval(&trial)? {
                Eval::Valid(point) => break point,
                Eval::Failed(_) if ev.exhausted() => break 'iterate ev.exhausted_reason(),
                Eval::Failed(_) if backoffs < MAX_BACKOFFS => {
                    backoffs += 1;
                    scale *= 0.5;
                }
                Eval::Failed(_) => break 'iterate StopReason::ObjectiveFailed,
            }
        };
        current = next;
        n_iter += 1;
        history.push_back(current.f);
        if history.len() > 2 * opts.window {
            history.pop_front();
        }
        if plateaued(&history, opts.window, opts.f_rel_tol) {
            break StopReason::Plateau;
        }
    };
    Ok(OptimResult {
        x: current.x,
        f: current.f,
        grad: current.g,
        n_iter,
        n_evals: ev.n_evals(),
        converged: reason.is_converged(),
        reason,
        message: reason.to_string(),
    })
}
