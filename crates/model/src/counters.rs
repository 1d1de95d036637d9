//! The result of `kernelab counters`: hardware counters per kernel, one metric group per fresh
//! profiler process, each repeated, summarised per side and compared baseline versus candidate.

use kernelab_stats::Change;
use serde::{Deserialize, Serialize};

/// Why one profiler process gave no counters (or fewer than asked).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The profiler program was not found.
    MissingBinary,
    /// The profiler may not read GPU performance counters here (`ERR_NVGPUCTRPERM`).
    Permission,
    /// The profiler does not support this GPU (or found none).
    UnsupportedGpu,
    /// The process ended by a signal.
    Signal,
    /// The process was killed at the timeout.
    Timeout,
    /// The process exited with a non-zero status.
    Exit,
    /// No kernel launch matched the filter.
    NoKernels,
    /// The profiler's output was missing or could not be read.
    Output,
}

impl FailureKind {
    /// The failure in words, for people (never the variant's name).
    pub fn describe(&self) -> &'static str {
        match self {
            FailureKind::MissingBinary => "profiler not found",
            FailureKind::Permission => "no permission to read GPU counters",
            FailureKind::UnsupportedGpu => "GPU not supported by the profiler",
            FailureKind::Signal => "ended by a signal",
            FailureKind::Timeout => "timed out",
            FailureKind::Exit => "failed",
            FailureKind::NoKernels => "no kernel matched the filter",
            FailureKind::Output => "profiler output missing or unreadable",
        }
    }
}

/// One fresh profiler process.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProcessRecord {
    /// `baseline`, `candidate` or `run`.
    pub side: String,
    /// Index of the metric group.
    pub group: usize,
    /// The repeat (0-based).
    pub repeat: usize,
    /// The metrics asked of this process.
    pub metrics: Vec<String>,
    /// The command line run.
    pub argv: Vec<String>,
    /// Exit status, when the process exited.
    pub exit_code: Option<i32>,
    /// The signal that ended the process, when one did.
    pub signal: Option<i32>,
    /// Wall time, nanoseconds.
    pub wall_ns: u64,
    /// Launches read from the output.
    pub launches: usize,
    /// Why it failed; `None` when it gave counters.
    pub failure: Option<FailureKind>,
    /// What went wrong, in words.
    pub message: Option<String>,
    /// The end of the profiler's standard error (at most 4 KiB).
    pub stderr: String,
}

/// One measured value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CounterSample {
    /// Side.
    pub side: String,
    /// Kernel name as the profiler wrote it.
    pub kernel: String,
    /// Metric name.
    pub metric: String,
    /// Unit (base units; empty for plain counts).
    pub unit: String,
    /// The repeat it came from.
    pub repeat: usize,
    /// The value.
    pub value: f64,
}

/// Median and range of one metric of one kernel on one side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CounterStat {
    /// Side.
    pub side: String,
    /// Kernel name.
    pub kernel: String,
    /// Metric name (a derived metric's name starts with `derived:`).
    pub metric: String,
    /// Unit.
    pub unit: String,
    /// Values, in repeat order.
    pub values: Vec<f64>,
    /// Median; `None` (unavailable) when there is no value.
    pub median: Option<f64>,
    /// Smallest value.
    pub min: Option<f64>,
    /// Largest value.
    pub max: Option<f64>,
    /// For a derived metric: the formula used.
    pub formula: Option<String>,
}

/// Baseline versus candidate for one kernel and metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CounterChange {
    /// Kernel (`baseline → candidate` when the two builds' kernels have different names).
    pub kernel: String,
    /// Metric.
    pub metric: String,
    /// Unit.
    pub unit: String,
    /// Baseline median.
    pub baseline: Option<f64>,
    /// Candidate median.
    pub candidate: Option<f64>,
    /// Candidate / baseline of the two medians (`ratio`, `change` = ratio − 1; no interval),
    /// or unavailable with the reason (a side missing, a zero baseline).
    #[serde(flatten)]
    pub change: Change,
    /// The two sides' ranges do not overlap (needs two values or more on each side).
    pub flagged: bool,
}

/// The whole `kernelab counters` result.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CountersRun {
    /// `ncu` or `rocprofv3`.
    pub profiler: String,
    /// What was profiled: the spec or the command.
    pub target: String,
    /// The sides, in order.
    pub sides: Vec<String>,
    /// Repeats of each group.
    pub repeats: usize,
    /// Metrics per process.
    pub group_size: usize,
    /// Kernel filter (a regular expression), when one was given.
    pub kernel_filter: Option<String>,
    /// Launch index among the matching launches, when one was given.
    pub launch: Option<usize>,
    /// The metrics asked for.
    pub metrics: Vec<String>,
    /// Metrics the profiler does not offer on this GPU (never measured, never estimated).
    pub unavailable: Vec<String>,
    /// Why the metric check could not run, when it could not.
    pub check_failed: Option<String>,
    /// Every profiler process, in run order.
    pub processes: Vec<ProcessRecord>,
    /// Every measured value.
    pub samples: Vec<CounterSample>,
    /// Per side, kernel and metric (derived metrics last).
    pub stats: Vec<CounterStat>,
    /// Baseline versus candidate (empty with one side).
    pub changes: Vec<CounterChange>,
    /// Notes on the figures.
    pub notes: Vec<String>,
}

impl CounterChange {
    /// `↑`, `↓` or `=` for the direction of the change; empty when it is unavailable.
    pub fn arrow(&self) -> &'static str {
        match self.change.change() {
            Some(x) if x > 0.0 => "↑",
            Some(x) if x < 0.0 => "↓",
            Some(_) => "=",
            None => "",
        }
    }
}

impl CountersRun {
    /// Processes that gave no counters.
    pub fn failures(&self) -> impl Iterator<Item = &ProcessRecord> {
        self.processes.iter().filter(|p| p.failure.is_some())
    }
}
