//! `kernelab ceilings`.

use crate::cli::roofline::{BackendArg, CeilingsArgs};
use crate::cli::FormatArg;
use crate::emit::emit;
use crate::output;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{bail, Result};
use kernelab_commands::ceilings::{ceilings, from_datasheet, measured, MeasureSettings};
use kernelab_launcher::Backend;

fn expired(what: &str, timeout: std::time::Duration) {
    crate::output::to_stderr(&format!(
        "kernelab: error: {what} did not finish within {:.1} s; stopping",
        timeout.as_secs_f64()
    ));
    std::process::exit(2);
}

/// Runs `kernelab ceilings`.
pub(crate) fn run(a: CeilingsArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&a.output)?;
    if a.output.format == FormatArg::Csv {
        bail!("--format csv is not offered for ceilings; use json");
    }
    let c = match &a.datasheet {
        Some(name) => from_datasheet(name)?,
        None => {
            let settings = MeasureSettings {
                backend: match a.backend {
                    BackendArg::Cuda => Backend::Cuda,
                    BackendArg::Hip => Backend::Hip,
                },
                device: a.device,
                dram_mib: a.dram_mib,
                reps: a.reps,
                gemm_size: a.gemm_size,
            };
            kernelab_launcher::watchdog::install(
                kernelab_model::duration_clamped(a.timeout),
                expired,
            );
            measured(&settings)?
        }
    };
    emit(ceilings(c)?, &a.output, session)
}
