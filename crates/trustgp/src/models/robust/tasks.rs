//! Multi-output data in task-indexed form: one row per observed (input, output) pair.
//!
//! A data set with N input rows and T outputs (NaN = not observed) becomes `n ≤ N·T` entries in
//! output-major order (all observed entries of output 0, then of output 1, …), each an input row
//! with its output index appended as a last column — the form the multi-output kernels read.
//! Heterotopic data therefore never puts an unobserved entry into any matrix.

use faer::{Mat, MatRef};

/// The observed entries of an N×T target matrix over N×d inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskEntries {
    /// Task-indexed inputs, n×(d+1).
    pub x: Mat<f64>,
    /// Observed values, one per entry.
    pub y: Vec<f64>,
    /// Output index of each entry.
    pub task: Vec<usize>,
    /// Data row of each entry.
    pub row: Vec<usize>,
    /// Number of outputs T.
    pub n_tasks: usize,
    /// Number of data rows N.
    pub n_rows: usize,
}

impl TaskEntries {
    /// The observed (finite) entries of `y` (N×T) at inputs `x` (N×d).
    pub fn new(x: MatRef<'_, f64>, y: MatRef<'_, f64>) -> TaskEntries {
        let (n, t, d) = (x.nrows(), y.ncols(), x.ncols());
        let pairs: Vec<(usize, usize)> = (0..t)
            .flat_map(|tt| (0..n).map(move |i| (i, tt)))
            .filter(|&(i, tt)| y[(i, tt)].is_finite())
            .collect();
        let xa = Mat::from_fn(pairs.len(), d + 1, |k, j| {
            let (i, tt) = pairs[k];
            if j < d {
                x[(i, j)]
            } else {
                tt as f64
            }
        });
        TaskEntries {
            x: xa,
            y: pairs.iter().map(|&(i, tt)| y[(i, tt)]).collect(),
            task: pairs.iter().map(|&(_, tt)| tt).collect(),
            row: pairs.iter().map(|&(i, _)| i).collect(),
            n_tasks: t,
            n_rows: n,
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.y.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    /// The N×T matrix of the entries' values (NaN where unobserved), e.g. to recompute
    /// per-row quantities after the entries were transformed.
    pub fn to_matrix(&self, values: &[f64]) -> Mat<f64> {
        let mut m = Mat::from_fn(self.n_rows, self.n_tasks, |_, _| f64::NAN);
        for (k, v) in values.iter().enumerate() {
            m[(self.row[k], self.task[k])] = *v;
        }
        m
    }

    /// Noise group of each entry: its output, or 0 for all when the noise is shared.
    pub fn noise_groups(&self, shared: bool) -> Vec<usize> {
        if shared {
            vec![0; self.len()]
        } else {
            self.task.clone()
        }
    }
}

/// Task-indexed test inputs: every row of `x` (M×d) once per output, output-major, so entry
/// `t·M + i` is output `t` at row `i`.
pub fn all_outputs(x: MatRef<'_, f64>, n_tasks: usize) -> Mat<f64> {
    let (m, d) = (x.nrows(), x.ncols());
    Mat::from_fn(m * n_tasks, d + 1, |k, j| {
        if j < d {
            x[(k % m, j)]
        } else {
            (k / m) as f64
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_skip_missing_values_in_output_major_order() {
        let x = Mat::from_fn(3, 1, |i, _| i as f64 * 10.0);
        let y = Mat::from_fn(3, 2, |i, t| {
            if i == 1 && t == 0 {
                f64::NAN
            } else {
                (i + 3 * t) as f64
            }
        });
        let e = TaskEntries::new(x.as_ref(), y.as_ref());
        assert_eq!(e.y, vec![0.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(e.task, vec![0, 0, 1, 1, 1]);
        assert_eq!(e.row, vec![0, 2, 0, 1, 2]);
        assert_eq!(e.x[(1, 0)], 20.0);
        assert_eq!(e.x[(3, 1)], 1.0);
        let back = e.to_matrix(&e.y);
        assert!(back[(1, 0)].is_nan() && back[(2, 1)] == 5.0);
        let all = all_outputs(x.as_ref(), 2);
        assert_eq!(all.nrows(), 6);
        assert_eq!((all[(4, 0)], all[(4, 1)]), (10.0, 1.0));
    }
}
