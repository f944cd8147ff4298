//! Reading datasets (named input and target columns) from CSV files or in-memory text.
//!
//! The file functions read the text and delegate to the `_str` functions, which hold all the
//! parsing; structural checks live in [`table`](super::table).
//!
//! Cell rules: surrounding whitespace is trimmed; a cell must parse as a finite `f64` (`nan`,
//! `inf` and the like are rejected even though Rust parses them); an empty input cell is an
//! error; an empty target cell is a missing value and becomes NaN, but every target column
//! needs at least one observed value. Columns not requested are not parsed.

use std::path::Path;

use faer::Mat;

use super::error::clip;
use super::table::{read_text, Table};
use super::{DataError, Dataset};

/// Reads a CSV file with a header into a [`Dataset`].
///
/// `targets` names the target columns (at least one). `inputs` names the input columns in the
/// order wanted, or `None` for every non-target column in file order. See
/// [`read_csv_str`] for the rules and errors; in addition, an unreadable file is an error.
pub fn read_csv(
    path: &Path,
    targets: &[String],
    inputs: Option<&[String]>,
) -> Result<Dataset, DataError> {
    read_csv_str(
        &read_text(path)?,
        &path.display().to_string(),
        targets,
        inputs,
    )
}

/// Parses CSV `text` with a header into a [`Dataset`]; `source_name` names it in errors.
///
/// Errors: empty text; a missing header (a requested column is absent and every field of the
/// first line is a number); empty or repeated column names; no data rows; a row with the wrong number of fields; no targets or no inputs; a
/// column requested twice, requested as both input and target, or absent from the header (the
/// message lists the available columns); a non-numeric or non-finite cell in a requested
/// column; an empty input cell; a target column without any observed value.
pub fn read_csv_str(
    text: &str,
    source_name: &str,
    targets: &[String],
    inputs: Option<&[String]>,
) -> Result<Dataset, DataError> {
    if targets.is_empty() {
        return Err(DataError::NoTargets {
            source_name: source_name.to_string(),
        });
    }
    check_unique(source_name, targets, Role::Target)?;
    if let Some(inputs) = inputs {
        check_unique(source_name, inputs, Role::Input)?;
        if let Some(name) = inputs.iter().find(|name| targets.contains(name)) {
            return Err(DataError::InputIsTarget {
                source_name: source_name.to_string(),
                name: name.clone(),
            });
        }
    }

    let table = Table::parse(text, source_name)?;
    let target_cols = columns(&table, targets, Role::Target)?;
    let input_names: Vec<String> = match inputs {
        Some(inputs) => inputs.to_vec(),
        None => table
            .header
            .iter()
            .filter(|name| !targets.contains(name))
            .cloned()
            .collect(),
    };
    if input_names.is_empty() {
        return Err(DataError::NoInputs {
            source_name: source_name.to_string(),
        });
    }
    let input_cols = columns(&table, &input_names, Role::Input)?;

    Ok(Dataset {
        x: matrix(&table, &input_cols, Role::Input)?,
        y: matrix(&table, &target_cols, Role::Target)?,
        input_names,
        target_names: targets.to_vec(),
    })
}

/// A classification data set: numeric inputs and one column of class labels, kept as text.
#[derive(Clone, Debug)]
pub struct LabelledData {
    /// Names of the input columns, in the order of the columns of `x`.
    pub input_names: Vec<String>,
    /// The label column's name.
    pub target_name: String,
    /// Inputs, `n × d`, all finite.
    pub x: Mat<f64>,
    /// One trimmed, non-empty label per row (a number or a name).
    pub labels: Vec<String>,
}

impl LabelledData {
    /// Rows selected by index (for splits), in the given order.
    ///
    /// # Panics
    /// If an index is out of range (split functions only produce valid ones).
    pub fn select_rows(&self, rows: &[usize]) -> LabelledData {
        LabelledData {
            input_names: self.input_names.clone(),
            target_name: self.target_name.clone(),
            x: Mat::from_fn(rows.len(), self.x.ncols(), |i, c| self.x[(rows[i], c)]),
            labels: rows.iter().map(|&i| self.labels[i].clone()).collect(),
        }
    }
}

/// Reads a CSV file whose `target` column holds class labels (numbers or names). See
/// [`read_labelled_csv_str`].
pub fn read_labelled_csv(
    path: &Path,
    target: &str,
    inputs: Option<&[String]>,
) -> Result<LabelledData, DataError> {
    read_labelled_csv_str(
        &read_text(path)?,
        &path.display().to_string(),
        target,
        inputs,
    )
}

/// Parses CSV `text` with a label column `target`: the inputs follow the rules of
/// [`read_csv_str`]; every label cell must be non-empty and, where it reads as a number, finite
/// (`nan` or `inf` is an error naming the file, line and column, not a class).
pub fn read_labelled_csv_str(
    text: &str,
    source_name: &str,
    target: &str,
    inputs: Option<&[String]>,
) -> Result<LabelledData, DataError> {
    let targets = [target.to_string()];
    if let Some(inputs) = inputs {
        check_unique(source_name, inputs, Role::Input)?;
        if inputs.iter().any(|name| name == target) {
            return Err(DataError::InputIsTarget {
                source_name: source_name.to_string(),
                name: target.to_string(),
            });
        }
    }
    let table = Table::parse(text, source_name)?;
    let col = columns(&table, &targets, Role::Target)?[0];
    let input_names: Vec<String> = match inputs {
        Some(inputs) => inputs.to_vec(),
        None => table
            .header
            .iter()
            .filter(|name| *name != target)
            .cloned()
            .collect(),
    };
    if input_names.is_empty() {
        return Err(DataError::NoInputs {
            source_name: source_name.to_string(),
        });
    }
    let input_cols = columns(&table, &input_names, Role::Input)?;
    let labels = table
        .rows
        .iter()
        .map(|(line, record)| {
            let cell = &record[col];
            let non_finite = cell.parse::<f64>().is_ok_and(|v| !v.is_finite());
            if cell.is_empty() || non_finite {
                Err(table.bad_cell(
                    *line,
                    col,
                    "a class label (a finite number or a name)",
                    cell,
                ))
            } else {
                Ok(cell.to_string())
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(LabelledData {
        x: matrix(&table, &input_cols, Role::Input)?,
        input_names,
        target_name: target.to_string(),
        labels,
    })
}

/// Reads only the named input columns of a CSV file (for prediction), as an `n × d` matrix.
///
/// Other columns (targets, say) may be present or absent; they are ignored, but the file as a
/// whole must still be well-formed. See [`read_inputs_str`].
pub fn read_inputs(path: &Path, inputs: &[String]) -> Result<Mat<f64>, DataError> {
    read_inputs_str(&read_text(path)?, &path.display().to_string(), inputs)
}

/// Parses the named input columns of CSV `text`; `source_name` names it in errors.
///
/// The same rules and errors as [`read_csv_str`] apply to the requested columns.
pub fn read_inputs_str(
    text: &str,
    source_name: &str,
    inputs: &[String],
) -> Result<Mat<f64>, DataError> {
    if inputs.is_empty() {
        return Err(DataError::NoInputs {
            source_name: source_name.to_string(),
        });
    }
    check_unique(source_name, inputs, Role::Input)?;
    let table = Table::parse(text, source_name)?;
    let cols = columns(&table, inputs, Role::Input)?;
    matrix(&table, &cols, Role::Input)
}

/// How a requested column is used; decides what an empty cell means.
#[derive(Clone, Copy)]
enum Role {
    Input,
    Target,
}

impl Role {
    /// The role as it reads in a message ("requested as an input").
    fn describe(self) -> &'static str {
        match self {
            Role::Input => "an input",
            Role::Target => "a target",
        }
    }
}

/// Errors if a name occurs twice in `names`.
fn check_unique(source_name: &str, names: &[String], role: Role) -> Result<(), DataError> {
    for (k, name) in names.iter().enumerate() {
        if names[..k].contains(name) {
            return Err(DataError::DuplicateRequest {
                source_name: source_name.to_string(),
                name: name.clone(),
                role: role.describe(),
            });
        }
    }
    Ok(())
}

/// The header positions of `names`.
fn columns(table: &Table, names: &[String], role: Role) -> Result<Vec<usize>, DataError> {
    names
        .iter()
        .map(|name| {
            table
                .header
                .iter()
                .position(|h| h == name)
                .ok_or_else(|| missing_column(table, name, role))
        })
        .collect()
}

/// The error for a requested column absent from the header.
fn missing_column(table: &Table, name: &str, role: Role) -> DataError {
    if table.header.iter().all(|h| h.parse::<f64>().is_ok()) {
        return DataError::NoHeader {
            source_name: table.source_name.clone(),
            line: table.header_line,
        };
    }
    let available: Vec<String> = (table.header.iter())
        .map(|h| format!("\"{}\"", clip(h)))
        .collect();
    DataError::MissingColumn {
        source_name: table.source_name.clone(),
        line: table.header_line,
        name: name.to_string(),
        role: role.describe(),
        available: available.join(", "),
    }
}

/// The `n × cols.len()` matrix of the given columns, parsed under `role`'s rules.
fn matrix(table: &Table, cols: &[usize], role: Role) -> Result<Mat<f64>, DataError> {
    let values = cols
        .iter()
        .map(|&col| column_values(table, col, role))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Mat::from_fn(table.rows.len(), cols.len(), |i, j| {
        values[j][i]
    }))
}

/// The values of column `col`; for a target, empty cells are NaN and one value must be observed.
fn column_values(table: &Table, col: usize, role: Role) -> Result<Vec<f64>, DataError> {
    let values = table
        .rows
        .iter()
        .map(|(line, record)| parse_cell(table, *line, col, &record[col], role))
        .collect::<Result<Vec<f64>, _>>()?;
    if matches!(role, Role::Target) && values.iter().all(|v| v.is_nan()) {
        return Err(DataError::NoObservedTarget {
            source_name: table.source_name.clone(),
            column: table.header[col].clone(),
        });
    }
    Ok(values)
}

/// One trimmed cell as a finite number, or NaN for an empty target cell.
fn parse_cell(
    table: &Table,
    line: u64,
    col: usize,
    cell: &str,
    role: Role,
) -> Result<f64, DataError> {
    let expected = match role {
        Role::Input => "a finite number",
        Role::Target => "a finite number (or an empty cell for a missing target)",
    };
    if cell.is_empty() {
        return match role {
            Role::Target => Ok(f64::NAN),
            Role::Input => Err(DataError::MissingInput {
                source_name: table.source_name.clone(),
                line,
                column: table.header[col].clone(),
            }),
        };
    }
    match cell.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(table.bad_cell(line, col, expected, cell)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::testutil::{garbage_texts, TempFile};

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn read(text: &str, targets: &[&str], inputs: Option<&[&str]>) -> Result<Dataset, DataError> {
        let inputs = inputs.map(names);
        read_csv_str(text, "data.csv", &names(targets), inputs.as_deref())
    }

    /// The error message of a read that must fail.
    fn err(text: &str, targets: &[&str], inputs: Option<&[&str]>) -> String {
        match read(text, targets, inputs) {
            Ok(ds) => panic!("expected an error, got {ds:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn assert_contains(message: &str, parts: &[&str]) {
        for part in parts {
            assert!(message.contains(part), "message {message:?} lacks {part:?}");
        }
    }

    #[test]
    fn inputs_default_to_non_target_columns() {
        let ds = read("a,y,b\n1,10,2\n3,20,4\n5,30,6\n", &["y"], None).unwrap();
        assert_eq!(ds.input_names, names(&["a", "b"]));
        assert_eq!(ds.target_names, names(&["y"]));
        assert_eq!((ds.n(), ds.d(), ds.n_targets()), (3, 2, 1));
        for i in 0..3 {
            assert_eq!(ds.x[(i, 0)], (2 * i + 1) as f64);
            assert_eq!(ds.x[(i, 1)], (2 * i + 2) as f64);
            assert_eq!(ds.y[(i, 0)], (10 * (i + 1)) as f64);
        }
    }

    #[test]
    fn explicit_inputs_and_targets_reorder_columns() {
        let text = "a,b,c,y1,y2\n1,2,3,4,5\n6,7,8,9,10\n";
        let ds = read(text, &["y2", "y1"], Some(&["c", "a"])).unwrap();
        assert_eq!(ds.input_names, names(&["c", "a"]));
        assert_eq!(ds.target_names, names(&["y2", "y1"]));
        assert_eq!((ds.n(), ds.d(), ds.n_targets()), (2, 2, 2));
        assert_eq!(ds.x[(0, 0)], 3.0);
        assert_eq!(ds.x[(0, 1)], 1.0);
        assert_eq!(ds.x[(1, 0)], 8.0);
        assert_eq!(ds.x[(1, 1)], 6.0);
        assert_eq!(ds.y[(0, 0)], 5.0);
        assert_eq!(ds.y[(0, 1)], 4.0);
        assert_eq!(ds.y[(1, 0)], 10.0);
        assert_eq!(ds.y[(1, 1)], 9.0);
    }

    #[test]
    fn empty_target_cell_is_nan() {
        let ds = read("x,y1,y2\n1,,2\n2,3,\n3,4,5\n", &["y1", "y2"], None).unwrap();
        assert!(ds.y[(0, 0)].is_nan());
        assert_eq!(ds.y[(0, 1)], 2.0);
        assert_eq!(ds.y[(1, 0)], 3.0);
        assert!(ds.y[(1, 1)].is_nan());
        assert_eq!(ds.y[(2, 0)], 4.0);
        assert_eq!(ds.y[(2, 1)], 5.0);
    }

    #[test]
    fn crlf_whitespace_quotes_and_number_formats() {
        let text = " x , y \r\n 1.5 ,\t-2e-3 \r\n\"  7 \",+0.25\r\n.5, 1E2\r\n";
        let ds = read(text, &["y"], None).unwrap();
        assert_eq!(ds.input_names, names(&["x"]));
        assert_eq!(ds.n(), 3);
        assert_eq!(ds.x[(0, 0)], 1.5);
        assert_eq!(ds.y[(0, 0)], -2e-3);
        assert_eq!(ds.x[(1, 0)], 7.0);
        assert_eq!(ds.y[(1, 0)], 0.25);
        assert_eq!(ds.x[(2, 0)], 0.5);
        assert_eq!(ds.y[(2, 0)], 100.0);
        // No trailing newline at all is fine too.
        let ds = read("x,y\n1,2", &["y"], None).unwrap();
        assert_eq!((ds.n(), ds.x[(0, 0)], ds.y[(0, 0)]), (1, 1.0, 2.0));
    }

    #[test]
    fn file_reading_delegates_to_text_parsing() {
        let f = TempFile::new("read_csv", b"a,y,b\r\n1,2,3\r\n4,,6\r\n7,8,9\r\n");
        let ds = read_csv(&f.path, &names(&["y"]), None).unwrap();
        assert_eq!(ds.input_names, names(&["a", "b"]));
        assert_eq!(ds.x[(2, 1)], 9.0);
        assert!(ds.y[(1, 0)].is_nan());

        let x = read_inputs(&f.path, &names(&["b", "a"])).unwrap();
        assert_eq!((x.nrows(), x.ncols()), (3, 2));
        assert_eq!(x[(0, 0)], 3.0);
        assert_eq!(x[(0, 1)], 1.0);
        assert_eq!(x[(2, 0)], 9.0);

        let f = TempFile::new("bad_cell", b"a,y\n1,2\n1,zz\n");
        let m = read_csv(&f.path, &names(&["y"]), None)
            .unwrap_err()
            .to_string();
        assert_contains(&m, &[&f.name(), "line 3", "column \"y\"", "\"zz\""]);
        let m = read_inputs(&f.path, &names(&["q"]))
            .unwrap_err()
            .to_string();
        assert_contains(&m, &[&f.name(), "\"q\"", "available columns: \"a\", \"y\""]);
    }

    #[test]
    fn missing_file_is_an_error() {
        let path = std::env::temp_dir().join("trustgp_no_such_data_file.csv");
        let m = read_csv(&path, &names(&["y"]), None)
            .unwrap_err()
            .to_string();
        assert_contains(&m, &["trustgp_no_such_data_file.csv", "cannot read"]);
        let m = read_inputs(&path, &names(&["x"])).unwrap_err().to_string();
        assert_contains(&m, &["trustgp_no_such_data_file.csv", "cannot read"]);
    }

    #[test]
    fn binary_file_is_an_error() {
        let f = TempFile::new("binary", b"\x00\x01\xff\xfe\x80,\x81\n\x90\x91\n");
        let m = read_csv(&f.path, &names(&["y"]), None)
            .unwrap_err()
            .to_string();
        assert_contains(&m, &[&f.name(), "line 1", "invalid UTF-8"]);
    }

    #[test]
    fn empty_and_header_only_and_garbage_texts() {
        assert_contains(&err("", &["y"], None), &["data.csv", "empty", "header"]);
        assert_contains(&err("x,y\n", &["y"], None), &["data.csv", "no data rows"]);
        assert_contains(&err("x,y\r\n", &["y"], None), &["data.csv", "no data rows"]);
        // Garbage: control characters and an unterminated quote must give an error, not a panic.
        let garbage = "\u{0}\u{1}\u{7f}\"\u{fffd}\n,,\"\n\u{2}";
        assert!(read(garbage, &["y"], None).is_err());
        assert!(read_inputs_str(garbage, "g.csv", &names(&["x"])).is_err());
        let m = err("\u{1}\u{2},\u{3}\n1,2\n", &["y"], None);
        assert_contains(&m, &["data.csv", "\"y\"", "not in the header"]);
    }

    #[test]
    fn missing_header_is_detected() {
        let m = err("1,2,3\n4,5,6\n", &["y"], None);
        assert_contains(
            &m,
            &["data.csv", "line 1", "every field is a number", "header"],
        );
    }

    #[test]
    fn duplicate_header_columns() {
        let m = err("x,y,x\n1,2,3\n", &["y"], None);
        assert_contains(
            &m,
            &[
                "data.csv",
                "line 1",
                "\"x\" appears twice",
                "fields 1 and 3",
            ],
        );
        // Also when the duplicate is only detected after trimming.
        let m = err("x,y, x \n1,2,3\n", &["y"], None);
        assert_contains(&m, &["data.csv", "\"x\" appears twice"]);
    }

    #[test]
    fn empty_column_name() {
        let m = err("x,,y\n1,2,3\n", &["y"], None);
        assert_contains(
            &m,
            &["data.csv", "line 1", "header field 2", "empty column name"],
        );
    }

    #[test]
    fn requested_column_missing_lists_available() {
        let m = err("a,b,y\n1,2,3\n", &["z"], None);
        assert_contains(
            &m,
            &[
                "data.csv",
                "column \"z\"",
                "as a target",
                "available columns: \"a\", \"b\", \"y\"",
            ],
        );
        let m = err("a,b,y\n1,2,3\n", &["y"], Some(&["a", "c"]));
        assert_contains(
            &m,
            &[
                "data.csv",
                "column \"c\"",
                "as an input",
                "\"a\", \"b\", \"y\"",
            ],
        );
    }

    #[test]
    fn column_both_input_and_target() {
        let m = err("a,y\n1,2\n", &["y"], Some(&["a", "y"]));
        assert_contains(
            &m,
            &["data.csv", "\"y\"", "both as an input and as a target"],
        );
    }

    #[test]
    fn bad_requests() {
        assert_contains(
            &err("a,y\n1,2\n", &[], None),
            &["data.csv", "no target columns"],
        );
        assert_contains(
            &err("a,y\n1,2\n", &["y"], Some(&[])),
            &["data.csv", "no input columns"],
        );
        // Defaulted inputs: nothing left after removing the targets.
        assert_contains(
            &err("y\n1\n", &["y"], None),
            &["data.csv", "no input columns"],
        );
        let m = err("a,y\n1,2\n", &["y", "y"], None);
        assert_contains(&m, &["data.csv", "\"y\"", "twice as a target"]);
        let m = err("a,y\n1,2\n", &["y"], Some(&["a", "a"]));
        assert_contains(&m, &["data.csv", "\"a\"", "twice as an input"]);
        let m = read_inputs_str("a\n1\n", "p.csv", &[])
            .unwrap_err()
            .to_string();
        assert_contains(&m, &["p.csv", "no input columns"]);
    }

    #[test]
    fn ragged_rows() {
        let m = err("a,b,y\n1,2,3\n4,5\n", &["y"], None);
        assert_contains(&m, &["data.csv", "line 3", "2 fields, expected 3"]);
        let m = err("a,b,y\n1,2,3\n4,5,6,7\n", &["y"], None);
        assert_contains(&m, &["data.csv", "line 3", "4 fields, expected 3"]);
    }

    #[test]
    fn non_numeric_cells() {
        let m = err("a,y\n1,2\nabc,3\n", &["y"], None);
        assert_contains(
            &m,
            &[
                "data.csv",
                "line 3",
                "column \"a\"",
                "expected a finite number",
                "found \"abc\"",
            ],
        );
        let m = err("a,y\n1,2\n2,1.2.3\n", &["y"], None);
        assert_contains(
            &m,
            &["data.csv", "line 3", "column \"y\"", "found \"1.2.3\""],
        );
        // A quoted multi-line cell is reported at the line where its record starts.
        let m = err("a,y\n1,2\n\"x\ny\",3\n", &["y"], None);
        assert_contains(&m, &["data.csv", "line 3", "column \"a\""]);
    }

    #[test]
    fn non_finite_cells_are_rejected_in_inputs_and_targets() {
        for bad in ["nan", "NaN", "inf", "-inf", "Infinity", "+infinity"] {
            let m = err(&format!("a,y\n1,2\n{bad},3\n"), &["y"], None);
            assert_contains(
                &m,
                &[
                    "data.csv",
                    "line 3",
                    "column \"a\"",
                    "finite",
                    &format!("\"{bad}\""),
                ],
            );
            let m = err(&format!("a,y\n1,2\n2,{bad}\n"), &["y"], None);
            assert_contains(
                &m,
                &[
                    "data.csv",
                    "line 3",
                    "column \"y\"",
                    "finite",
                    &format!("\"{bad}\""),
                ],
            );
        }
        // Overflowing literals parse to infinity and are rejected as well.
        let m = err("a,y\n1e999,2\n", &["y"], None);
        assert_contains(&m, &["data.csv", "line 2", "column \"a\"", "\"1e999\""]);
    }

    #[test]
    fn empty_input_cell_is_an_error() {
        let m = err("a,b,y\n1,2,3\n4,  ,6\n", &["y"], None);
        assert_contains(
            &m,
            &[
                "data.csv",
                "line 3",
                "input column \"b\"",
                "empty cell",
                "expected a finite number",
            ],
        );
    }

    #[test]
    fn target_without_observations_is_an_error() {
        let m = err("a,y1,y2\n1,2,\n3,4, \n", &["y1", "y2"], None);
        assert_contains(
            &m,
            &["data.csv", "target column \"y2\"", "no observed value"],
        );
    }

    #[test]
    fn read_inputs_ignores_other_columns() {
        // The target column is garbage or empty: it is not parsed.
        let text = "a,y,b\n1,oops,2\n3,,4\n";
        let x = read_inputs_str(text, "p.csv", &names(&["b", "a"])).unwrap();
        assert_eq!((x.nrows(), x.ncols()), (2, 2));
        assert_eq!(x[(0, 0)], 2.0);
        assert_eq!(x[(0, 1)], 1.0);
        assert_eq!(x[(1, 0)], 4.0);
        assert_eq!(x[(1, 1)], 3.0);
        // The targets may be absent.
        let x = read_inputs_str("a\n5\n", "p.csv", &names(&["a"])).unwrap();
        assert_eq!((x.nrows(), x.ncols(), x[(0, 0)]), (1, 1, 5.0));
        // Requested columns follow the input rules.
        let m = read_inputs_str("a,b\n1,\n", "p.csv", &names(&["b"]))
            .unwrap_err()
            .to_string();
        assert_contains(&m, &["p.csv", "line 2", "input column \"b\"", "empty cell"]);
        let m = read_inputs_str("a,b\n1,inf\n", "p.csv", &names(&["b"]))
            .unwrap_err()
            .to_string();
        assert_contains(&m, &["p.csv", "line 2", "column \"b\"", "\"inf\""]);
        let m = read_inputs_str("a,b\n1,2\n3\n", "p.csv", &names(&["a"]))
            .unwrap_err()
            .to_string();
        assert_contains(&m, &["p.csv", "line 3", "1 fields, expected 2"]);
    }

    #[test]
    fn random_garbage_never_panics() {
        for text in garbage_texts(3000) {
            // Prefix a valid header half of the time so that the row checks are reached.
            for text in [text.clone(), format!("a,b,y\n{text}")] {
                // Whatever parses must satisfy the dataset invariants.
                for inputs in [None, Some(&["b", "a"][..])] {
                    if let Ok(ds) = read(&text, &["y"], inputs) {
                        assert_eq!(ds.y.nrows(), ds.n());
                        assert_eq!(ds.d(), ds.input_names.len());
                        assert!((0..ds.n()).all(|i| (0..ds.d()).all(|j| ds.x[(i, j)].is_finite())));
                        assert!((0..ds.n()).any(|i| ds.y[(i, 0)].is_finite()));
                    }
                }
                if let Ok(x) = read_inputs_str(&text, "g.csv", &names(&["a"])) {
                    assert_eq!(x.ncols(), 1);
                    assert!((0..x.nrows()).all(|i| x[(i, 0)].is_finite()));
                }
            }
        }
    }

    #[test]
    fn echoed_user_content_is_clipped_to_80_characters() {
        let huge = "h".repeat(10_000_000);
        let shown = format!("\"{}…\"", "h".repeat(80));
        // A 10 MB header field repeated, requested but absent (the request and the header's
        // column both shown), or a 10 MB cell: each shows its first 80 characters and `…`.
        for (text, targets, times) in [
            (format!("{huge},{huge},y\n1,2,3\n"), vec!["y"], 1),
            (format!("a,{huge}x\n1,2\n"), vec![huge.as_str()], 2),
            (format!("a,y\n1,2\n{huge},3\n"), vec!["y"], 1),
        ] {
            let m = err(&text, &targets, None);
            assert!(m.len() < 400, "{} characters: {}", m.len(), &m[..400]);
            assert_eq!(m.matches(&shown).count(), times, "{m}");
        }
        // Short content is shown whole, and the cut never splits a character.
        assert_eq!(clip("abc"), "abc");
        let wide = "é".repeat(81);
        assert_eq!(clip(&wide), format!("{}…", "é".repeat(80)));
        assert_eq!(clip(&wide[..160]), wide[..160]);
    }
}
