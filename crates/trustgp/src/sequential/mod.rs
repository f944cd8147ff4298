//! Sequential decisions on a fitted model's [`Posterior`](crate::posterior::Posterior): where to
//! evaluate next.
//!
//! * [`acquisition`] — acquisition functions (EI, LogEI, PI, log PI, UCB) with their gradients
//!   in the input, the normal-distribution functions they need, and the incumbent of noisy
//!   observations.
//! * [`dpp`] — greedy MAP selection from a quality-weighted DPP (DPP-BO's inducing points):
//!   pivoted Cholesky of `diag(q) K diag(q)`.
//! * [`eulbo`] — EULBO: joint optimisation of a sparse or computation-aware model (SVGP, RCSVGP,
//!   CaGP, RCaGP) and the next query point under the softplus expected utility, with the
//!   reference code's alternation, clipping, patience and restore-on-failure.
//! * [`optimize`] — the candidate that maximises an acquisition over a box: multi-start
//!   L-BFGS-B from the best of scrambled-Sobol raw samples, with optional fixed inputs.
//! * [`problems`] — built-in benchmark objectives (Branin, Hartmann6, Ackley, Rover60) with their boxes
//!   and known optima, and the seeded outlier corruption of observations of robust BO.
//! * [`bayes_opt`] — the ask/tell [`BayesOpt`](bayes_opt::BayesOpt) run: initial design, any
//!   single-output surrogate, whole box or TuRBO region, state stored as JSON.
//! * [`safe`] — safe active learning and safe BO with transfer GPs: safe sets, the models of
//!   each function, the pool loop and its metrics.
//! * [`suggest`] — the next point to evaluate from a box and the evaluated rows (`q = 1`).
//! * [`turbo`] — TuRBO trust regions: expand, shrink and restart rules, and the region's box.

pub mod acquisition;
pub mod bayes_opt;
pub mod dpp;
pub mod eulbo;
pub mod optimize;
pub mod problems;
pub mod safe;
pub mod suggest;
pub mod turbo;
