//! `kernelab compare`: baseline versus candidate, per family.

use crate::cli::CompareArgs;
use crate::emit::emit;
use crate::output;
use crate::progress::CliHooks;
use crate::record::Session;
use crate::settings::rank_settings;
use crate::ExitStatus;
use anyhow::{bail, Result};
use kernelab_commands::compare::{compare_runs, CompareSettings};

/// Runs the command.
pub(crate) fn run(args: CompareArgs, session: &mut Session) -> Result<ExitStatus> {
    let (base, cand) = match (
        args.pair.as_slice(),
        args.base.is_empty(),
        args.cand.is_empty(),
    ) {
        ([b, c], true, true) => (vec![b.clone()], vec![c.clone()]),
        ([], false, false) => (args.base.clone(), args.cand.clone()),
        _ => bail!("give BASE CAND, or --base FILE... and --cand FILE..."),
    };
    let settings = CompareSettings {
        base,
        cand,
        rank: rank_settings(&args.rank),
        controls: args.controls.clone(),
        by_graph: args.by_graph,
    };
    // Every setting is checked before any file is read.
    kernelab_commands::rank::rank_options(&settings.rank)?;
    output::check_target(&args.output)?;
    let outcome = compare_runs(&settings, &CliHooks::in_place())?;
    emit(outcome, &args.output, session)
}
