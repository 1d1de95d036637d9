//! Command-line types of `kernelab sweep` and `kernelab export` (clap derive only; no logic).

use super::OutputArgs;
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// Arguments of `kernelab sweep`.
#[derive(Args, Debug)]
#[command(
    args_conflicts_with_subcommands = true,
    mut_arg("format", crate::cli::text_formats)
)]
pub(crate) struct SweepArgs {
    /// `run-point`, `run-chunk`, `submit` (Slurm) or `collect`.
    #[command(subcommand)]
    pub command: Option<SweepCommand>,
    /// The sweep file (TOML; format in docs/sweep.md).
    pub sweep: Option<PathBuf>,
    /// Results folder: one result file per point (default: `sweeps/NAME-HASH/` in $XDG_STATE_HOME/kernelab/, one per sweep file, so a rerun resumes).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// GPUs to spread the points over, one worker each (`0,1`); each point runs in a child
    /// process with CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES set to its GPU.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub gpus: Vec<u32>,
    /// Workers when no GPUs are named (CPU-only tensor points).
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// Seconds a point may wait on the GPU before its worker gives up on it.
    #[arg(long, default_value_t = 600.0)]
    pub timeout: f64,
    /// A ledger of identical-code runs (JSON lines, as `kernel run --controls`): each timed
    /// point of a build whose machine code is identical on both sides joins it, and a point
    /// whose kernel, sizes and GPU have 5 such controls states their noise floor.
    #[arg(long, value_name = "FILE")]
    pub controls: Option<PathBuf>,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `kernelab sweep` subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum SweepCommand {
    /// Run one point and write its result file (what each worker runs).
    RunPoint(RunPointArgs),
    /// Run one chunk of a submitted point list (what each Slurm array task runs).
    RunChunk(RunChunkArgs),
    /// Submit the points not yet done as a Slurm job array (`sbatch --array`).
    Submit(SubmitArgs),
    /// Merge the point results in the folder into the matrix and render it.
    Collect(CollectArgs),
}

/// The sweep file and its results folder.
#[derive(Args, Debug)]
pub(crate) struct SweepDir {
    /// The sweep file.
    pub sweep: PathBuf,
    /// Results folder (default: `sweeps/NAME-HASH/` in $XDG_STATE_HOME/kernelab/, one per sweep file, so a rerun resumes).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Arguments of `kernelab sweep run-point`.
#[derive(Args, Debug)]
pub(crate) struct RunPointArgs {
    /// Sweep and folder.
    #[command(flatten)]
    pub at: SweepDir,
    /// The point's id.
    #[arg(long, value_name = "ID")]
    pub point: String,
    /// Where it runs (written into the result).
    #[arg(long, default_value = "local")]
    pub worker: String,
    /// Seconds the point may wait on the GPU.
    #[arg(long, default_value_t = 600.0)]
    pub timeout: f64,
    /// Where the baseline's files are resolved (the same relative paths in another tree, as
    /// `kernelab gate` runs a sweep); default: the sweep file's folder.
    #[arg(long, value_name = "DIR", hide = true)]
    pub baseline_dir: Option<PathBuf>,
}

/// Arguments of `kernelab sweep run-chunk`.
#[derive(Args, Debug)]
pub(crate) struct RunChunkArgs {
    /// Sweep and folder.
    #[command(flatten)]
    pub at: SweepDir,
    /// The submitted point list (one id a line).
    #[arg(long, value_name = "FILE")]
    pub list: PathBuf,
    /// Points per chunk.
    #[arg(long)]
    pub chunk_size: usize,
    /// Seconds a point may wait on the GPU.
    #[arg(long, default_value_t = 600.0)]
    pub timeout: f64,
    /// The chunk (the Slurm array task id).
    pub index: usize,
}

/// Arguments of `kernelab sweep submit`.
#[derive(Args, Debug)]
pub(crate) struct SubmitArgs {
    /// Sweep and folder (a folder every node can write: the shared bundle).
    #[command(flatten)]
    pub at: SweepDir,
    /// Points per array task.
    #[arg(long, default_value_t = 1)]
    pub chunk_size: usize,
    /// Most array tasks running at once.
    #[arg(long)]
    pub throttle: Option<usize>,
    /// An option passed to sbatch (repeat it: `--sbatch-arg=--partition=gpu --sbatch-arg=--gres=gpu:1`).
    #[arg(long = "sbatch-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub sbatch_args: Vec<String>,
}

/// Arguments of `kernelab sweep collect`.
#[derive(Args, Debug)]
#[command(mut_arg("format", crate::cli::text_formats))]
pub(crate) struct CollectArgs {
    /// Sweep and folder.
    #[command(flatten)]
    pub at: SweepDir,
    /// Output options.
    #[command(flatten)]
    pub output: OutputArgs,
}
