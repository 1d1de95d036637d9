//! The serve samples file (JSONL): a header with the spec, then each server start, each
//! measured request, each completed point and each stop, appended as they happen.

use super::error::{io, Error, Result};
use super::server::Ending;
use super::spec::Spec;
use super::telemetry::Telemetry;
use super::workload::{Guard, RequestOutcome};
use crate::record::Slot;
use kernelab_model::Location;
use kernelab_stats::Order;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Layout version of the serve samples file.
pub const SCHEMA: u32 = 1;

/// What a serve run plans, in its header line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServePlan {
    /// The spec, as read.
    pub spec: Box<Spec>,
    /// SHA-256 of the spec file.
    pub spec_sha256: String,
    /// The spec's folder (servers start there unless their `cwd` says otherwise).
    pub spec_dir: PathBuf,
    /// Order of round 0.
    pub start: Order,
}

/// One line of the serve samples file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ServeRecord {
    /// The first line.
    Header(crate::run::Header<ServePlan>),
    /// A server start (healthy or not).
    Start {
        /// Round.
        round: usize,
        /// Which server.
        slot: Slot,
        /// Seconds to healthy; `None` when the start failed.
        health_s: Option<f64>,
        /// Why the start failed.
        error: Option<String>,
        /// Its log.
        log: String,
    },
    /// One measured request.
    Request {
        /// Round.
        round: usize,
        /// Which server.
        slot: Slot,
        /// Case index.
        case: usize,
        /// Concurrency.
        concurrency: usize,
        /// What happened.
        #[serde(flatten)]
        outcome: RequestOutcome,
    },
    /// A case at one concurrency completed on a live server.
    Point {
        /// Round.
        round: usize,
        /// Which server.
        slot: Slot,
        /// Case index.
        case: usize,
        /// Concurrency.
        concurrency: usize,
        /// Wall time of its measured requests.
        wall_s: f64,
        /// The client guard.
        guard: Guard,
        /// `warmup = "steady"`: whether its warm-up became steady before the cap.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        steady: Option<bool>,
        /// The server's own metrics over the point (`metrics_url`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        server_metrics: Option<super::server_metrics::PointMetrics>,
        /// The GPU energy of the server's GPUs over the point, millijoules.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        energy_mj: Option<u64>,
        /// Why the energy is unavailable, when it is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        energy_unavailable: Option<String>,
    },
    /// A server stopped.
    Stop {
        /// Round.
        round: usize,
        /// Which server.
        slot: Slot,
        /// How it ended.
        ending: Ending,
        /// Why the round failed for it, if it did.
        failure: Option<String>,
        /// Its log.
        log: String,
        /// GPU telemetry while it ran.
        #[serde(default)]
        telemetry: Option<Telemetry>,
    },
    /// A planned look after a round (`[analysis] primary`).
    Look {
        /// What the look found.
        #[serde(flatten)]
        look: kernelab_model::serve::ServeLook,
        /// Why the run stops here; `None`: it goes on.
        stop: Option<String>,
    },
}

/// Appends records to a run's samples, one flushed line each (through the run's
/// [`JsonlWriter`](crate::run::JsonlWriter)).
pub struct SampleWriter<'a>(&'a mut crate::run::JsonlWriter);

impl<'a> SampleWriter<'a> {
    /// Writes serve records through `w`.
    pub fn new(w: &'a mut crate::run::JsonlWriter) -> Self {
        SampleWriter(w)
    }

    /// The samples file written.
    pub fn path(&self) -> &Path {
        &self.0.path
    }

    /// Writes one record.
    pub fn write(&mut self, r: &ServeRecord) -> Result<()> {
        let what = format!("{}: cannot write the samples file", self.0.path.display());
        self.0.write(r).map_err(io(what))
    }
}

/// Longest line of a serve samples file: 64 MiB.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// Reads a serve samples file (a regular file; a FIFO is refused without blocking), line by
/// line with each line capped at [`MAX_LINE_BYTES`]; a torn last line is ignored. The header's
/// spec is validated like a spec file ([`Spec::check_resumed`]).
pub fn read(path: &Path) -> Result<Vec<ServeRecord>> {
    use std::io::{BufRead, Read};
    let cannot = || format!("{}: cannot read the samples file", path.display());
    let f = kernelab_model::open_regular(path).map_err(io(cannot()))?;
    let mut r = std::io::BufReader::with_capacity(1 << 16, f);
    let mut out = Vec::new();
    let mut line = Vec::new();
    let mut n: u64 = 0;
    loop {
        line.clear();
        let got = (&mut r)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(io(cannot()))?;
        if got == 0 {
            break;
        }
        n += 1;
        let complete = line.last() == Some(&b'\n');
        if !complete && line.len() > MAX_LINE_BYTES {
            return Err(Error::Samples {
                location: Location::line(n).with_path(path),
                message: format!("line longer than {MAX_LINE_BYTES} bytes"),
            });
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<ServeRecord>(&line) {
            Ok(rec) => {
                if let ServeRecord::Header(h) = &rec {
                    if out.is_empty() {
                        h.plan.spec.check_resumed(path, n)?;
                    }
                }
                out.push(rec)
            }
            // A torn last line (a killed run) is ignored.
            Err(_) if !complete => {}
            Err(e) => {
                return Err(Error::Samples {
                    location: Location::line(n).with_path(path),
                    message: format!("expected a serve sample record ({e})"),
                })
            }
        }
    }
    match out.first() {
        Some(ServeRecord::Header(_)) => Ok(out),
        _ => Err(Error::Samples {
            location: Location::line(1).with_path(path),
            message: "expected a serve header record; not a kernelab serve samples file".into(),
        }),
    }
}
