//! Data of the VBKS real-world experiments (spec `vbks.md` §6.2) at the sizes available here:
//! the Swissgrid end-user energy series (a seeded random test set) and the Intel-lab
//! temperatures (each sensor's 3 training days → its 2 following test days).
//!
//! Both give raw (unstandardised) train and test matrices; the experiment z-scores them with
//! the training statistics (spec §3.6).

use std::path::Path;

use faer::Mat;
use trustgp::data::{random_split, read_csv};

type BoxError = Box<dyn std::error::Error>;

/// A train/test split of a regression data set: inputs `x` (n×d) and targets `y`.
#[derive(Clone, Debug)]
pub struct RealSplit {
    /// Training inputs.
    pub x_train: Mat<f64>,
    /// Training targets.
    pub y_train: Vec<f64>,
    /// Test inputs.
    pub x_test: Mat<f64>,
    /// Test targets.
    pub y_test: Vec<f64>,
}

/// Swissgrid: input `hours_since_start`, target `kwh` of the derived CSV in `dir` converted to
/// MWh (the paper's unit); `test_points` rows drawn at random with `seed` form the test set,
/// the rest trains.
pub fn swissgrid(dir: &Path, test_points: usize, seed: u64) -> Result<RealSplit, BoxError> {
    let path = dir.join("swissgrid_enduser_2019-01_2020-04_15min.csv");
    let data = read_csv(
        &path,
        &["kwh".to_string()],
        Some(&["hours_since_start".to_string()]),
    )?;
    let x: Vec<f64> = (0..data.n()).map(|i| data.x[(i, 0)]).collect();
    let y: Vec<f64> = (0..data.n()).map(|i| data.y[(i, 0)] / 1000.0).collect();
    random_test_split(&x, &y, test_points, seed)
}

/// A 1-D series split into `test_points` random test rows (seeded) and the training rest.
pub fn random_test_split(
    x: &[f64],
    y: &[f64],
    test_points: usize,
    seed: u64,
) -> Result<RealSplit, BoxError> {
    let n = x.len();
    if test_points == 0 || test_points >= n {
        return Err(format!(
            "test points: expected between 1 and {} (one less than the {n} rows), got \
             {test_points}",
            n.saturating_sub(1)
        )
        .into());
    }
    // random_split rounds test_fraction × n; the fraction below rounds back to test_points.
    let split = random_split(n, test_points as f64 / n as f64, seed)?;
    let take = |rows: &[usize]| {
        (
            Mat::from_fn(rows.len(), 1, |i, _| x[rows[i]]),
            rows.iter().map(|&i| y[i]).collect::<Vec<f64>>(),
        )
    };
    let (x_train, y_train) = take(&split.train);
    let (x_test, y_test) = take(&split.test);
    Ok(RealSplit {
        x_train,
        y_train,
        x_test,
        y_test,
    })
}

/// Intel lab: the files `intelTemperatureTrain.csv` and `intelTemperatureTest.csv` in `dir`.
pub fn ieq(dir: &Path) -> Result<RealSplit, BoxError> {
    let read = |name: &str| -> Result<String, BoxError> {
        let path = dir.join(name);
        std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()).into())
    };
    ieq_from_text(
        &read("intelTemperatureTrain.csv")?,
        &read("intelTemperatureTest.csv")?,
    )
}

/// The IEQ split from the texts of the train and test files (rows = sensors, columns =
/// consecutive half-hour steps, no header). Each reading becomes one row with inputs
/// (half-hour index, sensor row): the test steps continue the training steps (index 144 for
/// the first test column of a 144-column training file), so every sensor's test days follow
/// its training days. The sensor row stands in for the location, whose mapping the source
/// lost (SOURCE.txt).
pub fn ieq_from_text(train: &str, test: &str) -> Result<RealSplit, BoxError> {
    let train = parse_matrix(train, "train file")?;
    let test = parse_matrix(test, "test file")?;
    if train.len() != test.len() {
        return Err(format!(
            "IEQ: the train file has {} sensors (rows), the test file {}; expected the same",
            train.len(),
            test.len()
        )
        .into());
    }
    let offset = train[0].len();
    let long = |rows: &[Vec<f64>], first_step: usize| {
        let n: usize = rows.iter().map(Vec::len).sum();
        let mut x = Mat::zeros(n, 2);
        let mut y = Vec::with_capacity(n);
        for (s, row) in rows.iter().enumerate() {
            for (t, &v) in row.iter().enumerate() {
                x[(y.len(), 0)] = (first_step + t) as f64;
                x[(y.len(), 1)] = s as f64;
                y.push(v);
            }
        }
        (x, y)
    };
    let (x_train, y_train) = long(&train, 0);
    let (x_test, y_test) = long(&test, offset);
    Ok(RealSplit {
        x_train,
        y_train,
        x_test,
        y_test,
    })
}

/// A headerless comma-separated matrix with rows of equal length and finite cells.
fn parse_matrix(text: &str, what: &str) -> Result<Vec<Vec<f64>>, BoxError> {
    let mut rows: Vec<Vec<f64>> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row = line
            .split(',')
            .enumerate()
            .map(|(j, cell)| match cell.trim().parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(v),
                _ => Err(format!(
                    "IEQ {what}: line {}, column {}: expected a finite number, got {:?}",
                    i + 1,
                    j + 1,
                    cell.trim()
                )),
            })
            .collect::<Result<Vec<f64>, String>>()?;
        if let Some(first) = rows.first() {
            if row.len() != first.len() {
                return Err(format!(
                    "IEQ {what}: line {} has {} columns, expected {} like the first line",
                    i + 1,
                    row.len(),
                    first.len()
                )
                .into());
            }
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return Err(format!("IEQ {what}: no rows").into());
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ieq_reader_maps_each_sensor_and_continues_time() {
        let train = "1.0,2.0,3.0\n4.0,5.0,6.0\n";
        let test = "7.0,8.0\n9.0,1.5E+01\n";
        let s = ieq_from_text(train, test).unwrap();
        assert_eq!(s.x_train.nrows(), 6);
        assert_eq!(s.x_test.nrows(), 4);
        // Row 4 of the long training table: sensor 1, step 0, value 4.
        assert_eq!(
            (s.x_train[(3, 0)], s.x_train[(3, 1)], s.y_train[3]),
            (0.0, 1.0, 4.0)
        );
        // The test steps start after the 3 training steps; 1.5E+01 parses.
        assert_eq!(
            (s.x_test[(3, 0)], s.x_test[(3, 1)], s.y_test[3]),
            (4.0, 1.0, 15.0)
        );
        assert_eq!(s.y_train, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    }

    #[test]
    fn ieq_reader_rejects_bad_input_by_line_and_column() {
        let e = ieq_from_text("1,2\n3,x\n", "1\n2\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2, column 2"), "{e}");
        let e = ieq_from_text("1,2\n3\n", "1\n2\n").unwrap_err().to_string();
        assert!(e.contains("line 2 has 1 columns, expected 2"), "{e}");
        let e = ieq_from_text("1,2\n3,4\n", "1\n").unwrap_err().to_string();
        assert!(e.contains("2 sensors"), "{e}");
        let e = ieq_from_text("1,nan\n", "1\n").unwrap_err().to_string();
        assert!(e.contains("finite"), "{e}");
    }

    #[test]
    fn random_test_split_is_seeded_disjoint_and_complete() {
        let x: Vec<f64> = (0..50).map(f64::from).collect();
        let y: Vec<f64> = x.iter().map(|v| 10.0 * v).collect();
        let a = random_test_split(&x, &y, 7, 3).unwrap();
        let b = random_test_split(&x, &y, 7, 3).unwrap();
        let c = random_test_split(&x, &y, 7, 4).unwrap();
        assert_eq!(a.x_test.nrows(), 7);
        assert_eq!(a.x_train.nrows(), 43);
        assert_eq!(a.y_test, b.y_test);
        assert_ne!(a.y_test, c.y_test);
        // Every row lands exactly once, and targets stay with their inputs.
        let mut all: Vec<f64> = (0..7)
            .map(|i| a.x_test[(i, 0)])
            .chain((0..43).map(|i| a.x_train[(i, 0)]))
            .collect();
        all.sort_by(f64::total_cmp);
        assert_eq!(all, x);
        assert!((0..7).all(|i| a.y_test[i] == 10.0 * a.x_test[(i, 0)]));
        assert!(random_test_split(&x, &y, 50, 0).is_err());
        assert!(random_test_split(&x, &y, 0, 0).is_err());
    }
}
