//! The JSONL sample file: one line per event, written the moment it happens, so an interrupted
//! run loses nothing and can be resumed.

use crate::error::{Error, Result};
use crate::metric::Value;
use kernelab_model::Location;
use kernelab_stats::Order;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// Which slot a run filled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Slot {
    /// Baseline.
    A,
    /// Candidate.
    B,
}

/// One line of the samples file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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

/// Appends records to a JSONL file, flushing each line.
pub struct Writer {
    file: std::fs::File,
    /// The file.
    pub path: PathBuf,
}

impl Writer {
    /// Opens `path` for appending (creating it). A torn last line (the previous run was killed
    /// mid-write) is cut off first, so that new records start on a line of their own.
    pub fn append(path: &Path) -> std::io::Result<Self> {
        if let Ok(bytes) = std::fs::read(path) {
            if !bytes.is_empty() && bytes.last() != Some(&b'\n') {
                let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(path)?
                    .set_len(keep as u64)?;
            }
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Writer {
            file,
            path: path.to_path_buf(),
        })
    }
    /// Writes one record and flushes it to the OS.
    pub fn write(&mut self, r: &Record) -> std::io::Result<()> {
        let mut line = serde_json::to_string(r).map_err(std::io::Error::other)?;
        line.push('\n');
        self.file.write_all(line.as_bytes())?;
        self.file.flush()
    }
}

/// Reads a samples file; a torn last line (the run was killed mid-write) is ignored.
pub fn read(path: &Path) -> Result<Vec<Record>> {
    let cannot_read = |source| Error::Read {
        path: path.to_path_buf(),
        source,
    };
    let f = std::fs::File::open(path).map_err(cannot_read)?;
    let lines: Vec<String> = std::io::BufReader::new(f)
        .lines()
        .collect::<std::io::Result<_>>()
        .map_err(cannot_read)?;
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Record>(l) {
            Ok(r) => out.push(r),
            Err(_) if i + 1 == lines.len() => {}
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
