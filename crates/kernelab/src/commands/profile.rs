//! `kernelab profile`: read files, rank, render.

use crate::cli::ProfileArgs;
use crate::emit::emit;
use crate::output;
use crate::progress::CliHooks;
use crate::record::Session;
use crate::settings::rank_settings;
use crate::ExitStatus;
use anyhow::Result;
use kernelab_commands::profile::{profile, ProfileSettings};

/// Runs the command.
pub(crate) fn run(args: ProfileArgs, session: &mut Session) -> Result<ExitStatus> {
    let settings = ProfileSettings {
        files: args.files,
        rank: rank_settings(&args.rank),
        by_phase: args.by_phase,
        by_graph: args.by_graph,
        by_rank: args.by_rank,
    };
    // Every setting is checked before any file is read.
    kernelab_commands::rank::rank_options(&settings.rank)?;
    output::check_target(&args.output)?;
    let outcome = profile(&settings, &CliHooks::in_place())?;
    emit(outcome, &args.output, session)
}
