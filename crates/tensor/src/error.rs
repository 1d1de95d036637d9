//! Errors of the tensor readers.

use std::fmt;
use std::path::{Path, PathBuf};

/// A tensor-file error, naming the file and the byte offset.
#[derive(Debug)]
pub struct Error {
    /// The file.
    pub path: PathBuf,
    /// Byte offset, when known.
    pub offset: Option<u64>,
    /// What was expected, or what failed.
    pub message: String,
}

impl Error {
    pub(crate) fn io(path: &Path, e: std::io::Error) -> Self {
        Error {
            path: path.to_path_buf(),
            offset: None,
            message: e.to_string(),
        }
    }
    pub(crate) fn format(path: &Path, offset: u64, expected: impl Into<String>) -> Self {
        Error {
            path: path.to_path_buf(),
            offset: Some(offset),
            message: format!("expected {}", expected.into()),
        }
    }
    pub(crate) fn truncated(path: &Path, offset: u64, want: usize, have: usize) -> Self {
        Error {
            path: path.to_path_buf(),
            offset: Some(offset),
            message: format!("the file is truncated: the header promises {want} bytes of data here, {have} are present"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(o) => write!(f, "{}: byte {o}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for Error {}

/// Shorthand.
pub type Result<T> = std::result::Result<T, Error>;
