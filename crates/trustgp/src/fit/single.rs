//! One optimiser run with a progress observer: the training loop of the approximate models
//! (SGPR, SVGP, RCSVGP, CaGP, RCaGP).
//!
//! Every approximate model maximises an objective (an ELBO or a collapsed bound) over a flat
//! vector of unconstrained parameters. Deterministic objectives default to L-BFGS, which needs
//! far fewer evaluations than Adam; stochastic (minibatch) objectives and the papers' protocols
//! use Adam. Both stop early once the objective stops improving, and report every evaluation to
//! an observer so that a front end can draw a progress bar.

use std::time::Instant;

use super::FitReport;
use crate::models::ModelError;
use crate::optim::{minimize_adam, minimize_lbfgsb, AdamOptions, LbfgsOptions, OptimResult};

/// Which optimiser trains the model, with its settings.
#[derive(Clone, Debug, PartialEq)]
pub enum Optimizer {
    /// Adam (the only choice for minibatch objectives).
    Adam(AdamOptions),
    /// L-BFGS with box bounds (deterministic objectives).
    Lbfgs(LbfgsOptions),
}

impl Optimizer {
    /// The papers' protocol: `steps` Adam steps at learning rate `lr`, no early stopping.
    pub fn adam_fixed_steps(steps: usize, lr: f64) -> Optimizer {
        Optimizer::Adam(AdamOptions {
            lr,
            max_iter: steps,
            f_rel_tol: 0.0,
            window: steps.max(1),
            ..AdamOptions::default()
        })
    }

    /// Adam for at most `max_steps` steps at learning rate `lr`, stopped early when the mean
    /// objective over the last `window` steps improves on the window before by less than
    /// `f_rel_tol` (relative).
    pub fn adam_early_stopping(max_steps: usize, lr: f64, window: usize, f_rel_tol: f64) -> Self {
        Optimizer::Adam(AdamOptions {
            lr,
            max_iter: max_steps,
            f_rel_tol,
            window,
            ..AdamOptions::default()
        })
    }

    /// L-BFGS with SciPy's default tolerances and at most `max_iter` iterations.
    pub fn lbfgs(max_iter: usize) -> Optimizer {
        Optimizer::Lbfgs(LbfgsOptions {
            max_iter,
            max_evals: 2 * max_iter + 20,
            ..LbfgsOptions::default()
        })
    }
}

/// Maximises `objective` (value and gradient in the unconstrained parameters) from `x0` within
/// `bounds` (whose entries `names` names, for the report), calling `observe(evaluation, value)`
/// after every successful evaluation.
///
/// Returns the final parameters and the report.
///
/// # Errors
/// The optimiser's errors (invalid options, a failed first evaluation).
pub fn maximize<F>(
    mut objective: F,
    x0: &[f64],
    bounds: &[(f64, f64)],
    names: &[String],
    optimizer: &Optimizer,
    observe: &mut dyn FnMut(usize, f64),
) -> Result<(Vec<f64>, FitReport), ModelError>
where
    F: FnMut(&[f64]) -> Result<(f64, Vec<f64>), ModelError>,
{
    let start = Instant::now();
    let mut evaluations = 0;
    // The objective at `x0`, where both optimisers evaluate first, and the highest one seen.
    let mut initial = f64::NAN;
    let mut highest = f64::NEG_INFINITY;
    let negated = |x: &[f64]| -> Result<(f64, Vec<f64>), ModelError> {
        let (f, g) = objective(x)?;
        evaluations += 1;
        if evaluations == 1 {
            initial = f;
        }
        highest = highest.max(f);
        if f.is_finite() {
            observe(evaluations, f);
        }
        Ok((-f, g.into_iter().map(|v| -v).collect()))
    };
    let result: OptimResult = match optimizer {
        Optimizer::Adam(opts) => minimize_adam(negated, x0, bounds, opts)?,
        Optimizer::Lbfgs(opts) => minimize_lbfgsb(negated, x0, bounds, opts)?,
    };
    let seconds = start.elapsed().as_secs_f64();
    let report = FitReport::from_negated(0, &result, [initial, highest], seconds, bounds, names);
    Ok((result.x, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A concave quadratic with its maximum at (1, −2).
    fn quadratic(x: &[f64]) -> Result<(f64, Vec<f64>), ModelError> {
        let (a, b) = (x[0] - 1.0, x[1] + 2.0);
        Ok((-(a * a + 3.0 * b * b), vec![-2.0 * a, -6.0 * b]))
    }

    #[test]
    fn both_optimizers_find_the_maximum_and_report_every_evaluation() {
        let bounds = [(-10.0, 10.0); 2];
        // Adam's fixed step size leaves it circling the optimum at about the step size.
        for (opt, tol) in [
            (Optimizer::lbfgs(100), 1e-6),
            (Optimizer::adam_early_stopping(5000, 0.05, 20, 1e-10), 3e-2),
        ] {
            let mut seen = Vec::new();
            let (x, report) = maximize(quadratic, &[0.0, 0.0], &bounds, &[], &opt, &mut |i, f| {
                seen.push((i, f))
            })
            .unwrap();
            assert!(
                (x[0] - 1.0).abs() < tol && (x[1] + 2.0).abs() < tol,
                "{x:?}"
            );
            assert!(report.objective <= 0.0 && report.objective > -4.0 * tol * tol);
            assert_eq!(seen.len(), report.evaluations);
            assert!(seen.windows(2).all(|w| w[1].0 == w[0].0 + 1));
        }
    }

    #[test]
    fn fixed_steps_runs_exactly_that_many_steps() {
        let (_, report) = maximize(
            quadratic,
            &[0.0, 0.0],
            &[(-10.0, 10.0); 2],
            &[],
            &Optimizer::adam_fixed_steps(50, 0.01),
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!(report.iterations, 50);
        assert!(!report.converged);
    }

    #[test]
    fn a_diverging_adam_run_is_not_converged_and_is_warned_about() {
        // A learning rate far beyond the problem's scale throws Adam to the box's corners,
        // where its plateau rule (the windowed mean stops moving) would call it converged.
        let names = ["a".to_string(), "b".to_string()];
        let opt = Optimizer::adam_early_stopping(200, 1e10, 5, 1e-4);
        let (x, report) = maximize(
            quadratic,
            &[0.9, -1.9],
            &[(-10.0, 10.0); 2],
            &names,
            &opt,
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!(report.initial_objective, quadratic(&[0.9, -1.9]).unwrap().0);
        assert_eq!(report.objective, quadratic(&x).unwrap().0);
        assert!(report.ended_worse() && !report.converged, "{report:?}");
        let w = report.warnings();
        assert!(w.iter().any(|w| w.contains("diverged")), "{w:?}");
        // Both parameters were thrown onto a bound, and the warning names them.
        assert!(x.iter().all(|v| v.abs() == 10.0), "{x:?}");
        assert!(
            w.iter().any(|w| w.contains("a (") && w.contains("b (")),
            "{w:?}"
        );
    }

    #[test]
    fn an_iteration_cap_and_a_bound_are_warned_about_by_name() {
        let names = ["a".to_string(), "b".to_string()];
        // Two L-BFGS iterations cannot reach the optimum from far away: a limit, not convergence.
        let (_, capped) = maximize(
            quadratic,
            &[-8.0, 7.0],
            &[(-10.0, 10.0); 2],
            &names,
            &Optimizer::lbfgs(2),
            &mut |_, _| {},
        )
        .unwrap();
        assert!(!capped.converged && !capped.ended_worse(), "{capped:?}");
        let w = capped.warnings();
        assert!(
            w.len() == 1 && w[0].contains("without converging") && w[0].contains("2 iterations"),
            "{w:?}"
        );
        // The maximum at b = −2 lies outside b ≥ 0: b ends on its lower bound, a inside.
        let (x, bounded) = maximize(
            quadratic,
            &[0.0, 3.0],
            &[(-10.0, 10.0), (0.0, 10.0)],
            &names,
            &Optimizer::lbfgs(100),
            &mut |_, _| {},
        )
        .unwrap();
        assert!((x[0] - 1.0).abs() < 1e-6 && x[1] == 0.0, "{x:?}");
        assert!(bounded.converged, "{bounded:?}");
        assert_eq!(bounded.at_bounds, ["b (lower)"]);
        let w = bounded.warnings();
        assert!(w.len() == 1 && w[0].contains("b (lower)"), "{w:?}");
    }
}
