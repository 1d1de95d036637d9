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
pub(crate) fn gpu_wait_expired(what: &str, timeout: std::time::Duration) {
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
        a.controls.as_deref(),
        &CliHooks::in_place(),
    )?;
    emit(outcome, &a.output, session)
}

/// `kernel run --python A B --inputs M ...`: two Python callables, run by the Python module
/// (`python3 -m kernelab`, or the interpreter `KERNELAB_PYTHON` names) with the same arguments;
/// its exit code. `None` when `argv` is not such a command line.
pub(crate) fn python_run(argv: &[std::ffi::OsString]) -> Option<u8> {
    let words: Vec<&std::ffi::OsStr> = argv.iter().map(|a| a.as_os_str()).collect();
    let at = words
        .windows(2)
        .position(|w| w[0] == "kernel" && w[1] == "run")?;
    if !words[at + 2..].iter().any(|w| *w == "--python") {
        return None;
    }
    let python = std::env::var_os("KERNELAB_PYTHON")
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "python3".into());
    let status = std::process::Command::new(&python)
        .args(["-m", "kernelab"])
        .args(&argv[1..])
        .status();
    Some(match status {
        // 0, 1 (a gate failed) and 2 (an error, said by the module) pass through; anything
        // else (no kernelab module: Python's own exit 1 would read as a failed gate) is 2.
        Ok(s) => match s.code() {
            Some(c @ 0..=2) if c != 1 || module_present(&python) => c as u8,
            _ => 2,
        },
        Err(e) => {
            output::to_stderr(&format!(
                "kernelab: error: kernel run --python runs the Python module kernelab (pip install .) \
                 with {}: {e}; set KERNELAB_PYTHON to the interpreter that has it",
                python.to_string_lossy()
            ));
            2
        }
    })
}

/// Whether `python` imports the kernelab module.
fn module_present(python: &std::ffi::OsStr) -> bool {
    std::process::Command::new(python)
        .args(["-c", "import kernelab"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
