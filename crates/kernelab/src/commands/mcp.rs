//! `kernelab mcp`: the Model Context Protocol server over stdio (docs/mcp.md); the server
//! lives in `kernelab-mcp`, this module only wires it to the CLI's definition.

use crate::record::Session;
use crate::ExitStatus;
use anyhow::{Context, Result};
use clap::{Args, CommandFactory};
use std::path::PathBuf;

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

/// Runs the command.
pub(crate) fn run(args: McpArgs, _session: &mut Session) -> Result<ExitStatus> {
    let root = match args.root {
        Some(r) => r,
        None => std::env::current_dir().context("the working directory")?,
    };
    let exe = crate::self_exe()?;
    let mut bundle = args.bundle;
    if let Some(b) = std::env::var_os("KERNELAB_BUNDLE").filter(|v| !v.is_empty()) {
        bundle.push(PathBuf::from(b));
    }
    kernelab_mcp::serve(
        &crate::cli::Cli::command(),
        kernelab_mcp::Options {
            root,
            allow_run: args.allow_run,
            bundles: bundle,
            state: args.state,
            exe,
        },
    )?;
    Ok(ExitStatus::Success)
}
