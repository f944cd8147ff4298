//! What an optimiser run did, and what of it a user should be warned about.

use crate::optim::OptimResult;

/// How close (relative to `1 + |bound|`) a final parameter must be to a bound of its box to
/// count as sitting on it. The projected optimisers put a parameter exactly on its bound; a
/// parameter mapped back from a profiled optimum lands within rounding of it.
const AT_BOUND_TOL: f64 = 1e-8;

/// How much lower (relative to `1 + |start|`) the final objective may be than the starting one
/// before the run counts as having ended worse than it began. Only Adam, which returns its last
/// iterate, can end lower; a minibatch estimate carries noise, so the test leaves it a little room.
const WORSE_TOL: f64 = 1e-6;

/// How much lower (relative to `1 + |highest|`) the final objective may be than the highest one
/// the run evaluated before it counts as having diverged. The first evaluation can be far below
/// where a run soon gets (SVGP's first natural-gradient step), so a run that climbs and then
/// falls back must be caught against its peak; the room is wide enough for minibatch noise.
const FALL_TOL: f64 = 0.1;

/// What one optimiser run did: the same report for every model and optimiser.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FitReport {
    /// Index of the run (0 = the initial parameters, then the random restarts, then any run
    /// that continued an earlier one).
    pub start: usize,
    /// Final value of the maximised objective (the log marginal likelihood, LOO-CV score, ELBO
    /// or collapsed bound; −∞ if the run failed).
    pub objective: f64,
    /// The objective at the run's starting point (NaN if the run failed there).
    pub initial_objective: f64,
    /// The highest objective the run evaluated (−∞ if none succeeded).
    pub highest_objective: f64,
    /// Optimiser iterations (accepted steps).
    pub iterations: usize,
    /// Objective evaluations, failed ones included.
    pub evaluations: usize,
    /// Whether a convergence rule (not a limit, a failure or a stop request) ended the run,
    /// and the run ended no worse than it started.
    pub converged: bool,
    /// Why the run stopped, or the error of a failed run.
    pub message: String,
    /// Wall-clock seconds of the run.
    pub seconds: f64,
    /// Parameters that ended on a bound of their box, as `name (lower)` or `name (upper)`;
    /// parameters held fixed by a box of zero width are not listed.
    pub at_bounds: Vec<String>,
}

impl FitReport {
    /// The report of a run that maximised the objective by minimising its negation: `result`
    /// holds the negated values, `seen` the (maximised) objective at the starting point and the
    /// highest one evaluated.
    /// `names` names the entries of the parameter vector (entries past its end are called
    /// `parameter i`).
    pub(crate) fn from_negated(
        start: usize,
        result: &OptimResult,
        seen: [f64; 2],
        seconds: f64,
        bounds: &[(f64, f64)],
        names: &[String],
    ) -> FitReport {
        let objective = -result.f;
        let [initial, highest] = seen;
        FitReport {
            start,
            objective,
            initial_objective: initial,
            highest_objective: highest,
            iterations: result.n_iter,
            evaluations: result.n_evals,
            converged: result.converged && !ended_worse(objective, initial, highest),
            message: result.message.clone(),
            seconds,
            at_bounds: at_bounds(&result.x, bounds, names),
        }
    }

    /// The report of a run that failed with `message`.
    pub(crate) fn failed(start: usize, message: String, seconds: f64) -> FitReport {
        FitReport {
            start,
            objective: f64::NEG_INFINITY,
            initial_objective: f64::NAN,
            highest_objective: f64::NEG_INFINITY,
            iterations: 0,
            evaluations: 0,
            converged: false,
            message,
            seconds,
            at_bounds: Vec::new(),
        }
    }

    /// Whether the run ended with a lower objective than it started from, or far below the
    /// highest one it evaluated: the optimiser diverged.
    pub fn ended_worse(&self) -> bool {
        ended_worse(
            self.objective,
            self.initial_objective,
            self.highest_objective,
        )
    }

    /// What a user should know about this run: that it ended worse than it started (the
    /// optimiser diverged), that it stopped without converging (an iteration or evaluation
    /// limit, a failure), and which parameters ended on a bound of their range. Empty for a
    /// run that converged inside its bounds.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.ended_worse() {
            out.push(format!(
                "the optimiser diverged: it ended with a worse objective ({:.6e}) than it \
                 started from ({:.6e}) or reached on the way ({:.6e}); with Adam, lower the \
                 learning rate",
                self.objective, self.initial_objective, self.highest_objective
            ));
        } else if !self.converged {
            out.push(format!(
                "the optimiser stopped without converging after {} iterations and {} \
                 evaluations ({}); raise the iteration limit or check the result",
                self.iterations, self.evaluations, self.message
            ));
        }
        if !self.at_bounds.is_empty() {
            out.push(format!(
                "parameters at a bound of their range: {} (the data may not determine them, \
                 or the range is too narrow)",
                self.at_bounds.join(", ")
            ));
        }
        out
    }
}

/// The run with the highest objective (the one whose parameters a multi-start fit keeps; the
/// last of equal ones, which is the continuation of a run that continued), if any succeeded.
pub fn best(reports: &[FitReport]) -> Option<&FitReport> {
    reports
        .iter()
        .filter(|r| r.objective > f64::NEG_INFINITY)
        .max_by(|a, b| a.objective.total_cmp(&b.objective))
}

fn ended_worse(objective: f64, initial: f64, highest: f64) -> bool {
    objective < initial - WORSE_TOL * (1.0 + initial.abs())
        || objective < highest - FALL_TOL * (1.0 + highest.abs())
}

/// `name (lower)` / `name (upper)` for each entry of `x` on a bound of a box of non-zero width.
fn at_bounds(x: &[f64], bounds: &[(f64, f64)], names: &[String]) -> Vec<String> {
    let near = |v: f64, b: f64| b.is_finite() && (v - b).abs() <= AT_BOUND_TOL * (1.0 + b.abs());
    x.iter()
        .zip(bounds)
        .enumerate()
        .filter(|(_, (_, (lo, hi)))| lo < hi)
        .filter_map(|(i, (&v, &(lo, hi)))| {
            let side = if near(v, lo) {
                "lower"
            } else if near(v, hi) {
                "upper"
            } else {
                return None;
            };
            let name = names
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("parameter {i}"));
            Some(format!("{name} ({side})"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::optim::StopReason;

    fn result(x: Vec<f64>, f: f64, reason: StopReason) -> OptimResult {
        OptimResult {
            x,
            f,
            grad: Vec::new(),
            n_iter: 7,
            n_evals: 9,
            converged: reason.is_converged(),
            reason,
            message: reason.to_string(),
        }
    }

    #[test]
    fn a_converged_run_inside_its_bounds_has_no_warnings() {
        let r = result(vec![0.5, 1.0], -3.0, StopReason::GradientTolerance);
        let names = ["a".to_string(), "b".to_string()];
        let rep =
            FitReport::from_negated(0, &r, [1.0, 3.0], 0.1, &[(0.0, 1.0), (1.0, 1.0)], &names);
        // `b` sits on a box of zero width: it is held fixed, not pushed against a bound.
        assert!(rep.converged && rep.at_bounds.is_empty(), "{rep:?}");
        assert_eq!(rep.objective, 3.0);
        assert!(rep.warnings().is_empty());
    }

    #[test]
    fn bounds_limits_and_a_worse_end_are_warned_about() {
        let names = ["k0.se.ls".to_string()];
        // On the upper bound within rounding, the second entry unnamed on its lower bound.
        let r = result(vec![2.0 + 1e-12, -1.0], -3.0, StopReason::GradientTolerance);
        let rep =
            FitReport::from_negated(0, &r, [1.0, 3.0], 0.0, &[(0.0, 2.0), (-1.0, 5.0)], &names);
        assert_eq!(rep.at_bounds, ["k0.se.ls (upper)", "parameter 1 (lower)"]);
        let w = rep.warnings();
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("k0.se.ls (upper), parameter 1 (lower)"),
            "{w:?}"
        );
        // A limit is not convergence.
        let r = result(vec![0.5], -3.0, StopReason::MaxIterations);
        let rep = FitReport::from_negated(0, &r, [1.0, 3.0], 0.0, &[(0.0, 1.0)], &names);
        assert!(!rep.converged && !rep.ended_worse());
        let w = rep.warnings();
        assert!(
            w.len() == 1 && w[0].contains("maximum number of iterations"),
            "{w:?}"
        );
        // Ending below the start is divergence, whatever the optimiser's own rule said.
        let r = result(vec![0.5], 3.0, StopReason::Plateau);
        let rep = FitReport::from_negated(0, &r, [-2.0, -2.0], 0.0, &[(0.0, 1.0)], &names);
        assert!(rep.ended_worse() && !rep.converged);
        let w = rep.warnings();
        assert!(w.len() == 1 && w[0].contains("diverged"), "{w:?}");
        // Within the tolerance is not worse.
        let r = result(vec![0.5], 2.0 + 1e-9, StopReason::Plateau);
        let rep = FitReport::from_negated(0, &r, [-2.0, -2.0], 0.0, &[(0.0, 1.0)], &names);
        assert!(rep.converged && !rep.ended_worse());
        // Above the start but far below the peak of the run (−3 < 5 − 0.1 · 6): diverged;
        // within a tenth of (1 + |peak|) of it (−3 ≥ −2.75 − 0.375): not.
        let r = result(vec![0.5], 3.0, StopReason::Plateau);
        let rep = FitReport::from_negated(0, &r, [-9.0, 5.0], 0.0, &[(0.0, 1.0)], &names);
        assert!(rep.ended_worse() && !rep.converged);
        let rep = FitReport::from_negated(0, &r, [-9.0, -2.75], 0.0, &[(0.0, 1.0)], &names);
        assert!(!rep.ended_worse() && rep.converged);
    }

    #[test]
    fn the_best_report_is_the_highest_successful_one_and_the_last_of_equals() {
        let ok = |start, objective| FitReport {
            start,
            objective,
            ..FitReport::failed(start, String::new(), 0.0)
        };
        assert!(best(&[FitReport::failed(0, "x".into(), 0.0)]).is_none());
        let reps = [
            ok(0, 1.0),
            ok(1, 3.0),
            FitReport::failed(2, "x".into(), 0.0),
            ok(3, 3.0),
        ];
        assert_eq!(best(&reps).unwrap().start, 3);
    }
}
