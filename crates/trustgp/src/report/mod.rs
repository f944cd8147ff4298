//! Reports for people: figures written by hand as SVG, so that neither the library, the CLI
//! nor the experiments need a plotting dependency.
//!
//! * [`svg`] — curves of a value against a step (e.g. the best value found against the
//!   evaluations of Bayesian optimisation), the mean of several runs with a ±1 standard
//!   deviation band.
//! * [`safe_map`] — the explored safe set of a safe-learning run: candidates coloured by their
//!   true safety, the initial data and the queries.

pub mod safe_map;
pub mod svg;
