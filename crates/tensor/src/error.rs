//! Errors of the tensor readers.

use kernelab_model::Location;
use std::path::Path;

/// A tensor-file error, naming the file and, where known, the byte offset or manifest line.
///
/// The cause of an [`Error::Io`] is its [`source`](std::error::Error::source), not part of its
/// message: print the chain (`{:#}` of an `anyhow::Error`) to show both.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be read.
    #[error("{location}: cannot read")]
    Io {
        /// The file.
        location: Location,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The bytes are not what the reader expected.
    #[error("{location}: expected {expected}")]
    Format {
        /// The file and byte offset.
        location: Location,
        /// What was expected.
        expected: String,
    },
    /// The file holds less data than its header promises.
    #[error("{location}: the file is truncated: the header promises {want} bytes of data here, {have} are present")]
    Truncated {
        /// The file and the offset of the data.
        location: Location,
        /// Bytes the header promises.
        want: usize,
        /// Bytes present.
        have: usize,
    },
    /// Compressed data inflates past the limit (the location names `file#member`).
    #[error(
        "{location}: decompressed size exceeds the limit of {limit} bytes (--max-decompressed)"
    )]
    TooLarge {
        /// The file and member.
        location: Location,
        /// The limit in bytes.
        limit: u64,
    },
    /// A FIFO, directory, socket or device where a file is expected.
    #[error("{location}: not a regular file")]
    NotRegular {
        /// The path.
        location: Location,
    },
    /// Memory for a copy the reader makes (a Fortran-order array into C order, a deflated npz
    /// member) could not be had; nothing was read past it (the Python module raises
    /// `MemoryError`).
    #[error("{location}: cannot allocate {bytes} bytes for {what}")]
    Alloc {
        /// The file (and member).
        location: Location,
        /// Bytes asked for.
        bytes: usize,
        /// What the memory was for.
        what: String,
    },
    /// A gate has nothing to compare: no tensors, no elements, no configs.
    #[error("{location}: nothing to compare: {detail}")]
    Nothing {
        /// The file or manifest.
        location: Location,
        /// What is missing.
        detail: String,
    },
}

impl Error {
    /// Where it happened.
    pub fn location(&self) -> &Location {
        match self {
            Error::Io { location, .. }
            | Error::Format { location, .. }
            | Error::Truncated { location, .. }
            | Error::TooLarge { location, .. }
            | Error::NotRegular { location }
            | Error::Alloc { location, .. }
            | Error::Nothing { location, .. } => location,
        }
    }
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        if kernelab_model::is_not_regular(&source) {
            return Error::NotRegular {
                location: Location::default().with_path(path),
            };
        }
        Error::Io {
            location: Location::default().with_path(path),
            source,
        }
    }
    pub(crate) fn format(path: &Path, offset: u64, expected: impl Into<String>) -> Self {
        Error::Format {
            location: Location::byte(offset).with_path(path),
            expected: expected.into(),
        }
    }
    pub(crate) fn truncated(path: &Path, offset: u64, want: usize, have: usize) -> Self {
        Error::Truncated {
            location: Location::byte(offset).with_path(path),
            want,
            have,
        }
    }
}

/// Shorthand.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_file_and_offset_and_keep_the_cause_apart() {
        let e = Error::format(Path::new("a.npy"), 8, "a 4-byte npy header length");
        assert_eq!(
            e.to_string(),
            "a.npy: byte 8: expected a 4-byte npy header length"
        );
        let io = Error::io(
            Path::new("b.npy"),
            std::io::Error::new(std::io::ErrorKind::NotFound, "gone"),
        );
        assert_eq!(io.to_string(), "b.npy: cannot read");
        assert_eq!(kernelab_model::error_chain(&io), "b.npy: cannot read: gone");
    }
}
