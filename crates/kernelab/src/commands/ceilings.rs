//! `kernelab ceilings`.

use crate::cli::FormatArg;
use crate::cli_roofline::{BackendArg, CeilingsArgs};
use crate::output;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{bail, Result};
use kernelab_launcher::ceilings::{measure, Options};
use kernelab_launcher::Backend;
use kernelab_model::roofline::{Ceilings, Clocks, DeviceIdentity};
use kernelab_model::Document;
use kernelab_report::ceilings_sections;

fn expired(what: &str, timeout: std::time::Duration) {
    crate::output::to_stderr(&format!(
        "kernelab: error: {what} did not finish within {:.1} s; stopping",
        timeout.as_secs_f64()
    ));
    std::process::exit(2);
}

fn measured(a: &CeilingsArgs) -> Result<Ceilings> {
    let backend = match a.backend {
        BackendArg::Cuda => Backend::Cuda,
        BackendArg::Hip => Backend::Hip,
    };
    kernelab_launcher::watchdog::install(kernelab_model::duration_clamped(a.timeout), expired);
    let mut gpu = kernelab_launcher::open_device(backend, a.device)?;
    let o = Options {
        dram_bytes: usize::try_from(a.dram_mib << 20)?,
        reps: usize::try_from(a.reps)?,
        gemm_size: usize::try_from(a.gemm_size)?,
        ..Options::default()
    };
    let figures = measure(gpu.as_mut(), &o)?;
    let id = gpu.identity();
    let t = gpu.telemetry();
    Ok(Ceilings::merge(
        DeviceIdentity {
            name: gpu.device_name(),
            arch: id.arch,
            multiprocessors: id.multiprocessors,
            l2_bytes: gpu.l2_bytes().map(|b| b as u64),
            memory_bytes: id.memory_bytes,
            driver: id.driver,
            datasheet_entry: None,
        },
        Clocks {
            sm_mhz: t.sm_mhz,
            sm_max_mhz: id.sm_max_mhz,
            memory_mhz: id.memory_mhz,
        },
        figures,
    ))
}

/// Runs `kernelab ceilings`.
pub fn run(a: CeilingsArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&a.output)?;
    if a.output.format == FormatArg::Csv {
        bail!("--format csv is not offered for ceilings; use json");
    }
    let c = match &a.datasheet {
        Some(name) => match Ceilings::from_datasheet(name) {
            Some(c) => c,
            None => bail!(
                "no datasheet entry matches `{name}`; the table has: {}",
                kernelab_model::roofline::DATASHEETS
                    .iter()
                    .map(|d| d.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
        None => measured(&a)?,
    };
    let doc = Document::of(c);
    session.record(&doc, &[], Some(doc.body.device.name.clone()))?;
    let text = match output::sections_text(&a.output, |_| ceilings_sections(&doc.body)) {
        Some(t) => t,
        None => output::json(&doc)?,
    };
    output::write(&a.output, &text)?;
    Ok(ExitStatus::Success)
}
