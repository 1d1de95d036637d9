//! `kernelab mcp`: a Model Context Protocol server over stdio (the official Rust SDK, `rmcp`).
//! One tool per evidence command, each input schema derived from the CLI's clap definition and
//! each output schema generated from the document's types; every call runs the same `kernelab`
//! binary as a child process (its own process group, started in the root) with the command line
//! built from the arguments, so a tool's result is exactly the CLI's `--format json` document.
//! Layout and rules: docs/mcp.md.
#![deny(missing_docs)]

pub mod docs;
pub mod exec;
pub mod paths;
mod server;
pub mod tools;
pub mod transport;

pub use server::{Server, EVIDENCE_ORDER};

use rmcp::ServiceExt;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How the server was started.
#[derive(Clone, Debug)]
pub struct Options {
    /// Every path is confined to this directory; children start in it.
    pub root: PathBuf,
    /// Whether tools that start programs or servers or use the GPU may run.
    pub allow_run: bool,
    /// Bundles whose records are resources from the start.
    pub bundles: Vec<PathBuf>,
    /// `XDG_STATE_HOME` of the children (their runs folder); default `ROOT/.kernelab/state`.
    pub state: Option<PathBuf>,
    /// The kernelab binary the calls run.
    pub exe: PathBuf,
}

/// Serves MCP on standard input and output until the client closes them; `cli` is the CLI's
/// definition (`Cli::command()`).
pub fn serve(cli: &clap::Command, options: Options) -> anyhow::Result<()> {
    // The server's own reads (records for resources, `out` files) go through the same
    // confined layer as its children's: by handle, beneath the root.
    kernelab_model::confine_to(&options.root)
        .map_err(|e| anyhow::anyhow!("--root {}: {e}", options.root.display()))?;
    let server = std::sync::Arc::new(Server::new(cli, options)?);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let running = server
            .clone()
            .serve(transport::checked(tokio::io::stdin(), tokio::io::stdout()))
            .await
            .map_err(|e| anyhow::anyhow!("MCP start: {e}"))?;
        let _ = running.waiting().await;
        // The client is gone: running calls were cancelled with the session; wait until
        // they have stopped their processes.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        while server.active.load(Ordering::SeqCst) > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        anyhow::Ok(())
    })
}
