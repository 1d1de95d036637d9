//! The kernel launcher: two builds of one GPU kernel loaded from their code objects, checked
//! (poisoned outputs, bitwise, repeat, graph replay, oracle, finite) and timed as ABBA pairs.
#![deny(missing_docs)]
// Lints for libraries (issue #40, as uv has them): a library returns what it has to say,
// names no `pub` item its users cannot reach, documents every `unsafe` and panics on no `expect`.

pub mod args;
pub mod ceilings;
mod cublaslt;
pub mod cuda;
mod error;
pub mod gpu;
pub mod hip;
pub mod plan;
pub mod run;
pub mod spec;
pub mod sweep;
pub mod watchdog;

pub use error::{Error, Result};
pub use gpu::Gpu;
pub use kernelab_model::kernel_run::{
    BuildInfo, Gate, KernelRun, Plan, PlannedBuffer, PlannedBuild, Round, Sample, Telemetry,
};
pub use run::{gates_only, launch_once, run, run_timed};
pub use spec::{Backend, Spec};

/// Opens a backend on a device.
pub fn open_device(backend: Backend, device: i32) -> Result<Box<dyn Gpu>> {
    Ok(match backend {
        Backend::Cuda => Box::new(cuda::Cuda::open(device)?),
        Backend::Hip => Box::new(hip::Hip::open(device)?),
    })
}

/// Whether the GPU runtime of `backend` is installed (the driver library loads), checked
/// before any worker starts: the error names the library and what to install.
pub fn runtime_present(backend: Backend) -> Result<()> {
    match backend {
        Backend::Cuda => cuda::driver_present(),
        Backend::Hip => hip::runtime_present(),
    }
}

/// Opens the spec's backend.
pub fn open(spec: &Spec) -> Result<Box<dyn Gpu>> {
    Ok(match spec.backend {
        Backend::Cuda => Box::new(cuda::Cuda::open(spec.device)?),
        Backend::Hip => Box::new(hip::Hip::open(spec.device)?),
    })
}
