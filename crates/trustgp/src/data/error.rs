//! The single error type of the data module.
//!
//! Every message names where the problem is (file, 1-based line, column name, or the position
//! in a slice) and what was expected, so that a user can fix the input without reading code.

use thiserror::Error;

/// The most characters of user content (a column name, a cell, a spec) a message echoes: a 10 MB header field must not become a 10 MB message.
pub(crate) const MAX_ECHO_CHARS: usize = 80;

/// `text`, cut to [`MAX_ECHO_CHARS`] characters with `…` when longer.
pub(crate) fn clip(text: &str) -> String {
    match text.char_indices().nth(MAX_ECHO_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// Everything that can go wrong while reading, splitting, standardising or scoring data.
///
/// `source_name` is the file path (or the name given to an in-memory text); `line` is the
/// 1-based line of the file where the offending record starts.
#[derive(Debug, Error)]
pub enum DataError {
    /// The file could not be opened or read.
    #[error("{path}: cannot read the file: {source}")]
    Io {
        /// The file path.
        path: String,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },

    /// The file is not valid UTF-8 text.
    #[error(
        "{source_name}: line {line}: invalid UTF-8 byte sequence (expected a UTF-8 text file)"
    )]
    InvalidUtf8 {
        /// The file or text name.
        source_name: String,
        /// The line containing the first invalid byte.
        line: u64,
    },

    /// The CSV tokenizer rejected the text.
    #[error("{source_name}: line {line}: malformed CSV: {message}")]
    Csv {
        /// The file or text name.
        source_name: String,
        /// The line of the record being read.
        line: u64,
        /// The tokenizer's description of the problem.
        message: String,
    },

    /// The file contains nothing (not even a header).
    #[error("{source_name}: the file is empty (expected a header line of column names)")]
    EmptyFile {
        /// The file or text name.
        source_name: String,
    },

    /// The first line consists only of numbers, so the header is missing.
    #[error(
        "{source_name}: line {line} looks like data (every field is a number); \
         expected a header line of column names"
    )]
    NoHeader {
        /// The file or text name.
        source_name: String,
        /// The line of the header record.
        line: u64,
    },

    /// A header field is empty.
    #[error(
        "{source_name}: line {line}, header field {position}: empty column name \
         (expected a non-empty name)"
    )]
    EmptyColumnName {
        /// The file or text name.
        source_name: String,
        /// The line of the header record.
        line: u64,
        /// The 1-based position of the empty field.
        position: usize,
    },

    /// The same column name appears twice in the header.
    #[error(
        "{source_name}: line {line}: column name \"{name_shown}\" appears twice in the header \
         (fields {first} and {second}); expected unique column names", name_shown = clip(.name))]
    DuplicateColumn {
        /// The file or text name.
        source_name: String,
        /// The line of the header record.
        line: u64,
        /// The repeated name.
        name: String,
        /// 1-based position of the first occurrence.
        first: usize,
        /// 1-based position of the second occurrence.
        second: usize,
    },

    /// The header is followed by no data row.
    #[error("{source_name}: no data rows after the header (expected at least one row)")]
    NoDataRows {
        /// The file or text name.
        source_name: String,
    },

    /// A data row has a different number of fields than the header.
    #[error(
        "{source_name}: line {line}: {found} fields, expected {expected} \
         (one per header column)"
    )]
    RaggedRow {
        /// The file or text name.
        source_name: String,
        /// The line of the row.
        line: u64,
        /// The number of header columns.
        expected: usize,
        /// The number of fields in the row.
        found: usize,
    },

    /// No target column was requested.
    #[error("{source_name}: no target columns requested (expected at least one)")]
    NoTargets {
        /// The file or text name.
        source_name: String,
    },

    /// No input column was requested, or none is left after removing the targets.
    #[error("{source_name}: no input columns (expected at least one)")]
    NoInputs {
        /// The file or text name.
        source_name: String,
    },

    /// The same column was requested twice in one role.
    #[error("{source_name}: column \"{name_shown}\" is requested twice as {role} (expected each once)", name_shown = clip(.name))]
    DuplicateRequest {
        /// The file or text name.
        source_name: String,
        /// The repeated column name.
        name: String,
        /// `"an input"` or `"a target"`.
        role: &'static str,
    },

    /// A column was requested both as an input and as a target.
    #[error(
        "{source_name}: column \"{name_shown}\" is requested both as an input and as a target \
         (expected each column in at most one role)", name_shown = clip(.name))]
    InputIsTarget {
        /// The file or text name.
        source_name: String,
        /// The column name.
        name: String,
    },

    /// A requested column is not in the header.
    #[error(
        "{source_name}: line {line}: column \"{name_shown}\" (requested as {role}) is not in the header; \
         available columns: {available}", name_shown = clip(.name))]
    MissingColumn {
        /// The file or text name.
        source_name: String,
        /// The line of the header record.
        line: u64,
        /// The requested name.
        name: String,
        /// `"an input"` or `"a target"`.
        role: &'static str,
        /// The header's column names, quoted and comma-separated.
        available: String,
    },

    /// A cell does not hold what its column needs (a finite number, a set name, a row index…).
    #[error(
        "{source_name}: line {line}, column \"{column_shown}\": expected {expected}, found \"{found_shown}\"", column_shown = clip(.column), found_shown = clip(.found))]
    BadCell {
        /// The file or text name.
        source_name: String,
        /// The line of the row.
        line: u64,
        /// The column name.
        column: String,
        /// What the cell should contain.
        expected: &'static str,
        /// The cell's (trimmed) text.
        found: String,
    },

    /// An input cell is empty; missing inputs are not supported.
    #[error(
        "{source_name}: line {line}, input column \"{column_shown}\": empty cell \
         (missing inputs are not allowed; expected a finite number)", column_shown = clip(.column))]
    MissingInput {
        /// The file or text name.
        source_name: String,
        /// The line of the row.
        line: u64,
        /// The column name.
        column: String,
    },

    /// A target column has only empty (missing) cells.
    #[error(
        "{source_name}: target column \"{column_shown}\" has no observed value \
         (every cell is empty; expected at least one number)", column_shown = clip(.column))]
    NoObservedTarget {
        /// The file or text name.
        source_name: String,
        /// The column name.
        column: String,
    },

    /// The header of a split file is not `split,set,row`.
    #[error(
        "{source_name}: line {line}: header is \"{found_shown}\", expected exactly \"split,set,row\"", found_shown = clip(.found))]
    SplitHeader {
        /// The file or text name.
        source_name: String,
        /// The line of the header record.
        line: u64,
        /// The header as read, comma-joined.
        found: String,
    },

    /// A split file refers to a data row that does not exist.
    #[error(
        "{source_name}: line {line}, column \"row\": row {row} is out of range \
         (expected a 0-based row index below {n_rows}, the number of data rows)"
    )]
    RowOutOfRange {
        /// The file or text name.
        source_name: String,
        /// The line of the split-file record.
        line: u64,
        /// The offending row index.
        row: usize,
        /// The number of data rows.
        n_rows: usize,
    },

    /// The requested split number does not occur in the split file.
    #[error("{source_name}: split {split} not found; available splits: {available}")]
    SplitNotFound {
        /// The file or text name.
        source_name: String,
        /// The requested split.
        split: usize,
        /// The split numbers present, comma-separated.
        available: String,
    },

    /// A row is listed twice in the same set of a split.
    #[error(
        "{source_name}: line {line}: row {row} is listed twice in the {set} set of split {split} \
         (first on line {first_line}); expected each row at most once"
    )]
    DuplicateSplitRow {
        /// The file or text name.
        source_name: String,
        /// The line of the repeated entry.
        line: u64,
        /// The line of the first entry.
        first_line: u64,
        /// The repeated row.
        row: usize,
        /// `train` or `test`.
        set: &'static str,
        /// The split number.
        split: usize,
    },

    /// A row is in both the train and the test set of a split.
    #[error(
        "{source_name}: line {line}: row {row} is in both the train and the test set of split \
         {split} (other entry on line {first_line}); expected disjoint sets"
    )]
    RowInBothSets {
        /// The file or text name.
        source_name: String,
        /// The line of the second entry.
        line: u64,
        /// The line of the first entry.
        first_line: u64,
        /// The row.
        row: usize,
        /// The split number.
        split: usize,
    },

    /// One set of a split has no rows.
    #[error("{source_name}: split {split} has an empty {set} set (expected at least one row)")]
    EmptySplitSet {
        /// The file or text name.
        source_name: String,
        /// The split number.
        split: usize,
        /// `train` or `test`.
        set: &'static str,
    },

    /// A random-split test fraction outside (0, 1).
    #[error("test fraction {value}: expected a number strictly between 0 and 1")]
    InvalidTestFraction {
        /// The fraction given.
        value: f64,
    },

    /// A random split would leave the train or the test set empty.
    #[error(
        "cannot split {n} rows with test fraction {test_fraction}: the test set would have \
         {n_test} rows (expected both train and test sets non-empty)"
    )]
    SplitTooSmall {
        /// The number of rows.
        n: usize,
        /// The fraction given.
        test_fraction: f64,
        /// round(fraction × n).
        n_test: usize,
    },

    /// Two sizes that must agree do not.
    #[error("{what}: expected {expected}, found {found}")]
    ShapeMismatch {
        /// What is being compared (e.g. "number of columns of x").
        what: String,
        /// The required size.
        expected: usize,
        /// The size given.
        found: usize,
    },

    /// A value that must be finite is NaN or infinite.
    #[error("{what}: expected a finite number, found {value}")]
    NonFiniteValue {
        /// Where the value is (e.g. "x row 3, column 2").
        what: String,
        /// The value.
        value: f64,
    },

    /// A value that must be strictly positive is not.
    #[error("{what}: expected a positive number, found {value}")]
    NotPositive {
        /// Where the value is (e.g. "predictive std at position 4").
        what: String,
        /// The value.
        value: f64,
    },

    /// A computation has no observed (non-NaN) values to work with.
    #[error("{what}: no observed (non-NaN) values; expected at least one")]
    NoObserved {
        /// What is empty (e.g. "target column 2").
        what: String,
    },

    /// A contamination spec (`--contaminate`) is malformed.
    #[error(
        "contamination spec \"{spec_shown}\": {problem}; expected KIND:FRACTION[:COLUMN] with KIND \
         one of uniform, asymmetric, focused and FRACTION strictly between 0 and 1 \
         (e.g. \"asymmetric:0.1\" or \"focused:0.05:y2\")", spec_shown = clip(.spec))]
    BadContaminationSpec {
        /// The spec as given.
        spec: String,
        /// What is wrong with it.
        problem: String,
    },

    /// A contamination protocol name is not known.
    #[error(
        "contamination protocol \"{found_shown}\": expected \"rcagp\" (Robust and Computation-Aware \
         GPs) or \"mo-rcgp\" (Multi-Output Robust and Conjugate GPs)", found_shown = clip(.found))]
    BadContaminationProtocol {
        /// The name given.
        found: String,
    },

    /// The column to contaminate is not a target column.
    #[error(
        "contamination column \"{name_shown}\" is not a target column; available targets: {available}", name_shown = clip(.name))]
    UnknownTarget {
        /// The requested name.
        name: String,
        /// The target names, quoted and comma-separated.
        available: String,
    },

    /// A training-row index is not a row of the data.
    #[error(
        "training row {row} (position {position} of the training rows) is out of range \
         (expected a 0-based row index below {n_rows}, the number of data rows)"
    )]
    TrainRowOutOfRange {
        /// The offending row index.
        row: usize,
        /// Its 0-based position in the list of training rows.
        position: usize,
        /// The number of data rows.
        n_rows: usize,
    },

    /// No training row has an observed value in the column to contaminate.
    #[error(
        "target column \"{column_shown}\" has no observed (non-NaN) value in the {n_train} training \
         rows, so there is nothing to contaminate (expected at least one)", column_shown = clip(.column))]
    NothingToContaminate {
        /// The target column name.
        column: String,
        /// The number of (distinct) training rows.
        n_train: usize,
    },

    /// The column to contaminate has no spread over the training rows, so outliers sized in
    /// units of its standard deviation would be zero.
    #[error(
        "target column \"{column_shown}\": the standard deviation of its observed training values is \
         {std} (expected a positive finite number, since outliers are sized in units of it; \
         this needs at least two distinct observed training values)", column_shown = clip(.column))]
    DegenerateTargetSpread {
        /// The target column name.
        column: String,
        /// The population standard deviation found.
        std: f64,
    },
}
