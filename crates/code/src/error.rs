//! Errors of the code-object readers.

use std::fmt;

/// A code-object or disassembly error, located by byte offset or line where known.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be read.
    Io(std::io::Error),
    /// The bytes are not what the reader expected.
    Malformed {
        /// Byte offset, when known.
        offset: Option<u64>,
        /// What was expected.
        expected: String,
    },
    /// The content is not a code object or disassembly kernelab reads.
    Unknown(String),
    /// A disassembler could not be run or failed.
    Tool(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "{e}"),
            Error::Malformed {
                offset: Some(o),
                expected,
            } => write!(f, "byte {o}: expected {expected}"),
            Error::Malformed {
                offset: None,
                expected,
            } => write!(f, "expected {expected}"),
            Error::Unknown(s) => write!(f, "not a code object or disassembly kernelab reads: {s}"),
            Error::Tool(s) => write!(f, "disassembler: {s}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<object::read::Error> for Error {
    fn from(e: object::read::Error) -> Self {
        Error::Malformed {
            offset: None,
            expected: format!("a valid ELF file ({e})"),
        }
    }
}

/// Shorthand.
pub type Result<T> = std::result::Result<T, Error>;

/// A malformed-input error at `offset`.
pub(crate) fn malformed(offset: u64, expected: impl Into<String>) -> Error {
    Error::Malformed {
        offset: Some(offset),
        expected: expected.into(),
    }
}
