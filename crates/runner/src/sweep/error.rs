//! Errors of the sweep engine.

use kernelab_model::Location;
use std::path::PathBuf;

/// A sweep error: a sweep file problem located in it, a file that cannot be read or written, a
/// code object or tensor file that cannot be read, or a kernel point's own failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read.
    #[error("{}: cannot read", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("{}: cannot write", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The sweep file (or a point result file) is not what the engine needs: invalid TOML (with
    /// its line), an empty value list, a duplicate id, too many points.
    #[error("{location}: {message}")]
    File {
        /// The file, and the line where known.
        location: Location,
        /// What is wrong, and what was expected.
        message: String,
    },
    /// A build's code object could not be read as a code object.
    #[error("{label} code object")]
    Code {
        /// `baseline` or `candidate`.
        label: &'static str,
        /// Why (names the file and the byte offset).
        #[source]
        source: Box<kernelab_code::Error>,
    },
    /// A tensor file of a point could not be read.
    #[error(transparent)]
    Tensor(#[from] kernelab_tensor::Error),
    /// A kernel point failed in the launcher that runs it.
    #[error(transparent)]
    Kernel(Box<dyn std::error::Error + Send + Sync>),
    /// Something the engine made itself went wrong (a bug).
    #[error("internal error: {0}")]
    Internal(String),
}

/// A sweep result.
pub type Result<T> = std::result::Result<T, Error>;
