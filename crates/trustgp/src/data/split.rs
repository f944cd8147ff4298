//! Train/test splits: seeded random ones, and ones read from a split file.
//!
//! A split file is a CSV with the header `split,set,row`; each line puts the 0-based data row
//! `row` into the `set` (`train` or `test`) of split number `split`, e.g.
//!
//! ```text
//! split,set,row
//! 0,train,73
//! 0,test,12
//! 1,train,5
//! ```

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::table::{read_text, Table};
use super::DataError;

/// Row indices (0-based, into the data file) of a train and a test set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    /// Training rows.
    pub train: Vec<usize>,
    /// Test rows.
    pub test: Vec<usize>,
}

/// A seeded random split of `n` rows with `round(test_fraction × n)` test rows.
///
/// The rows `0..n` are shuffled with `StdRng::seed_from_u64(seed)`; the first ones form the
/// test set, the rest the training set, each then sorted ascending. The same arguments always
/// give the same split. Errors unless `0 < test_fraction < 1` and both sets are non-empty.
pub fn random_split(n: usize, test_fraction: f64, seed: u64) -> Result<Split, DataError> {
    if !(test_fraction > 0.0 && test_fraction < 1.0) {
        return Err(DataError::InvalidTestFraction {
            value: test_fraction,
        });
    }
    let n_test = (test_fraction * n as f64).round() as usize;
    if n_test == 0 || n_test >= n {
        return Err(DataError::SplitTooSmall {
            n,
            test_fraction,
            n_test,
        });
    }
    let mut rows: Vec<usize> = (0..n).collect();
    rows.shuffle(&mut StdRng::seed_from_u64(seed));
    let mut train = rows.split_off(n_test);
    let mut test = rows;
    train.sort_unstable();
    test.sort_unstable();
    Ok(Split { train, test })
}

/// Reads split `k` from a split file (header `split,set,row`) for a data file of `n_rows` rows.
///
/// See [`read_split_str`] for the checks; in addition, an unreadable file is an error.
pub fn read_split_file(path: &Path, k: usize, n_rows: usize) -> Result<Split, DataError> {
    read_split_str(&read_text(path)?, &path.display().to_string(), k, n_rows)
}

/// Parses split `k` from split-file `text`; `source_name` names it in errors.
///
/// Every line (of every split) must hold a split number, `train` or `test`, and a row index
/// below `n_rows`. Within split `k` no row may be listed twice or in both sets, and both sets
/// must be non-empty; a missing `k` is an error listing the splits present. Rows keep the
/// order of the file.
pub fn read_split_str(
    text: &str,
    source_name: &str,
    k: usize,
    n_rows: usize,
) -> Result<Split, DataError> {
    let table = Table::parse(text, source_name)?;
    if table.header != ["split", "set", "row"] {
        return Err(DataError::SplitHeader {
            source_name: source_name.to_string(),
            line: table.header_line,
            found: table.header.join(","),
        });
    }

    let mut splits_present = BTreeSet::new();
    let mut first_seen: HashMap<usize, (Set, u64)> = HashMap::new();
    let mut split = Split {
        train: Vec::new(),
        test: Vec::new(),
    };
    for (line, record) in &table.rows {
        let line = *line;
        let split_number: usize = record[0].parse().map_err(|_| {
            table.bad_cell(line, 0, "a non-negative integer split number", &record[0])
        })?;
        let set = match &record[1] {
            "train" => Set::Train,
            "test" => Set::Test,
            other => return Err(table.bad_cell(line, 1, "\"train\" or \"test\"", other)),
        };
        let row: usize = record[2]
            .parse()
            .map_err(|_| table.bad_cell(line, 2, "a non-negative integer row index", &record[2]))?;
        if row >= n_rows {
            return Err(DataError::RowOutOfRange {
                source_name: source_name.to_string(),
                line,
                row,
                n_rows,
            });
        }
        splits_present.insert(split_number);
        if split_number != k {
            continue;
        }
        if let Some(&(first_set, first_line)) = first_seen.get(&row) {
            return Err(if first_set == set {
                DataError::DuplicateSplitRow {
                    source_name: source_name.to_string(),
                    line,
                    first_line,
                    row,
                    set: set.name(),
                    split: k,
                }
            } else {
                DataError::RowInBothSets {
                    source_name: source_name.to_string(),
                    line,
                    first_line,
                    row,
                    split: k,
                }
            });
        }
        first_seen.insert(row, (set, line));
        match set {
            Set::Train => split.train.push(row),
            Set::Test => split.test.push(row),
        }
    }

    if !splits_present.contains(&k) {
        let available: Vec<String> = splits_present.iter().map(|s| s.to_string()).collect();
        return Err(DataError::SplitNotFound {
            source_name: source_name.to_string(),
            split: k,
            available: available.join(", "),
        });
    }
    for (rows, set) in [(&split.train, Set::Train), (&split.test, Set::Test)] {
        if rows.is_empty() {
            return Err(DataError::EmptySplitSet {
                source_name: source_name.to_string(),
                split: k,
                set: set.name(),
            });
        }
    }
    Ok(split)
}

/// Which half of a split a row belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Set {
    Train,
    Test,
}

impl Set {
    /// The name used in split files.
    fn name(self) -> &'static str {
        match self {
            Set::Train => "train",
            Set::Test => "test",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::testutil::{garbage_texts, TempFile};

    #[test]
    fn random_split_sizes_and_partition() {
        for (n, f, n_test) in [(10, 0.2, 2), (7, 0.5, 4), (3, 0.34, 1), (100, 0.25, 25)] {
            let s = random_split(n, f, 42).unwrap();
            assert_eq!(s.test.len(), n_test, "n = {n}, f = {f}");
            assert_eq!(s.train.len(), n - n_test);
            let mut all: Vec<usize> = s.train.iter().chain(&s.test).copied().collect();
            all.sort_unstable();
            assert_eq!(all, (0..n).collect::<Vec<_>>());
            assert!(s.train.windows(2).all(|w| w[0] < w[1]));
            assert!(s.test.windows(2).all(|w| w[0] < w[1]));
        }
    }

    #[test]
    fn random_split_is_reproducible_per_seed() {
        let a = random_split(50, 0.3, 7).unwrap();
        assert_eq!(a, random_split(50, 0.3, 7).unwrap());
        assert_ne!(a, random_split(50, 0.3, 8).unwrap());
    }

    #[test]
    fn random_split_errors() {
        for f in [0.0, 1.0, -0.1, 1.5, f64::NAN, f64::INFINITY] {
            let m = random_split(10, f, 0).unwrap_err().to_string();
            assert!(m.contains("strictly between 0 and 1"), "{m}");
        }
        let m = random_split(3, 0.1, 0).unwrap_err().to_string();
        assert!(
            m.contains("cannot split 3 rows") && m.contains("test set would have 0"),
            "{m}"
        );
        let m = random_split(3, 0.9, 0).unwrap_err().to_string();
        assert!(m.contains("test set would have 3"), "{m}");
        assert!(random_split(0, 0.5, 0).is_err());
        assert!(random_split(1, 0.5, 0).is_err());
    }

    const FIXTURE: &str =
        "split,set,row\n0,train,3\n0,train,0\n0,test,2\n1,train,1\n1,test,0\n1,test,3\n";

    #[test]
    fn reads_split_file() {
        let f = TempFile::new("split", FIXTURE.as_bytes());
        let s0 = read_split_file(&f.path, 0, 4).unwrap();
        assert_eq!(s0.train, vec![3, 0]);
        assert_eq!(s0.test, vec![2]);
        let s1 = read_split_file(&f.path, 1, 4).unwrap();
        assert_eq!(s1.train, vec![1]);
        assert_eq!(s1.test, vec![0, 3]);
        // CRLF and padding are accepted.
        let s = read_split_str(
            " split , set , row \r\n0, train ,1\r\n0,test,0\r\n",
            "s.csv",
            0,
            2,
        );
        assert_eq!(
            s.unwrap(),
            Split {
                train: vec![1],
                test: vec![0]
            }
        );
    }

    fn err(text: &str, k: usize, n_rows: usize) -> String {
        match read_split_str(text, "splits.csv", k, n_rows) {
            Ok(s) => panic!("expected an error, got {s:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn assert_contains(message: &str, parts: &[&str]) {
        for part in parts {
            assert!(message.contains(part), "message {message:?} lacks {part:?}");
        }
    }

    #[test]
    fn split_file_errors() {
        let m = read_split_file(
            &std::env::temp_dir().join("trustgp_no_split_file.csv"),
            0,
            4,
        )
        .unwrap_err()
        .to_string();
        assert_contains(&m, &["trustgp_no_split_file.csv", "cannot read"]);

        assert_contains(&err("", 0, 4), &["splits.csv", "empty"]);
        assert_contains(
            &err("split,set,row\n", 0, 4),
            &["splits.csv", "no data rows"],
        );
        let m = err("split,row,set\n0,1,train\n", 0, 4);
        assert_contains(
            &m,
            &[
                "splits.csv",
                "line 1",
                "\"split,row,set\"",
                "expected exactly \"split,set,row\"",
            ],
        );
        let m = err("split,set,row,extra\n0,train,1,2\n", 0, 4);
        assert_contains(&m, &["splits.csv", "line 1", "expected exactly"]);
        let m = err("split,set,row\n0,train,1\n0,test\n", 0, 4);
        assert_contains(&m, &["splits.csv", "line 3", "2 fields, expected 3"]);
        let m = err("split,set,row\n0,train,1\nx,test,2\n", 0, 4);
        assert_contains(
            &m,
            &["splits.csv", "line 3", "column \"split\"", "found \"x\""],
        );
        let m = err("split,set,row\n0,train,1\n0,valid,2\n", 0, 4);
        assert_contains(
            &m,
            &[
                "splits.csv",
                "line 3",
                "column \"set\"",
                "\"train\" or \"test\"",
                "found \"valid\"",
            ],
        );
        let m = err("split,set,row\n0,train,1\n0,test,-2\n", 0, 4);
        assert_contains(
            &m,
            &["splits.csv", "line 3", "column \"row\"", "found \"-2\""],
        );
        let m = err("split,set,row\n0,train,1\n0,test,1.5\n", 0, 4);
        assert_contains(
            &m,
            &["splits.csv", "line 3", "column \"row\"", "found \"1.5\""],
        );
        // Out of range rows are errors in every split, not only in the one requested.
        let m = err("split,set,row\n0,train,1\n0,test,2\n1,test,4\n", 0, 4);
        assert_contains(
            &m,
            &["splits.csv", "line 4", "row 4 is out of range", "below 4"],
        );
        let m = err(FIXTURE, 2, 4);
        assert_contains(
            &m,
            &["splits.csv", "split 2 not found", "available splits: 0, 1"],
        );
        let m = err("split,set,row\n0,train,1\n0,test,2\n0,train,1\n", 0, 4);
        assert_contains(
            &m,
            &[
                "splits.csv",
                "line 4",
                "row 1 is listed twice in the train set of split 0",
                "first on line 2",
            ],
        );
        let m = err("split,set,row\n0,train,1\n0,test,2\n0,test,1\n", 0, 4);
        assert_contains(
            &m,
            &[
                "splits.csv",
                "line 4",
                "row 1 is in both the train and the test set of split 0",
                "line 2",
            ],
        );
        let m = err("split,set,row\n0,train,1\n0,train,2\n1,test,3\n", 0, 4);
        assert_contains(&m, &["splits.csv", "split 0 has an empty test set"]);
        let m = err("split,set,row\n0,test,1\n", 0, 4);
        assert_contains(&m, &["splits.csv", "split 0 has an empty train set"]);
    }

    #[test]
    fn random_garbage_never_panics() {
        for text in garbage_texts(3000) {
            for text in [text.clone(), format!("split,set,row\n{text}")] {
                for k in 0..2 {
                    // Whatever parses must be a valid split of 3 rows.
                    if let Ok(s) = read_split_str(&text, "g.csv", k, 3) {
                        assert!(!s.train.is_empty() && !s.test.is_empty());
                        assert!(s.train.iter().chain(&s.test).all(|&r| r < 3));
                        assert!(s.train.iter().all(|r| !s.test.contains(r)));
                    }
                }
            }
        }
    }
}
