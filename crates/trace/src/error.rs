//! Errors of the trace readers, each with the location it happened at.

use kernelab_model::Location;
use std::fmt;
use std::path::Path;

/// What went wrong. The cause of [`ErrorKind::Io`] is its source, not part of its message:
/// print the chain (`{:#}` of an `anyhow::Error`) to show both.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading the file failed.
    #[error("cannot read")]
    Io(#[source] std::io::Error),
    /// The input does not have the expected shape.
    #[error("expected {expected}, found {found}")]
    Syntax {
        /// What the reader expected.
        expected: String,
        /// What it found instead.
        found: String,
    },
    /// The input ended early.
    #[error("input ends early: expected {expected}")]
    Truncated {
        /// What the reader still expected.
        expected: String,
    },
    /// The file is empty.
    #[error(
        "the file is empty: expected a profile ({})",
        crate::format::formats_read()
    )]
    Empty,
    /// The path is a directory.
    #[error(
        "not a regular file: it is a directory (give the kernel_trace.csv or *_results.db inside it)"
    )]
    IsDirectory,
    /// The path is a FIFO, socket or device, not a regular file.
    #[error("not a regular file")]
    NotRegular,
    /// The input is larger than kernelab reads (a bound on memory).
    #[error("{what} is larger than the limit of {limit} bytes")]
    TooLarge {
        /// What is too large.
        what: String,
        /// The limit in bytes.
        limit: u64,
    },
    /// The content is not a format kernelab reads.
    #[error("unknown format: {detail}")]
    UnknownFormat {
        /// What was seen, and what is accepted.
        detail: String,
    },
    /// A recognized format whose reader is not available.
    #[error("{detail}")]
    Unsupported {
        /// Which format, and what to do instead.
        detail: String,
    },
    /// A SQLite database could not be queried.
    #[error("SQLite: {0}")]
    Sqlite(String),
    /// A setting given by the caller (such as a time range) is not valid.
    #[error("{detail}")]
    Argument {
        /// What was given, and what is expected.
        detail: String,
    },
    /// Per-dispatch and aggregate-only inputs were mixed in one ranking.
    #[error("cannot combine per-dispatch traces with aggregate-only stats files in one ranking (give one kind)")]
    MixedInputs,
}

/// A reader error with its location (boxed, so results stay small).
#[derive(Debug)]
pub struct Error {
    inner: Box<Inner>,
}

#[derive(Debug)]
struct Inner {
    location: Location,
    kind: ErrorKind,
}

impl Error {
    /// A new error at `location`.
    pub fn new(location: Location, kind: ErrorKind) -> Self {
        Error {
            inner: Box::new(Inner { location, kind }),
        }
    }
    /// Where it happened.
    pub fn location(&self) -> &Location {
        &self.inner.location
    }
    /// What happened.
    pub fn kind(&self) -> &ErrorKind {
        &self.inner.kind
    }
    /// A syntax error: expected one thing, found another.
    pub fn syntax(
        location: Location,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Self {
        Error::new(
            location,
            ErrorKind::Syntax {
                expected: expected.into(),
                found: found.into(),
            },
        )
    }
    /// A caller setting that is not valid (no input location).
    pub(crate) fn argument(detail: impl Into<String>) -> Self {
        Error::new(
            Location::default(),
            ErrorKind::Argument {
                detail: detail.into(),
            },
        )
    }
    /// Attaches the file path (kept if one is set).
    pub fn with_path(mut self, path: &Path) -> Self {
        self.inner.location = std::mem::take(&mut self.inner.location).with_path(path);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.inner.location == Location::default() {
            write!(f, "{}", self.inner.kind)
        } else {
            write!(f, "{}: {}", self.inner.location, self.inner.kind)
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.inner.kind)
    }
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Shows at most `n` characters of `text` for an error message (binary input as hex bytes).
pub(crate) fn snippet(text: &[u8], n: usize) -> String {
    kernelab_model::quote_bytes(text, n)
}
