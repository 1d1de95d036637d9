//! Command-line types of `kernelab counters` and the hidden `kernel launch-once` (clap derive
//! only; no logic).

use super::OutputArgs;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// The profilers `kernelab counters` drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ProfilerArg {
    /// NVIDIA Nsight Compute.
    Ncu,
    /// AMD rocprofv3.
    Rocprofv3,
}

/// Arguments of `kernelab counters`.
#[derive(Args, Debug)]
pub(crate) struct CountersArgs {
    /// A launch spec (TOML): its baseline and candidate are each launched once per profiler
    /// process by `kernelab kernel launch-once`, filtered by their symbols.
    #[arg(conflicts_with_all = ["baseline", "command"])]
    pub spec: Option<PathBuf>,
    /// A baseline command to profile (split like a shell would); with --candidate.
    #[arg(
        long,
        value_name = "CMD",
        requires = "candidate",
        conflicts_with = "command"
    )]
    pub baseline: Option<String>,
    /// A candidate command to profile.
    #[arg(long, value_name = "CMD", requires = "baseline")]
    pub candidate: Option<String>,
    /// The profiler (default: the spec's backend; for commands, ncu).
    #[arg(long, value_enum)]
    pub profiler: Option<ProfilerArg>,
    /// The profiler program (default: `ncu` or `rocprofv3` on PATH).
    #[arg(long, value_name = "PATH")]
    pub profiler_path: Option<PathBuf>,
    /// Metrics, comma separated (default: DRAM bytes, duration, SM throughput, L2 hit rate and
    /// achieved occupancy for the profiler; see docs/counters.md).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub metrics: Vec<String>,
    /// Metrics per fresh profiler process (default: all in one for ncu, 1 for rocprofv3).
    #[arg(long, value_name = "N")]
    pub group_size: Option<usize>,
    /// Runs of each metric group per side.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub repeats: usize,
    /// Kernel filter: a regular expression on kernel names (default with a spec: each build's
    /// symbol, exactly).
    #[arg(long, value_name = "REGEX")]
    pub kernel: Option<String>,
    /// Profile only this launch among those the filter matches (0-based).
    #[arg(long, value_name = "N")]
    pub launch: Option<usize>,
    /// Per-process timeout in seconds; a process past it is killed with its group.
    #[arg(long, value_name = "SECONDS", default_value_t = 600.0)]
    pub timeout: f64,
    /// Folder that keeps every process's profiler output and stderr, new or empty (default:
    /// `profiler/` in the run's folder under $XDG_STATE_HOME/kernelab/runs/).
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
    /// Read the metric values a rocprof-compute analysis database (`rocprof-compute analyze
    /// --output-format db`) stores per kernel instead of profiling: once (one side) or twice
    /// (baseline, then candidate). --metrics then takes metric ids (`2.1` selects 2.1.0,
    /// 2.1.1, …) or names; default: 2.1, the System Speed-of-Light table.
    #[arg(
        long,
        value_name = "DB",
        conflicts_with_all = ["spec", "baseline", "command", "profiler", "profiler_path", "launch"]
    )]
    pub from: Vec<PathBuf>,
    /// Where and how to write the result (table, md, json or csv).
    #[command(flatten)]
    pub output: OutputArgs,
    /// The command to profile (after `--`).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// Arguments of the hidden `kernelab kernel launch-once`.
#[derive(Args, Debug)]
pub(crate) struct LaunchOnceArgs {
    /// The launch spec.
    pub spec: PathBuf,
    /// `baseline` or `candidate`.
    #[arg(long)]
    pub build: String,
    /// Longest wait for the GPU, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    pub timeout: f64,
}
