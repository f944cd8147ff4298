//! Rasmussen's conjugate-gradient minimiser, the `minimize.m` of the GPML toolbox (version of
//! 2010-01-03), run for a budget of objective evaluations (GPML's `length = -N`).
//!
//! The GPML papers count hyperparameter "epochs" as evaluations of the marginal likelihood of
//! this routine (the adversarial-bounds paper's Fig. 3 trains for 10, 40 and 100), so the same
//! routine, with its constants, is what reproduces a truncated GPML fit. Search directions are
//! Polak–Ribière conjugate gradients (steepest descent when that is not a descent direction, and
//! after a failed line search); each line search extrapolates by cubic fits (at most
//! [`EXT`] times the current step) until it brackets a point that satisfies the Wolfe–Powell
//! conditions with [`SIG`] and [`RHO`], then interpolates (quadratic or cubic) inside the
//! bracket. The first trial step is `1 / (1 + |g|²)` along `−g`; later ones start from the
//! previous step times the slope ratio (at most [`RATIO`]). The run ends when the budget is
//! spent or two line searches fail in a row.
//!
//! Budgets share a prefix: a run with budget `k` evaluates exactly the first `k` points of a
//! run with a larger budget, and returns the accepted point if its last evaluation passed the
//! Wolfe–Powell test, else the lowest point of its unfinished line search (or where that search
//! started). [`minimize_cg_budgets`] therefore returns the results of several budgets from one
//! run of the largest.
//!
//! Failed evaluations (an `Err`, a non-finite value or gradient) count against the budget, as
//! in `minimize.m`. During extrapolation the trial step is bisected towards the last good point,
//! as there; during interpolation (where `minimize.m` would stop with the objective's error) the
//! failed point is treated as one of value +∞, which moves the bracket's far end onto it.

use std::collections::BTreeMap;

use super::error::OptimError;
use super::objective::{Eval, Evaluator, Objective};
use super::result::{OptimResult, StopReason};

/// Do not re-evaluate within this fraction of the current bracket's ends.
const INT: f64 = 0.1;
/// Extrapolate at most this many times the current step.
const EXT: f64 = 3.0;
/// At most this many evaluations per line search.
const MAX: usize = 20;
/// The largest allowed ratio of the previous to the new initial slope.
const RATIO: f64 = 10.0;
/// Wolfe–Powell curvature constant: the accepted slope is at most `SIG` times the initial one.
const SIG: f64 = 0.1;
/// Wolfe–Powell sufficient-decrease constant (`minimize.m`'s `RHO = SIG/2`).
const RHO: f64 = SIG / 2.0;

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `x + t·s`.
fn along(x: &[f64], t: f64, s: &[f64]) -> Vec<f64> {
    x.iter().zip(s).map(|(xi, si)| xi + t * si).collect()
}

/// Minimises `obj` from `x0` with at most `max_evals` evaluations (the start included), as
/// GPML's `minimize(X, f, -max_evals)`. No bounds: the parameters are unconstrained (an
/// objective that fails outside some region is handled as described in the module docs).
///
/// `converged` is always false (the routine has no tolerance); `reason` is
/// [`StopReason::MaxEvaluations`] or [`StopReason::LineSearchFailed`] (two failed line searches
/// in a row).
///
/// # Errors
/// `max_evals == 0`, a non-finite start, a failed first evaluation, or a gradient of the wrong
/// length.
pub fn minimize_cg<O: Objective>(
    obj: O,
    x0: &[f64],
    max_evals: usize,
) -> Result<OptimResult, OptimError> {
    let mut results = minimize_cg_budgets(obj, x0, &[max_evals])?;
    Ok(results.remove(0))
}

/// [`minimize_cg`] for every budget in `budgets` at the cost of the largest: entry `j` of the
/// result equals what `minimize_cg(obj, x0, budgets[j])` returns.
///
/// # Errors
/// As [`minimize_cg`], also for an empty `budgets` or a zero entry.
pub fn minimize_cg_budgets<O: Objective>(
    mut obj: O,
    x0: &[f64],
    budgets: &[usize],
) -> Result<Vec<OptimResult>, OptimError> {
    if budgets.is_empty() || budgets.contains(&0) {
        return Err(OptimError::InvalidOptions(format!(
            "evaluation budgets must be non-empty and at least 1, got {budgets:?}"
        )));
    }
    if let Some(index) = x0.iter().position(|v| !v.is_finite()) {
        return Err(OptimError::NonFiniteStart {
            index,
            value: x0[index],
        });
    }
    let length = *budgets.iter().max().expect("non-empty");
    let mut ev = Evaluator::new(&mut obj, usize::MAX);
    let (mut f0, mut df0) = match ev.eval(x0)? {
        Eval::Valid(p) => (p.f, p.g),
        Eval::Failed(msg) => return Err(OptimError::StartFailed(msg)),
    };
    let mut x = x0.to_vec();
    let mut i = 1;
    let mut accepted = 0;
    // What a run with each smaller budget returns, taken when the count reaches it.
    let mut taken: BTreeMap<usize, OptimResult> = BTreeMap::new();
    let mut take = |i: usize, point: (&[f64], f64, &[f64]), n_iter: usize| {
        if i < length && budgets.contains(&i) {
            taken.insert(i, result(point, n_iter, i, StopReason::MaxEvaluations));
        }
    };
    take(i, (&x, f0, &df0), accepted);
    let mut s: Vec<f64> = df0.iter().map(|g| -g).collect();
    let mut d0 = -dot(&s, &s);
    let mut x3 = 1.0 / (1.0 - d0);
    let mut ls_failed = false;
    let mut reason = StopReason::MaxEvaluations;
    // The bracket's far end persists between line searches, as in `minimize.m` (it is always
    // set before it is read).
    let (mut x4, mut f4, mut d4) = (0.0, 0.0, 0.0);
    while i < length {
        // The lowest point of this line search, where it starts until it finds a lower one.
        let (mut bx, mut bf, mut bg) = (x.clone(), f0, df0.clone());
        let mut m = MAX.min(length - i);
        let (mut x2, mut f2, mut d2);
        let (mut f3, mut df3, mut d3);
        let wolfe = |x3: f64, f3: f64, d3: f64, f0: f64, d0: f64| {
            d3.abs() < -SIG * d0 && f3 < f0 + x3 * RHO * d0
        };
        loop {
            // Extrapolate.
            x2 = 0.0;
            f2 = f0;
            d2 = d0;
            f3 = f0;
            df3 = df0.clone();
            let mut success = false;
            while !success && m > 0 {
                m -= 1;
                i += 1;
                match ev.eval(&along(&x, x3, &s))? {
                    Eval::Valid(p) => {
                        f3 = p.f;
                        df3 = p.g;
                        success = true;
                    }
                    Eval::Failed(_) => {
                        // A run whose budget ends here returns the lowest point so far.
                        take(i, (&bx, bf, &bg), accepted);
                        x3 = 0.5 * (x2 + x3);
                    }
                }
            }
            if success && f3 < bf {
                (bx, bf, bg) = (along(&x, x3, &s), f3, df3.clone());
            }
            d3 = dot(&df3, &s);
            if success {
                if wolfe(x3, f3, d3, f0, d0) {
                    take(i, (&along(&x, x3, &s), f3, &df3), accepted + 1);
                } else {
                    take(i, (&bx, bf, &bg), accepted);
                }
            }
            if d3 > SIG * d0 || f3 > f0 + x3 * RHO * d0 || m == 0 {
                break;
            }
            let (x1, f1, d1) = (x2, f2, d2);
            (x2, f2, d2) = (x3, f3, d3);
            let a = 6.0 * (f1 - f2) + 3.0 * (d2 + d1) * (x2 - x1);
            let b = 3.0 * (f2 - f1) - (2.0 * d1 + d2) * (x2 - x1);
            // A negative discriminant (complex in MATLAB) gives NaN here: both take the
            // largest extrapolation.
            x3 = x1 - d1 * (x2 - x1).powi(2) / (b + (b * b - a * d1 * (x2 - x1)).sqrt());
            if !x3.is_finite() || x3 < 0.0 || x3 > x2 * EXT {
                x3 = x2 * EXT;
            } else if x3 < x2 + INT * (x2 - x1) {
                x3 = x2 + INT * (x2 - x1);
            }
        }
        while (d3.abs() > -SIG * d0 || f3 > f0 + x3 * RHO * d0) && m > 0 {
            // Interpolate inside the bracket [x2, x4].
            if d3 > 0.0 || f3 > f0 + x3 * RHO * d0 {
                (x4, f4, d4) = (x3, f3, d3);
            } else {
                (x2, f2, d2) = (x3, f3, d3);
            }
            if f4 > f0 {
                x3 = x2 - (0.5 * d2 * (x4 - x2).powi(2)) / (f4 - f2 - d2 * (x4 - x2));
            } else {
                let a = 6.0 * (f2 - f4) / (x4 - x2) + 3.0 * (d4 + d2);
                let b = 3.0 * (f4 - f2) - (2.0 * d2 + d4) * (x4 - x2);
                x3 = x2 + ((b * b - a * d2 * (x4 - x2).powi(2)).sqrt() - b) / a;
            }
            if !x3.is_finite() {
                x3 = 0.5 * (x2 + x4);
            }
            x3 = x3.min(x4 - INT * (x4 - x2)).max(x2 + INT * (x4 - x2));
            m -= 1;
            i += 1;
            match ev.eval(&along(&x, x3, &s))? {
                Eval::Valid(p) => {
                    f3 = p.f;
                    df3 = p.g;
                    if f3 < bf {
                        (bx, bf, bg) = (along(&x, x3, &s), f3, df3.clone());
                    }
                    d3 = dot(&df3, &s);
                }
                Eval::Failed(_) => {
                    f3 = f64::INFINITY;
                    d3 = f64::INFINITY;
                }
            }
            if wolfe(x3, f3, d3, f0, d0) {
                take(i, (&along(&x, x3, &s), f3, &df3), accepted + 1);
            } else {
                take(i, (&bx, bf, &bg), accepted);
            }
        }
        if wolfe(x3, f3, d3, f0, d0) {
            x = along(&x, x3, &s);
            f0 = f3;
            accepted += 1;
            // Polak–Ribière.
            let beta = (dot(&df3, &df3) - dot(&df0, &df3)) / dot(&df0, &df0);
            s = s.iter().zip(&df3).map(|(si, g)| beta * si - g).collect();
            df0 = df3;
            let previous_slope = d0;
            d0 = dot(&df0, &s);
            if d0 > 0.0 {
                s = df0.iter().map(|g| -g).collect();
                d0 = -dot(&s, &s);
            }
            x3 *= RATIO.min(previous_slope / (d0 - f64::MIN_POSITIVE));
            ls_failed = false;
        } else {
            (x, f0, df0) = (bx, bf, bg);
            if ls_failed || i > length {
                // A search the budget cut short did not fail on its own.
                if i < length {
                    reason = StopReason::LineSearchFailed;
                }
                break;
            }
            s = df0.iter().map(|g| -g).collect();
            d0 = -dot(&s, &s);
            x3 = 1.0 / (1.0 - d0);
            ls_failed = true;
        }
    }
    let used = ev.n_evals();
    let last = result((&x, f0, &df0), accepted, used, reason);
    // A budget the run reached before it ended returns what was taken then; one it did not
    // reach (or reached with its last evaluation, which the end may follow: two failed line
    // searches) returns where the run ended.
    Ok(budgets
        .iter()
        .map(|b| match taken.get(b) {
            Some(r) if *b < used => r.clone(),
            _ => last.clone(),
        })
        .collect())
}

fn result(
    (x, f, g): (&[f64], f64, &[f64]),
    n_iter: usize,
    n_evals: usize,
    reason: StopReason,
) -> OptimResult {
    OptimResult {
        x: x.to_vec(),
        f,
        grad: g.to_vec(),
        n_iter,
        n_evals,
        converged: false,
        reason,
        message: reason.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Value = Result<(f64, Vec<f64>), String>;

    fn rosenbrock(x: &[f64]) -> Value {
        let (a, b) = (x[1] - x[0] * x[0], 1.0 - x[0]);
        Ok((
            100.0 * a * a + b * b,
            vec![-400.0 * x[0] * a - 2.0 * b, 200.0 * a],
        ))
    }

    /// Rosenbrock that fails (as a GP whose kernel matrix cannot be factorised) for `x₀ > 0.5`,
    /// which its valley crosses: exercises the bisection and the +∞ bracket end.
    fn fenced(x: &[f64]) -> Value {
        if x[0] > 0.5 {
            return Err(format!("x0 = {} is past the fence", x[0]));
        }
        rosenbrock(x)
    }

    /// `Σ cᵢ (xᵢ − i)²` with curvatures `cᵢ` from 1 to 1000.
    fn quadratic(x: &[f64]) -> Value {
        let n = x.len();
        let c = |i: usize| 1000f64.powf(i as f64 / (n - 1) as f64);
        let f = (0..n).map(|i| c(i) * (x[i] - i as f64).powi(2)).sum();
        let g = (0..n).map(|i| 2.0 * c(i) * (x[i] - i as f64)).collect();
        Ok((f, g))
    }

    const START: [f64; 2] = [-1.2, 1.0];

    #[test]
    fn every_budget_of_one_run_equals_a_run_with_that_budget() {
        for objective in [rosenbrock as fn(&[f64]) -> Value, fenced] {
            let budgets: Vec<usize> = (1..=90).collect();
            let all = minimize_cg_budgets(objective, &START, &budgets).unwrap();
            for (&k, shared) in budgets.iter().zip(&all) {
                let alone = minimize_cg(objective, &START, k).unwrap();
                assert_eq!(&alone, shared, "budget {k}");
                assert_eq!(alone.n_evals, k, "budget {k}");
            }
        }
    }

    #[test]
    fn the_fenced_run_meets_failures_and_never_returns_one() {
        let mut failures = 0;
        let mut counted = |x: &[f64]| {
            let r = fenced(x);
            failures += usize::from(r.is_err());
            r
        };
        let r = minimize_cg(&mut counted, &START, 200).unwrap();
        assert!(failures > 0, "the fence was never met");
        assert!(r.x[0] <= 0.5, "{:?}", r.x);
        assert_eq!(rosenbrock(&r.x).unwrap().0, r.f);
        // The constrained minimum along the valley is at x₀ = 0.5 (f = 0.25).
        assert!(r.f < 0.26, "{r:?}");
    }

    #[test]
    fn evaluates_exactly_the_budget_and_starts_with_gpmls_first_step() {
        let (f0, g0) = rosenbrock(&START).unwrap();
        for budget in [1, 2, 7, 40] {
            let mut points: Vec<Vec<f64>> = Vec::new();
            let mut logged = |x: &[f64]| {
                points.push(x.to_vec());
                rosenbrock(x)
            };
            let r = minimize_cg(&mut logged, &START, budget).unwrap();
            assert_eq!(points.len(), budget);
            assert_eq!(r.n_evals, budget);
            assert_eq!(r.reason, StopReason::MaxEvaluations);
            assert_eq!(points[0], START.to_vec());
            if budget == 1 {
                assert_eq!((r.x.as_slice(), r.f), (START.as_slice(), f0));
            } else {
                // minimize.m: the first trial is x₀ − g₀/(1 + |g₀|²).
                let step = 1.0 / (1.0 + g0[0] * g0[0] + g0[1] * g0[1]);
                for j in 0..2 {
                    assert!((points[1][j] - (START[j] - step * g0[j])).abs() < 1e-15);
                }
            }
        }
    }

    #[test]
    fn accepted_steps_satisfy_wolfe_powell_and_the_first_goes_downhill() {
        let budgets: Vec<usize> = (1..=150).collect();
        let all = minimize_cg_budgets(rosenbrock, &START, &budgets).unwrap();
        // The accepted points: where the count of accepted line searches grows.
        let mut accepted = vec![&all[0]];
        for r in &all {
            if r.n_iter > accepted.last().unwrap().n_iter {
                assert_eq!(r.n_iter, accepted.last().unwrap().n_iter + 1);
                accepted.push(r);
            }
        }
        assert!(accepted.len() > 10, "{} accepted steps", accepted.len());
        for w in accepted.windows(2) {
            let (a, b) = (w[0], w[1]);
            // Recomputed, not taken from the optimiser.
            let (fa, ga) = rosenbrock(&a.x).unwrap();
            let (fb, gb) = rosenbrock(&b.x).unwrap();
            assert_eq!((fa, fb), (a.f, b.f));
            let step: Vec<f64> = b.x.iter().zip(&a.x).map(|(p, q)| p - q).collect();
            let (slope_a, slope_b) = (dot(&ga, &step), dot(&gb, &step));
            assert!(slope_a < 0.0, "not a descent step");
            assert!(fb < fa + RHO * slope_a, "sufficient decrease fails");
            assert!(slope_b.abs() < -SIG * slope_a, "curvature condition fails");
        }
        // The first line search runs along −g₀.
        let (_, g0) = rosenbrock(&START).unwrap();
        let step: Vec<f64> = accepted[1]
            .x
            .iter()
            .zip(&START)
            .map(|(p, q)| p - q)
            .collect();
        let cos = -dot(&step, &g0) / (dot(&step, &step) * dot(&g0, &g0)).sqrt();
        assert!((cos - 1.0).abs() < 1e-12, "cos = {cos}");
    }

    #[test]
    fn converges_on_rosenbrock_and_an_ill_conditioned_quadratic() {
        let r = minimize_cg(rosenbrock, &START, 1000).unwrap();
        assert!(
            (r.x[0] - 1.0).abs() < 1e-6 && (r.x[1] - 1.0).abs() < 1e-6,
            "{r:?}"
        );
        let r = minimize_cg(quadratic, &[0.0; 6], 400).unwrap();
        for (i, xi) in r.x.iter().enumerate() {
            assert!((xi - i as f64).abs() < 1e-6, "{r:?}");
        }
        assert!(dot(&r.grad, &r.grad).sqrt() < 1e-5, "{r:?}");
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        assert!(matches!(
            minimize_cg_budgets(rosenbrock, &START, &[]),
            Err(OptimError::InvalidOptions(_))
        ));
        assert!(matches!(
            minimize_cg(rosenbrock, &START, 0),
            Err(OptimError::InvalidOptions(_))
        ));
        assert!(matches!(
            minimize_cg(rosenbrock, &[f64::NAN, 1.0], 5),
            Err(OptimError::NonFiniteStart { index: 0, .. })
        ));
        assert!(matches!(
            minimize_cg(fenced, &[1.0, 1.0], 5),
            Err(OptimError::StartFailed(_))
        ));
        assert!(matches!(
            minimize_cg(|_: &[f64]| -> Value { Ok((1.0, vec![0.0])) }, &START, 5),
            Err(OptimError::GradientLength {
                expected: 2,
                got: 1
            })
        ));
    }
}
