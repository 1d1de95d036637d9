//! Command-line types of `ceilings` and `roofline` (clap derive only; no logic).

use super::OutputArgs;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// GPU APIs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum BackendArg {
    /// NVIDIA driver API.
    Cuda,
    /// AMD HIP runtime.
    Hip,
}

/// Arguments of `kernelab ceilings`.
#[derive(Args, Debug)]
#[command(mut_arg("format", crate::cli::text_formats))]
pub(crate) struct CeilingsArgs {
    /// GPU API of the device to measure.
    #[arg(long, value_enum, default_value_t = BackendArg::Cuda)]
    pub backend: BackendArg,
    /// Device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: i32,
    /// Measure nothing: the datasheet table's entry for this device name (`H200`, `MI300X`,
    /// `gfx1151`).
    #[arg(long, value_name = "NAME")]
    pub datasheet: Option<String>,
    /// Bytes of each DRAM buffer of the bandwidth measurements (MiB).
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub dram_mib: u64,
    /// Timed launches per figure (the figure is their median).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=10000))]
    pub reps: u64,
    /// M = N = K of the matrix products.
    #[arg(long, default_value_t = 8192, value_parser = clap::value_parser!(u64).range(256..=32768))]
    pub gemm_size: u64,
    /// Stop a GPU wait that has not ended after this many seconds (exit 2).
    #[arg(long, default_value_t = 120.0)]
    pub timeout: f64,
    /// Where and how to write the result (table, md or json).
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments of `kernelab roofline`.
#[derive(Args, Debug)]
pub(crate) struct RooflineArgs {
    /// Profiler files (Kineto JSON, rocprofv3, Nsight Systems or Nsight Compute exports):
    /// kernel times, and shapes from Kineto's `Input Dims` of each kernel's launching op.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// The work model: a TOML of [[rule]] entries (docs/roofline.md). Without it, the FLOPs
    /// and bytes the trace records (PyTorch Inductor's kernel_flop/kernel_num_gb, Proton's
    /// flops/bytes); with it, the model wins and disagreements beyond 1% are listed.
    #[arg(long, value_name = "RULES")]
    pub work: Option<PathBuf>,
    /// Ceilings: a `kernelab ceilings --format json` document or bundle record.
    #[arg(long, value_name = "FILE", conflicts_with = "datasheet")]
    pub ceilings: Option<PathBuf>,
    /// Use the datasheet table's entry for this device name instead of measured ceilings.
    #[arg(long, value_name = "NAME")]
    pub datasheet: Option<String>,
    /// A shape variable, NAME=VALUE (repeatable); wins over the trace and the spec.
    #[arg(long = "size", value_name = "NAME=VALUE")]
    pub sizes: Vec<String>,
    /// A kernel launch spec whose [sizes] are shape variables.
    #[arg(long, value_name = "SPEC")]
    pub spec: Option<PathBuf>,
    /// An Nsight Compute CSV with dram__bytes per launch, shown beside the modelled bytes.
    #[arg(long, value_name = "FILE")]
    pub ncu: Option<PathBuf>,
    /// Draw the roofline chart as SVG into FILE.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Where and how to write the result.
    #[command(flatten)]
    pub output: OutputArgs,
}
