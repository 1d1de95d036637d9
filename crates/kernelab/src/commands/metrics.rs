//! `kernelab metrics`: per-launch metric tables from Nsight Compute CSV.

use crate::cli::MetricsArgs;
use crate::emit::emit;
use crate::output;
use crate::progress::BarProgress;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::Result;

/// Runs the command.
pub(crate) fn run(args: MetricsArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&args.output)?;
    let progress = |p: &std::path::Path| -> Box<dyn kernelab_commands::Progress> {
        Box::new(BarProgress::new(p))
    };
    let outcome = kernelab_commands::metrics::metrics(&args.files, &args.metrics, &progress)?;
    emit(outcome, &args.output, session)
}
