//! The evidence bundle: a directory of versioned JSON records, one per recorded command, each
//! with its provenance. Records are written atomically and never replace an existing one.

use crate::documents::Evidence;
use crate::Error;
use kernelab_model::{Provenance, SCHEMA_VERSION};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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
    /// How it was produced.
    pub provenance: Provenance,
    /// The command's JSON document (as `--format json` prints it).
    pub result: serde_json::Value,
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
    let mut n: Option<u32> = std::fs::read_dir(dir)?
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
        .map_or(Some(1), |m| m.checked_add(1));
    let result = loop {
        let Some(seq) = n else {
            break Err(std::io::Error::other(
                "record numbers are exhausted (a record is numbered 4294967295); start a new bundle",
            ));
        };
        let target = dir.join(format!("{seq:04}-{}.json", record.kind));
        // Linking creates the name only if it is free, so concurrent writers never share one.
        match std::fs::hard_link(&tmp, &target) {
            Ok(()) => break Ok(target),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => n = seq.checked_add(1),
            Err(e) => break Err(e),
        }
    };
    let _ = std::fs::remove_file(&tmp);
    result
}

/// The largest record file read (a record is a command's JSON document: kilobytes to megabytes).
pub const MAX_RECORD_BYTES: u64 = 1 << 30;

/// A record file's text: a regular file of at most [`MAX_RECORD_BYTES`], in UTF-8.
fn read_record_text(path: &Path) -> std::io::Result<String> {
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

/// Reads every record of a bundle, in record order, each result into the type its kind names.
/// Files that are not records, records of another layout version and results that lack a field
/// are errors naming the file.
pub fn read(dir: &Path) -> Result<Vec<Entry>, Error> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Io { path, source }
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
        let text = read_record_text(&f).map_err(io(&f))?;
        let record: Record = serde_json::from_str(&text).map_err(|e| Error::Malformed {
            path: f.clone(),
            line: e.line(),
            expected: "a kernelab record".into(),
            message: e.to_string(),
        })?;
        if record.schema_version != SCHEMA_VERSION {
            return Err(Error::Version {
                path: f,
                found: record.schema_version,
            });
        }
        let evidence = match Evidence::read(&record.kind, &record.result) {
            None => {
                return Err(Error::Result {
                    path: f.clone(),
                    kind: record.kind.clone(),
                    message: "a record kind this kernelab does not know".into(),
                })
            }
            Some(Ok(e)) => e,
            Some(Err(e)) => {
                return Err(Error::Result {
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
