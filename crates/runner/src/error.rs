//! Errors of the A/B runner and its samples file.

use kernelab_model::Location;
use std::path::PathBuf;

/// Why an A/B run or a samples file read stopped without a result.
///
/// An I/O or JSON cause is the error's [`source`](std::error::Error::source), not part of its
/// message: print the chain (`{:#}` of an `anyhow::Error`) to show both.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Too many runs failed.
    #[error("{failures} runs failed (limit {limit}); the last: {last}. Fix the command, or raise --max-failures")]
    TooManyFailures {
        /// Failures so far.
        failures: usize,
        /// The limit.
        limit: usize,
        /// The last failure.
        last: String,
    },
    /// A command could not be started (not found): retrying would not help.
    #[error("the {slot} command could not start: {message}")]
    CannotStart {
        /// `baseline` or `candidate`.
        slot: &'static str,
        /// What the system said.
        message: String,
    },
    /// The samples file could not be read.
    #[error("{}: cannot read the samples file", path.display())]
    Read {
        /// The samples file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The samples file could not be written.
    #[error("{}: cannot write the samples file", path.display())]
    Write {
        /// The samples file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A line of the samples file is not a sample record.
    #[error("{location}: expected a sample record")]
    BadLine {
        /// The samples file and line.
        location: Location,
        /// What the JSON parser said.
        #[source]
        source: serde_json::Error,
    },
    /// A line of the samples file longer than the cap: refused before it is held whole.
    #[error("{location}: a line longer than {limit} bytes: expected a sample record")]
    LongLine {
        /// The samples file and line.
        location: Location,
        /// The cap, bytes.
        limit: usize,
    },
    /// A file of paired samples (CSV or JSON from another harness) is not what was expected.
    #[error("{location}: expected {expected}")]
    BadPairs {
        /// The file, and the line where known.
        location: Location,
        /// What was expected.
        expected: String,
    },
    /// A pair that was run and written is missing when the samples file is read back.
    #[error("{}: a completed pair did not appear in the samples file", path.display())]
    LostPair {
        /// The samples file.
        path: PathBuf,
    },
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Where in which file it happened, when the error names one.
    pub fn location(&self) -> Option<Location> {
        match self {
            Error::BadLine { location, .. }
            | Error::LongLine { location, .. }
            | Error::BadPairs { location, .. } => Some(location.clone()),
            Error::Read { path, .. } | Error::Write { path, .. } | Error::LostPair { path, .. } => {
                Some(Location::default().with_path(path.clone()))
            }
            _ => None,
        }
    }
}
