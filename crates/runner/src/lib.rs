//! Things that run programs for kernelab: the process A/B runner (fresh processes in ABBA
//! pairs, an A/A pre-flight, metrics from wall time or the program's output, every run appended
//! to a JSONL samples file so that an interrupted run can be resumed), the sweep's worker pool
//! (one child process per GPU) and its Slurm job arrays.
//!
//! ```
//! use kernelab_runner::metric::{extract, MetricSpec, Source};
//! let spec = MetricSpec { name: "wall".into(), source: Source::Wall, direction: Default::default() };
//! assert_eq!(extract(&spec, "", 1.5), Some(1.5));
//! ```
#![deny(missing_docs)]

pub mod counters;
mod error;
pub mod metric;
pub mod pairs;
pub mod pool;
pub mod preflight;
pub mod process;
pub mod provenance;
pub mod record;
pub mod run;
mod runner;
pub mod serve;
pub mod slurm;
pub mod sweep;

pub use error::{Error, Result};

/// One step of a long run, for progress displays: `done` of `planned` (pairs, rounds), and the
/// line a person reads.
#[derive(Clone, Copy, Debug)]
pub struct Step<'a> {
    /// Steps done.
    pub done: u64,
    /// Steps planned (the most the run may take).
    pub planned: u64,
    /// What the steps are (`pairs`, `A/A pairs`, `rounds`).
    pub unit: &'static str,
    /// The progress line.
    pub message: &'a str,
}

impl<'a> Step<'a> {
    /// `done` of `planned` `unit`, with its line.
    pub fn new(done: usize, planned: usize, unit: &'static str, message: &'a str) -> Step<'a> {
        Step {
            done: done as u64,
            planned: planned as u64,
            unit,
            message,
        }
    }
}
pub use runner::{
    pairs_from, run_ab, timeout_after_warmup, AbResult, AbSettings, Executor, MetricAnalysis,
    ProcessExecutor, RunOutcome,
};
