//! The arguments of the commands that are not evidence: shell completions, the manual page,
//! Parquet export, the MCP server and the runs list.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Arguments of `kernelab completions`.
#[derive(Args, Debug)]
pub(crate) struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell (e.g. `kernelab completions bash >
    /// ~/.local/share/bash-completion/completions/kernelab`).
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Arguments of `kernelab man`.
#[derive(Args, Debug)]
pub(crate) struct ManArgs {
    /// A command's page (`ab`, `check`, ...) instead of kernelab's (e.g. `kernelab man ab |
    /// man -l -`).
    pub command: Option<String>,
}

/// Arguments of `kernelab export`.
#[derive(Args, Debug)]
pub(crate) struct ExportArgs {
    /// Folder for the Parquet files (created when missing; an existing file is never replaced
    /// without --force).
    #[arg(long, value_name = "OUT_DIR")]
    pub parquet: PathBuf,
    /// Replace Parquet files that exist in OUT_DIR.
    #[arg(long)]
    pub force: bool,
    /// Traces `kernelab profile` reads, samples files (`.jsonl` of ab, kernel run or serve) and
    /// sweep folders or their matrix.json.
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
}

/// Arguments of `kernelab mcp`.
#[derive(Args, Debug)]
pub(crate) struct McpArgs {
    /// Every path a tool reads or writes must lie under DIR (default: the working directory);
    /// tools run in it.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Offer the tools that start programs or servers or use the GPU (ab, kernel run,
    /// counters, ceilings without --datasheet, serve, sweep); without it they are listed
    /// with the reason they are unavailable, and refused.
    #[arg(long)]
    pub allow_run: bool,
    /// A bundle (under the root) whose records are offered as resources; bundles the tools
    /// record into are added as they are used.
    #[arg(long, value_name = "DIR")]
    pub bundle: Vec<PathBuf>,
    /// The state folder of the runs the tools start (their XDG_STATE_HOME; default
    /// ROOT/.kernelab/state).
    #[arg(long, value_name = "DIR")]
    pub state: Option<PathBuf>,
}

/// Formats of `kernelab runs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum RunsFormat {
    /// A terminal table.
    Table,
    /// A JSON array, one object per run.
    Json,
}

/// Arguments of `kernelab runs`.
#[derive(Args, Debug)]
pub(crate) struct RunsArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = RunsFormat::Table)]
    pub format: RunsFormat,
    /// List the runs of this folder instead: a runs folder, or a sweep's results folder (its
    /// timed kernel points are runs in `DIR/runs/`).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}
