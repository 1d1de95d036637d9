//! The JSONL sample file: one line per event, written the moment it happens, so an interrupted
//! run loses nothing and can be resumed.

use crate::error::{Error, Result};
use crate::metric::Value;
use kernelab_model::Location;
use kernelab_stats::Order;
use serde::{Deserialize, Serialize};
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

/// What an `ab` run compares, in its header line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AbPlan {
    /// Baseline command line.
    pub baseline: Vec<String>,
    /// Candidate command line.
    pub candidate: Vec<String>,
    /// Metric names, first is primary.
    pub metrics: Vec<String>,
    /// Order of the first pair.
    pub start: Order,
    /// The planned design (absent in older files: analysed with a fixed design).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub design: Option<kernelab_stats::Design>,
}

/// One line of the samples file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    /// The first line: what is being compared.
    Header(crate::run::Header<AbPlan>),
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
    /// The conditions a pair ran under, written before its runs (files of schema version 8
    /// on).
    Fingerprint {
        /// Pair index (per phase).
        pair: usize,
        /// A/A pre-flight.
        aa: bool,
        /// The environment fingerprint.
        fingerprint: kernelab_model::fingerprint::Fingerprint,
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

/// The conditions of the pairs of `records`: the first fingerprint recorded and each field
/// that differed from it later, with the pair it differed at (`None`: no fingerprint was
/// recorded, as in files written before schema version 8).
pub fn conditions(records: &[Record]) -> Option<kernelab_model::fingerprint::Conditions> {
    kernelab_model::fingerprint::Conditions::of(records.iter().filter_map(|r| match r {
        Record::Fingerprint {
            pair,
            aa,
            fingerprint,
        } => Some((
            fingerprint,
            format!("{}pair {pair}", if *aa { "A/A " } else { "" }),
        )),
        _ => None,
    }))
}

/// Appends records to the samples file, flushing each line.
pub type Writer = crate::run::JsonlWriter;

/// Reads a samples file line by line, each line of at most
/// [`MAX_LINE_BYTES`](crate::run::MAX_LINE_BYTES) (a longer one is an error naming the line,
/// refused before it is held whole). A torn last line (the run was killed mid-write: the file
/// does not end with a newline) is ignored; a complete line that is not a record is an error
/// naming the line.
pub fn read(path: &Path) -> Result<Vec<Record>> {
    read_capped(path, crate::run::MAX_LINE_BYTES)
}

/// [`read`] with lines of at most `limit` bytes.
fn read_capped(path: &Path, limit: usize) -> Result<Vec<Record>> {
    let cannot_read = |source| Error::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut lines = crate::run::Lines::open(path, limit).map_err(cannot_read)?;
    let mut out = Vec::new();
    loop {
        let (n, line, complete) = match lines.next_line() {
            Ok(Some(l)) => l,
            Ok(None) => break,
            Err(crate::run::LineError::Read(e)) => return Err(cannot_read(e)),
            Err(crate::run::LineError::TooLong { line, limit }) => {
                return Err(Error::LongLine {
                    location: Location::line(line).with_path(path),
                    limit,
                })
            }
        };
        if !complete || line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Record>(line) {
            Ok(r) => out.push(r),
            Err(source) => {
                return Err(Error::BadLine {
                    location: Location::line(n).with_path(path),
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

    #[test]
    fn a_line_past_the_cap_is_an_error_naming_it_before_it_is_held() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("s.jsonl");
        let rec = Record::Failure {
            pair: 0,
            aa: false,
            slot: Slot::A,
            reason: "x".into(),
        };
        let mut w = Writer::append(&p).expect("opens");
        w.write(&rec).expect("writes");
        drop(w);
        let mut bytes = std::fs::read(&p).expect("reads");
        let fits = bytes.len() - 1;
        assert_eq!(read_capped(&p, fits).expect("fits"), vec![rec.clone()]);
        bytes.extend_from_slice(&[b' '; 101]);
        bytes.push(b'\n');
        std::fs::write(&p, &bytes).expect("writes");
        let e = read_capped(&p, 100).expect_err("long").to_string();
        assert!(
            e.ends_with("s.jsonl: line 2: a line longer than 100 bytes: expected a sample record"),
            "{e}"
        );
        // Torn or not: a last line past the cap is refused too.
        bytes.pop();
        std::fs::write(&p, &bytes).expect("writes");
        assert!(read_capped(&p, 100).is_err());
        assert_eq!(crate::run::MAX_LINE_BYTES, 64 << 20);
    }
}
