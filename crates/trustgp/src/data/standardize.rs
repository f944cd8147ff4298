//! Per-column standardisation of inputs and targets, fitted on training data.
//!
//! The models work on `(x − mean) / std` and `(y − mean) / std`; predictions are mapped back
//! with [`Standardizer::inverse_y_mean`] and [`Standardizer::inverse_y_std`]. The statistics
//! are stored in model files, hence the serde derives.

use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

use super::DataError;

/// Relative threshold below which a column's std counts as zero: `std ≤ REL × max |value|`.
/// Relative to the column's own magnitude, so that the test is the same at every scale.
const CONSTANT_REL_TOL: f64 = 1e-12;

/// Column means and standard deviations of the training inputs and targets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Standardizer {
    /// Mean of each input column.
    pub x_mean: Vec<f64>,
    /// Standard deviation of each input column (1 for constant columns).
    pub x_std: Vec<f64>,
    /// Mean of the observed values of each target column.
    pub y_mean: Vec<f64>,
    /// Standard deviation of the observed values of each target column (1 for constant ones).
    pub y_std: Vec<f64>,
}

/// The columns whose std was (numerically) zero during [`Standardizer::fit`]: they are centred
/// but not scaled (std set to 1). This must be reported to the user.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConstantColumns {
    /// 0-based indices of constant input columns.
    pub inputs: Vec<usize>,
    /// 0-based indices of constant target columns.
    pub targets: Vec<usize>,
}

impl ConstantColumns {
    /// True when no column was constant.
    pub fn is_empty(&self) -> bool {
        self.inputs.is_empty() && self.targets.is_empty()
    }

    /// One human-readable warning per constant column, using the given column names (a column
    /// without a name is called by its 1-based number).
    pub fn warnings(&self, input_names: &[String], target_names: &[String]) -> Vec<String> {
        let describe = |kind: &str, names: &[String], j: usize| {
            let name = names
                .get(j)
                .map_or_else(|| format!("number {}", j + 1), |n| format!("\"{n}\""));
            format!("{kind} column {name} is constant (std ≈ 0): centred but not scaled")
        };
        self.inputs
            .iter()
            .map(|&j| describe("input", input_names, j))
            .chain(
                self.targets
                    .iter()
                    .map(|&j| describe("target", target_names, j)),
            )
            .collect()
    }
}

impl Standardizer {
    /// Training statistics: mean and population std (ddof = 0) per column; target statistics
    /// use only observed (non-NaN) cells.
    ///
    /// A column with std `≤ 1e-12 × max |value|` gets std 1 (it is centred, not divided by
    /// ≈ 0) and is listed in the returned [`ConstantColumns`]. The statistics are those of the
    /// column divided by a power of two near its largest magnitude, scaled back: the same bits
    /// as the direct sums wherever those neither overflow nor underflow, and finite for every
    /// finite column (data ×1e200, or a cell of 1e308, would overflow the sum of squares; data
    /// ×1e-300 would underflow it to zero and look constant).
    ///
    /// Errors: no rows; `x` and `y` with different row counts; a non-finite input; an infinite
    /// target; a target column with no observed value.
    pub fn fit(
        x: MatRef<'_, f64>,
        y: MatRef<'_, f64>,
    ) -> Result<(Standardizer, ConstantColumns), DataError> {
        if x.nrows() == 0 {
            return Err(DataError::NoObserved {
                what: "training inputs (x has no rows)".to_string(),
            });
        }
        if y.nrows() != x.nrows() {
            return Err(DataError::ShapeMismatch {
                what: "number of rows of the targets y (must match the inputs x)".to_string(),
                expected: x.nrows(),
                found: y.nrows(),
            });
        }
        let mut constant = ConstantColumns::default();
        let mut x_mean = Vec::with_capacity(x.ncols());
        let mut x_std = Vec::with_capacity(x.ncols());
        for j in 0..x.ncols() {
            let mut values = Vec::with_capacity(x.nrows());
            for i in 0..x.nrows() {
                let v = x[(i, j)];
                if !v.is_finite() {
                    return Err(DataError::NonFiniteValue {
                        what: format!("input x row {}, column {}", i + 1, j + 1),
                        value: v,
                    });
                }
                values.push(v);
            }
            let (mean, std, is_constant) = mean_std(&values);
            if is_constant {
                constant.inputs.push(j);
            }
            x_mean.push(mean);
            x_std.push(std);
        }
        let mut y_mean = Vec::with_capacity(y.ncols());
        let mut y_std = Vec::with_capacity(y.ncols());
        for j in 0..y.ncols() {
            let mut values = Vec::with_capacity(y.nrows());
            for i in 0..y.nrows() {
                let v = y[(i, j)];
                if v.is_infinite() {
                    return Err(DataError::NonFiniteValue {
                        what: format!("target y row {}, column {}", i + 1, j + 1),
                        value: v,
                    });
                }
                if !v.is_nan() {
                    values.push(v);
                }
            }
            if values.is_empty() {
                return Err(DataError::NoObserved {
                    what: format!("training target column {}", j + 1),
                });
            }
            let (mean, std, is_constant) = mean_std(&values);
            if is_constant {
                constant.targets.push(j);
            }
            y_mean.push(mean);
            y_std.push(std);
        }
        Ok((
            Standardizer {
                x_mean,
                x_std,
                y_mean,
                y_std,
            },
            constant,
        ))
    }

    /// The do-nothing standardiser (means 0, stds 1) for `d` inputs and `t` targets.
    pub fn identity(d: usize, t: usize) -> Standardizer {
        Standardizer {
            x_mean: vec![0.0; d],
            x_std: vec![1.0; d],
            y_mean: vec![0.0; t],
            y_std: vec![1.0; t],
        }
    }

    /// `(x − x_mean) / x_std` per column.
    ///
    /// # Panics
    ///
    /// If `x` does not have one column per input of this standardiser (callers check the column
    /// count against the model's inputs first).
    pub fn transform_x(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        transform(x, &self.x_mean, &self.x_std, "inputs x")
    }

    /// `(y − y_mean) / y_std` per column; NaN (missing) stays NaN.
    ///
    /// # Panics
    ///
    /// If `y` does not have one column per target of this standardiser.
    pub fn transform_y(&self, y: MatRef<'_, f64>) -> Mat<f64> {
        transform(y, &self.y_mean, &self.y_std, "targets y")
    }

    /// A standardised predictive mean `m` of target `t` on the original scale.
    ///
    /// # Panics
    ///
    /// If `t` is not a target index of this standardiser.
    pub fn inverse_y_mean(&self, t: usize, m: f64) -> f64 {
        m * self.y_std[t] + self.y_mean[t]
    }

    /// A standardised predictive std `s` of target `t` on the original scale.
    ///
    /// # Panics
    ///
    /// If `t` is not a target index of this standardiser.
    pub fn inverse_y_std(&self, t: usize, s: f64) -> f64 {
        s * self.y_std[t]
    }
}

/// Mean, population std (or 1 for a constant column) and whether the column was constant.
fn mean_std(values: &[f64]) -> (f64, f64, bool) {
    let max_abs = values.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    // Dividing by a power of two is exact (no rounding), so the scaled sums round as the
    // direct ones would, without their overflow or underflow.
    let scale = if max_abs > 0.0 {
        power_of_two(max_abs.log2().floor() as i32)
    } else {
        1.0
    };
    let n = values.len() as f64;
    let mean = values.iter().map(|v| v / scale).sum::<f64>() / n;
    let var = values
        .iter()
        .map(|v| (v / scale - mean).powi(2))
        .sum::<f64>()
        / n;
    let (mean, std) = (mean * scale, var.sqrt() * scale);
    if std <= CONSTANT_REL_TOL * max_abs {
        (mean, 1.0, true)
    } else {
        (mean, std, false)
    }
}

/// `2^e` with `e` clamped to the normal range `[−1022, 1023]`, built from its bits (`powi`
/// would overflow an intermediate `2^1030` on its way to `2^−1030`).
fn power_of_two(e: i32) -> f64 {
    f64::from_bits(((e.clamp(-1022, 1023) + 1023) as u64) << 52)
}

/// `(a − mean) / std` column by column.
///
/// # Panics
///
/// If `a` does not have `mean.len()` columns.
fn transform(a: MatRef<'_, f64>, mean: &[f64], std: &[f64], what: &str) -> Mat<f64> {
    assert_eq!(
        a.ncols(),
        mean.len(),
        "standardiser: number of columns of the {what} differs from the training data"
    );
    Mat::from_fn(a.nrows(), a.ncols(), |i, j| {
        standardize(a[(i, j)], mean[j], std[j])
    })
}

/// `(v − mean) / std`, or `v / std − mean / std` where the difference overflows (a value and a
/// mean near ±f64::MAX of opposite signs).
fn standardize(v: f64, mean: f64, std: f64) -> f64 {
    let d = v - mean;
    if d.is_infinite() {
        v / std - mean / std
    } else {
        d / std
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    /// x = [[1, 10], [2, 10], [3, 10], [6, 10]], y = [[2, NaN], [4, 1], [NaN, 3], [6, 5]].
    fn tiny() -> (Mat<f64>, Mat<f64>) {
        let x = Mat::from_fn(4, 2, |i, j| {
            if j == 0 {
                [1.0, 2.0, 3.0, 6.0][i]
            } else {
                10.0
            }
        });
        let y_cols = [[2.0, 4.0, f64::NAN, 6.0], [f64::NAN, 1.0, 3.0, 5.0]];
        let y = Mat::from_fn(4, 2, |i, j| y_cols[j][i]);
        (x, y)
    }

    #[test]
    fn fit_matches_hand_computed_statistics() {
        let (x, y) = tiny();
        let (s, constant) = Standardizer::fit(x.as_ref(), y.as_ref()).unwrap();
        // x0: mean 3, deviations -2,-1,0,3 → var 14/4 = 3.5.
        assert_relative_eq!(s.x_mean[0], 3.0, epsilon = 1e-14);
        assert_relative_eq!(s.x_std[0], 3.5f64.sqrt(), epsilon = 1e-14);
        // x1 constant: centred, std 1, reported.
        assert_relative_eq!(s.x_mean[1], 10.0, epsilon = 1e-14);
        assert_eq!(s.x_std[1], 1.0);
        // y0 observed 2,4,6: mean 4, var 8/3. y1 observed 1,3,5: mean 3, var 8/3.
        assert_relative_eq!(s.y_mean[0], 4.0, epsilon = 1e-14);
        assert_relative_eq!(s.y_std[0], (8.0f64 / 3.0).sqrt(), epsilon = 1e-14);
        assert_relative_eq!(s.y_mean[1], 3.0, epsilon = 1e-14);
        assert_relative_eq!(s.y_std[1], (8.0f64 / 3.0).sqrt(), epsilon = 1e-14);
        assert_eq!(
            constant,
            ConstantColumns {
                inputs: vec![1],
                targets: vec![]
            }
        );
        assert!(!constant.is_empty());
        let w = constant.warnings(&["a".into(), "b".into()], &["y".into()]);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("input column \"b\" is constant"), "{}", w[0]);
    }

    #[test]
    fn zero_variance_guard_is_relative_and_reported() {
        // A column varying by 1e-9 around 1e6 has std 5e-10 < 1e-12 × (1e6 + 1): constant.
        // A column varying by 1e-9 around 0 has std 5e-10 > 1e-12: kept.
        let x = Mat::from_fn(2, 2, |i, j| {
            let base = if j == 0 { 1e6 } else { 0.0 };
            base + 1e-9 * i as f64
        });
        let y = Mat::from_fn(2, 2, |i, j| if j == 0 { 7.0 } else { i as f64 });
        let (s, constant) = Standardizer::fit(x.as_ref(), y.as_ref()).unwrap();
        assert_eq!(constant.inputs, vec![0]);
        assert_eq!(constant.targets, vec![0]);
        assert_eq!(s.x_std[0], 1.0);
        assert_relative_eq!(s.x_std[1], 5e-10, max_relative = 1e-6);
        assert_eq!(s.y_std[0], 1.0);
        assert_relative_eq!(s.y_mean[0], 7.0, epsilon = 1e-14);
        assert_relative_eq!(s.y_std[1], 0.5, epsilon = 1e-14);
        let w = constant.warnings(&[], &["t0".into()]);
        assert_eq!(w.len(), 2);
        assert!(w[0].contains("input column number 1"), "{}", w[0]);
        assert!(w[1].contains("target column \"t0\""), "{}", w[1]);
        // A constant column is centred to exactly zero.
        let z = s.transform_y(y.as_ref());
        assert_eq!(z[(0, 0)], 0.0);
        assert_eq!(z[(1, 0)], 0.0);
    }

    #[test]
    fn transform_and_inverse_round_trip() {
        let (x, y) = tiny();
        let (s, _) = Standardizer::fit(x.as_ref(), y.as_ref()).unwrap();
        let zx = s.transform_x(x.as_ref());
        let zy = s.transform_y(y.as_ref());
        assert_relative_eq!(zx[(0, 0)], -2.0 / 3.5f64.sqrt(), epsilon = 1e-14);
        assert_relative_eq!(zx[(3, 0)], 3.0 / 3.5f64.sqrt(), epsilon = 1e-14);
        assert_eq!(zx[(2, 1)], 0.0);
        assert!(zy[(2, 0)].is_nan());
        assert!(zy[(0, 1)].is_nan());
        // Standardised observed targets have mean 0 and population std 1.
        for t in 0..2 {
            let obs: Vec<f64> = (0..4).map(|i| zy[(i, t)]).filter(|v| !v.is_nan()).collect();
            let mean = obs.iter().sum::<f64>() / obs.len() as f64;
            let var = obs.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / obs.len() as f64;
            assert_relative_eq!(mean, 0.0, epsilon = 1e-14);
            assert_relative_eq!(var, 1.0, epsilon = 1e-14);
        }
        for t in 0..2 {
            for i in 0..4 {
                if !y[(i, t)].is_nan() {
                    assert_relative_eq!(
                        s.inverse_y_mean(t, zy[(i, t)]),
                        y[(i, t)],
                        epsilon = 1e-13
                    );
                }
            }
        }
        assert_relative_eq!(
            s.inverse_y_std(0, 0.5),
            0.5 * (8.0f64 / 3.0).sqrt(),
            epsilon = 1e-14
        );
        assert_relative_eq!(
            s.inverse_y_mean(1, 1.0),
            3.0 + (8.0f64 / 3.0).sqrt(),
            epsilon = 1e-14
        );
    }

    #[test]
    fn identity_does_nothing() {
        let (x, y) = tiny();
        let s = Standardizer::identity(2, 2);
        let zx = s.transform_x(x.as_ref());
        let zy = s.transform_y(y.as_ref());
        for i in 0..4 {
            for j in 0..2 {
                assert_eq!(zx[(i, j)], x[(i, j)]);
                assert_eq!(zy[(i, j)].to_bits(), y[(i, j)].to_bits());
            }
        }
        assert_eq!(s.inverse_y_mean(1, 2.5), 2.5);
        assert_eq!(s.inverse_y_std(1, 0.25), 0.25);
    }

    #[test]
    fn fit_errors() {
        let msg = |x: &Mat<f64>, y: &Mat<f64>| {
            Standardizer::fit(x.as_ref(), y.as_ref())
                .unwrap_err()
                .to_string()
        };
        let m = msg(&Mat::zeros(0, 2), &Mat::zeros(0, 1));
        assert!(m.contains("no rows"), "{m}");
        let m = msg(&Mat::zeros(3, 2), &Mat::zeros(2, 1));
        assert!(m.contains("expected 3, found 2"), "{m}");
        let mut x = Mat::<f64>::zeros(3, 2);
        x[(1, 1)] = f64::NAN;
        let m = msg(&x, &Mat::zeros(3, 1));
        assert!(
            m.contains("x row 2, column 2: expected a finite number"),
            "{m}"
        );
        let mut y = Mat::<f64>::zeros(3, 2);
        y[(2, 0)] = f64::NEG_INFINITY;
        let m = msg(&Mat::zeros(3, 1), &y);
        assert!(
            m.contains("y row 3, column 1: expected a finite number, found -inf"),
            "{m}"
        );
        let y = Mat::from_fn(3, 2, |_, j| if j == 1 { f64::NAN } else { 1.0 });
        let m = msg(&Mat::zeros(3, 1), &y);
        assert!(m.contains("target column 2: no observed"), "{m}");
    }

    #[test]
    #[should_panic(expected = "number of columns of the inputs x differs")]
    fn transform_with_wrong_column_count_is_a_caller_bug() {
        Standardizer::identity(2, 1).transform_x(Mat::zeros(4, 3).as_ref());
    }

    #[test]
    fn statistics_are_scale_equivariant_and_finite_at_every_scale() {
        let (x, y) = tiny();
        let (base, base_constant) = Standardizer::fit(x.as_ref(), y.as_ref()).unwrap();
        // A power of two scales every statistic exactly; any other factor to rounding.
        for (factor, tol) in [(2f64.powi(-900), 0.0), (1e-300, 1e-15), (1e200, 1e-15)] {
            let xs = Mat::from_fn(4, 2, |i, j| x[(i, j)] * factor);
            let ys = Mat::from_fn(4, 2, |i, j| y[(i, j)] * factor);
            let (s, constant) = Standardizer::fit(xs.as_ref(), ys.as_ref()).unwrap();
            // Constant column 1 of x stays the only constant one: the test is relative.
            assert_eq!(constant, base_constant, "×{factor:e}");
            let close = |a: f64, b: f64| (a - b).abs() <= tol * b.abs();
            for j in 0..2 {
                assert!(close(s.x_mean[j], base.x_mean[j] * factor), "×{factor:e}");
                assert!(close(s.y_mean[j], base.y_mean[j] * factor), "×{factor:e}");
                assert!(close(s.y_std[j], base.y_std[j] * factor), "×{factor:e}");
            }
            assert!(close(s.x_std[0], base.x_std[0] * factor), "×{factor:e}");
            assert_eq!(s.x_std[1], 1.0);
        }
        // A single huge cell: mean 1e308/4 and a finite std; every standardised value finite.
        let y = Mat::from_fn(4, 1, |i, _| if i == 2 { 1e308 } else { i as f64 });
        let (s, constant) = Standardizer::fit(x.as_ref(), y.as_ref()).unwrap();
        assert!(constant.targets.is_empty());
        assert_relative_eq!(s.y_mean[0], 0.25e308, max_relative = 1e-15);
        // Population std of (0, 1, 1e308, 3) ≈ 1e308 · √3 / 4.
        assert_relative_eq!(s.y_std[0], 1e308 * 3f64.sqrt() / 4.0, max_relative = 1e-15);
        let z = s.transform_y(y.as_ref());
        assert_relative_eq!(z[(2, 0)], 3f64.sqrt(), max_relative = 1e-15);
        assert_relative_eq!(s.inverse_y_mean(0, z[(2, 0)]), 1e308, max_relative = 1e-15);
        // Values at ±f64::MAX: finite statistics, and their differences from the mean (which
        // overflow) still standardise to finite numbers.
        let m = f64::MAX;
        let y = Mat::from_fn(4, 1, |i, _| if i == 0 { m } else { -m });
        let (s, _) = Standardizer::fit(x.as_ref(), y.as_ref()).unwrap();
        assert!(s.y_mean[0].is_finite() && s.y_std[0].is_finite(), "{s:?}");
        let z = s.transform_y(y.as_ref());
        assert_relative_eq!(z[(0, 0)], 3f64.sqrt(), max_relative = 1e-15);
        assert_relative_eq!(z[(1, 0)], -1.0 / 3f64.sqrt(), max_relative = 1e-15);
    }
}
