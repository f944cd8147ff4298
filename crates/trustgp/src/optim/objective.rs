//! The objective interface and the evaluation bookkeeping shared by the optimisers.

use std::fmt::Display;
use std::sync::atomic::{AtomicBool, Ordering};

use faer::Mat;

use super::error::OptimError;
use super::result::StopReason;

/// A value, its gradient and, where supplied, a positive semi-definite approximation of the
/// Hessian (see [`Objective::eval_with_curvature`]).
pub type CurvedEvaluation = (f64, Vec<f64>, Option<Mat<f64>>);

/// A differentiable function to minimise.
///
/// `eval` returns the value and gradient at `x`. A non-finite value or gradient, or an `Err`,
/// means "this point failed" (for a GP: the kernel matrix could not be factorised); the
/// optimisers back off from such points and never accept them.
///
/// Closures `FnMut(&[f64]) -> Result<(f64, Vec<f64>), E>` with `E: Display` implement it, so
/// the optimisers accept a closure, or `&mut` one to keep using it afterwards.
pub trait Objective {
    /// Value and gradient at `x`, or a description of why the evaluation failed.
    fn eval(&mut self, x: &[f64]) -> Result<(f64, Vec<f64>), String>;

    /// [`Objective::eval`] plus, where the objective can supply one, a positive semi-definite
    /// approximation of its Hessian at `x` (a Gauss–Newton or Fisher matrix). L-BFGS asks for
    /// it on its first iterations (see [`LbfgsOptions::curvature_iterations`]) and starts its
    /// quasi-Newton model from it instead of a multiple of the identity. By default: none.
    ///
    /// [`LbfgsOptions::curvature_iterations`]: super::LbfgsOptions::curvature_iterations
    fn eval_with_curvature(&mut self, x: &[f64]) -> Result<CurvedEvaluation, String> {
        let (f, g) = self.eval(x)?;
        Ok((f, g, None))
    }

    /// Whether the objective asks the optimiser to stop now, returning the best point found
    /// ([`StopReason::Requested`](super::StopReason::Requested)); checked after every
    /// evaluation. For an objective that learns, while it is evaluated, that the rest of the
    /// run would be wasted (a profiled GP objective whose profiled scale has left the bounds
    /// fails everywhere from then on). By default: never.
    fn stop_requested(&self) -> bool {
        false
    }
}

/// An objective that stops the optimiser once `flag` is set (see
/// [`Objective::stop_requested`]).
pub struct StopWhen<'a, O>(pub O, pub &'a AtomicBool);

impl<O: Objective> Objective for StopWhen<'_, O> {
    fn eval(&mut self, x: &[f64]) -> Result<(f64, Vec<f64>), String> {
        self.0.eval(x)
    }

    fn eval_with_curvature(&mut self, x: &[f64]) -> Result<CurvedEvaluation, String> {
        self.0.eval_with_curvature(x)
    }

    fn stop_requested(&self) -> bool {
        self.1.load(Ordering::Relaxed) || self.0.stop_requested()
    }
}

impl<F, E> Objective for F
where
    F: FnMut(&[f64]) -> Result<(f64, Vec<f64>), E>,
    E: Display,
{
    fn eval(&mut self, x: &[f64]) -> Result<(f64, Vec<f64>), String> {
        self(x).map_err(|e| e.to_string())
    }
}

/// An objective that can return a curvature approximation with its value and gradient: a
/// closure `FnMut(x, want_curvature) -> Result<(f, g, curvature), E>` that computes the
/// curvature only when asked.
pub struct WithCurvature<F>(pub F);

impl<F, E> Objective for WithCurvature<F>
where
    F: FnMut(&[f64], bool) -> Result<CurvedEvaluation, E>,
    E: Display,
{
    fn eval(&mut self, x: &[f64]) -> Result<(f64, Vec<f64>), String> {
        let (f, g, _) = (self.0)(x, false).map_err(|e| e.to_string())?;
        Ok((f, g))
    }

    fn eval_with_curvature(&mut self, x: &[f64]) -> Result<CurvedEvaluation, String> {
        (self.0)(x, true).map_err(|e| e.to_string())
    }
}

/// A point where the objective succeeded.
#[derive(Debug, Clone)]
pub(crate) struct Point {
    pub(crate) x: Vec<f64>,
    pub(crate) f: f64,
    pub(crate) g: Vec<f64>,
    /// The objective's curvature approximation at `x`, if it was asked for and supplied one.
    pub(crate) curvature: Option<Mat<f64>>,
}

/// The outcome of one evaluation.
pub(crate) enum Eval {
    Valid(Point),
    Failed(String),
}

/// Wraps an objective to count evaluations, classify failures and remember the best valid point,
/// so that no caller can lose it whatever path the run takes.
pub(crate) struct Evaluator<'a, O: ?Sized> {
    obj: &'a mut O,
    n_evals: usize,
    max_evals: usize,
    best: Option<Point>,
    /// Whether evaluations ask the objective for its curvature.
    pub(crate) curvature_wanted: bool,
}

impl<'a, O: Objective + ?Sized> Evaluator<'a, O> {
    pub(crate) fn new(obj: &'a mut O, max_evals: usize) -> Self {
        Evaluator {
            obj,
            n_evals: 0,
            max_evals,
            best: None,
            curvature_wanted: false,
        }
    }

    /// Evaluations used so far.
    pub(crate) fn n_evals(&self) -> usize {
        self.n_evals
    }

    /// Whether the run must end: the evaluation budget is spent or the objective asked to stop.
    pub(crate) fn exhausted(&self) -> bool {
        self.n_evals >= self.max_evals || self.stop_requested()
    }

    /// Whether the objective asked to stop.
    pub(crate) fn stop_requested(&self) -> bool {
        self.obj.stop_requested()
    }

    /// Why [`Evaluator::exhausted`] holds.
    pub(crate) fn exhausted_reason(&self) -> StopReason {
        if self.stop_requested() {
            StopReason::Requested
        } else {
            StopReason::MaxEvaluations
        }
    }

    /// The lowest-valued valid point evaluated so far.
    pub(crate) fn best(&self) -> Option<&Point> {
        self.best.as_ref()
    }

    /// Evaluates at `x`. Only a wrong-length gradient is an error: it is a bug in the caller,
    /// not a property of the point.
    pub(crate) fn eval(&mut self, x: &[f64]) -> Result<Eval, OptimError> {
        self.n_evals += 1;
        super::counter::count_evaluation();
        let evaluated = if self.curvature_wanted {
            self.obj.eval_with_curvature(x)
        } else {
            self.obj.eval(x).map(|(f, g)| (f, g, None))
        };
        let (f, g, curvature) = match evaluated {
            Ok(value) => value,
            Err(msg) => return Ok(Eval::Failed(msg)),
        };
        if g.len() != x.len() {
            return Err(OptimError::GradientLength {
                expected: x.len(),
                got: g.len(),
            });
        }
        if !f.is_finite() {
            return Ok(Eval::Failed(format!("non-finite objective value {f}")));
        }
        if let Some(i) = g.iter().position(|v| !v.is_finite()) {
            return Ok(Eval::Failed(format!("non-finite gradient component {i}")));
        }
        let point = Point {
            x: x.to_vec(),
            f,
            g,
            curvature: curvature
                .filter(|c| c.nrows() == x.len() && c.ncols() == x.len() && c.is_all_finite()),
        };
        if self.best.as_ref().is_none_or(|b| point.f < b.f) {
            self.best = Some(point.clone());
        }
        Ok(Eval::Valid(point))
    }
}
