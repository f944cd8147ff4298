//! A strong-Wolfe line search along the projected path, with cubic interpolation and back-off
//! from points where the objective fails.
//!
//! It follows the bracketing/zoom scheme of Nocedal & Wright (Algorithms 3.5–3.6) with the
//! safeguards of Moré & Thuente: trial steps come from cubic (or quadratic) interpolation kept
//! away from the bracket ends, extrapolation grows the step by 1.1–4×, and the search stops once
//! the bracket is within `XTOL` relative width, returning the best sufficient-decrease point.

use super::error::OptimError;
use super::objective::{Eval, Evaluator, Objective, Point};
use super::path::ProjectedPath;

/// Sufficient-decrease (Armijo) constant.
const C1: f64 = 1e-4;
/// Curvature constant for the strong Wolfe condition; 0.9 is loose enough that quasi-Newton unit
/// steps are nearly always accepted at once, which is what keeps evaluations per iteration ≈ 1.
const C2: f64 = 0.9;
/// Relative bracket width below which further refinement is not worth an evaluation (SciPy's
/// L-BFGS-B uses the same value).
const XTOL: f64 = 0.1;
/// Evaluations allowed in one search; ten failed back-offs alone shrink the step by 1e-10.
const MAX_TRIALS: usize = 20;
/// Step reduction after a failure with no successful step yet: a failed point carries no value
/// to interpolate, and failures (e.g. a singular kernel matrix) are usually far from the optimum.
const FAILURE_SHRINK: f64 = 0.1;

/// How a search ended.
pub(crate) enum Outcome {
    /// A step was accepted.
    Accepted(Step),
    /// No step decreased `f` enough, and the steps still in the bracket promised (to first
    /// order) a decrease of at most `gain_tol`: `f` is flat along the path to within it.
    Flat,
    /// No step decreased `f` enough.
    NoDecrease,
}

/// The point a search accepted.
pub(crate) struct Step {
    pub(crate) point: Point,
    /// Set when the objective failed just beyond the accepted point, so that the step length
    /// was set by the failing region rather than by the curvature condition: a first-order
    /// estimate of the decrease still available before the failed point.
    pub(crate) blocked_gain: Option<f64>,
}

/// A successfully evaluated step: `φ(α) = f(x(α))` and its right derivative.
#[derive(Debug, Clone, Copy)]
struct Sample {
    alpha: f64,
    f: f64,
    slope: f64,
}

/// The end of the bracket opposite the best point.
enum Upper {
    Value(Sample),
    Failed(f64),
}

impl Upper {
    fn alpha(&self) -> f64 {
        match self {
            Upper::Value(s) => s.alpha,
            Upper::Failed(alpha) => *alpha,
        }
    }
}

/// First-order estimate of the decrease available between `lo` and a failed step `failed`.
fn blocked_gain(lo: &Sample, failed: f64) -> f64 {
    (lo.slope * (failed - lo.alpha)).abs()
}

/// Minimiser of the cubic matching the values and slopes at `a` and `b` (Nocedal & Wright 3.59),
/// if it exists.
fn cubic_minimizer(a: &Sample, b: &Sample) -> Option<f64> {
    let d1 = a.slope + b.slope - 3.0 * (a.f - b.f) / (a.alpha - b.alpha);
    let disc = d1 * d1 - a.slope * b.slope;
    if disc.is_nan() || disc < 0.0 {
        return None;
    }
    let d2 = (b.alpha - a.alpha).signum() * disc.sqrt();
    let t = b.alpha - (b.alpha - a.alpha) * (b.slope + d2 - d1) / (b.slope - a.slope + 2.0 * d2);
    t.is_finite().then_some(t)
}

/// Minimiser of the quadratic matching the value and slope at `a` and the value at `b`, if it is
/// convex.
fn quadratic_minimizer(a: &Sample, b: &Sample) -> Option<f64> {
    let h = b.alpha - a.alpha;
    let curvature = (b.f - a.f - a.slope * h) / (h * h);
    let t = a.alpha - a.slope / (2.0 * curvature);
    (curvature > 0.0 && t.is_finite()).then_some(t)
}

/// The next trial step given the best sufficient-decrease sample `lo`, the previous one `prev`
/// and the opposite end of the bracket, if one is known.
fn next_trial(lo: &Sample, prev: &Sample, upper: Option<&Upper>, end: f64) -> f64 {
    match upper {
        None => {
            // Still descending steeply: extrapolate, within Moré–Thuente's [1.1, 4] growth.
            let step = lo.alpha - prev.alpha;
            let (min_t, max_t) = (lo.alpha + 1.1 * step, lo.alpha + 4.0 * step);
            let t = cubic_minimizer(prev, lo)
                .filter(|&t| t > lo.alpha)
                .map_or(max_t, |t| t.max(min_t).min(max_t));
            t.min(end)
        }
        Some(Upper::Failed(failed)) => {
            let fraction = if lo.alpha == 0.0 { FAILURE_SHRINK } else { 0.5 };
            lo.alpha + fraction * (failed - lo.alpha)
        }
        Some(Upper::Value(hi)) => {
            let (a, b) = (lo.alpha.min(hi.alpha), lo.alpha.max(hi.alpha));
            let width = b - a;
            let t = cubic_minimizer(lo, hi)
                .or_else(|| quadratic_minimizer(lo, hi))
                .unwrap_or(0.5 * (a + b));
            // Keep a tenth of the bracket clear at each end so that it keeps shrinking.
            t.max(a + 0.1 * width).min(b - 0.1 * width)
        }
    }
}

/// Searches along `path` from `start` (whose slope along the path must be negative) beginning
/// with step `alpha0`.
///
/// Returns the accepted point: one satisfying sufficient decrease
/// `f(x(α)) ≤ f(x) + C1·gᵀ(x(α) − x)` and, unless the bracket became too narrow, the evaluation
/// budget ran out or the path ended, the strong Wolfe curvature condition; or, if no step gave
/// sufficient decrease, whether that is because `f` is flat to within `gain_tol` there.
/// `gain_tol` is the decrease below which approaching a failing region further, or shrinking a
/// step that found no decrease, is not worth an evaluation.
pub(crate) fn search<O: Objective + ?Sized>(
    ev: &mut Evaluator<'_, O>,
    start: &Point,
    path: &ProjectedPath<'_>,
    alpha0: f64,
    gain_tol: f64,
) -> Result<Outcome, OptimError> {
    let slope0 = path.slope(0.0, &start.g);
    let origin = Sample {
        alpha: 0.0,
        f: start.f,
        slope: slope0,
    };
    let (mut lo, mut prev) = (origin, origin);
    let mut best: Option<Point> = None;
    let mut upper: Option<Upper> = None;
    let mut alpha = alpha0.min(path.end());
    for _ in 0..MAX_TRIALS {
        let x = path.point(alpha);
        // A step that no longer changes x (below floating-point resolution) cannot help.
        let stalled = x == start.x || best.as_ref().is_some_and(|p| p.x == x);
        if ev.exhausted() || alpha.is_nan() || alpha <= 0.0 || stalled {
            break;
        }
        match ev.eval(&x)? {
            Eval::Failed(_) => upper = Some(Upper::Failed(alpha)),
            Eval::Valid(point) => {
                // The decrease predicted by the gradient for the actual (projected) displacement.
                let predicted: f64 = start
                    .g
                    .iter()
                    .zip(point.x.iter().zip(&start.x))
                    .map(|(g, (new, old))| g * (new - old))
                    .sum();
                let sample = Sample {
                    alpha,
                    f: point.f,
                    slope: path.slope(alpha, &point.g),
                };
                let sufficient = predicted < 0.0 && point.f <= start.f + C1 * predicted;
                if !sufficient || point.f >= lo.f {
                    upper = Some(Upper::Value(sample));
                } else {
                    if sample.slope.abs() <= -C2 * slope0 || alpha >= path.end() {
                        return Ok(Outcome::Accepted(Step {
                            point,
                            blocked_gain: None,
                        }));
                    }
                    // If the slope points back towards the old best point, the minimum lies
                    // between the two, so the old best point becomes the far end of the bracket.
                    let far = upper.as_ref().map_or(f64::INFINITY, Upper::alpha);
                    if sample.slope * (far - alpha) >= 0.0 {
                        upper = Some(Upper::Value(lo));
                    }
                    prev = lo;
                    lo = sample;
                    best = Some(point);
                }
            }
        }
        if let (Some(far), true) = (upper.as_ref(), lo.alpha > 0.0) {
            let narrow = (far.alpha() - lo.alpha).abs() <= XTOL * far.alpha().max(lo.alpha);
            // Against a failing region the bracket holds no minimiser of φ, only the edge of
            // the region; bisecting towards it costs one evaluation per halving and is worth it
            // while the decrease still on offer exceeds `gain_tol`. Stopping at `XTOL` instead
            // would leave the driver to re-find the edge next iteration, failing repeatedly.
            let gain_open = matches!(far, Upper::Failed(a) if blocked_gain(&lo, *a) > gain_tol);
            if narrow && !gain_open {
                break;
            }
        }
        // No decrease yet, and the whole bracket promises (to first order) no more than
        // `gain_tol`: what the search met is noise, not curvature, and shrinking the step
        // only shrinks the gain still further below the tolerance.
        if let (Some(Upper::Value(far)), None) = (upper.as_ref(), best.as_ref()) {
            if -slope0 * far.alpha <= gain_tol {
                return Ok(Outcome::Flat);
            }
        }
        alpha = next_trial(&lo, &prev, upper.as_ref(), path.end());
    }
    let blocked_gain = match upper {
        Some(Upper::Failed(a)) => Some(blocked_gain(&lo, a)),
        _ => None,
    };
    Ok(best.map_or(Outcome::NoDecrease, |point| {
        Outcome::Accepted(Step {
            point,
            blocked_gain,
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(alpha: f64, f: f64, slope: f64) -> Sample {
        Sample { alpha, f, slope }
    }

    #[test]
    fn interpolation_is_exact_for_a_parabola() {
        // φ(α) = (α − 1)², sampled at 0 and 3.
        let a = sample(0.0, 1.0, -2.0);
        let b = sample(3.0, 4.0, 4.0);
        assert!((cubic_minimizer(&a, &b).unwrap() - 1.0).abs() < 1e-14);
        assert!((quadratic_minimizer(&a, &b).unwrap() - 1.0).abs() < 1e-14);
    }

    #[test]
    fn trials_stay_inside_the_bracket() {
        let lo = sample(0.0, 1.0, -1.0);
        // A huge value at α = 1 pulls the interpolant towards 0; the safeguard keeps 10% clear.
        let hi = Upper::Value(sample(1.0, 1e12, 1e12));
        assert_eq!(next_trial(&lo, &lo, Some(&hi), f64::INFINITY), 0.1);
        assert_eq!(next_trial(&lo, &lo, Some(&Upper::Failed(1.0)), 1.0), 0.1);
        let lo = sample(1.0, 0.0, -1.0);
        let prev = sample(0.0, 1.0, -1.0);
        let t = next_trial(&lo, &prev, None, f64::INFINITY);
        assert!((2.1..=5.0).contains(&t));
        assert_eq!(next_trial(&lo, &prev, None, 1.5), 1.5);
    }

    #[test]
    fn a_bracket_promising_less_than_the_tolerance_is_flat() {
        // f rises by 1e-6 wherever it is evaluated (noise above a slope of −1e-3), so no step
        // gives sufficient decrease. The unit step promises 1e-3 to first order.
        let search_with = |gain_tol: f64| {
            let mut f = |_: &[f64]| -> Result<(f64, Vec<f64>), String> { Ok((1e-6, vec![-1e-3])) };
            let mut ev = Evaluator::new(&mut f, 100);
            let start = Point {
                x: vec![0.0],
                f: 0.0,
                g: vec![-1e-3],
                curvature: None,
            };
            let bounds = [(f64::NEG_INFINITY, f64::INFINITY)];
            let path = ProjectedPath::new(&start.x, &[1.0], &bounds);
            let outcome = search(&mut ev, &start, &path, 1.0, gain_tol).unwrap();
            (outcome, ev.n_evals())
        };
        // Tolerance above the promise: flat after the first trial.
        let (outcome, evals) = search_with(1e-2);
        assert!(matches!(outcome, Outcome::Flat));
        assert_eq!(evals, 1);
        // Tolerance 1e-4: the search shrinks the step until its promise falls below it
        // (α ≤ 0.1), then reports flat.
        let (outcome, evals) = search_with(1e-4);
        assert!(matches!(outcome, Outcome::Flat));
        assert!(evals > 1 && evals < MAX_TRIALS, "{evals}");
        // No tolerance: every trial is spent and the search reports no decrease.
        let (outcome, evals) = search_with(0.0);
        assert!(matches!(outcome, Outcome::NoDecrease));
        assert!(evals > 10, "{evals}");
    }

    #[test]
    fn accepts_the_minimiser_of_a_quadratic_along_the_path() {
        let mut f = |x: &[f64]| -> Result<(f64, Vec<f64>), String> {
            Ok(((x[0] - 3.0).powi(2), vec![2.0 * (x[0] - 3.0)]))
        };
        let mut ev = Evaluator::new(&mut f, 100);
        let start = Point {
            x: vec![0.0],
            f: 9.0,
            g: vec![-6.0],
            curvature: None,
        };
        let d = [1.0];
        let bounds = [(f64::NEG_INFINITY, f64::INFINITY)];
        let path = ProjectedPath::new(&start.x, &d, &bounds);
        // From α = 0.1 the search must extrapolate, then land within the Wolfe window.
        let Outcome::Accepted(step) = search(&mut ev, &start, &path, 0.1, 0.0).unwrap() else {
            panic!("no step accepted");
        };
        let point = step.point;
        assert!(step.blocked_gain.is_none());
        assert!(point.f < 9.0 * (1.0 - 1e-4 * 0.1));
        assert!(point.g[0].abs() <= 0.9 * 6.0);
    }
}
