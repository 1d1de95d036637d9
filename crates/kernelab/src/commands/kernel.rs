//! `kernelab kernel run`.

use crate::cli::{FormatArg, KernelCommand, KernelRunArgs};
use crate::emit::emit;
use crate::output;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{anyhow, bail, Context, Result};
use kernelab_commands::kernel;
use kernelab_launcher::{self, Spec};
use kernelab_runner::run::{RunKind, RunState};

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
pub fn run(cmd: KernelCommand, session: &mut Session) -> Result<ExitStatus> {
    match cmd {
        KernelCommand::Run(a) => run_spec(a, session),
        KernelCommand::LaunchOnce(a) => launch_once(a),
    }
}

/// Launches one build once (under a profiler started by `kernelab counters`); prints nothing.
fn launch_once(a: crate::cli_counters::LaunchOnceArgs) -> Result<ExitStatus> {
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
    let mut spec = Spec::read(&a.spec)?;
    if let Some(r) = a.rounds {
        spec.timing.rounds = r.max(2);
    }
    if a.dry_run {
        return emit(kernel::dry_run(&a.spec, &spec)?, &a.output, session);
    }
    kernelab_launcher::watchdog::install(
        kernelab_model::duration_clamped(a.timeout),
        gpu_wait_expired,
    );
    let mut gpu = kernelab_launcher::open(&spec)?;
    let label = a
        .spec
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let run = kernelab_runner::run::create(RunKind::KernelRun, &label, a.samples.as_deref())
        .map_err(|e| anyhow!(e))?;
    let samples_path = run.samples.clone();
    let spec_bytes = kernelab_model::read_regular(&a.spec, 16 << 20)
        .with_context(|| format!("{}: cannot read", a.spec.display()))?;
    let plan =
        serde_json::json!({"spec": a.spec.display().to_string(), "rounds": spec.timing.rounds});
    let mut w = run
        .write_header(
            kernelab_model::SCHEMA_VERSION,
            Some(&kernelab_model::sha256_hex(&spec_bytes)),
            &plan,
        )
        .map_err(|e| anyhow!(e))?;
    output::to_stderr(&format!(
        "kernelab kernel run: run {}, samples in {}",
        run.id,
        samples_path.display()
    ));
    let bar = crate::progress::count_bar(
        spec.timing.rounds as u64,
        "timing {bar:30} round {pos}/{len} eta {eta}",
        "rounds",
    );
    let spec_name = a.spec.display().to_string();
    let result = kernelab_launcher::run(
        gpu.as_mut(),
        &spec,
        &mut |s| {
            let line = serde_json::json!({"kind": "sample", "spec": spec_name, "sample": s});
            w.write(&line)
                .map_err(|source| kernelab_launcher::Error::Write {
                    path: samples_path.clone(),
                    source,
                })
        },
        &mut |done, _| bar.set_position(done as u64),
    );
    bar.finish_and_clear();
    let state = if result.is_ok() {
        RunState::Complete
    } else {
        RunState::Failed
    };
    run.finish(state).map_err(|e| anyhow!(e))?;
    let outcome = kernel::outcome(
        result?,
        &a.spec,
        &spec,
        &samples_path,
        a.ceilings.as_deref(),
    )?;
    emit(outcome, &a.output, session)
}
