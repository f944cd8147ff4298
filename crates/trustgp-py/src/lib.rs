//! `trustgp._core`: the Rust half of the `trustgp` Python package, a thin layer over the
//! library's front end. Arrays come in as numpy arrays and go out as numpy arrays; every option
//! is checked by the library (`trustgp::estimators`, `sequential`), never here; errors arrive
//! as `ValueError` with the library's message; fits and predictions release the GIL.
//!
//! The scikit-learn classes (`GaussianProcessRegressor`, `GaussianProcessClassifier`,
//! `BayesianOptimizer`) and `trustgp.verify` are pure Python
//! on top of these (`python/trustgp/`).
//!
//! * [`regressor`] — `Regressor`: fit, predict, joint predictions, summary, model file text.
//! * [`classifier`] — `Classifier`: GP classification (labels as text, class probabilities,
//!   model file text).
//! * [`verify`] — `verify_regressor`: certified bounds around points (as `trustgp verify`).
//! * [`bayes_opt`] — `BayesOpt`: ask/tell with the JSON state of the library.
//! * [`safe`] — `safe_suggest`: the next safe point of a safe learning loop (with transfer).
//! * [`arrays`], [`errors`] — numpy ↔ faer, and the one way errors and panics cross to Python.

pub mod arrays;
pub mod bayes_opt;
pub mod classifier;
pub mod errors;
pub mod regressor;
pub mod safe;
pub mod verify;

use pyo3::prelude::*;

/// Whether the process should keep freed matrices for reuse (see
/// [`trustgp::linalg::reuse_freed_memory`]); off when `TRUSTGP_KEEP_ALLOCATOR` is set.
fn tune_allocator() -> bool {
    std::env::var_os("TRUSTGP_KEEP_ALLOCATOR").is_none() && trustgp::linalg::reuse_freed_memory()
}

/// The extension module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // As the CLI does: repeated fits free and reallocate the same n×n matrices, and glibc's
    // defaults would page-fault them in again at every objective evaluation.
    m.add("allocator_tuned", tune_allocator())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "MODEL_NAMES",
        trustgp::estimators::ModelKind::NAMES.to_vec(),
    )?;
    m.add("DEFAULT_KERNEL", trustgp::estimators::DEFAULT_KERNEL)?;
    m.add_class::<regressor::Regressor>()?;
    m.add_class::<bayes_opt::BayesOpt>()?;
    m.add_class::<classifier::Classifier>()?;
    m.add_function(wrap_pyfunction!(verify::verify_regressor, m)?)?;
    m.add_function(wrap_pyfunction!(safe::safe_suggest, m)?)?;
    m.add_function(wrap_pyfunction!(safe::parse_constraint, m)?)?;
    Ok(())
}
