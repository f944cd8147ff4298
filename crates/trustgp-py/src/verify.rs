//! `verify_regressor`: certified bounds of a fitted regressor's latent mean or variance over
//! the ℓ∞ box around each row of `x` (`trustgp::verify::verify_regressor_box`), with the
//! same settings, checks and numbers as `trustgp verify` on the same model file.

use std::time::Duration;

use numpy::ndarray::Array1;
use numpy::{IntoPyArray, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use trustgp::verify::{verify_regressor_box, BnbOptions, Quantity, Region, Verified};

use crate::arrays::{rows_to_numpy, to_mat};
use crate::errors::guarded;
use crate::regressor::Regressor;

/// The branch-and-bound settings, checked as the CLI checks its flags.
fn bnb_options(
    tolerance: f64,
    max_iterations: usize,
    time_limit: Option<f64>,
) -> Result<BnbOptions, String> {
    if !(tolerance.is_finite() && tolerance >= 0.0) {
        return Err(format!(
            "tolerance must be a finite number ≥ 0, got {tolerance}"
        ));
    }
    let time_limit = match time_limit {
        Some(t) if !(t.is_finite() && t > 0.0) => {
            return Err(format!(
                "time_limit must be a positive number of seconds, got {t}"
            ))
        }
        t => t.map(Duration::from_secs_f64),
    };
    Ok(BnbOptions {
        tolerance,
        max_iterations,
        time_limit,
        ..BnbOptions::default()
    })
}

/// One verified point and the quantity's value at it.
struct Point {
    value: f64,
    v: Verified,
}

/// Certified bounds around each row of `x` (data units). `quantity`: `mean` or `variance`
/// (latent); `features`: the input columns that may move (all when `None`); `delta`: decide
/// whether the quantity moves at most `delta` from its value at the point (`certified`).
/// Returns a dict of numpy arrays, one entry per row. The GIL is released.
#[pyfunction]
#[pyo3(signature = (model, x, radius, quantity="mean", output=0, features=None, delta=None,
                    tolerance=0.01, max_iterations=10_000, time_limit=None))]
#[allow(clippy::too_many_arguments)]
pub fn verify_regressor<'py>(
    py: Python<'py>,
    model: &Regressor,
    x: PyReadonlyArray2<'py, f64>,
    radius: f64,
    quantity: &str,
    output: usize,
    features: Option<Vec<usize>>,
    delta: Option<f64>,
    tolerance: f64,
    max_iterations: usize,
    time_limit: Option<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let reg = &model.inner;
    let x = to_mat(&x.as_array());
    let points = py.detach(|| {
        guarded(|| -> Result<Vec<Point>, String> {
            let options = bnb_options(tolerance, max_iterations, time_limit)?;
            if let Some(d) = delta {
                if !(d.is_finite() && d >= 0.0) {
                    return Err(format!("delta must be a finite number ≥ 0, got {d}"));
                }
            }
            if !(radius.is_finite() && radius >= 0.0) {
                return Err(format!("radius must be a finite number ≥ 0, got {radius}"));
            }
            let quantity = match quantity {
                "mean" => Quantity::Mean,
                "variance" => Quantity::Variance,
                q => {
                    return Err(format!(
                        "quantity must be mean or variance for a regression model, got `{q}`"
                    ))
                }
            };
            if output >= reg.targets.len() {
                return Err(format!(
                    "output {output} is out of range: the model has {} targets ({})",
                    reg.targets.len(),
                    reg.targets.join(", ")
                ));
            }
            let d = reg.inputs.len();
            if x.nrows() == 0 {
                return Err("X has no rows: nothing to verify".into());
            }
            if x.ncols() != d {
                return Err(format!(
                    "X has {} columns, the model takes {d} ({})",
                    x.ncols(),
                    reg.inputs.join(", ")
                ));
            }
            let free: Vec<usize> = features.clone().unwrap_or_else(|| (0..d).collect());
            if let Some(&j) = free.iter().find(|&&j| j >= d) {
                return Err(format!(
                    "features: {j} is not an input column (the model has {d} inputs)"
                ));
            }
            (0..x.nrows())
                .map(|r| {
                    let xr: Vec<f64> = (0..d).map(|j| x[(r, j)]).collect();
                    if let Some(j) = xr.iter().position(|v| !v.is_finite()) {
                        return Err(format!(
                            "row {r}, column `{}`: {} is not a finite number",
                            reg.inputs[j], xr[j]
                        ));
                    }
                    // The value at the point itself, as `trustgp verify` reports it.
                    let xm = trustgp::Mat::from_fn(1, d, |_, j| xr[j]);
                    let pred = reg.predict(xm.as_ref(), true).map_err(|e| e.to_string())?;
                    let value = match quantity {
                        Quantity::Variance => pred[output].std[0].powi(2),
                        _ => pred[output].mean[0],
                    };
                    let data_box =
                        Region::ball(&xr, radius, Some(&free)).map_err(|e| e.to_string())?;
                    let v = verify_regressor_box(reg, output, quantity, &data_box, &options)
                        .map_err(|e| e.to_string())?;
                    Ok(Point { value, v })
                })
                .collect()
        })
    })?;
    let out = PyDict::new(py);
    let column = |f: &dyn Fn(&Point) -> f64| -> Array1<f64> { points.iter().map(f).collect() };
    out.set_item("value", column(&|p| p.value).into_pyarray(py))?;
    out.set_item("lower", column(&|p| p.v.lower).into_pyarray(py))?;
    out.set_item("upper", column(&|p| p.v.upper).into_pyarray(py))?;
    out.set_item("min_found", column(&|p| p.v.min_found).into_pyarray(py))?;
    out.set_item("max_found", column(&|p| p.v.max_found).into_pyarray(py))?;
    out.set_item("gap", column(&|p| p.v.gap).into_pyarray(py))?;
    out.set_item("seconds", column(&|p| p.v.seconds).into_pyarray(py))?;
    let d = reg.inputs.len();
    let argmin: Vec<Vec<f64>> = points.iter().map(|p| p.v.argmin.clone()).collect();
    let argmax: Vec<Vec<f64>> = points.iter().map(|p| p.v.argmax.clone()).collect();
    out.set_item("argmin", rows_to_numpy(py, &argmin, d))?;
    out.set_item("argmax", rows_to_numpy(py, &argmax, d))?;
    let iterations: Array1<u64> = points.iter().map(|p| p.v.iterations as u64).collect();
    out.set_item("iterations", iterations.into_pyarray(py))?;
    // `certified` only answers a question that was asked (as the CLI's `null`).
    match delta {
        Some(dl) => {
            let c: Array1<bool> = points
                .iter()
                .map(|p| (p.value - p.v.lower).max(p.v.upper - p.value) <= dl)
                .collect();
            out.set_item("certified", c.into_pyarray(py))?
        }
        None => out.set_item("certified", py.None())?,
    }
    let exits: Vec<[&str; 2]> = points
        .iter()
        .map(|p| [p.v.exit_min.name(), p.v.exit_max.name()])
        .collect();
    out.set_item("exit", exits)?;
    Ok(out)
}
