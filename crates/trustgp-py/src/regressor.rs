//! `Regressor`: a fitted `trustgp::estimators::Regressor` (standardiser plus model) as a Python
//! object. Options arrive as a dict whose keys are the fields of
//! [`ModelOptions`] and are checked by the library; the data
//! by [`Dataset::from_matrices`]; the fit's cost by [`FitCost`], as the CLI does.

use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use trustgp::data::Dataset;
use trustgp::estimators::{
    load_str, physical_memory, save_str, Advice, FitCost, FitSummary, ModelOptions,
};

use crate::arrays::{columns_to_numpy, mat_ref, mat_to_numpy, to_mat};
use crate::errors::{guarded, value_error};

/// The option keys [`model_options`] reads, in the order of [`ModelOptions`]'s fields.
pub const OPTION_KEYS: [&str; 26] = [
    "model",
    "kernel",
    "noise",
    "mean",
    "restarts",
    "seed",
    "optimize",
    "standardize",
    "epsilon",
    "weight",
    "shared_noise",
    "rank",
    "inducing",
    "actions",
    "action_kind",
    "likelihood",
    "optimizer",
    "iterations",
    "lr",
    "batch_size",
    "free_noise",
    "kernels",
    "top",
    "epochs",
    "mode",
    "period_init",
];

/// The value of `key` in `d` (`None` when absent or `None`), converted, or a `ValueError`
/// naming the key and the type expected.
pub fn get<'py, T: FromPyObjectOwned<'py>>(
    d: &Bound<'py, PyDict>,
    key: &str,
    what: &str,
) -> PyResult<Option<T>> {
    match d.get_item(key)? {
        Some(v) if !v.is_none() => v
            .extract::<T>()
            .map(Some)
            .map_err(|_| value_error(format!("{key}: expected {what}, got {v}"))),
        _ => Ok(None),
    }
}

/// [`ModelOptions`] from a dict keyed by its field names; a key it does not know is an error
/// (a misspelt option must not be ignored).
pub fn model_options(d: &Bound<'_, PyDict>) -> PyResult<ModelOptions> {
    for key in d.keys() {
        let key: String = key.extract()?;
        if !OPTION_KEYS.contains(&key.as_str()) {
            return Err(value_error(format!(
                "unknown option '{key}' (known: {})",
                OPTION_KEYS.join(", ")
            )));
        }
    }
    let defaults = ModelOptions::default();
    let epsilon: Vec<f64> = match d.get_item("epsilon")? {
        Some(v) if !v.is_none() => match v.extract::<f64>() {
            Ok(e) => vec![e],
            Err(_) => v.extract::<Vec<f64>>().map_err(|_| {
                value_error(format!(
                    "epsilon: expected a number or a list of numbers, got {v}"
                ))
            })?,
        },
        _ => Vec::new(),
    };
    let text = "a string";
    let count = "a non-negative integer";
    let switch = "True or False";
    Ok(ModelOptions {
        model: get(d, "model", text)?.unwrap_or(defaults.model),
        kernel: get(d, "kernel", text)?,
        noise: get(d, "noise", "a number")?,
        mean: get(d, "mean", text)?,
        restarts: get(d, "restarts", count)?.unwrap_or(defaults.restarts),
        seed: get(d, "seed", count)?.unwrap_or(defaults.seed),
        optimize: get(d, "optimize", switch)?.unwrap_or(defaults.optimize),
        standardize: get(d, "standardize", switch)?.unwrap_or(defaults.standardize),
        epsilon,
        weight: get(d, "weight", text)?,
        shared_noise: get(d, "shared_noise", switch)?.unwrap_or(false),
        rank: get(d, "rank", count)?,
        inducing: get(d, "inducing", count)?,
        actions: get(d, "actions", count)?,
        action_kind: get(d, "action_kind", text)?,
        likelihood: get(d, "likelihood", text)?,
        optimizer: get(d, "optimizer", text)?,
        iterations: get(d, "iterations", count)?,
        lr: get(d, "lr", "a number")?,
        batch_size: get(d, "batch_size", count)?,
        free_noise: get(d, "free_noise", switch)?.unwrap_or(false),
        kernels: get(d, "kernels", text)?,
        top: get(d, "top", count)?,
        epochs: get(d, "epochs", count)?,
        mode: get(d, "mode", text)?,
        period_init: get(d, "period_init", text)?,
    })
}

/// Two arrays of the same kind (mean and standard deviation).
type Pair<'py, A> = (Bound<'py, A>, Bound<'py, A>);
/// A numpy matrix.
type Matrix<'py> = Bound<'py, PyArray2<f64>>;

/// Names `p0, p1, …` for `k` unnamed columns (`one` alone when `k = 1`).
pub fn default_names(given: Option<Vec<String>>, k: usize, prefix: &str, one: &str) -> Vec<String> {
    given.unwrap_or_else(|| {
        if k == 1 {
            vec![one.to_string()]
        } else {
            (0..k).map(|i| format!("{prefix}{i}")).collect()
        }
    })
}

/// A fitted regression model (any model of the registry).
#[pyclass(module = "trustgp._core", frozen)]
pub struct Regressor {
    pub(crate) inner: trustgp::estimators::Regressor,
    /// Training rows (for the summary).
    n: usize,
    /// The fit's warnings, the cost advice included.
    warnings: Vec<String>,
}

#[pymethods]
impl Regressor {
    /// Fit a model to `x` (n × d) and `y` (n × T, NaN = missing) with `options` (a dict keyed
    /// by the library's option names). The GIL is released during the fit.
    #[staticmethod]
    #[pyo3(signature = (x, y, options, input_names=None, target_names=None, force=false))]
    fn fit(
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        y: PyReadonlyArray2<'_, f64>,
        options: &Bound<'_, PyDict>,
        input_names: Option<Vec<String>>,
        target_names: Option<Vec<String>>,
        force: bool,
    ) -> PyResult<Regressor> {
        let options = model_options(options)?;
        let (x, y) = (x.as_array(), y.as_array());
        let inputs = default_names(input_names, x.ncols(), "x", "x0");
        let targets = default_names(target_names, y.ncols(), "y", "y");
        let (x, y) = (to_mat(&x), to_mat(&y));
        py.detach(|| {
            guarded(|| -> Result<Regressor, String> {
                let cfg = options.check().map_err(|e| e.to_string())?;
                let data =
                    Dataset::from_matrices(x, y, inputs, targets).map_err(|e| e.to_string())?;
                cfg.check_data(&data).map_err(|e| e.to_string())?;
                let cost = FitCost::estimate(&cfg, data.n(), data.d(), data.n_targets());
                let advice = match cost.advice(physical_memory()) {
                    Advice::Fine => None,
                    Advice::Refuse(m) if !force => {
                        return Err(format!("{m} (force=True fits anyway)"))
                    }
                    Advice::Refuse(m) | Advice::Warn(m) => Some(m),
                };
                let inner =
                    trustgp::estimators::Regressor::fit(&data, &cfg).map_err(|e| e.to_string())?;
                let warnings = advice.into_iter().chain(inner.warnings.clone()).collect();
                Ok(Regressor {
                    inner,
                    n: data.n(),
                    warnings,
                })
            })
        })
    }

    /// The model from the text of a model file (`to_json`), fitted on `n` rows.
    #[staticmethod]
    #[pyo3(signature = (text, n))]
    fn from_json(py: Python<'_>, text: &str, n: usize) -> PyResult<Regressor> {
        py.detach(|| {
            guarded(|| {
                load_str(text, "model state").map(|inner| Regressor {
                    warnings: inner.warnings.clone(),
                    inner,
                    n,
                })
            })
        })
    }

    /// The model file's text (the versioned JSON that `trustgp predict --model` reads).
    fn to_json(&self) -> PyResult<String> {
        guarded(|| save_str(&self.inner, "model state"))
    }

    /// The fit summary as JSON (the object `trustgp fit` prints).
    fn summary_json(&self) -> PyResult<String> {
        guarded(|| -> Result<String, String> {
            let s = FitSummary::of(&self.inner, self.n);
            s.check_finite().map_err(|e| e.to_string())?;
            serde_json::to_string(&s).map_err(|e| e.to_string())
        })
    }

    /// Mean and standard deviation (n × T each) at `x`: of a new observation, or of the latent
    /// function with `latent`. The GIL is released.
    #[pyo3(signature = (x, latent=false))]
    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        latent: bool,
    ) -> PyResult<Pair<'py, PyArray2<f64>>> {
        let view = x.as_array();
        let xr = mat_ref(&view);
        let n = xr.nrows();
        // SAFETY of sharing: the view is read-only and `x` keeps the array borrowed.
        let p = py.detach(|| guarded(|| self.inner.predict(xr, latent)))?;
        let (mean, std): (Vec<_>, Vec<_>) = p.into_iter().map(|o| (o.mean, o.std)).unzip();
        Ok((columns_to_numpy(py, n, mean), columns_to_numpy(py, n, std)))
    }

    /// The joint mean (m) and covariance (m × m) of output `output` at `x`. The GIL is released.
    #[pyo3(signature = (x, output=0, latent=false))]
    fn predict_joint<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        output: usize,
        latent: bool,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, Matrix<'py>)> {
        let view = x.as_array();
        let xr = mat_ref(&view);
        let j = py.detach(|| guarded(|| self.inner.predict_joint(xr, output, latent)))?;
        Ok((j.mean.into_pyarray(py), mat_to_numpy(py, j.cov.as_ref())))
    }

    /// The model's name.
    #[getter]
    fn model(&self) -> &'static str {
        self.inner.model_name()
    }

    /// Input column names.
    #[getter]
    fn inputs(&self) -> Vec<String> {
        self.inner.inputs.clone()
    }

    /// Target column names.
    #[getter]
    fn targets(&self) -> Vec<String> {
        self.inner.targets.clone()
    }

    /// Training rows.
    #[getter]
    fn n(&self) -> usize {
        self.n
    }

    /// What the user should know about the fit.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    /// Wall-clock seconds of the fit.
    #[getter]
    fn fit_seconds(&self) -> f64 {
        self.inner.fit_seconds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key of [`OPTION_KEYS`] reaches its field: set alone to a non-default value, it
    /// changes the options; a misspelt key and a value of the wrong type are `ValueError`s
    /// naming the key.
    #[test]
    fn every_option_key_reaches_its_field() {
        Python::initialize();
        Python::attach(|py| {
            let value = |key: &str| -> Bound<'_, PyAny> {
                match key {
                    "optimize" | "standardize" => {
                        false.into_pyobject(py).unwrap().to_owned().into_any()
                    }
                    "shared_noise" | "free_noise" => {
                        true.into_pyobject(py).unwrap().to_owned().into_any()
                    }
                    "noise" | "lr" | "epsilon" => 0.25_f64.into_pyobject(py).unwrap().into_any(),
                    "restarts" | "seed" | "rank" | "inducing" | "actions" | "iterations"
                    | "batch_size" | "top" | "epochs" => {
                        3_u64.into_pyobject(py).unwrap().into_any()
                    }
                    _ => "x".into_pyobject(py).unwrap().into_any(),
                }
            };
            for key in OPTION_KEYS {
                let d = PyDict::new(py);
                d.set_item(key, value(key)).unwrap();
                let o = model_options(&d).unwrap();
                assert_ne!(o, ModelOptions::default(), "{key}");
            }
            let d = PyDict::new(py);
            d.set_item("epsilon", vec![0.1, 0.2]).unwrap();
            assert_eq!(model_options(&d).unwrap().epsilon, vec![0.1, 0.2]);
            d.set_item("colour", "blue").unwrap();
            let e = model_options(&d).unwrap_err().to_string();
            assert!(
                e.contains("ValueError") && e.contains("unknown option 'colour'"),
                "{e}"
            );
            let d = PyDict::new(py);
            d.set_item("restarts", "many").unwrap();
            let e = model_options(&d).unwrap_err().to_string();
            assert!(
                e.contains("restarts: expected a non-negative integer"),
                "{e}"
            );
            let d = PyDict::new(py);
            d.set_item("kernel", py.None()).unwrap();
            assert_eq!(model_options(&d).unwrap(), ModelOptions::default());
        });
    }
}
