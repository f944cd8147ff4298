//! The in-memory table: named input and target columns, one row per observation.

use faer::Mat;

use super::DataError;

/// A table read from CSV: inputs `n × d`, targets `n × T` (NaN = missing target cell).
///
/// Both matrices are column-major with one row per observation; row `i` of `x` and of `y`
/// belong to the same observation.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// Names of the input columns, in the order of the columns of `x`.
    pub input_names: Vec<String>,
    /// Names of the target columns, in the order of the columns of `y`.
    pub target_names: Vec<String>,
    /// Inputs, `n × d`, all finite.
    pub x: Mat<f64>,
    /// Targets, `n × T`; NaN marks a missing (unobserved) cell, every other value is finite.
    pub y: Mat<f64>,
}

impl Dataset {
    /// A dataset from in-memory matrices (a Python binding's arrays, say), checked as
    /// [`read_csv`](super::read_csv) checks a file: at least one row, input and target; one
    /// name per column; every input finite; every target finite or NaN (missing); each target
    /// observed at least once. Rows in messages are 0-based, as in the arrays.
    ///
    /// # Errors
    /// The first of these that does not hold.
    pub fn from_matrices(
        x: Mat<f64>,
        y: Mat<f64>,
        input_names: Vec<String>,
        target_names: Vec<String>,
    ) -> Result<Dataset, DataError> {
        let shape = |what: &str, expected: usize, found: usize| {
            if expected == found {
                Ok(())
            } else {
                Err(DataError::ShapeMismatch {
                    what: what.into(),
                    expected,
                    found,
                })
            }
        };
        if x.nrows() == 0 {
            return Err(DataError::NoObserved {
                what: "inputs x (no rows)".into(),
            });
        }
        if x.ncols() == 0 {
            return Err(DataError::NoInputs {
                source_name: "inputs x".into(),
            });
        }
        if y.ncols() == 0 {
            return Err(DataError::NoTargets {
                source_name: "targets y".into(),
            });
        }
        shape(
            "rows of the targets y (one per row of x)",
            x.nrows(),
            y.nrows(),
        )?;
        shape(
            "input names (one per column of x)",
            x.ncols(),
            input_names.len(),
        )?;
        shape(
            "target names (one per column of y)",
            y.ncols(),
            target_names.len(),
        )?;
        for j in 0..x.ncols() {
            if let Some(i) = (0..x.nrows()).find(|&i| !x[(i, j)].is_finite()) {
                return Err(DataError::NonFiniteValue {
                    what: format!("inputs x row {i}, column '{}'", input_names[j]),
                    value: x[(i, j)],
                });
            }
        }
        for j in 0..y.ncols() {
            if let Some(i) = (0..y.nrows()).find(|&i| y[(i, j)].is_infinite()) {
                return Err(DataError::NonFiniteValue {
                    what: format!("targets y row {i}, column '{}'", target_names[j]),
                    value: y[(i, j)],
                });
            }
            if (0..y.nrows()).all(|i| y[(i, j)].is_nan()) {
                return Err(DataError::NoObserved {
                    what: format!("target '{}'", target_names[j]),
                });
            }
        }
        Ok(Dataset {
            input_names,
            target_names,
            x,
            y,
        })
    }

    /// Number of observations (rows).
    pub fn n(&self) -> usize {
        self.x.nrows()
    }

    /// Number of input columns.
    pub fn d(&self) -> usize {
        self.x.ncols()
    }

    /// Number of target columns.
    pub fn n_targets(&self) -> usize {
        self.y.ncols()
    }

    /// Rows selected by index (for splits), in the given order; repeated indices repeat rows.
    ///
    /// # Panics
    ///
    /// If an index is `>= self.n()`. Indices from [`random_split`](super::random_split) and
    /// [`read_split_file`](super::read_split_file) (validated against the row count) never are.
    pub fn select_rows(&self, rows: &[usize]) -> Dataset {
        Dataset {
            input_names: self.input_names.clone(),
            target_names: self.target_names.clone(),
            x: Mat::from_fn(rows.len(), self.d(), |i, j| self.x[(rows[i], j)]),
            y: Mat::from_fn(rows.len(), self.n_targets(), |i, j| self.y[(rows[i], j)]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_matrices_checks_like_the_csv_reader() {
        let names = |p: &str, k: usize| (0..k).map(|i| format!("{p}{i}")).collect::<Vec<_>>();
        let build = |x: Mat<f64>, y: Mat<f64>| {
            let (d, t) = (x.ncols(), y.ncols());
            Dataset::from_matrices(x, y, names("x", d), names("y", t)).map_err(|e| e.to_string())
        };
        let x = Mat::from_fn(3, 2, |i, j| (i + j) as f64);
        let mut y = Mat::from_fn(3, 2, |i, _| i as f64);
        y[(1, 1)] = f64::NAN;
        let ok = build(x.clone(), y.clone()).unwrap();
        assert_eq!((ok.n(), ok.d(), ok.n_targets()), (3, 2, 2));
        assert!(ok.y[(1, 1)].is_nan());
        let mut bad_x = x.clone();
        bad_x[(2, 1)] = f64::INFINITY;
        let e = build(bad_x, y.clone()).unwrap_err();
        assert!(e.contains("row 2, column 'x1'") && e.contains("inf"), "{e}");
        let mut bad_y = y.clone();
        bad_y[(0, 0)] = f64::NEG_INFINITY;
        assert!(build(x.clone(), bad_y)
            .unwrap_err()
            .contains("row 0, column 'y0'"));
        let empty_target = Mat::from_fn(3, 1, |_, _| f64::NAN);
        assert!(build(x.clone(), empty_target)
            .unwrap_err()
            .contains("target 'y0'"));
        let short = Mat::from_fn(2, 1, |_, _| 1.0);
        let e = build(x.clone(), short).unwrap_err();
        assert!(e.contains("expected 3, found 2"), "{e}");
        assert!(build(Mat::zeros(0, 2), Mat::zeros(0, 1))
            .unwrap_err()
            .contains("no rows"));
        assert!(build(Mat::zeros(3, 0), y.clone())
            .unwrap_err()
            .contains("no input"));
        assert!(build(x.clone(), Mat::zeros(3, 0))
            .unwrap_err()
            .contains("no target"));
        let e = Dataset::from_matrices(x, y, names("x", 1), names("y", 2)).unwrap_err();
        assert!(e.to_string().contains("input names"), "{e}");
    }

    #[test]
    fn sizes_and_select_rows() {
        let ds = Dataset {
            input_names: vec!["a".into(), "b".into()],
            target_names: vec!["y".into()],
            x: Mat::from_fn(3, 2, |i, j| (10 * i + j) as f64),
            y: Mat::from_fn(3, 1, |i, _| if i == 1 { f64::NAN } else { i as f64 }),
        };
        assert_eq!((ds.n(), ds.d(), ds.n_targets()), (3, 2, 1));

        let sub = ds.select_rows(&[2, 0, 2]);
        assert_eq!((sub.n(), sub.d(), sub.n_targets()), (3, 2, 1));
        assert_eq!(sub.input_names, ds.input_names);
        assert_eq!(sub.target_names, ds.target_names);
        assert_eq!(sub.x[(0, 0)], 20.0);
        assert_eq!(sub.x[(0, 1)], 21.0);
        assert_eq!(sub.x[(1, 0)], 0.0);
        assert_eq!(sub.x[(2, 1)], 21.0);
        assert_eq!(sub.y[(0, 0)], 2.0);
        assert_eq!(sub.y[(1, 0)], 0.0);

        let missing = ds.select_rows(&[1]);
        assert!(missing.y[(0, 0)].is_nan());

        let empty = ds.select_rows(&[]);
        assert_eq!((empty.n(), empty.d(), empty.n_targets()), (0, 2, 1));
    }
}
