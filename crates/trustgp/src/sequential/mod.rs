//! Sequential decisions on a fitted model's [`Posterior`](crate::posterior::Posterior): where to
//! evaluate next.
//!
//! * [`acquisition`] — acquisition functions (EI, LogEI, PI, log PI, UCB) with their gradients
//!   in the input, the normal-distribution functions they need, and the incumbent of noisy
//!   observations.
//! * [`optimize`] — the candidate that maximises an acquisition over a box: multi-start
//!   L-BFGS-B from the best of scrambled-Sobol raw samples, with optional fixed inputs.

pub mod acquisition;
pub mod optimize;
