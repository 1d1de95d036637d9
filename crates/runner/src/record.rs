//! The JSONL sample file: one line per event, written the moment it happens, so an interrupted
//! run loses nothing and can be resumed.

use crate::error::{Error, Result};
use crate::metric::Value;
use kernelab_model::Location;
use kernelab_stats::Order;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::Path;

/// Which slot a run filled.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
pub enum Slot {
    /// Baseline.
    A,
    /// Candidate.
    B,
}

/// One line of the samples file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    /// The first line: what is being compared.
    Header {
        /// Layout version.
        schema_version: u32,
        /// Baseline command line.
        baseline: Vec<String>,
        /// Candidate command line.
        candidate: Vec<String>,
        /// Metric names, first is primary.
        metrics: Vec<String>,
        /// Order of the first pair.
        start: Order,
        /// The run: kind, id, label, start (absent in files written before runs had ids).
        #[serde(flatten)]
        run: crate::run::Identity,
        /// The planned design (absent in older files: analysed with a fixed design).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        design: Option<kernelab_stats::Design>,
    },
    /// One successful run.
    Run {
        /// Pair index (per phase).
        pair: usize,
        /// A/A pre-flight (candidate slot runs the baseline).
        aa: bool,
        /// Order of its pair.
        order: Order,
        /// Slot.
        slot: Slot,
        /// Metric values.
        values: Vec<Value>,
        /// Exit code.
        exit_code: i32,
    },
    /// A failed run (non-zero exit, timeout, metric missing); never dropped silently.
    Failure {
        /// Pair index.
        pair: usize,
        /// A/A pre-flight.
        aa: bool,
        /// Slot.
        slot: Slot,
        /// What went wrong.
        reason: String,
    },
}

/// Appends records to the samples file, flushing each line.
pub type Writer = crate::run::JsonlWriter;

/// Reads a samples file. A torn last line (the run was killed mid-write: the file does not end
/// with a newline) is ignored, whatever bytes it holds; a complete line that is not a record is
/// an error naming the line.
pub fn read(path: &Path) -> Result<Vec<Record>> {
    let cannot_read = |source| Error::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut bytes = Vec::new();
    kernelab_model::open_regular(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(cannot_read)?;
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut out = Vec::new();
    for (i, line) in bytes[..complete].split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Record>(line) {
            Ok(r) => out.push(r),
            Err(source) => {
                return Err(Error::BadLine {
                    location: Location::line(i as u64 + 1).with_path(path),
                    source,
                })
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torn_last_line_with_invalid_utf8_is_ignored_and_cut_on_append() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("s.jsonl");
        let mut w = Writer::append(&p).expect("opens");
        let rec = Record::Failure {
            pair: 0,
            aa: false,
            slot: Slot::A,
            reason: "x".into(),
        };
        w.write(&rec).expect("writes");
        drop(w);
        let mut bytes = std::fs::read(&p).expect("reads");
        bytes.extend_from_slice(b"{\"kind\":\"run\",\"pair\":1,\xff\xfe");
        std::fs::write(&p, &bytes).expect("writes");
        assert_eq!(read(&p).expect("resumes"), vec![rec.clone()]);
        let mut w = Writer::append(&p).expect("reopens");
        w.write(&rec).expect("writes");
        assert_eq!(read(&p).expect("reads"), vec![rec.clone(), rec]);
    }

    #[test]
    fn a_complete_bad_line_is_an_error_naming_it() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, b"{\"kind\":\"nonsense\"}\n").expect("writes");
        let e = read(&p).expect_err("bad line").to_string();
        assert!(
            e.ends_with("s.jsonl: line 1: expected a sample record"),
            "{e}"
        );
    }
}
