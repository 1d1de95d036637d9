//! `kernelab counters`: hardware counters per kernel through ncu or rocprofv3 (the runner
//! lives in kernelab-runner; this module builds the sides and writes the result).

use crate::cli_counters::{CountersArgs, ProfilerArg};
use crate::emit::emit;
use crate::output;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{anyhow, bail, Context, Result};
use kernelab_launcher::plan::plan;
use kernelab_launcher::{Backend, Spec};
use kernelab_runner::counters::{self, Profiler, Settings, Side};
use kernelab_runner::preflight::{require, Tool};
use kernelab_runner::run::{RunKind, RunState};
use std::path::PathBuf;

/// Metrics measured when none are named (docs/counters.md says why these).
const NCU_DEFAULT: [&str; 5] = [
    "dram__bytes.sum",
    "gpu__time_duration.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__t_sector_hit_rate.pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
];
const ROCPROF_DEFAULT: [&str; 5] = [
    "FETCH_SIZE",
    "WRITE_SIZE",
    "TCC_HIT_sum",
    "TCC_MISS_sum",
    "OccupancyPercent",
];

/// A regular expression matching exactly `text`.
fn exactly(text: &str) -> String {
    format!("^{}$", regex::escape(text))
}

/// The sides of a spec: each build launched once by this binary, filtered by its symbol.
fn spec_sides(
    path: &PathBuf,
    a: &CountersArgs,
) -> Result<(Vec<Side>, String, Backend, Vec<PathBuf>)> {
    let spec = Spec::read(path)?;
    let p = plan(&spec)?;
    let exe = crate::self_exe()?;
    let abs = std::fs::canonicalize(path).with_context(|| path.display().to_string())?;
    let mut sides = Vec::new();
    let mut symbols = Vec::new();
    for b in &p.builds {
        symbols.push(format!("{} {}", b.label, b.symbol));
        sides.push(Side {
            name: b.label.clone(),
            argv: vec![
                exe.display().to_string(),
                "kernel".into(),
                "launch-once".into(),
                abs.display().to_string(),
                "--build".into(),
                b.label.clone(),
            ],
            kernel: Some(a.kernel.clone().unwrap_or_else(|| exactly(&b.symbol))),
            symbol: a.kernel.is_none(),
        });
    }
    let inputs = vec![
        path.clone(),
        spec.resolve(&spec.baseline.code),
        spec.resolve(&spec.candidate.code),
    ];
    let target = format!("spec {} ({})", path.display(), symbols.join(", "));
    Ok((sides, target, spec.backend, inputs))
}

fn split(what: &str, cmd: &str) -> Result<Vec<String>> {
    match shlex::split(cmd) {
        Some(v) if !v.is_empty() => Ok(v),
        _ => bail!("--{what} {cmd:?}: not a command (empty, or unbalanced quotes)"),
    }
}

/// Runs the command.
pub fn run(a: CountersArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&a.output)?;
    if a.repeats == 0 {
        bail!("--repeats 0: at least one run per group is needed");
    }
    if a.group_size == Some(0) {
        bail!("--group-size 0: at least one metric per process is needed");
    }
    if !(a.timeout.is_finite() && a.timeout > 0.0 && a.timeout <= 86_400.0) {
        bail!("--timeout {}: expected seconds in (0, 86400]", a.timeout);
    }
    let (sides, target, backend, inputs) = if let Some(path) = &a.spec {
        spec_sides(path, &a)?
    } else if let (Some(b), Some(c)) = (&a.baseline, &a.candidate) {
        let side = |name: &str, argv| Side {
            name: name.into(),
            argv,
            kernel: a.kernel.clone(),
            symbol: false,
        };
        let sides = vec![
            side("baseline", split("baseline", b)?),
            side("candidate", split("candidate", c)?),
        ];
        (
            sides,
            format!("baseline `{b}`, candidate `{c}`"),
            Backend::Cuda,
            Vec::new(),
        )
    } else if !a.command.is_empty() {
        let target = format!("`{}`", a.command.join(" "));
        let side = Side {
            name: "run".into(),
            argv: a.command.clone(),
            kernel: a.kernel.clone(),
            symbol: false,
        };
        (vec![side], target, Backend::Cuda, Vec::new())
    } else {
        bail!("nothing to profile: give a launch spec, --baseline and --candidate, or a command after --");
    };
    let profiler = match (a.profiler, backend) {
        (Some(ProfilerArg::Ncu), _) | (None, Backend::Cuda) => Profiler::Ncu,
        (Some(ProfilerArg::Rocprofv3), _) | (None, Backend::Hip) => Profiler::Rocprofv3,
    };
    let metrics: Vec<String> = if a.metrics.is_empty() {
        let d: &[&str] = match profiler {
            Profiler::Ncu => &NCU_DEFAULT,
            Profiler::Rocprofv3 => &ROCPROF_DEFAULT,
        };
        d.iter().map(|m| m.to_string()).collect()
    } else {
        a.metrics
            .iter()
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty())
            .collect()
    };
    let group_size = a.group_size.unwrap_or(match profiler {
        Profiler::Ncu => metrics.len().max(1),
        Profiler::Rocprofv3 => 1,
    });
    let program = a
        .profiler_path
        .clone()
        .unwrap_or_else(|| PathBuf::from(profiler.name()));
    // Every program is found before any process starts.
    let install = match profiler {
        Profiler::Ncu => "NVIDIA Nsight Compute (ncu, in the CUDA toolkit)",
        Profiler::Rocprofv3 => "rocprofv3 (ROCm 6.2 or later)",
    };
    let mut tools = vec![Tool::new(&program, install, Some("--profiler-path PATH"))];
    if a.spec.is_none() {
        for s in &sides {
            if let Some(p) = s.argv.first() {
                tools.push(Tool::new(p, "it, or give its path", None));
            }
        }
    }
    require(&tools)?;
    let run =
        kernelab_runner::run::create(RunKind::Counters, &target, None).map_err(|e| anyhow!(e))?;
    let work_dir = match &a.work_dir {
        Some(d) => {
            let used = std::fs::read_dir(d).is_ok_and(|mut e| e.next().is_some());
            if used {
                bail!(
                    "{}: not empty; --work-dir needs a new or empty folder (files of an earlier run would mix with this one)",
                    d.display()
                );
            }
            d.clone()
        }
        None => run.subdir("profiler").map_err(|e| anyhow!(e))?,
    };
    let plan = serde_json::json!({
        "profiler": profiler.name(),
        "metrics": metrics,
        "group_size": group_size,
        "repeats": a.repeats,
        "work_dir": work_dir.display().to_string(),
    });
    let mut samples = run
        .write_header(kernelab_model::SCHEMA_VERSION, None, &plan)
        .map_err(|e| anyhow!(e))?;
    output::to_stderr(&format!(
        "kernelab counters: run {}, profiler output in {}",
        run.id,
        work_dir.display()
    ));
    let settings = Settings {
        profiler,
        program,
        metrics,
        group_size,
        repeats: a.repeats,
        launch: a.launch,
        timeout: kernelab_model::duration_clamped(a.timeout),
        work_dir: work_dir.clone(),
        target,
    };
    let total = counters::groups(&settings.metrics, group_size).len() * sides.len() * a.repeats;
    let bar = crate::progress::count_bar(
        total as u64,
        "profiling {bar:30} process {pos}/{len} eta {eta}",
        "processes",
    );
    let result = counters::run(&settings, &sides, &mut |done, _| {
        bar.set_position(done as u64)
    })
    .with_context(|| format!("{}: the work folder", work_dir.display()));
    bar.finish_and_clear();
    // Each profiler process, one line of the run's samples file (`kernelab runs` counts them).
    if let Ok(r) = &result {
        for p in &r.processes {
            let line = serde_json::json!({"kind": "process", "process": p});
            samples
                .write(&line)
                .with_context(|| samples.path.display().to_string())?;
        }
    }
    let state = match &result {
        Ok(r) if r.processes.iter().any(|p| p.failure.is_none()) => RunState::Complete,
        _ => RunState::Failed,
    };
    run.finish(state).map_err(|e| anyhow!(e))?;
    let outcome = kernelab_commands::counters::outcome(result?, &work_dir, &inputs)?;
    emit(outcome, &a.output, session)
}
