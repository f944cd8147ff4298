//! The outcome of an optimisation run.

use std::fmt;

/// Which stopping rule ended a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The infinity norm of the projected gradient fell to `grad_tol`.
    GradientTolerance,
    /// The relative decrease of the objective over one iteration fell to `f_rel_tol`.
    RelativeDecrease,
    /// The line search found no decrease, and the steps left to it promised (to first order) a
    /// relative decrease of at most `f_rel_tol`: `f` is flat to within the tolerance, and
    /// rounding noise of about that size is what the search met.
    PredictedDecrease,
    /// Adam's windowed mean objective stopped improving by more than `f_rel_tol`.
    Plateau,
    /// The iteration limit was reached.
    MaxIterations,
    /// The evaluation limit was reached.
    MaxEvaluations,
    /// The objective asked to stop ([`Objective::stop_requested`](super::Objective)).
    Requested,
    /// No acceptable step was found even along the steepest-descent direction; usually the
    /// objective is too noisy (or too rounded) to make further progress at this point.
    LineSearchFailed,
    /// The objective failed at every step size tried from the current point.
    ObjectiveFailed,
    /// Progress stalled against the region where the objective fails: the last step was cut
    /// short by failed evaluations and gained almost nothing. The point is the best feasible
    /// one found, but the minimum of `f` lies (or seems to lie) beyond that region's edge.
    FailureBoundary,
}

impl StopReason {
    /// Whether this reason counts as convergence (a tolerance was met, not a limit or failure).
    pub fn is_converged(self) -> bool {
        matches!(
            self,
            StopReason::GradientTolerance
                | StopReason::RelativeDecrease
                | StopReason::PredictedDecrease
                | StopReason::Plateau
        )
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            StopReason::GradientTolerance => "projected gradient norm <= grad_tol",
            StopReason::RelativeDecrease => "relative reduction of f <= f_rel_tol",
            StopReason::PredictedDecrease => {
                "no decrease found, and the predicted relative reduction of f <= f_rel_tol"
            }
            StopReason::Plateau => "windowed mean of f stopped improving",
            StopReason::MaxIterations => "maximum number of iterations reached",
            StopReason::MaxEvaluations => "maximum number of evaluations reached",
            StopReason::Requested => "stopped at the objective's request",
            StopReason::LineSearchFailed => "line search failed to find a decrease",
            StopReason::ObjectiveFailed => "objective failed at every trial step",
            StopReason::FailureBoundary => "stalled at the edge of the region where f fails",
        };
        f.write_str(text)
    }
}

/// The point an optimiser returns, with its diagnostics.
#[derive(Debug, Clone, PartialEq)]
pub struct OptimResult {
    /// The returned point (inside the bounds).
    pub x: Vec<f64>,
    /// Objective value at `x`.
    pub f: f64,
    /// Gradient at `x`.
    pub grad: Vec<f64>,
    /// Iterations taken (accepted steps).
    pub n_iter: usize,
    /// Objective evaluations used, failed ones included.
    pub n_evals: usize,
    /// Whether a convergence tolerance was met (see [`StopReason::is_converged`]).
    pub converged: bool,
    /// Why the run stopped.
    pub reason: StopReason,
    /// Human-readable summary of `reason`.
    pub message: String,
}
