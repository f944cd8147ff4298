//! The in-memory table: named input and target columns, one row per observation.

use faer::Mat;

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
