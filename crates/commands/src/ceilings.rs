//! `ceilings`: a GPU's measured peaks (or a datasheet's), the roofline's roof.

use crate::{setting, Outcome, Recordable, Status, View};
use anyhow::Result;
use kernelab_launcher::ceilings::{measure, Options};
use kernelab_launcher::Backend;
use kernelab_model::roofline::{Ceilings, Clocks, DeviceIdentity};
use kernelab_model::Document;
use kernelab_report::ceilings_sections;

/// How the peaks are measured (`--backend`, `--device`, sizes and repetitions).
#[derive(Clone, Copy, Debug)]
pub struct MeasureSettings {
    /// CUDA or HIP.
    pub backend: Backend,
    /// The device's index.
    pub device: i32,
    /// Bytes of the bandwidth test's buffers, in MiB.
    pub dram_mib: u64,
    /// Repetitions of each test.
    pub reps: u64,
    /// The matrix size of the compute test.
    pub gemm_size: u64,
}

/// Measures the peaks of one GPU.
pub fn measured(s: &MeasureSettings) -> Result<Ceilings> {
    let mut gpu = kernelab_launcher::open_device(s.backend, s.device)?;
    let o = Options {
        dram_bytes: s
            .dram_mib
            .checked_mul(1 << 20)
            .and_then(|b| usize::try_from(b).ok())
            .ok_or_else(|| setting(format!("--dram-mib {}: too large", s.dram_mib)))?,
        reps: usize::try_from(s.reps)?,
        gemm_size: usize::try_from(s.gemm_size)?,
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

/// The ceilings of the datasheet entry `name`.
pub fn from_datasheet(name: &str) -> Result<Ceilings> {
    Ceilings::from_datasheet(name).ok_or_else(|| {
        setting(format!(
            "no datasheet entry matches `{name}`; the table has: {}",
            kernelab_model::roofline::DATASHEETS
                .iter()
                .map(|d| d.name)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

/// `ceilings`: the outcome of `ceilings`, recorded with its GPU's name.
pub fn ceilings(c: Ceilings) -> Result<Outcome> {
    let doc = Document::of(c);
    let record = Recordable::of(&doc, &[], Some(doc.body.device.name.clone()))?;
    let view = View::shared(doc, |doc, _| ceilings_sections(&doc.body))
        .without_csv("--format csv is not offered for ceilings; use json");
    Ok(Outcome::new(view, Status::Pass).recording(record))
}
