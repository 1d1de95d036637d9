//! Errors of the kernel launcher.

use kernelab_model::Location;
use std::fmt;
use std::path::{Path, PathBuf};

/// A launcher error: a spec problem located in its file, a file that cannot be read, or a GPU
/// API failure.
///
/// A wrapped cause (an I/O error, a JSON error, the GPU error under a failed load) is the
/// error's [`source`](std::error::Error::source), not part of its message: print the chain
/// (`{:#}` of an `anyhow::Error`) to show all of it.
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
    /// The spec, or a file it names, is not what the launcher needs: invalid TOML (with its
    /// line), an unknown size, a missing setting, a tensor file of the wrong size.
    #[error("{}{message}", at(location))]
    Spec {
        /// The spec (or the file it names), and the line where known.
        location: Location,
        /// What is wrong, and what was expected.
        message: String,
    },
    /// Triton compile metadata that is not valid JSON of the expected shape.
    #[error("{location}: not Triton compile metadata")]
    Triton {
        /// The metadata file and line.
        location: Location,
        /// What the JSON parser said.
        #[source]
        source: serde_json::Error,
    },
    /// A tensor file (initialiser or oracle) could not be read.
    #[error(transparent)]
    Tensor(#[from] kernelab_tensor::Error),
    /// The GPU runtime of the spec's backend is not installed.
    #[error("no {what}: {library} is not installed on this machine (a GPU and its driver are needed: install the NVIDIA driver for CUDA, ROCm for HIP, or run on a GPU machine)")]
    NoRuntime {
        /// `CUDA driver` or `HIP runtime`.
        what: &'static str,
        /// The library looked for.
        library: &'static str,
    },
    /// The CUDA driver lacks an entry point the launcher binds.
    #[error("the CUDA driver is older than CUDA 12.8 (a driver symbol is missing)")]
    OldDriver,
    /// A GPU API call failed.
    #[error("{call}: {message}")]
    Gpu {
        /// The API and the operation (`CUDA launch`, `HIP hipMalloc`).
        call: String,
        /// What the API said.
        message: String,
    },
    /// The code object has no kernel of this name.
    #[error("kernel `{symbol}` not found in the code object")]
    NoKernel {
        /// The symbol looked up.
        symbol: String,
        /// The API's answer.
        #[source]
        source: Box<Error>,
    },
    /// A build's code object could not be loaded.
    #[error("{}: cannot load", path.display())]
    Load {
        /// The code object.
        path: PathBuf,
        /// Why.
        #[source]
        source: Box<Error>,
    },
    /// A build's kernel failed while running.
    #[error("{label} kernel `{symbol}` failed during the {phase}")]
    Kernel {
        /// `baseline` or `candidate`.
        label: &'static str,
        /// The kernel symbol.
        symbol: String,
        /// `correctness gates`, `graph replay gate`, `warm-up` or `timing`.
        phase: &'static str,
        /// The GPU error.
        #[source]
        source: Box<Error>,
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
    /// A handle or allocation the launcher made itself is missing (a launcher bug).
    #[error("internal error: {0}")]
    Internal(String),
}

/// `location: ` where the location names something, else nothing.
fn at(location: &Location) -> String {
    if *location == Location::default() {
        String::new()
    } else {
        format!("{location}: ")
    }
}

impl Error {
    /// A spec problem, not yet placed in a file.
    pub(crate) fn spec(message: impl Into<String>) -> Self {
        Error::Spec {
            location: Location::default(),
            message: message.into(),
        }
    }
    /// A spec problem in `path`.
    pub(crate) fn spec_in(path: &Path, message: impl Into<String>) -> Self {
        Error::Spec {
            location: Location::default().with_path(path),
            message: message.into(),
        }
    }
    /// A GPU API failure.
    pub(crate) fn gpu(call: impl Into<String>, message: impl fmt::Display) -> Self {
        Error::Gpu {
            call: call.into(),
            message: message.to_string(),
        }
    }
    /// This spec problem with `what: ` before its message (other errors unchanged).
    pub(crate) fn within(self, what: impl fmt::Display) -> Self {
        match self {
            Error::Spec { location, message } => Error::Spec {
                location,
                message: format!("{what}: {message}"),
            },
            other => other,
        }
    }
    /// This spec problem placed in `path` when it names no file yet (other errors unchanged).
    pub(crate) fn with_path(self, path: Option<&Path>) -> Self {
        match (self, path) {
            (Error::Spec { location, message }, Some(p)) => Error::Spec {
                location: location.with_path(p),
                message,
            },
            (other, _) => other,
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_messages_name_the_file_once_and_skip_an_empty_location() {
        let e = Error::spec("unknown size `Q`").within("argument `x` shape");
        assert_eq!(e.to_string(), "argument `x` shape: unknown size `Q`");
        let e = e
            .with_path(Some(Path::new("k.toml")))
            .with_path(Some(Path::new("other.toml")));
        assert_eq!(
            e.to_string(),
            "k.toml: argument `x` shape: unknown size `Q`"
        );
    }
}
