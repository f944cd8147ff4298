//! Maximising a model's training objective from an initial point plus seeded random restarts.
//!
//! Every model of the crate (exact GP, multi-output GP, robust GPs) fits its flat parameter
//! vector the same way: L-BFGS-B from the initial values and from `restarts` points drawn
//! uniformly within ±2 log-units of them (clamped to the bounds), keeping the best. Small
//! problems run their starts in parallel, one core each; large ones run them one after the
//! other with the factorisations using every core (rayon is never nested inside faer).

use std::cell::Cell;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

use super::FitReport;
use crate::linalg::Parallelism;
use crate::models::ModelError;
use crate::optim::{minimize_lbfgsb, CurvedEvaluation, LbfgsOptions, StopWhen, WithCurvature};

/// How far (in log units) a random restart may start from the initial parameters.
const RESTART_SPREAD: f64 = 2.0;

/// A value, its gradient and, when asked for and available, a positive semi-definite
/// approximation of the *negated* Hessian (a Fisher or Gauss–Newton matrix).
pub(crate) type Evaluation = CurvedEvaluation;

/// An objective without a curvature approximation, in the form [`maximize`] takes.
pub(crate) fn plain<F>(f: F) -> impl Fn(&[f64], bool) -> Result<Evaluation, String> + Sync
where
    F: Fn(&[f64]) -> Result<(f64, Vec<f64>), String> + Sync,
{
    move |v, _| f(v).map(|(value, grad)| (value, grad, None))
}

/// Maximise `objective` (`(v, want_curvature)` → value, gradient and curvature, or why the
/// point failed) over the box `bounds` (whose entries `names` names) from `x0` and `restarts`
/// seeded random starts; returns the best point and a report per start.
#[allow(clippy::too_many_arguments)]
pub(crate) fn maximize<F>(
    objective: F,
    x0: &[f64],
    bounds: &[(f64, f64)],
    names: &[String],
    restarts: usize,
    seed: u64,
    lbfgs: &LbfgsOptions,
    par: Parallelism,
) -> Result<(Vec<f64>, Vec<FitReport>), ModelError>
where
    F: Fn(&[f64], bool) -> Result<Evaluation, String> + Sync,
{
    let never = AtomicBool::new(false);
    maximize_until(
        &never, objective, x0, bounds, names, restarts, seed, lbfgs, par,
    )
}

/// [`maximize`], with every start ending (after the evaluation in progress) once `stop` is set:
/// for an objective that finds, while it is evaluated, that it will fail everywhere from then on.
#[allow(clippy::too_many_arguments)]
pub(crate) fn maximize_until<F>(
    stop: &AtomicBool,
    objective: F,
    x0: &[f64],
    bounds: &[(f64, f64)],
    names: &[String],
    restarts: usize,
    seed: u64,
    lbfgs: &LbfgsOptions,
    par: Parallelism,
) -> Result<(Vec<f64>, Vec<FitReport>), ModelError>
where
    F: Fn(&[f64], bool) -> Result<Evaluation, String> + Sync,
{
    let mut rng = StdRng::seed_from_u64(seed);
    let mut starts = vec![x0.to_vec()];
    for _ in 0..restarts {
        starts.push(
            x0.iter()
                .zip(bounds)
                .map(|(v, (lo, hi))| {
                    let s = v + rng.random_range(-RESTART_SPREAD..=RESTART_SPREAD);
                    s.clamp(*lo, *hi)
                })
                .collect(),
        );
    }
    maximize_from_starts(stop, objective, &starts, bounds, names, lbfgs, par)
}

/// [`maximize_until`] from explicitly given start points (for models with their own restart
/// scheme); the report of start `i` describes `starts[i]`.
pub(crate) fn maximize_from_starts<F>(
    stop: &AtomicBool,
    objective: F,
    starts: &[Vec<f64>],
    bounds: &[(f64, f64)],
    names: &[String],
    lbfgs: &LbfgsOptions,
    par: Parallelism,
) -> Result<(Vec<f64>, Vec<FitReport>), ModelError>
where
    F: Fn(&[f64], bool) -> Result<Evaluation, String> + Sync,
{
    if starts.is_empty() {
        return Err(ModelError::Invalid(
            "no optimiser start points were given".into(),
        ));
    }
    let run = |(i, s): (usize, &Vec<f64>)| -> (FitReport, Option<Vec<f64>>) {
        let clock = Instant::now();
        // The objective at the start (the first evaluation of every run is at its start point)
        // and the highest one seen.
        let initial = Cell::new(None);
        let highest = Cell::new(f64::NEG_INFINITY);
        // The curvature approximates the negated Hessian already: it carries over unchanged.
        let negated = |v: &[f64], want: bool| -> Result<Evaluation, String> {
            let evaluated = objective(v, want);
            if initial.get().is_none() {
                initial.set(Some(evaluated.as_ref().map_or(f64::NAN, |e| e.0)));
            }
            let (f, g, curvature) = evaluated?;
            highest.set(highest.get().max(f));
            Ok((-f, g.iter().map(|gi| -gi).collect(), curvature))
        };
        let result = minimize_lbfgsb(StopWhen(WithCurvature(negated), stop), s, bounds, lbfgs);
        let seconds = clock.elapsed().as_secs_f64();
        match result {
            Ok(r) => {
                let seen = [initial.get().unwrap_or(f64::NAN), highest.get()];
                let report = FitReport::from_negated(i, &r, seen, seconds, bounds, names);
                (report, Some(r.x))
            }
            Err(e) => (FitReport::failed(i, e.to_string(), seconds), None),
        }
    };
    let results: Vec<(FitReport, Option<Vec<f64>>)> =
        if starts.len() > 1 && par == Parallelism::Sequential {
            starts.par_iter().enumerate().map(run).collect()
        } else {
            starts.iter().enumerate().map(run).collect()
        };
    let best = results
        .iter()
        .filter_map(|(r, v)| v.as_ref().map(|v| (r.objective, v)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, v)| v.clone());
    let reports: Vec<FitReport> = results.into_iter().map(|(r, _)| r).collect();
    match best {
        Some(v) => Ok((v, reports)),
        None => Err(ModelError::Invalid(format!(
            "every optimiser start failed; first error: {}",
            reports[0].message
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A concave quadratic with its maximum at (1, −2).
    fn quadratic(x: &[f64]) -> Result<(f64, Vec<f64>), String> {
        let (a, b) = (x[0] - 1.0, x[1] + 2.0);
        Ok((-(a * a + 3.0 * b * b), vec![-2.0 * a, -6.0 * b]))
    }

    #[test]
    fn every_start_reports_where_it_began_and_the_bounds_it_ended_on() {
        // b ≥ −1 cuts the maximum off: every start ends with b on its lower bound.
        let bounds = [(-5.0, 5.0), (-1.0, 5.0)];
        let names = ["a".to_string(), "b".to_string()];
        let x0 = [3.0, 2.0];
        let lbfgs = LbfgsOptions::default();
        // Sequential factorisations run the starts in parallel; parallel ones, one by one.
        for par in [Parallelism::Sequential, Parallelism::Parallel] {
            let (x, reports) =
                maximize(plain(quadratic), &x0, &bounds, &names, 3, 7, &lbfgs, par).unwrap();
            assert!((x[0] - 1.0).abs() < 1e-6 && x[1] == -1.0, "{x:?}");
            assert_eq!(reports.len(), 4);
            assert_eq!(reports[0].initial_objective, quadratic(&x0).unwrap().0);
            for (i, r) in reports.iter().enumerate() {
                assert_eq!(r.start, i);
                assert!(r.converged && !r.ended_worse(), "{r:?}");
                // L-BFGS never accepts a worse point: it ends on the highest value it saw.
                assert_eq!(r.highest_objective, r.objective);
                assert!(r.initial_objective <= r.objective);
                assert_eq!(r.at_bounds, ["b (lower)"]);
                assert_eq!(r.warnings().len(), 1);
            }
        }
    }
}
