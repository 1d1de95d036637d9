//! `counters`: hardware counters per kernel through ncu or rocprofv3, one metric group per
//! fresh profiler process (the runner lives in kernelab-runner; this module builds the sides
//! and the document). `--from` reads the metric values a rocprof-compute analysis database
//! stores instead of running a profiler (`recorded`).

mod recorded;

use crate::{setting, Hooks, Medium, Outcome, Recordable, Status, View};
use anyhow::{anyhow, bail, Context, Result};
use kernelab_launcher::plan::plan;
use kernelab_launcher::{Backend, Spec};
use kernelab_model::counters::CountersRun;
use kernelab_model::Document;
use kernelab_report::documents::CountersBody;
use kernelab_report::{counters_csv, counters_tables};
use kernelab_runner::counters::{self, Profiler, Settings, Side};
use kernelab_runner::preflight::{require, Tool};
use kernelab_runner::run::{OwnPlan, Plan, RunKind, RunState, SampleLine, Session};
use std::path::{Path, PathBuf};

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
    a: &CountersSettings,
) -> Result<(Vec<Side>, String, Backend, Vec<PathBuf>)> {
    let spec = Spec::read(path)?;
    let p = plan(&spec)?;
    let exe = &a.exe;
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
        _ => Err(setting(format!(
            "--{what} {cmd:?}: not a command (empty, or unbalanced quotes)"
        ))),
    }
}

/// `counters` as a user asks for it.
#[derive(Clone, Debug, Default)]
pub struct CountersSettings {
    /// A launch spec: each build launched once by `exe`.
    pub spec: Option<PathBuf>,
    /// The baseline's command line (with `candidate`).
    pub baseline: Option<String>,
    /// The candidate's command line.
    pub candidate: Option<String>,
    /// One command, profiled alone.
    pub command: Vec<String>,
    /// ncu or rocprofv3 (default: the spec's backend's, else ncu).
    pub profiler: Option<Profiler>,
    /// The profiler program, when not on PATH.
    pub profiler_path: Option<PathBuf>,
    /// The metrics (default: five per profiler, docs/counters.md).
    pub metrics: Vec<String>,
    /// Metrics per profiler process.
    pub group_size: Option<usize>,
    /// Processes per group and side.
    pub repeats: usize,
    /// A regular expression on kernel names.
    pub kernel: Option<String>,
    /// Which launch of the kernel.
    pub launch: Option<usize>,
    /// Seconds a profiler process may take.
    pub timeout: f64,
    /// The folder for the profiler's output (new or empty).
    pub work_dir: Option<PathBuf>,
    /// This program, which launches a spec's builds (`kernel launch-once`).
    pub exe: PathBuf,
    /// rocprof-compute analysis databases to read instead of profiling: one (side `run`) or
    /// two (baseline, candidate).
    pub from: Vec<PathBuf>,
}

impl CountersSettings {
    /// Refuses settings out of range before anything runs.
    pub fn check(&self) -> Result<()> {
        if self.repeats == 0 {
            return Err(setting("--repeats 0: at least one run per group is needed"));
        }
        if self.group_size == Some(0) {
            return Err(setting(
                "--group-size 0: at least one metric per process is needed",
            ));
        }
        if self.from.len() > 2 {
            return Err(setting(format!(
                "--from given {} times: give one database, or two (baseline, candidate)",
                self.from.len()
            )));
        }
        if !self.from.is_empty()
            && (self.spec.is_some() || self.baseline.is_some() || !self.command.is_empty())
        {
            return Err(setting(
                "--from reads recorded databases: give it without a spec, --baseline/--candidate or a command",
            ));
        }
        if !(self.timeout.is_finite() && self.timeout > 0.0 && self.timeout <= 86_400.0) {
            return Err(setting(format!(
                "--timeout {}: expected seconds in (0, 86400]",
                self.timeout
            )));
        }
        Ok(())
    }
}

/// `counters`: each side's kernels profiled, one metric group per fresh profiler process,
/// every process's output kept in the work folder.
pub fn run(a: &CountersSettings, hooks: &dyn Hooks) -> Result<Outcome> {
    a.check()?;
    if !a.from.is_empty() {
        return recorded::run(a, hooks);
    }
    let (sides, target, backend, inputs) = if let Some(path) = &a.spec {
        spec_sides(path, a)?
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
        return Err(setting(
            "nothing to profile: give a launch spec, --baseline and --candidate, or a command after --",
        ));
    };
    let profiler = match (a.profiler, backend) {
        (Some(p), _) => p,
        (None, Backend::Cuda) => Profiler::Ncu,
        (None, Backend::Hip) => Profiler::Rocprofv3,
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
    let plan = OwnPlan {
        spec_sha256: None,
        plan: Plan::Counters {
            group_size,
            metrics: &metrics,
            profiler: profiler.name(),
            repeats: a.repeats,
            work_dir: work_dir.display().to_string(),
        },
    };
    let session =
        Session::start(run, kernelab_model::SCHEMA_VERSION, plan).map_err(|e| anyhow!(e))?;
    hooks.say(&format!(
        "kernelab counters: run {}, profiler output in {}",
        session.run.id,
        work_dir.display()
    ));
    let settings = Settings {
        profiler,
        program,
        metrics: metrics.clone(),
        group_size,
        repeats: a.repeats,
        launch: a.launch,
        timeout: kernelab_model::duration_clamped(a.timeout),
        work_dir: work_dir.clone(),
        target,
    };
    let total = counters::groups(&settings.metrics, group_size).len() * sides.len() * a.repeats;
    let bar = hooks.counter(
        total as u64,
        "profiling {bar:30} process {pos}/{len} eta {eta}",
        "processes",
    );
    let body = |s: &mut Session<OwnPlan<'_>>| -> Result<CountersRun> {
        let result = counters::run(&settings, &sides, &mut |done, _| {
            bar.set_position(done as u64)
        })
        .with_context(|| format!("{}: the work folder", work_dir.display()));
        bar.finish();
        let result = result?;
        // Each profiler process, one line of the run's samples file (`kernelab runs` counts them).
        for p in &result.processes {
            s.writer
                .write(&SampleLine::Process { process: p })
                .with_context(|| s.writer.path.display().to_string())?;
        }
        Ok(result)
    };
    let (_, result) = session.drive(body, |r| match r {
        Ok(r) if r.processes.iter().any(|p| p.failure.is_none()) => RunState::Complete,
        _ => RunState::Failed,
    })?;
    outcome(result, &work_dir, &inputs)
}

/// The outcome of a counters run `run` whose processes kept their output in `work_dir`:
/// recorded with `inputs`; failing when no profiler process succeeded.
pub fn outcome(run: CountersRun, work_dir: &Path, inputs: &[PathBuf]) -> Result<Outcome> {
    let any = run.processes.iter().any(|p| p.failure.is_none());
    let doc = Document::of(CountersBody {
        work_dir: work_dir.display().to_string(),
        run,
    });
    let record = Recordable::of(&doc, inputs, None)?;
    let view = View::shared_with_csv(
        doc,
        |d, m: Medium| counters_tables(&d.body.run, m.name_width()),
        |d| Ok(counters_csv(&d.body.run)?),
    );
    Ok(Outcome::new(view, Status::of(any)).recording(record))
}
