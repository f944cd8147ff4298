//! numpy arrays ↔ faer matrices. Inputs are read through views of whatever strides numpy
//! hands over (C or Fortran order, slices) without a copy where a view suffices; outputs are
//! built column-major and handed to numpy without a further copy.

use faer::{Mat, MatRef};
use numpy::ndarray::{Array2, ArrayView2, ShapeBuilder};
use numpy::{IntoPyArray, PyArray2};
use pyo3::prelude::*;

/// A faer view of a 2-D numpy view (no copy; any strides).
pub fn mat_ref<'a>(a: &'a ArrayView2<'a, f64>) -> MatRef<'a, f64> {
    let (n, m) = a.dim();
    let s = a.strides();
    // SAFETY: `ptr`, the shape and the element strides describe exactly the elements of `a`,
    // which stays borrowed (and so alive and unchanged by Rust) for 'a; faer only reads.
    unsafe { MatRef::from_raw_parts(a.as_ptr(), n, m, s[0], s[1]) }
}

/// An owned copy of a 2-D numpy view.
pub fn to_mat(a: &ArrayView2<'_, f64>) -> Mat<f64> {
    mat_ref(a).to_owned()
}

/// Rows of a 2-D view as vectors (the library's ask/tell points).
pub fn rows(a: &ArrayView2<'_, f64>) -> Vec<Vec<f64>> {
    a.rows().into_iter().map(|r| r.to_vec()).collect()
}

/// Columns laid end to end (column-major `n × k`) as a numpy array, without another copy.
pub fn columns_to_numpy<'py>(
    py: Python<'py>,
    n: usize,
    columns: Vec<Vec<f64>>,
) -> Bound<'py, PyArray2<f64>> {
    let k = columns.len();
    let data: Vec<f64> = columns.into_iter().flatten().collect();
    let array = Array2::from_shape_vec((n, k).f(), data).expect("n × k values laid column-major");
    array.into_pyarray(py)
}

/// A faer matrix as a numpy array.
pub fn mat_to_numpy<'py>(py: Python<'py>, m: MatRef<'_, f64>) -> Bound<'py, PyArray2<f64>> {
    let columns = (0..m.ncols())
        .map(|j| (0..m.nrows()).map(|i| m[(i, j)]).collect())
        .collect();
    columns_to_numpy(py, m.nrows(), columns)
}

/// Rows as an `n × d` numpy array.
pub fn rows_to_numpy<'py>(
    py: Python<'py>,
    rows: &[Vec<f64>],
    d: usize,
) -> Bound<'py, PyArray2<f64>> {
    let columns = (0..d)
        .map(|j| rows.iter().map(|r| r[j]).collect())
        .collect();
    columns_to_numpy(py, rows.len(), columns)
}
