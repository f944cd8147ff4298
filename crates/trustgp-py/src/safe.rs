//! `safe_suggest`: the next point of a safe learning or safe BO loop the user drives, with or
//! without transfer from source tasks ([`trustgp::sequential::safe::safe_suggest`]); the same
//! choices as `trustgp suggest --constraint`.

use numpy::PyReadonlyArray2;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use trustgp::sequential::safe::acquisition::SafeAcquisition;
use trustgp::sequential::safe::{
    join_bounds, safe_suggest as suggest, AcquisitionOptions, BoundSpec, SafeSetOptions,
    SafeSuggestOptions, TaskData, TransferMethod,
};
use trustgp::sequential::suggest::DEFAULT_UCB_BETA;

use crate::arrays::to_mat;
use crate::errors::{guarded, value_error};

/// The acquisition named as the CLI's `--acquisition` names it under `--constraint`.
fn acquisition(name: &str) -> PyResult<SafeAcquisition> {
    match name {
        "entropy" => Ok(SafeAcquisition::EntropySum),
        "logei" => Ok(SafeAcquisition::LogEi),
        "ucb" => Ok(SafeAcquisition::Ucb {
            beta: DEFAULT_UCB_BETA,
        }),
        other => Err(value_error(format!(
            "acquisition '{other}' is not available with constraints (expected entropy for \
             safe active learning, or logei or ucb for safe optimisation)"
        ))),
    }
}

/// A constraint `"COLUMN<=V"` or `"COLUMN>=V"` read as the library reads it: `(column,
/// lower, upper)` with one of the thresholds set.
#[pyfunction]
pub fn parse_constraint(text: &str) -> PyResult<(String, Option<f64>, Option<f64>)> {
    guarded(|| BoundSpec::parse(text)).map(|b| (b.column, b.lower, b.upper))
}

/// The next safe point. `outputs` names the columns of each task's outputs (the objective
/// first); `constraints` are `"COLUMN<=V"` / `"COLUMN>=V"`; `sources` are (inputs, outputs)
/// pairs of related tasks. Returns a dict: `x`, `pool_row`, `acquisition`,
/// `safety_probability`, `safe_set_size`, `candidates`, `fit_seconds`, `transfer`.
#[pyfunction]
#[pyo3(signature = (bounds, x, outputs, output_names, constraints, sources=Vec::new(), pool=None,
    acquisition_name="entropy", minimize=false, transfer=None, beta=None, seed=0))]
#[allow(clippy::too_many_arguments)]
pub fn safe_suggest<'py>(
    py: Python<'py>,
    bounds: Vec<(f64, f64)>,
    x: PyReadonlyArray2<'py, f64>,
    outputs: PyReadonlyArray2<'py, f64>,
    output_names: Vec<String>,
    constraints: Vec<String>,
    sources: Vec<(PyReadonlyArray2<'py, f64>, PyReadonlyArray2<'py, f64>)>,
    pool: Option<PyReadonlyArray2<'py, f64>>,
    acquisition_name: &str,
    minimize: bool,
    transfer: Option<&str>,
    beta: Option<f64>,
    seed: u32,
) -> PyResult<Bound<'py, PyDict>> {
    let specs: Vec<BoundSpec> = constraints
        .iter()
        .map(|c| guarded(|| BoundSpec::parse(c)))
        .collect::<PyResult<_>>()?;
    let joined = guarded(|| join_bounds(&specs, &output_names))?;
    let transfer = match (transfer, sources.is_empty()) {
        (Some(t), _) => TransferMethod::parse(t).ok_or_else(|| {
            value_error(format!(
                "unknown transfer '{t}' (expected none, efficient-hgp, hgp, lmc or source-prior)"
            ))
        })?,
        (None, true) => TransferMethod::None,
        (None, false) => TransferMethod::EfficientHgp,
    };
    let options = SafeSuggestOptions {
        transfer,
        safe_set: SafeSetOptions {
            beta: beta.unwrap_or(SafeSetOptions::default().beta),
            ..SafeSetOptions::default()
        },
        acquisition: AcquisitionOptions {
            kind: acquisition(acquisition_name)?,
            minimize,
            ..AcquisitionOptions::default()
        },
        seed,
    };
    let target = TaskData {
        x: to_mat(&x.as_array()),
        outputs: to_mat(&outputs.as_array()),
    };
    let sources: Vec<TaskData> = sources
        .iter()
        .map(|(x, y)| TaskData {
            x: to_mat(&x.as_array()),
            outputs: to_mat(&y.as_array()),
        })
        .collect();
    let pool = pool.map(|p| to_mat(&p.as_array()));
    let s = py.detach(|| {
        guarded(|| {
            suggest(
                &bounds,
                &target,
                &sources,
                &joined,
                pool.as_ref().map(|p| p.as_ref()),
                &options,
            )
        })
    })?;
    let out = PyDict::new(py);
    out.set_item("x", s.x)?;
    out.set_item("pool_row", s.pool_row)?;
    out.set_item("acquisition", s.acquisition)?;
    out.set_item("safety_probability", s.safety_probability)?;
    out.set_item("safe_set_size", s.safe_set_size)?;
    out.set_item("candidates", s.candidates)?;
    out.set_item("fit_seconds", s.fit_seconds)?;
    out.set_item("transfer", transfer.name())?;
    Ok(out)
}
