//! The fitting driver: every model of the crate maximises its training objective over a flat
//! vector of unconstrained parameters through this module.
//!
//! * [`FitOptions`] — restarts, seed and L-BFGS settings of the conjugate models (exact GP,
//!   RCGP, MOGP, MO-RCGP).
//! * [`Optimizer`] — the optimiser of the approximate models (Adam or L-BFGS).
//! * [`maximize`] — one optimiser run with a progress observer (the approximate models).
//! * `restarts` (crate-internal) — L-BFGS-B from the initial point plus seeded restarts, run
//!   in parallel for small problems, with curvature starts and stop requests.
//! * [`pilot`] — a first fit on a seeded subset of the rows whose optimum starts the full fit.
//! * [`FitReport`] — what one optimiser run did, the same type for every model, with the
//!   warnings a user should see ([`FitReport::warnings`]): a run that hit a limit instead of
//!   converging, a run that ended worse than it started, parameters left at a bound.

mod options;
pub mod pilot;
mod report;
pub(crate) mod restarts;
mod single;

pub use options::{FitOptions, DEFAULT_PILOT_ROWS};
pub use report::{best, FitReport};
pub use single::{maximize, Optimizer};
