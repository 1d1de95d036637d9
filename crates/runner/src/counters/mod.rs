//! Hardware counters per kernel: Nsight Compute (`ncu`) or rocprofv3 run as fresh processes,
//! one metric group per process, each group repeated, sides interleaved (repeat, group, side);
//! every process is recorded with its exit status and the profiler's stderr, and a failed
//! process never stops the run. See `docs/counters.md`.

mod process;
mod profiler;
pub mod summary;

use kernelab_model::counters::{CounterSample, CountersRun};
use std::path::PathBuf;
use std::time::Duration;

pub use profiler::{check_metrics, Profiler};

/// One side: the command that launches its kernels, and its kernel filter.
#[derive(Clone, Debug)]
pub struct Side {
    /// `baseline`, `candidate` or `run`.
    pub name: String,
    /// The program and its arguments (run under the profiler).
    pub argv: Vec<String>,
    /// A regular expression on kernel names, passed to the profiler.
    pub kernel: Option<String>,
    /// The filter is on the exact (mangled) symbol, as a launch spec names it (ncu:
    /// `--kernel-name-base mangled`).
    pub symbol: bool,
}

/// How to run the profiler.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Which profiler.
    pub profiler: Profiler,
    /// The profiler program (a name looked up on PATH, or a path).
    pub program: PathBuf,
    /// The metrics, in order.
    pub metrics: Vec<String>,
    /// Metrics per process (at least 1).
    pub group_size: usize,
    /// Runs of each group per side.
    pub repeats: usize,
    /// The launch among the filter's matches (0-based), when one is chosen.
    pub launch: Option<usize>,
    /// Per-process timeout.
    pub timeout: Duration,
    /// Where every process's output and stderr are kept.
    pub work_dir: PathBuf,
    /// What is profiled, in words (the spec or the command).
    pub target: String,
}

/// Splits `metrics` into groups of `size` (at least 1), in order.
pub fn groups(metrics: &[String], size: usize) -> Vec<Vec<String>> {
    metrics
        .chunks(size.max(1))
        .map(<[String]>::to_vec)
        .collect()
}

/// Runs every group of every side `repeats` times (after the metric check), reads the outputs
/// and summarises. `progress(done, total)` is called after each process.
pub fn run(
    s: &Settings,
    sides: &[Side],
    progress: &mut dyn FnMut(usize, usize),
) -> std::io::Result<CountersRun> {
    std::fs::create_dir_all(&s.work_dir)?;
    let check = check_metrics(s.profiler, &s.program, &s.metrics, s.timeout);
    let usable: Vec<String> = s
        .metrics
        .iter()
        .filter(|m| !check.unavailable.contains(m))
        .cloned()
        .collect();
    let groups = groups(&usable, s.group_size);
    let total = groups.len() * sides.len() * s.repeats;
    let mut processes = Vec::new();
    let mut samples: Vec<CounterSample> = Vec::new();
    let mut done = 0;
    for repeat in 0..s.repeats {
        for (g, metrics) in groups.iter().enumerate() {
            for side in sides {
                let stem = format!("{}_g{g}_r{repeat}", side.name);
                let (record, found) =
                    profiler::profile(s, side, g, repeat, metrics, &s.work_dir.join(stem));
                samples.extend(found);
                processes.push(record);
                done += 1;
                progress(done, total);
            }
        }
    }
    let g = s.group_size.max(1);
    let mut notes = vec![format!(
        "one group of {g} {} per fresh {} process, each group run {} {} per side; median and range are over those runs",
        kernelab_model::plural(g, "metric", "metrics"),
        s.profiler.name(),
        s.repeats,
        kernelab_model::plural(s.repeats, "time", "times")
    )];
    notes.extend(s.profiler.notes());
    if let Some(why) = &check.failed {
        notes.push(format!(
            "the metric check could not run ({why}); every metric was tried"
        ));
    }
    if processes
        .iter()
        .any(|p| p.failure == Some(kernelab_model::counters::FailureKind::Permission))
    {
        notes.push(profiler::PERMISSION_NOTE.to_string());
    }
    notes.push(format!(
        "derived metrics are computed per repeat from that repeat's values: {}",
        summary::formulas().join("; ")
    ));
    let stats = summary::stats(&samples, &usable, s.repeats);
    let changes = summary::changes(&stats);
    let filters: Vec<&str> = sides.iter().filter_map(|s| s.kernel.as_deref()).collect();
    Ok(CountersRun {
        profiler: s.profiler.name().to_string(),
        target: s.target.clone(),
        sides: sides.iter().map(|s| s.name.clone()).collect(),
        repeats: s.repeats,
        group_size: s.group_size.max(1),
        kernel_filter: (!filters.is_empty()).then(|| filters.join(" | ")),
        launch: s.launch,
        metrics: s.metrics.clone(),
        unavailable: check.unavailable,
        check_failed: check.failed,
        processes,
        samples,
        stats,
        changes,
        notes,
    })
}
