//! Tests of the safe-learning layer, on a test-only exact GP with fixed hyperparameters.

mod acquisition;
mod continuous;
mod metrics;
mod model;
mod propose;
mod replay;
mod run;
mod safe_set;
mod scaling;
mod suggest;
mod theory;
