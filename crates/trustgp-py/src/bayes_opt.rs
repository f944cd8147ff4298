//! `BayesOpt`: the library's ask/tell run ([`trustgp::sequential::bayes_opt::BayesOpt`]).
//! Settings are the JSON of [`BoSettings`] (checked by the library, unknown keys refused); the
//! whole run is the library's JSON state, so a run resumes bit for bit.

use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use trustgp::sequential::bayes_opt::{BayesOpt as Run, BoSettings};

use crate::arrays::{rows, rows_to_numpy};
use crate::errors::{guarded, value_error};

/// What `ask` returns: the points (q × d), the acquisition's value (None for design points) and
/// the trust region searched (lower, upper), if any.
type Asked<'py> = (
    Bound<'py, PyArray2<f64>>,
    Option<f64>,
    Option<(Vec<f64>, Vec<f64>)>,
);

/// An ask/tell Bayesian optimisation run.
#[pyclass(module = "trustgp._core")]
pub struct BayesOpt {
    run: Run,
}

#[pymethods]
impl BayesOpt {
    /// A run with settings given as the JSON of the library's `BoSettings`.
    #[new]
    fn new(settings_json: &str) -> PyResult<Self> {
        let settings: BoSettings = serde_json::from_str(settings_json)
            .map_err(|e| value_error(format!("settings: {e}")))?;
        guarded(|| Run::new(settings)).map(|run| BayesOpt { run })
    }

    /// A run resumed from its JSON state (`to_json`).
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Self> {
        guarded(|| Run::from_json(text)).map(|run| BayesOpt { run })
    }

    /// The expert's correction `value` of observation `index` (0-based, in the order told):
    /// with the expert-guided prior mean (`expert_mean = "corrections"`), later proposals fit
    /// the robust surrogate with the mean built from the corrections.
    fn correct(&mut self, index: usize, value: f64) -> PyResult<()> {
        guarded(|| self.run.correct(index, value))
    }

    /// The run's JSON state.
    fn to_json(&self) -> PyResult<String> {
        guarded(|| self.run.to_json())
    }

    /// `q` points to evaluate next. The GIL is released while the surrogate is fitted.
    fn ask<'py>(&mut self, py: Python<'py>, q: usize) -> PyResult<Asked<'py>> {
        let run = &mut self.run;
        let p = py.detach(|| guarded(|| run.ask(q)))?;
        let d = self.run.settings().bounds.len();
        Ok((
            rows_to_numpy(py, &p.points, d),
            p.acquisition_value,
            p.region,
        ))
    }

    /// Record the values `y` (m) at the points `x` (m × d).
    fn tell(&mut self, x: PyReadonlyArray2<'_, f64>, y: PyReadonlyArray1<'_, f64>) -> PyResult<()> {
        let points = rows(&x.as_array());
        let values = y.as_array().to_vec();
        guarded(|| self.run.tell(&points, &values))
    }

    /// The evaluated points, in the order told.
    #[getter]
    fn x<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        rows_to_numpy(py, self.run.x(), self.run.settings().bounds.len())
    }

    /// The values told.
    #[getter]
    fn y<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.run.y().to_vec().into_pyarray(py)
    }

    /// The settings as JSON (defaults filled in).
    fn settings_json(&self) -> PyResult<String> {
        serde_json::to_string(self.run.settings()).map_err(value_error)
    }
}
