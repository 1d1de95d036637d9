//! `kernelab serve`: request-level A/B of two inference servers.

use crate::cli::ServeArgs;
use crate::emit::emit;
use crate::output;
use crate::progress::CliHooks;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::Result;
use kernelab_commands::serve::{run as serve_run, ServeSettings};

/// Runs the command.
pub(crate) fn run(args: ServeArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&args.output)?;
    let settings = ServeSettings {
        spec: args.spec,
        samples: args.samples,
        resume: args.resume,
        analyze: args.analyze,
        budget: args.budget,
        aa_samples: args.aa_samples,
        with_aa: args.with_aa,
    };
    let outcome = serve_run(&settings, &CliHooks::lines("kernelab serve"))?;
    emit(outcome, &args.output, session)
}
