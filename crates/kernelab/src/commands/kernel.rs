//! `kernelab kernel run`.

use crate::cli::{FormatArg, KernelCommand, KernelRunArgs};
use crate::emit::emit;
use crate::output;
use crate::progress::CliHooks;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{bail, Result};
use kernelab_commands::kernel;
use kernelab_launcher::{self, Spec};

/// The watchdog's verdict on a GPU wait that did not end: said once, then exit 2 (the wait cannot
/// be cancelled; the driver releases the context when the process ends).
fn gpu_wait_expired(what: &str, timeout: std::time::Duration) {
    crate::output::to_stderr(&format!(
        "kernelab: error: {what} did not finish within {:.1} s; stopping (a kernel that never returns? raise --timeout if it is this slow)",
        timeout.as_secs_f64()
    ));
    std::process::exit(2);
}

/// Runs a `kernel` subcommand.
pub(crate) fn run(cmd: KernelCommand, session: &mut Session) -> Result<ExitStatus> {
    match cmd {
        KernelCommand::Run(a) => run_spec(a, session),
        KernelCommand::LaunchOnce(a) => launch_once(a),
    }
}

/// Launches one build once (under a profiler started by `kernelab counters`); prints nothing.
fn launch_once(a: crate::cli::counters::LaunchOnceArgs) -> Result<ExitStatus> {
    let spec = Spec::read(&a.spec)?;
    kernelab_launcher::watchdog::install(
        kernelab_model::duration_clamped(a.timeout.clamp(0.001, 86_400.0)),
        gpu_wait_expired,
    );
    let mut gpu = kernelab_launcher::open(&spec)?;
    kernelab_launcher::launch_once(gpu.as_mut(), &spec, &a.build)?;
    Ok(ExitStatus::Success)
}

fn run_spec(a: KernelRunArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&a.output)?;
    if a.output.format == FormatArg::Csv {
        bail!("--format csv is not offered for kernel run; use json (every sample is in the --samples JSONL)");
    }
    let spec = kernel::read_spec(&a.spec, a.rounds)?;
    if a.dry_run {
        return emit(kernel::dry_run(&a.spec, &spec)?, &a.output, session);
    }
    kernelab_launcher::watchdog::install(
        kernelab_model::duration_clamped(a.timeout),
        gpu_wait_expired,
    );
    let outcome = kernel::run(
        &a.spec,
        &spec,
        a.samples.as_deref(),
        a.ceilings.as_deref(),
        &CliHooks::in_place(),
    )?;
    emit(outcome, &a.output, session)
}
