//! Optimisers for fitting GP hyperparameters.
//!
//! * [`minimize_lbfgsb`] — a bound-constrained (projected) L-BFGS minimiser. Hyperparameter
//!   evaluations are expensive (one Cholesky each), so it is tuned for few evaluations: a
//!   strong-Wolfe line search with interpolation that usually accepts the first trial step.
//! * [`minimize_adam`] — Adam with projection onto the box, for stochastic objectives.
//! * [`minimize_cg`] — the GPML toolbox's conjugate gradients (`minimize.m`) for a budget of
//!   evaluations, to reproduce truncated GPML fits ([`minimize_cg_budgets`]: several budgets
//!   from one run).
//!
//! [`evaluations_on_this_thread`] counts the evaluations of every optimiser, per thread (for
//! timing studies).
//!
//! All take an [`Objective`], which closures `FnMut(&[f64]) -> Result<(f64, Vec<f64>), E>`
//! implement. A failed evaluation (an `Err`, or a non-finite value or gradient) marks the point
//! as infeasible: the optimisers back off from it and never accept it.

mod adam;
mod bounds;
mod conjugate;
mod counter;
mod error;
mod lbfgs;
mod line_search;
mod memory;
mod objective;
mod path;
mod result;

#[cfg(test)]
mod tests;

pub use adam::{minimize_adam, AdamOptions};
pub use conjugate::{minimize_cg, minimize_cg_budgets};
pub use counter::evaluations_on_this_thread;
pub use error::OptimError;
pub use lbfgs::{minimize_lbfgsb, LbfgsOptions};
pub use objective::{CurvedEvaluation, Objective, StopWhen, WithCurvature};
pub use result::{OptimResult, StopReason};
