//! `Classifier`: a fitted `trustgp::estimators::Classifier` (input standardiser plus GP
//! classifier) as a Python object. Labels cross as text (the library sorts the classes:
//! numerically when every label reads as a number); options as a dict keyed by the fields of
//! [`ClassifierOptions`], checked by the library. Nothing here depends on the number of
//! classes: probabilities come back one column per class, in the order of `classes`.

use faer::{Mat, MatRef};
use numpy::{PyArray2, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use trustgp::estimators::{
    classifier_from_str, classifier_to_str, ClassifierModel, ClassifierOptions,
};
use trustgp::likelihoods::{Bernoulli, Link, LogitIntegral};

use crate::arrays::{mat_ref, mat_to_numpy, to_mat};
use crate::errors::{guarded, value_error};
use crate::regressor::{default_names, get};

/// The option keys [`classifier_options`] reads, in the order of [`ClassifierOptions`]'s
/// fields.
pub const CLASSIFIER_OPTION_KEYS: [&str; 10] = [
    "kernel",
    "likelihood",
    "inference",
    "restarts",
    "seed",
    "optimize",
    "standardize",
    "sparse",
    "inducing",
    "per_class_kernels",
];

/// [`ClassifierOptions`] from a dict keyed by its field names; an unknown key is an error.
/// Absent switches take the CLI's defaults (optimise, standardise).
pub fn classifier_options(d: &Bound<'_, PyDict>) -> PyResult<ClassifierOptions> {
    for key in d.keys() {
        let key: String = key.extract()?;
        if !CLASSIFIER_OPTION_KEYS.contains(&key.as_str()) {
            return Err(value_error(format!(
                "unknown option '{key}' (known: {})",
                CLASSIFIER_OPTION_KEYS.join(", ")
            )));
        }
    }
    let (text, count, switch) = ("a string", "a non-negative integer", "True or False");
    Ok(ClassifierOptions {
        kernel: get(d, "kernel", text)?,
        likelihood: get(d, "likelihood", text)?,
        inference: get(d, "inference", text)?,
        restarts: get(d, "restarts", count)?.unwrap_or(0),
        seed: get(d, "seed", count)?.unwrap_or(0),
        optimize: get(d, "optimize", switch)?.unwrap_or(true),
        standardize: get(d, "standardize", switch)?.unwrap_or(true),
        sparse: get(d, "sparse", text)?,
        inducing: get(d, "inducing", count)?,
        per_class_kernels: get(d, "per_class_kernels", switch)?.unwrap_or(false),
    })
}

/// A fitted GP classifier.
#[pyclass(module = "trustgp._core", frozen)]
pub struct Classifier {
    inner: trustgp::estimators::Classifier,
    /// Training rows (for the summary).
    n: usize,
}

#[pymethods]
impl Classifier {
    /// Fit to `x` (n × d) and one label (text) per row with `options`. The GIL is released
    /// during the fit.
    #[staticmethod]
    #[pyo3(signature = (x, labels, options, input_names=None))]
    fn fit(
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        labels: Vec<String>,
        options: &Bound<'_, PyDict>,
        input_names: Option<Vec<String>>,
    ) -> PyResult<Classifier> {
        let options = classifier_options(options)?;
        let x = x.as_array();
        let inputs = default_names(input_names, x.ncols(), "x", "x0");
        let x = to_mat(&x);
        py.detach(|| {
            guarded(|| -> Result<Classifier, String> {
                for r in 0..x.nrows() {
                    for c in 0..x.ncols() {
                        if !x[(r, c)].is_finite() {
                            return Err(format!(
                                "row {r}, column '{}': {} is not a finite number",
                                inputs[c],
                                x[(r, c)]
                            ));
                        }
                    }
                }
                let cfg = options.check().map_err(|e| e.to_string())?;
                let inner =
                    trustgp::estimators::Classifier::fit(x.as_ref(), &labels, &inputs, "y", &cfg)
                        .map_err(|e| e.to_string())?;
                Ok(Classifier {
                    inner,
                    n: labels.len(),
                })
            })
        })
    }

    /// The classifier of a model file's text (`to_json`), fitted on `n` rows.
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &str, n: usize) -> PyResult<Classifier> {
        py.detach(|| {
            guarded(|| -> Result<Classifier, String> {
                let inner = classifier_from_str(text, "state")
                    .map_err(|e| e.to_string())?
                    .ok_or("model file state: not a classifier's model file")?;
                Ok(Classifier { inner, n })
            })
        })
    }

    /// The model file's text (what `trustgp fit --model gpc --out` writes).
    fn to_json(&self) -> PyResult<String> {
        guarded(|| classifier_to_str(&self.inner))
    }

    /// The fit summary as JSON (the object `trustgp fit --model gpc` prints).
    fn summary_json(&self) -> PyResult<String> {
        guarded(|| serde_json::to_string(&self.inner.summary(self.n)))
    }

    /// Class probabilities (n × classes, columns in the order of `classes`). The GIL is
    /// released. `logit_integral`: how a binary logit model integrates the logistic against
    /// the latent Gaussian — `quadrature` (the library's, as `trustgp predict`) or
    /// `erf_mixture` (scikit-learn's mixture of five probits, for agreement with
    /// `sklearn.gaussian_process.GaussianProcessClassifier`).
    #[pyo3(signature = (x, logit_integral="quadrature"))]
    fn predict_proba<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        logit_integral: &str,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let view = x.as_array();
        let xr = mat_ref(&view);
        let p = py.detach(|| {
            guarded(|| -> Result<Mat<f64>, String> {
                match logit_integral {
                    "quadrature" => self.inner.predict_proba(xr).map_err(|e| e.to_string()),
                    "erf_mixture" => self.erf_mixture_proba(xr),
                    other => Err(format!(
                        "logit_integral must be quadrature or erf_mixture, got '{other}'"
                    )),
                }
            })
        })?;
        Ok(mat_to_numpy(py, p.as_ref()))
    }

    /// The sorted classes (text), the order of `predict_proba`'s columns.
    #[getter]
    fn classes(&self) -> Vec<String> {
        self.inner.classes.clone()
    }

    /// Training rows.
    #[getter]
    fn n(&self) -> usize {
        self.n
    }

    /// What the user should know about the fit.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.inner.warnings.clone()
    }
}

impl Classifier {
    /// Class probabilities of a binary logit model through scikit-learn's erf mixture
    /// ([`LogitIntegral::ErfMixture`]) of the library's latent marginals.
    fn erf_mixture_proba(&self, x: MatRef<'_, f64>) -> Result<Mat<f64>, String> {
        let c = &self.inner;
        if c.config.link != Link::Logit {
            return Err(format!(
                "logit_integral erf_mixture applies to the logit likelihood, this model's is {}",
                c.config.link.name()
            ));
        }
        if x.ncols() != c.inputs.len() {
            return Err(format!(
                "the inputs have {} columns, the model was fitted on {}",
                x.ncols(),
                c.inputs.len()
            ));
        }
        let xs = c.standardizer.transform_x(x);
        // The multi-class model has its own (softmax) integral: only the binary arm applies.
        #[allow(unreachable_patterns)]
        let marginals = match &c.model {
            ClassifierModel::Binary(m) => m.linear_gaussian().marginals(xs.as_ref()),
            _ => {
                return Err(
                    "logit_integral erf_mixture applies to binary classifiers (two classes)".into(),
                )
            }
        }
        .map_err(|e| e.to_string())?;
        let lik = Bernoulli::new(Link::Logit).with_logit_integral(LogitIntegral::ErfMixture);
        let p: Vec<f64> = marginals
            .mean
            .iter()
            .zip(&marginals.var)
            .map(|(&mu, &v)| lik.class_probability(mu, v))
            .collect();
        // Columns in the order of the classes: the second class is `y = +1`.
        Ok(Mat::from_fn(p.len(), 2, |i, k| {
            if k == 1 {
                p[i]
            } else {
                1.0 - p[i]
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key reaches its field; an unknown key and a value of the wrong type are
    /// `ValueError`s naming the key; absent switches are on.
    #[test]
    fn every_classifier_option_key_reaches_its_field() {
        Python::initialize();
        Python::attach(|py| {
            let empty = classifier_options(&PyDict::new(py)).unwrap();
            assert!(empty.optimize && empty.standardize && empty.kernel.is_none());
            let d = PyDict::new(py);
            d.set_item("kernel", "se").unwrap();
            d.set_item("likelihood", "probit").unwrap();
            d.set_item("inference", "ep").unwrap();
            d.set_item("restarts", 2).unwrap();
            d.set_item("seed", 7).unwrap();
            d.set_item("optimize", false).unwrap();
            d.set_item("standardize", false).unwrap();
            d.set_item("sparse", "fic").unwrap();
            d.set_item("inducing", 12).unwrap();
            d.set_item("per_class_kernels", true).unwrap();
            let o = classifier_options(&d).unwrap();
            assert_eq!((o.sparse.as_deref(), o.inducing), (Some("fic"), Some(12)));
            assert!(o.per_class_kernels);
            assert_eq!(o.kernel.as_deref(), Some("se"));
            assert_eq!(o.likelihood.as_deref(), Some("probit"));
            assert_eq!(o.inference.as_deref(), Some("ep"));
            assert_eq!((o.restarts, o.seed), (2, 7));
            assert!(!o.optimize && !o.standardize);
            d.set_item("noise", 0.1).unwrap();
            let e = classifier_options(&d).unwrap_err().to_string();
            assert!(e.contains("unknown option 'noise'"), "{e}");
            let d = PyDict::new(py);
            d.set_item("seed", "x").unwrap();
            let e = classifier_options(&d).unwrap_err().to_string();
            assert!(e.contains("seed: expected a non-negative integer"), "{e}");
        });
    }
}
