//! The objective interface and the evaluation bookkeeping shared by the optimisers.

use std::fmt::Display;

use super::error::OptimError;

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

/// A point where the objective succeeded.
#[derive(Debug, Clone)]
pub(crate) struct Point {
    pub(crate) x: Vec<f64>,
    pub(crate) f: f64,
    pub(crate) g: Vec<f64>,
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
}

impl<'a, O: Objective + ?Sized> Evaluator<'a, O> {
    pub(crate) fn new(obj: &'a mut O, max_evals: usize) -> Self {
        Evaluator {
            obj,
            n_evals: 0,
            max_evals,
            best: None,
        }
    }

    /// Evaluations used so far.
    pub(crate) fn n_evals(&self) -> usize {
        self.n_evals
    }

    /// Whether the evaluation budget is spent.
    pub(crate) fn exhausted(&self) -> bool {
        self.n_evals >= self.max_evals
    }

    /// The lowest-valued valid point evaluated so far.
    pub(crate) fn best(&self) -> Option<&Point> {
        self.best.as_ref()
    }

    /// Evaluates at `x`. Only a wrong-length gradient is an error: it is a bug in the caller,
    /// not a property of the point.
    pub(crate) fn eval(&mut self, x: &[f64]) -> Result<Eval, OptimError> {
        self.n_evals += 1;
        let (f, g) = match self.obj.eval(x) {
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
        };
        if self.best.as_ref().is_none_or(|b| point.f < b.f) {
            self.best = Some(point.clone());
        }
        Ok(Eval::Valid(point))
    }
}
