//! `kernelab metrics`: per-launch metric tables from Nsight Compute CSV.

use crate::cli::MetricsArgs;
use crate::emit::emit;
use crate::output;
use crate::progress::CliHooks;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::Result;

/// Runs the command.
pub(crate) fn run(args: MetricsArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&args.output)?;
    let hooks = CliHooks::in_place();
    let outcome = kernelab_commands::metrics::metrics(&args.files, &args.metrics, &hooks)?;
    emit(outcome, &args.output, session)
}
