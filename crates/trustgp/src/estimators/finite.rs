//! No command prints a non-finite number: what the front end is about to print is checked, and
//! a NaN or infinity is an error naming where it is.

use super::format::format_number;
use super::regressor::OutputPrediction;

/// A number that was about to be printed but is not finite.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{what} is {}, not a finite number (the model or data are numerically unusable here)", format_number(*.value))]
pub struct NonFinite {
    /// Which number, e.g. `summary.noise[1]` or `prediction mean_y of row 3`.
    pub what: String,
    /// Its value.
    pub value: f64,
}

/// `Ok` when `value` is finite, else an error naming it by `what()`.
pub fn finite(value: f64, what: impl FnOnce() -> String) -> Result<(), NonFinite> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(NonFinite {
            what: what(),
            value,
        })
    }
}

/// `Ok` when every value is finite, else an error naming the first bad one as `what[i]`.
pub fn all_finite(values: &[f64], what: &str) -> Result<(), NonFinite> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(NonFinite {
            what: format!("{what}[{i}]"),
            value: values[i],
        }),
    }
}

/// Every predicted mean and standard deviation is finite; else the first bad one, by column
/// (`mean_TARGET`, `std_TARGET`) and 0-based row.
pub fn check_predictions(preds: &[OutputPrediction]) -> Result<(), NonFinite> {
    for p in preds {
        for (column, values) in [("mean", &p.mean), ("std", &p.std)] {
            if let Some(i) = values.iter().position(|v| !v.is_finite()) {
                return Err(NonFinite {
                    what: format!("prediction {column}_{} of row {i}", p.target),
                    value: values[i],
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_non_finite_number_is_named() {
        assert_eq!(finite(1.0, || unreachable!()), Ok(()));
        let e = finite(f64::INFINITY, || "rmse".into()).unwrap_err();
        assert_eq!(
            e.to_string().split(' ').take(3).collect::<Vec<_>>(),
            ["rmse", "is", "inf,"]
        );
        assert_eq!(all_finite(&[1.0, 2.0], "noise"), Ok(()));
        let e = all_finite(&[1.0, f64::NAN, f64::NAN], "noise").unwrap_err();
        assert_eq!(e.what, "noise[1]");
        let p = |mean: Vec<f64>, std: Vec<f64>| OutputPrediction {
            target: "y".into(),
            mean,
            std,
        };
        assert_eq!(
            check_predictions(&[p(vec![0.0, 1e308], vec![1.0, 2.0])]),
            Ok(())
        );
        let e = check_predictions(&[p(vec![0.0, 1.0], vec![1.0, f64::NAN])]).unwrap_err();
        assert_eq!(e.what, "prediction std_y of row 1");
        let e = check_predictions(&[p(vec![f64::NEG_INFINITY], vec![f64::NAN])]).unwrap_err();
        assert_eq!(e.what, "prediction mean_y of row 0");
    }
}
