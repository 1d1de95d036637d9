//! Where a recorded result came from.

use serde::{Deserialize, Serialize};

/// One input file of a recorded command.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InputFile {
    /// Path as given.
    pub path: String,
    /// SHA-256 of the content (hex), when the file could be read.
    pub sha256: Option<String>,
    /// Size in bytes.
    pub bytes: Option<u64>,
}

/// The git state of the working directory, when it is a repository.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GitState {
    /// Commit hash.
    pub commit: String,
    // Also true when a clean work tree cannot be verified without running git (docs/json.md:
    // false only when known clean); the published description of schema v6 stays as it is.
    /// True when tracked files differ from the commit.
    pub dirty: bool,
}

/// How a result was produced: enough to reproduce it and to know what it rests on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Provenance {
    /// The exact command line (argv).
    pub argv: Vec<String>,
    /// kernelab version.
    pub kernelab_version: String,
    /// Input files with their hashes.
    pub inputs: Vec<InputFile>,
    /// Host name.
    pub host: Option<String>,
    /// GPU name, driver and clocks, where the inputs or the machine say.
    pub gpu: Option<String>,
    /// The working directory's git state.
    pub git: Option<GitState>,
    /// Start, RFC 3339 UTC.
    pub started: String,
    /// End, RFC 3339 UTC.
    pub finished: String,
}
