//! The report crate's one error type.

use std::path::PathBuf;

/// Why a report could not be written: a bundle that could not be read (every such variant
/// names the file), or CSV output that could not be produced.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The folder or a record could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The folder or record file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file is not a kernelab record.
    #[error("{path}: line {line}: expected {expected} ({message})")]
    Malformed {
        /// The record file.
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// What was expected.
        expected: String,
        /// The parser's words.
        message: String,
    },
    /// The record's result lacks a field its kind needs, or holds a value of the wrong type.
    #[error("{path}: `result`: expected a `{kind}` result ({message})")]
    Result {
        /// The record file.
        path: PathBuf,
        /// The record's kind.
        kind: String,
        /// The parser's words (names the field).
        message: String,
    },
    /// The record was written with a layout version this kernelab cannot read or upgrade.
    #[error("{path}: {message}")]
    Version {
        /// The record file.
        path: PathBuf,
        /// Which versions were found and are read, and what to do.
        message: String,
    },
    /// CSV output could not be written.
    #[error("writing CSV")]
    Csv(#[from] csv::Error),
    /// CSV output was not UTF-8 (a name with invalid bytes).
    #[error("writing CSV: not UTF-8")]
    CsvText(#[from] std::string::FromUtf8Error),
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, Error>;
