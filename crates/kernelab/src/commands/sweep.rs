//! `kernelab sweep`: run a grid's points on local workers (one per GPU) or as a Slurm job
//! array, resume from the per-point result files, and render the merged matrix.

use crate::cli::sweep::{RunPointArgs, SweepArgs, SweepCommand};
use crate::cli::{FormatArg, OutputArgs};
use crate::emit::emit;
use crate::output;
use crate::progress::CliHooks;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{bail, Result};
use kernelab_commands::sweep::{self, LocalSettings, SubmitSettings, SweepDir};
use kernelab_commands::Outcome;
use kernelab_runner::sweep::{Mode, Sweep};
use std::path::Path;

/// Runs `kernelab sweep` or one of its subcommands.
pub(crate) fn run(a: SweepArgs, session: &mut Session) -> Result<ExitStatus> {
    let hooks = CliHooks::in_place();
    match a.command {
        Some(SweepCommand::RunPoint(p)) => run_point_cmd(p, &hooks),
        Some(SweepCommand::RunChunk(c)) => {
            let at = dir_of(&c.at);
            let timeout = c.timeout;
            sweep::run_chunk(&at, &c.list, c.chunk_size, c.index, &hooks, &|s| {
                watchdog(s, timeout)
            })?;
            Ok(ExitStatus::Success)
        }
        Some(SweepCommand::Submit(s)) => {
            let settings = SubmitSettings {
                chunk_size: s.chunk_size,
                throttle: s.throttle,
                sbatch_args: s.sbatch_args.clone(),
            };
            let line = sweep::submit_array(&dir_of(&s.at), &settings, &crate::self_exe()?, &hooks)?;
            output::say(&line)?;
            Ok(ExitStatus::Success)
        }
        Some(SweepCommand::Collect(c)) => {
            output::check_target(&c.output)?;
            let at = dir_of(&c.at);
            let dir = sweep::results_dir(&at.sweep, at.dir.as_deref(), &hooks)?;
            matrix(sweep::collect(&at.sweep, &dir), &c.output, session)
        }
        None => {
            output::check_target(&a.output)?;
            let Some(path) = a.sweep else {
                bail!("give the sweep file: kernelab sweep SWEEP.toml");
            };
            let settings = LocalSettings {
                sweep: path,
                dir: a.dir,
                gpus: a.gpus,
                jobs: a.jobs,
                timeout: a.timeout,
                controls: a.controls,
                baseline_dir: None,
            };
            matrix(
                sweep::local(&settings, &crate::self_exe()?, &hooks),
                &a.output,
                session,
            )
        }
    }
}

fn dir_of(at: &crate::cli::sweep::SweepDir) -> SweepDir {
    SweepDir {
        sweep: at.sweep.clone(),
        dir: at.dir.clone(),
    }
}

fn stop_gpu_wait(what: &str, timeout: std::time::Duration) {
    crate::output::to_stderr(&format!(
        "kernelab: error: {what} did not finish within {:.1} s; stopping",
        timeout.as_secs_f64()
    ));
    std::process::exit(2);
}

fn watchdog(sweep: &Sweep, seconds: f64) {
    if matches!(sweep.mode, Mode::Kernel(_)) {
        kernelab_launcher::watchdog::install(
            kernelab_model::duration_clamped(seconds),
            stop_gpu_wait,
        );
    }
}

fn run_point_cmd(a: RunPointArgs, hooks: &CliHooks) -> Result<ExitStatus> {
    let sweep = Sweep::read_sides(&a.at.sweep, None, a.baseline_dir.as_deref())?;
    let dir = sweep::results_dir(&a.at.sweep, a.at.dir.as_deref(), hooks)?;
    let point = sweep.point(&a.point)?;
    watchdog(&sweep, a.timeout);
    // The worker pool names each worker in the child's environment.
    let worker = std::env::var("KERNELAB_SWEEP_WORKER").unwrap_or(a.worker);
    let kernel = sweep::kernel_points(&sweep)?;
    sweep::run_and_write(&sweep, point, &worker, &dir, kernel.as_ref())?;
    Ok(ExitStatus::Success)
}

/// `check sweep`: every point of a tensor sweep run here, then merged, recorded and rendered.
pub(crate) fn check(
    path: &Path,
    max_decompressed: Option<u64>,
    out: &OutputArgs,
    session: &mut Session,
) -> Result<ExitStatus> {
    output::check_target(out)?;
    let outcome = sweep::check(path, max_decompressed, &CliHooks::in_place());
    matrix(outcome, out, session)
}

/// Emits a sweep's matrix (no CSV: `kernelab export --parquet` writes its rows).
fn matrix(outcome: Result<Outcome>, out: &OutputArgs, session: &mut Session) -> Result<ExitStatus> {
    if out.format == FormatArg::Csv {
        bail!("--format csv is not offered for sweep; use json, or `kernelab export --parquet`");
    }
    emit(outcome?, out, session)
}
