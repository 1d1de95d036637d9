//! Errors of the code-object readers.

use kernelab_model::Location;
use std::path::{Path, PathBuf};

/// A code-object or disassembly error, located by file and byte offset where known.
///
/// The cause of an I/O error is its [`source`](std::error::Error::source), not part of its
/// message: print the chain (`{:#}` of an `anyhow::Error`) to show both.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be read.
    #[error("{}: cannot read", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The bytes are not what the reader expected.
    #[error("{location}: expected {expected}")]
    Malformed {
        /// The file (or container entry) and byte offset, where known.
        location: Location,
        /// What was expected.
        expected: String,
    },
    /// The content is not a code object or disassembly kernelab reads.
    #[error("{location}: not a code object or disassembly kernelab reads: {detail}")]
    Unknown {
        /// The file.
        location: Location,
        /// What was seen, and what is accepted.
        detail: String,
    },
    /// A code object of a kind kernelab recognises but does not read (AMD code object v1).
    #[error("{location}: {detail}")]
    Unsupported {
        /// The file (or container entry).
        location: Location,
        /// What it is, and why it is not read.
        detail: String,
    },
    /// A disassembler could not be run or failed.
    #[error("{location}: disassembler: {message}")]
    Tool {
        /// The code object being disassembled.
        location: Location,
        /// What went wrong.
        message: String,
    },
    /// Two files of a build have the same key.
    #[error("{first} and {second} both have the key {key:?}; give --key a pattern that tells them apart")]
    DuplicateKey {
        /// The key.
        key: String,
        /// The first file.
        first: String,
        /// The second file.
        second: String,
    },
    /// A build folder is not a folder.
    #[error("{}: not a directory; expected a build tree", path.display())]
    NotADirectory {
        /// The path given.
        path: PathBuf,
    },
    /// Compressed data inflates past the limit.
    #[error("{location}#{entry}: decompressed size exceeds the limit of {limit} bytes (--max-decompressed)")]
    TooLarge {
        /// The file.
        location: Location,
        /// The container entry.
        entry: String,
        /// The limit in bytes.
        limit: u64,
    },
    /// A FIFO, directory, socket or device where a file is expected.
    #[error("{}: not a regular file", path.display())]
    NotRegular {
        /// The path.
        path: PathBuf,
    },
    /// The temporary copy of a code object for the disassembler could not be written.
    #[error("{}: cannot write the disassembler's input", path.display())]
    TempFile {
        /// The temporary file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// Where in which file it happened, when the error names one.
    pub fn location(&self) -> Option<Location> {
        match self {
            Error::Malformed { location, .. }
            | Error::Unknown { location, .. }
            | Error::Unsupported { location, .. }
            | Error::Tool { location, .. }
            | Error::TooLarge { location, .. } => Some(location.clone()),
            Error::Io { path, .. }
            | Error::NotADirectory { path, .. }
            | Error::NotRegular { path, .. }
            | Error::TempFile { path, .. } => Some(Location::default().with_path(path.clone())),
            _ => None,
        }
    }

    /// Names the file (or container entry) where no file is named yet.
    pub fn with_path(self, path: impl AsRef<Path>) -> Self {
        match self {
            Error::Malformed { location, expected } => Error::Malformed {
                location: location.with_path(path.as_ref()),
                expected,
            },
            Error::Unknown { location, detail } => Error::Unknown {
                location: location.with_path(path.as_ref()),
                detail,
            },
            Error::Unsupported { location, detail } => Error::Unsupported {
                location: location.with_path(path.as_ref()),
                detail,
            },
            Error::Tool { location, message } => Error::Tool {
                location: location.with_path(path.as_ref()),
                message,
            },
            Error::TooLarge {
                location,
                entry,
                limit,
            } => Error::TooLarge {
                location: location.with_path(path.as_ref()),
                entry,
                limit,
            },
            other => other,
        }
    }

    /// An I/O error on `path`; a file that is not regular is [`Error::NotRegular`].
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        if kernelab_model::is_not_regular(&source) {
            return Error::NotRegular {
                path: path.to_path_buf(),
            };
        }
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

impl From<object::read::Error> for Error {
    fn from(e: object::read::Error) -> Self {
        Error::Malformed {
            location: Location::default(),
            expected: format!("a valid ELF file ({e})"),
        }
    }
}

/// Shorthand.
pub type Result<T> = std::result::Result<T, Error>;

/// A malformed-input error at byte `offset`.
pub(crate) fn malformed(offset: u64, expected: impl Into<String>) -> Error {
    Error::Malformed {
        location: Location::byte(offset),
        expected: expected.into(),
    }
}

/// Compressed entry `entry` inflates past `limit` bytes.
pub(crate) fn too_large(entry: impl Into<String>, limit: u64) -> Error {
    Error::TooLarge {
        location: Location::default(),
        entry: entry.into(),
        limit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_file_and_offset() {
        let e = malformed(12, "a fatbin container header").with_path("k.fatbin");
        assert_eq!(
            e.to_string(),
            "k.fatbin: byte 12: expected a fatbin container header"
        );
        // The first path attached wins: a container entry keeps its own name.
        let e = malformed(4, "an ELF note")
            .with_path("k.so#1")
            .with_path("k.so");
        assert_eq!(e.to_string(), "k.so#1: byte 4: expected an ELF note");
    }
}
