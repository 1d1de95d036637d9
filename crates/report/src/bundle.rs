//! The evidence bundle: a directory of versioned JSON records, one per recorded command, each
//! with its provenance. Records are written atomically and never replace an existing one.

use crate::documents::Evidence;
use crate::kinds::Extra;
pub use crate::record::{default_label, Record};
use crate::Error;
use kernelab_model::Provenance;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A record read back: its file, the record and its typed result.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The record file.
    pub path: PathBuf,
    /// The record's envelope (its result is [`Entry::evidence`]).
    pub record: RecordHead,
    /// Its result in the type its kind names.
    pub evidence: Evidence,
}

/// A record's envelope without its result: what a reader keeps beside the typed evidence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RecordHead {
    /// Layout version.
    pub schema_version: u32,
    /// The record kind.
    pub kind: String,
    /// The label ([`default_label`] of the inputs when it was written without one).
    #[serde(default)]
    pub label: String,
    /// How it was produced.
    pub provenance: Provenance,
}

/// A record as read: the envelope, and the result's JSON text left unparsed until its layout
/// version is known (a current record is read straight into its type, with no JSON tree of a
/// large result in memory).
#[derive(Deserialize)]
struct RawRecord<'a> {
    #[serde(flatten)]
    head: RecordHead,
    #[serde(borrow)]
    result: &'a serde_json::value::RawValue,
}

/// Writes `record` into `dir` as `NNNN-<kind>.json` (the next free number), atomically: the
/// content goes to a temporary file that is then linked into place, which fails rather than
/// replace a record that already exists.
pub fn write(dir: &Path, record: &Record) -> std::io::Result<PathBuf> {
    use std::io::Write;
    kernelab_model::create_dir_all(dir)?;
    let text = serde_json::to_string_pretty(record).map_err(std::io::Error::other)? + "\n";
    let first: u32 = kernelab_model::list_dir(dir, MAX_BUNDLE_ENTRIES)?
        .iter()
        .filter_map(|e| e.name.to_str()?.split('-').next()?.parse::<u32>().ok())
        .max()
        .map_or(Some(1), |m| m.checked_add(1))
        .ok_or_else(|| {
            std::io::Error::other(
                "record numbers are exhausted (a record is numbered 4294967295); start a new bundle",
            )
        })?;
    let kind = record.kind.clone();
    // A temporary file of an unpredictable name (O_EXCL), linked to the first free number.
    let mut f = kernelab_model::NewFile::create_in(dir)?;
    f.write_all(text.as_bytes())?;
    f.finish_first_free((first..=u32::MAX).map(|seq| format!("{seq:04}-{kind}.json")))
}

/// The most entries a bundle folder may hold (more is an error, never a shorter list).
pub const MAX_BUNDLE_ENTRIES: usize = 1_000_000;

/// The largest record file read (a record is a command's JSON document: kilobytes to megabytes).
/// Reading and rendering one takes up to about ten times its size, so this keeps a report of a
/// hostile bundle under 2 GiB (docs/report.md).
pub const MAX_RECORD_BYTES: u64 = 128 << 20;
/// The longest label a record may carry (labels are repeated in every view of a report).
pub const MAX_LABEL_BYTES: usize = 4096;

/// A record file's text: a regular file of at most [`MAX_RECORD_BYTES`], in UTF-8.
pub fn read_record_text(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let f = kernelab_model::open_regular(path)?;
    if f.metadata()?.len() > MAX_RECORD_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than {MAX_RECORD_BYTES} bytes; not a kernelab record"
        )));
    }
    let mut text = String::new();
    f.take(MAX_RECORD_BYTES).read_to_string(&mut text)?;
    Ok(text)
}

/// A record file of a bundle that could not be read, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Unreadable {
    /// The file.
    pub path: PathBuf,
    /// What was wrong, naming the field or line where the reader found it.
    pub reason: String,
}

/// Reads every record of a bundle, in record order, each result into the type its kind names.
/// Files that are not records, records of another layout version and results that lack a field
/// are errors naming the file.
pub fn read(dir: &Path) -> Result<Vec<Entry>, Error> {
    let (entries, bad) = read_all(dir)?;
    match bad.into_iter().next() {
        Some(u) => Err(u.error),
        None => Ok(entries),
    }
}

/// A record that could not be read: its file and the error.
pub struct Bad {
    /// The error, naming the file.
    pub error: Error,
}

impl Bad {
    /// The file and the reason, for a report that lists it and renders the rest.
    pub fn unreadable(&self) -> Unreadable {
        let path = match &self.error {
            Error::Io { path, .. }
            | Error::Malformed { path, .. }
            | Error::Version { path, .. }
            | Error::Result { path, .. } => path.clone(),
            _ => PathBuf::new(),
        };
        let text = self.error.to_string();
        let prefix = format!("{}: ", path.display());
        Unreadable {
            reason: text.strip_prefix(&prefix).unwrap_or(&text).to_string(),
            path,
        }
    }
}

/// Reads every record of a bundle that can be read, in record order, and the files that could
/// not be (one unreadable record never hides the rest). Fails only when the folder itself
/// cannot be listed.
pub fn read_all(dir: &Path) -> Result<(Vec<Entry>, Vec<Bad>), Error> {
    read_all_in(dir, &[])
}

/// [`read_all`], reading records of the kinds of `extra` too.
pub fn read_all_in(dir: &Path, extra: &[Extra]) -> Result<(Vec<Entry>, Vec<Bad>), Error> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Io { path, source }
    };
    let mut files: Vec<PathBuf> = kernelab_model::list_dir(dir, MAX_BUNDLE_ENTRIES)
        .map_err(io(dir))?
        .into_iter()
        .filter(|e| !e.is_dir)
        .map(|e| dir.join(e.name))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    files.sort();
    let mut out = Vec::new();
    let mut bad = Vec::new();
    for f in files {
        match read_entry_in(&f, extra) {
            Ok(e) => out.push(e),
            Err(error) => bad.push(Bad { error }),
        }
    }
    Ok((out, bad))
}

/// Reads one record file of a bundle.
pub fn read_entry(f: &Path) -> Result<Entry, Error> {
    read_entry_in(f, &[])
}

/// [`read_entry`], reading a record of a kind of `extra` too.
pub fn read_entry_in(f: &Path, extra: &[Extra]) -> Result<Entry, Error> {
    let text = read_record_text(f).map_err(|source| Error::Io {
        path: f.to_path_buf(),
        source,
    })?;
    let malformed = |e: serde_json::Error| Error::Malformed {
        path: f.to_path_buf(),
        line: e.line(),
        expected: "a kernelab record".into(),
        message: e.to_string(),
    };
    let raw: RawRecord<'_> = serde_json::from_str(&text).map_err(malformed)?;
    let mut record = raw.head;
    let read = if record.schema_version == kernelab_model::SCHEMA_VERSION {
        Evidence::read_str_in(extra, &record.kind, raw.result.get())
    } else {
        let mut result: serde_json::Value =
            serde_json::from_str(raw.result.get()).map_err(malformed)?;
        crate::upgrade::upgrade(&mut record.kind, record.schema_version, &mut result).map_err(
            |message| Error::Version {
                path: f.to_path_buf(),
                message,
            },
        )?;
        Evidence::read_in(extra, &record.kind, &result)
    };
    if record.label.is_empty() {
        record.label = default_label(&record.provenance.inputs, &record.kind);
    }
    if record.label.len() > MAX_LABEL_BYTES {
        return Err(Error::Io {
            path: f.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "`label`: {} bytes, longer than the {MAX_LABEL_BYTES} a label may have",
                    record.label.len()
                ),
            ),
        });
    }
    let evidence = match read {
        None => {
            return Err(Error::Result {
                path: f.to_path_buf(),
                kind: record.kind.clone(),
                message: "a record kind this kernelab does not know".into(),
            })
        }
        Some(Ok(e)) => e,
        Some(Err(e)) => {
            return Err(Error::Result {
                path: f.to_path_buf(),
                kind: record.kind.clone(),
                message: e.to_string(),
            })
        }
    };
    evidence.kind().consistent().map_err(|why| Error::Result {
        path: f.to_path_buf(),
        kind: record.kind.clone(),
        message: format!("the record contradicts itself: {why}"),
    })?;
    Ok(Entry {
        path: f.to_path_buf(),
        record,
        evidence,
    })
}

/// Reads one file that is either a bundle record or a command's `--format json` document, into
/// its kind and typed result. A record's layout version is checked as in [`read`]; a document is
/// checked by reading it into the type its kind names.
pub fn read_one(path: &Path) -> Result<(String, Evidence), Error> {
    let text = read_record_text(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let malformed = |line: usize, message: String| Error::Malformed {
        path: path.to_path_buf(),
        line,
        expected: "a kernelab record or JSON document".into(),
        message,
    };
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| malformed(e.line(), e.to_string()))?;
    let (mut kind, version, mut result) =
        if value.get("provenance").is_some() && value.get("result").is_some() {
            let record: Record =
                serde_json::from_value(value).map_err(|e| malformed(e.line(), e.to_string()))?;
            (record.kind, record.schema_version, record.result)
        } else {
            let kind = value
                .get("kind")
                .and_then(serde_json::Value::as_str)
                .ok_or_else(|| malformed(1, "no `kind` field".into()))?
                .to_string();
            let version = value
                .get("schema_version")
                .and_then(serde_json::Value::as_u64)
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| malformed(1, "no integer `schema_version` field".into()))?;
            (kind, version, value)
        };
    crate::upgrade::upgrade(&mut kind, version, &mut result).map_err(|message| Error::Version {
        path: path.to_path_buf(),
        message,
    })?;
    let result_error = |message: String| Error::Result {
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
    use kernelab_model::InputFile;

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
