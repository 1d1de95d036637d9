//! `kernelab mcp`: the Model Context Protocol server over stdio (docs/mcp.md); the server
//! lives in `kernelab-mcp`, this module only wires it to the CLI's definition.

use crate::cli::tools::McpArgs;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::Result;
#[cfg(feature = "mcp")]
use {anyhow::Context, clap::CommandFactory, std::path::PathBuf};

/// Runs the command.
#[cfg(feature = "mcp")]
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

/// Without the server (the Python wheel's command line): exit 2, saying where it is.
#[cfg(not(feature = "mcp"))]
pub(crate) fn run(_args: McpArgs, _session: &mut Session) -> Result<ExitStatus> {
    anyhow::bail!(
        "this kernelab was built without the MCP server (the Python wheel leaves it out to \
         install in minutes): run `kernelab mcp` of the kernelab binary (`cargo install --path \
         crates/kernelab`, docs/mcp.md)"
    )
}
