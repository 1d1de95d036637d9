//! The evidence bundle: a directory of versioned JSON records, one per recorded command, each
//! with its provenance. Records are written atomically and never replace an existing one.

use kernelab_model::Provenance;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Version of the record layout.
pub const RECORD_SCHEMA_VERSION: u32 = 1;

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

/// Reads every record of a bundle, in record order. Files that are not records are an error
/// naming the file.
pub fn read(dir: &Path) -> Result<Vec<(PathBuf, Record)>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
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
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        let r: Record = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}: line {}: expected a kernelab record ({e})",
                f.display(),
                e.line()
            )
        })?;
        if r.schema_version > RECORD_SCHEMA_VERSION {
            return Err(format!("{}: record schema_version {} is newer than this kernelab reads ({RECORD_SCHEMA_VERSION})", f.display(), r.schema_version));
        }
        out.push((f, r));
    }
    Ok(out)
}
