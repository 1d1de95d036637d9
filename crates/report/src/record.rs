//! The envelope of one recorded command: its kind, label, provenance and result. Imports
//! nothing of the report, so the schemas and the bundle both stand on it.

use kernelab_model::{InputFile, Provenance};
use serde::{Deserialize, Serialize};

/// One recorded command.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Record {
    /// Layout version.
    pub schema_version: u32,
    /// What the result is: `profile`, `compare`, `check_bitwise`, `code_diff`, `ab`, …
    pub kind: String,
    /// The change or experiment the record belongs to (`--label`); records written without one
    /// read back with [`default_label`] of their inputs.
    #[serde(default)]
    pub label: String,
    /// How it was produced.
    pub provenance: Provenance,
    /// The command's JSON document (as `--format json` prints it).
    pub result: serde_json::Value,
}

/// The label of a record made without `--label`: the first input's file name up to its first
/// `.` (`gdn_w4s3_run1.json.gz` → `gdn_w4s3_run1`), or the record kind when it has no input.
pub fn default_label(inputs: &[InputFile], kind: &str) -> String {
    inputs
        .first()
        .and_then(|i| {
            let name = i.path.rsplit(['/', '\\']).next()?;
            let stem = name.split('.').next()?;
            (!stem.is_empty()).then(|| stem.to_string())
        })
        .unwrap_or_else(|| kind.to_string())
}
