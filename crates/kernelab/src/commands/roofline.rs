//! `kernelab roofline`: kernel time per family under the device's roofs.

use crate::cli::roofline::RooflineArgs;
use crate::emit::emit;
use crate::output;
use crate::progress::CliHooks;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::Result;
use kernelab_commands::roofline::{roofline, RooflineSettings};

/// Runs `kernelab roofline`.
pub(crate) fn run(a: RooflineArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&a.output)?;
    if let Some(svg) = &a.svg {
        output::check_file("--svg", svg, a.output.force)?;
    }
    let settings = RooflineSettings {
        inputs: a.inputs,
        work: a.work,
        ceilings: a.ceilings,
        datasheet: a.datasheet,
        sizes: a.sizes,
        spec: a.spec,
        ncu: a.ncu,
        svg: a.svg,
    };
    let outcome = roofline(&settings, &CliHooks::in_place())?;
    emit(outcome, &a.output, session)
}
