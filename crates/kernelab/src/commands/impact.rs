//! `kernelab impact --profile P --kernel-run K`: the request impact of a kernel change.

use crate::cli::{FormatArg, ImpactArgs};
use crate::emit::emit;
use crate::output;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{bail, Result};
use kernelab_commands::impact::{impact, ImpactSettings};

/// Runs the command.
pub(crate) fn run(args: ImpactArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&args.output)?;
    if args.output.format == FormatArg::Csv {
        bail!("kernelab impact writes table, md or json, not csv");
    }
    let settings = ImpactSettings {
        profile: args.profile,
        kernel_run: args.kernel_run,
        family: args.family,
        measured: args.measured,
    };
    emit(impact(&settings)?, &args.output, session)
}
