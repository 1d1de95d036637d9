//! Errors of `kernelab serve`: a bad spec, a server that would not start, a samples file.

use kernelab_model::Location;
use std::path::PathBuf;

/// Why a serve run stopped without a result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The spec file could not be read.
    #[error("{}: cannot read the serve spec", path.display())]
    ReadSpec {
        /// The spec file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The spec is not valid.
    #[error("{location}: {message}")]
    Spec {
        /// File, line and key.
        location: Location,
        /// What is wrong.
        message: String,
    },
    /// A server could not be started or did not become ready.
    #[error("{server}: {message} (log: {})", log.display())]
    Start {
        /// `baseline` or `candidate`.
        server: String,
        /// What happened.
        message: String,
        /// The server's log file.
        log: PathBuf,
    },
    /// The workload could not be prepared against a server (flush, detokenize, tokenize).
    #[error("{server}, round {round}: {message}")]
    Workload {
        /// `baseline` or `candidate`.
        server: String,
        /// Round.
        round: usize,
        /// What went wrong.
        message: String,
    },
    /// An I/O error around a server or a file.
    #[error("{what}")]
    Io {
        /// What was being done.
        what: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The samples file is not a serve samples file, or belongs to another spec.
    #[error("{location}: {message}")]
    Samples {
        /// The file and line.
        location: Location,
        /// What is wrong.
        message: String,
    },
}

/// Shorthand for results of the serve module.
pub type Result<T> = std::result::Result<T, Error>;

/// Wraps an I/O error with what was being done.
pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
    let what = what.into();
    move |source| Error::Io { what, source }
}
