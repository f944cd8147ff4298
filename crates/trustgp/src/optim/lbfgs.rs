//! The bound-constrained L-BFGS driver (projected L-BFGS with an ε-active set).
//!
//! Each iteration fixes the variables that sit at (or within a small band of) a bound with the
//! gradient pushing outward, takes the two-loop L-BFGS direction on the remaining free variables,
//! and searches along the projection of that direction onto the box. This is simpler than
//! L-BFGS-B's Cauchy-point/subspace machinery and, for the small, mostly interior problems of
//! hyperparameter fitting, needs about as many evaluations.

use super::bounds::{self, projected_gradient_norm};
use super::error::OptimError;
use super::line_search::{self, Outcome};
use super::memory::Memory;
use super::objective::{Eval, Evaluator, Objective, Point};
use super::path::ProjectedPath;
use super::result::{OptimResult, StopReason};

/// Upper limit on the band next to a bound inside which a variable whose gradient points out of
/// the box is fixed to that bound. Without the band, a variable approaching a bound would only
/// creep towards it in ever smaller steps (Bertsekas' ε-active set); the band shrinks with the
/// projected gradient so that it vanishes at a solution.
const MAX_ACTIVE_BAND: f64 = 1e-3;

/// Settings for [`minimize_lbfgsb`].
#[derive(Debug, Clone, PartialEq)]
pub struct LbfgsOptions {
    /// Maximum number of iterations (accepted steps).
    pub max_iter: usize,
    /// Maximum number of objective evaluations, failed ones included; never exceeded.
    pub max_evals: usize,
    /// Number of curvature pairs kept (at least 1).
    pub memory: usize,
    /// Stop when `‖P(x − g) − x‖∞ ≤ grad_tol` (the projected gradient, as in SciPy's `pgtol`).
    pub grad_tol: f64,
    /// Stop when `(f_k − f_{k+1}) / max(|f_k|, |f_{k+1}|, 1) ≤ f_rel_tol`; the default is SciPy's
    /// `factr · ε`.
    pub f_rel_tol: f64,
    /// On how many of the first iterations (after the start) to ask the objective for a
    /// curvature approximation ([`Objective::eval_with_curvature`]); each one supplied at the
    /// start or at an accepted point restarts the quasi-Newton model from it. Objectives
    /// without one are unaffected. The default, 2, takes MO-RCGP on Energy (paper setting)
    /// from 19 evaluations to 11 to the same optimum (`docs/benchmarks.md`).
    pub curvature_iterations: usize,
    /// Rescale each supplied curvature approximation `B₀` by `sᵀy / sᵀB₀s` at the first step
    /// taken from it, so that its size matches the objective's curvature along that step: for
    /// approximations of the right shape but an uncertain size, such as the curvature a pilot
    /// fit hands the full fit ([`pilot`](crate::fit::pilot)). Off by default: a Gauss–Newton
    /// matrix has the right size.
    pub rescale_curvature: bool,
}

impl Default for LbfgsOptions {
    fn default() -> Self {
        LbfgsOptions {
            max_iter: 1000,
            max_evals: 2000,
            memory: 10,
            grad_tol: 1e-5,
            f_rel_tol: 1e7 * f64::EPSILON,
            curvature_iterations: 2,
            rescale_curvature: false,
        }
    }
}

impl LbfgsOptions {
    fn validate(&self) -> Result<(), OptimError> {
        if self.memory == 0 {
            return Err(OptimError::InvalidOptions(
                "memory must be at least 1".into(),
            ));
        }
        if self.max_evals == 0 {
            return Err(OptimError::InvalidOptions(
                "max_evals must be at least 1".into(),
            ));
        }
        // Written as comparisons that are false for NaN, so NaN tolerances are rejected too.
        let tolerances_valid = self.grad_tol >= 0.0 && self.f_rel_tol >= 0.0;
        if !tolerances_valid {
            return Err(OptimError::InvalidOptions(format!(
                "tolerances must be non-negative (grad_tol = {}, f_rel_tol = {})",
                self.grad_tol, self.f_rel_tol
            )));
        }
        Ok(())
    }
}

/// Euclidean norm.
fn norm(v: &[f64]) -> f64 {
    v.iter().map(|vi| vi * vi).sum::<f64>().sqrt()
}

/// The search direction at `point`: L-BFGS on the free variables, and a move straight to the
/// bound for the ε-active ones (so that a unit step lands them exactly on it). Also returns
/// whether the memory scaled the direction, in which case a unit step is the natural first trial.
fn search_direction(memory: &Memory, point: &Point, bounds: &[(f64, f64)]) -> (Vec<f64>, bool) {
    let band = projected_gradient_norm(&point.x, &point.g, bounds).min(MAX_ACTIVE_BAND);
    let targets: Vec<Option<f64>> = point
        .x
        .iter()
        .zip(&point.g)
        .zip(bounds)
        .map(|((&x, &g), &(lo, hi))| {
            if g > 0.0 && x - lo <= band {
                Some(lo)
            } else if g < 0.0 && hi - x <= band {
                Some(hi)
            } else {
                None
            }
        })
        .collect();
    let free: Vec<bool> = targets.iter().map(Option::is_none).collect();
    let (mut d, scaled) = memory.direction(&point.g, &free);
    for ((di, target), &x) in d.iter_mut().zip(&targets).zip(&point.x) {
        if let Some(bound) = target {
            *di = bound - x;
        }
    }
    (d, scaled)
}

/// Minimises `obj` over the box `bounds` (`(lo, hi)` per variable, either may be infinite)
/// starting from `x0`, which is first projected into the box.
///
/// Stops when the projected gradient or the relative decrease of `f` meets its tolerance (the
/// decrease achieved, or, when a search finds none, the one its steps promised), when
/// `max_iter` or `max_evals` is reached, when the objective asks to stop
/// ([`Objective::stop_requested`]), when no step along even the steepest-descent direction
/// decreases `f`, or when progress stalls against a region where the objective fails (see
/// [`StopReason`]). The returned point is the best one evaluated, so `f` is never worse than at
/// the (projected) start.
///
/// # Errors
/// Invalid inputs (length mismatch, `lo > hi`, NaN anywhere, non-finite `x0`, bad options), a
/// failed evaluation at the starting point, or a gradient of the wrong length.
pub fn minimize_lbfgsb<O: Objective>(
    mut obj: O,
    x0: &[f64],
    bounds: &[(f64, f64)],
    opts: &LbfgsOptions,
) -> Result<OptimResult, OptimError> {
    opts.validate()?;
    bounds::validate(x0, bounds)?;
    let mut x = x0.to_vec();
    bounds::project(&mut x, bounds);
    let mut ev = Evaluator::new(&mut obj, opts.max_evals);
    ev.curvature_wanted = opts.curvature_iterations > 0;
    let mut current = match ev.eval(&x)? {
        Eval::Valid(point) => point,
        Eval::Failed(msg) => return Err(OptimError::StartFailed(msg)),
    };
    let stationary = |p: &Point| projected_gradient_norm(&p.x, &p.g, bounds) <= opts.grad_tol;
    let mut memory = Memory::new(opts.memory);
    if let Some(b0) = current.curvature.take() {
        memory.restart_from(b0, opts.rescale_curvature);
    }
    let mut n_iter = 0;
    let reason = loop {
        if stationary(&current) {
            break StopReason::GradientTolerance;
        }
        if n_iter >= opts.max_iter {
            break StopReason::MaxIterations;
        }
        if ev.exhausted() {
            break ev.exhausted_reason();
        }
        ev.curvature_wanted = n_iter < opts.curvature_iterations;
        let (d, scaled) = search_direction(&memory, &current, bounds);
        let path = ProjectedPath::new(&current.x, &d, bounds);
        let slope = path.slope(0.0, &current.g);
        let gain_tol = opts.f_rel_tol * current.f.abs().max(1.0);
        let outcome = if slope < 0.0 {
            // Without curvature information, try a step of unit length (or the plain gradient
            // step if that is shorter), as L-BFGS-B does on its first iteration.
            let alpha0 = if scaled {
                1.0
            } else {
                (1.0 / norm(&d)).min(1.0)
            };
            line_search::search(&mut ev, &current, &path, alpha0, gain_tol)?
        } else {
            Outcome::NoDecrease
        };
        let line_search::Step {
            point: mut next,
            blocked_gain,
        } = match outcome {
            Outcome::Accepted(step) => step,
            // Any step still on offer gains less than the relative-decrease tolerance, so the
            // run would stop on that rule after it anyway; what failed the search is rounding
            // noise of about that size (a weighted LOO-CV objective on an ill-conditioned
            // kernel matrix carries ~1e-9 relative). Retrying from steepest descent would
            // only meet the same noise again.
            Outcome::Flat => break StopReason::PredictedDecrease,
            Outcome::NoDecrease => {
                if ev.exhausted() {
                    break ev.exhausted_reason();
                }
                if memory.is_empty() {
                    break StopReason::LineSearchFailed;
                }
                // The quasi-Newton model misled the search: retry from steepest descent.
                memory.clear();
                continue;
            }
        };
        n_iter += 1;
        let s = next.x.iter().zip(&current.x).map(|(a, b)| a - b).collect();
        let y = next.g.iter().zip(&current.g).map(|(a, b)| a - b).collect();
        match next.curvature.take() {
            Some(b0) => memory.restart_from(b0, opts.rescale_curvature),
            None => memory.push(s, y),
        }
        let f_old = current.f;
        current = next;
        // A request to stop outranks any other reason: the objective knows why.
        if ev.stop_requested() {
            break StopReason::Requested;
        }
        if stationary(&current) {
            break StopReason::GradientTolerance;
        }
        let tol = opts.f_rel_tol * f_old.abs().max(current.f.abs()).max(1.0);
        // Against a failing region, stop once either the last step or the edge ahead offers
        // less than the tolerance; f has not levelled off, so this is not convergence.
        if let Some(gain) = blocked_gain {
            if gain <= tol || f_old - current.f <= tol {
                break StopReason::FailureBoundary;
            }
        }
        if f_old - current.f <= tol {
            break StopReason::RelativeDecrease;
        }
    };
    // A rejected trial point can be better than the last accepted iterate; never discard it.
    let result = match ev.best() {
        Some(best) if best.f < current.f => best.clone(),
        _ => current,
    };
    Ok(OptimResult {
        x: result.x,
        f: result.f,
        grad: result.g,
        n_iter,
        n_evals: ev.n_evals(),
        converged: reason.is_converged(),
        reason,
        message: reason.to_string(),
    })
}
