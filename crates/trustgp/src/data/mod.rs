//! Data handling: CSV input, standardisation, train/test splits, outlier contamination and
//! predictive metrics.
//!
//! * [`read_csv`] / [`read_csv_str`] read a [`Dataset`] (named input and target columns; an
//!   empty target cell is a missing value, NaN); [`read_inputs`] / [`read_inputs_str`] read
//!   only the input columns, for prediction.
//! * [`Standardizer`] centres and scales columns with training statistics and maps
//!   predictions back; constant columns are reported in [`ConstantColumns`].
//! * [`random_split`] and [`read_split_file`] give a [`Split`] of row indices.
//! * [`contaminate()`] corrupts a seeded fraction of the training targets (and, for focused
//!   outliers, inputs) following a [`ContaminationSpec`] such as `asymmetric:0.1`, with the
//!   outlier recipe of a paper's [`Protocol`], for robustness experiments; test rows stay clean.
//! * [`metrics`] ([`metrics::rmse`], [`metrics::mae`], [`metrics::nlpd_mean`],
//!   [`metrics::nlpd_sum`]) score predictions, skipping missing targets.
//!
//! Bad input never panics: every problem is a [`DataError`] whose message names the file, the
//! 1-based line, the column and what was expected.

mod contaminate;
mod csv;
mod dataset;
mod error;
pub mod metrics;
mod split;
mod standardize;
mod table;
#[cfg(test)]
mod testutil;

pub use self::contaminate::{
    contaminate, ContaminationReport, ContaminationSpec, OutlierKind, Protocol,
};
pub use self::csv::{
    read_csv, read_csv_str, read_inputs, read_inputs_str, read_labelled_csv, read_labelled_csv_str,
    LabelledData,
};
pub use self::dataset::Dataset;
pub use self::error::DataError;
pub use self::split::{random_split, read_split_file, read_split_str, Split};
pub use self::standardize::{ConstantColumns, Standardizer};
