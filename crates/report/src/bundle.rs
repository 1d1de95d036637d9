//! The evidence bundle: a directory of versioned JSON records, one per recorded command, each
//! with its provenance. Records are written atomically and never replace an existing one.

use crate::documents::Evidence;
use kernelab_model::{InputFile, Provenance, SCHEMA_VERSION};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Why a bundle could not be read. Every variant names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BundleError {
    /// The folder or a record could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The folder or record file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file is not a kernelab record.
    #[error("{path}: line {line}: expected {expected} ({message})")]
    Malformed {
        /// The record file.
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// What was expected.
        expected: String,
        /// The parser's words.
        message: String,
    },
    /// The record's result lacks a field its kind needs, or holds a value of the wrong type.
    #[error("{path}: `result`: expected a `{kind}` result ({message})")]
    Result {
        /// The record file.
        path: PathBuf,
        /// The record's kind.
        kind: String,
        /// The parser's words (names the field).
        message: String,
    },
    /// The record was written with another layout version.
    #[error("{path}: record schema_version {found}; this kernelab reads schema_version {SCHEMA_VERSION} (re-record it with this kernelab)")]
    Version {
        /// The record file.
        path: PathBuf,
        /// Its version.
        found: u32,
    },
}

/// A record read back: its file, the record and its typed result.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The record file.
    pub path: PathBuf,
    /// The record as stored.
    pub record: Record,
    /// Its result in the type its kind names.
    pub evidence: Evidence,
}

/// One recorded command.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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

/// Writes `record` into `dir` as `NNNN-<kind>.json` (the next free number), atomically: the
/// content goes to a temporary file that is then linked into place, which fails rather than
/// replace a record that already exists.
pub fn write(dir: &Path, record: &Record) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let text = serde_json::to_string_pretty(record).map_err(std::io::Error::other)? + "\n";
    let tmp = dir.join(format!(
        ".record-{}-{}.tmp",
        std::process::id(),
        record.kind
    ));
    std::fs::write(&tmp, text)?;
    let mut n = std::fs::read_dir(dir)?
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .split('-')
                .next()?
                .parse::<u32>()
                .ok()
        })
        .max()
        .map_or(1, |m| m + 1);
    loop {
        let target = dir.join(format!("{n:04}-{}.json", record.kind));
        match std::fs::hard_link(&tmp, &target) {
            Ok(()) => {
                std::fs::remove_file(&tmp)?;
                return Ok(target);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => n += 1,
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                return Err(e);
            }
        }
    }
}

/// Reads every record of a bundle, in record order, each result into the type its kind names.
/// Files that are not records, records of another layout version and results that lack a field
/// are errors naming the file.
pub fn read(dir: &Path) -> Result<Vec<Entry>, BundleError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BundleError::Io { path, source }
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(io(&f))?;
        let mut record: Record =
            serde_json::from_str(&text).map_err(|e| BundleError::Malformed {
                path: f.clone(),
                line: e.line(),
                expected: "a kernelab record".into(),
                message: e.to_string(),
            })?;
        if record.schema_version != SCHEMA_VERSION {
            return Err(BundleError::Version {
                path: f,
                found: record.schema_version,
            });
        }
        if record.label.is_empty() {
            record.label = default_label(&record.provenance.inputs, &record.kind);
        }
        let evidence = match Evidence::read(&record.kind, &record.result) {
            None => {
                return Err(BundleError::Result {
                    path: f.clone(),
                    kind: record.kind.clone(),
                    message: "a record kind this kernelab does not know".into(),
                })
            }
            Some(Ok(e)) => e,
            Some(Err(e)) => {
                return Err(BundleError::Result {
                    path: f.clone(),
                    kind: record.kind.clone(),
                    message: e.to_string(),
                })
            }
        };
        out.push(Entry {
            path: f,
            record,
            evidence,
        });
    }
    Ok(out)
}

/// Reads one file that is either a bundle record or a command's `--format json` document, into
/// its kind and typed result. A record's layout version is checked as in [`read`]; a document is
/// checked by reading it into the type its kind names.
pub fn read_one(path: &Path) -> Result<(String, Evidence), BundleError> {
    let text = std::fs::read_to_string(path).map_err(|source| BundleError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let malformed = |line: usize, message: String| BundleError::Malformed {
        path: path.to_path_buf(),
        line,
        expected: "a kernelab record or JSON document".into(),
        message,
    };
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| malformed(e.line(), e.to_string()))?;
    let (kind, result) = if value.get("provenance").is_some() && value.get("result").is_some() {
        let record: Record =
            serde_json::from_value(value).map_err(|e| malformed(e.line(), e.to_string()))?;
        if record.schema_version != SCHEMA_VERSION {
            return Err(BundleError::Version {
                path: path.to_path_buf(),
                found: record.schema_version,
            });
        }
        (record.kind, record.result)
    } else {
        let kind = value
            .get("kind")
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| malformed(1, "no `kind` field".into()))?
            .to_string();
        (kind, value)
    };
    let result_error = |message: String| BundleError::Result {
        path: path.to_path_buf(),
        kind: kind.clone(),
        message,
    };
    let evidence = match Evidence::read(&kind, &result) {
        None => {
            return Err(result_error(
                "a record kind this kernelab does not know".into(),
            ))
        }
        Some(r) => r.map_err(|e| result_error(e.to_string()))?,
    };
    Ok((kind, evidence))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(path: &str) -> InputFile {
        InputFile {
            path: path.into(),
            ..InputFile::default()
        }
    }

    #[test]
    fn default_labels_are_file_stems() {
        assert_eq!(
            default_label(&[input("h200_pair/gdn_w4s3_run1.json.gz")], "compare"),
            "gdn_w4s3_run1"
        );
        assert_eq!(
            default_label(
                &[
                    input("kernel/recompute_w4s3_vs_w8s2.toml"),
                    input("x.cubin")
                ],
                "kernel_run"
            ),
            "recompute_w4s3_vs_w8s2"
        );
        assert_eq!(default_label(&[], "ab"), "ab");
        assert_eq!(default_label(&[input(".hidden")], "ab"), "ab");
    }
}
