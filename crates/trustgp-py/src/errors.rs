//! How failures cross into Python: the library's errors become `ValueError` carrying the
//! library's message; a panic (a bug, never bad input) is caught before it reaches the FFI
//! boundary and becomes a `RuntimeError` that says so.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::PyErr;

/// A library error as the `ValueError` a Python user expects for bad input.
pub fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Runs `f`, turning its error into a `ValueError` and a panic into a `RuntimeError`.
pub fn guarded<T, E: std::fmt::Display>(f: impl FnOnce() -> Result<T, E>) -> Result<T, PyErr> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result.map_err(value_error),
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(PyRuntimeError::new_err(format!(
                "trustgp internal error (a bug; please report it): {message}"
            )))
        }
    }
}
