//! `kernelab counters`: hardware counters per kernel through ncu or rocprofv3.

use crate::cli::counters::{CountersArgs, ProfilerArg};
use crate::emit::emit;
use crate::output;
use crate::progress::CliHooks;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::Result;
use kernelab_commands::counters::{run as profile_counters, CountersSettings};
use kernelab_runner::counters::Profiler;

/// Runs the command.
pub(crate) fn run(a: CountersArgs, session: &mut Session) -> Result<ExitStatus> {
    let settings = CountersSettings {
        spec: a.spec,
        baseline: a.baseline,
        candidate: a.candidate,
        command: a.command,
        profiler: a.profiler.map(|p| match p {
            ProfilerArg::Ncu => Profiler::Ncu,
            ProfilerArg::Rocprofv3 => Profiler::Rocprofv3,
        }),
        profiler_path: a.profiler_path,
        metrics: a.metrics,
        group_size: a.group_size,
        repeats: a.repeats,
        kernel: a.kernel,
        launch: a.launch,
        timeout: a.timeout,
        work_dir: a.work_dir,
        exe: crate::self_exe()?,
        from: a.from,
    };
    output::check_target(&a.output)?;
    settings.check()?;
    let outcome = profile_counters(&settings, &CliHooks::in_place())?;
    emit(outcome, &a.output, session)
}
