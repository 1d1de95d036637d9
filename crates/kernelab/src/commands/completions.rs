//! `kernelab completions SHELL` and `kernelab man [COMMAND]`: shell completions and man pages
//! generated from the CLI definition (clap_complete, clap_mangen), so they never drift from
//! `--help`.

use crate::cli::tools::{CompletionsArgs, ManArgs};
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{bail, Result};
use clap::CommandFactory;
use std::io::Write;

/// Writes the completion script to standard output.
pub(crate) fn completions(a: CompletionsArgs, _session: &mut Session) -> Result<ExitStatus> {
    let mut cmd = crate::cli::Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "kernelab", &mut out);
    std::io::stdout().lock().write_all(&out)?;
    Ok(ExitStatus::Success)
}

/// Writes the man page (roff) to standard output.
pub(crate) fn man(a: ManArgs, _session: &mut Session) -> Result<ExitStatus> {
    let mut cmd = crate::cli::Cli::command();
    cmd.build();
    let man = match &a.command {
        None => clap_mangen::Man::new(cmd),
        Some(name) => match cmd.find_subcommand(name) {
            Some(sub) => clap_mangen::Man::new(sub.clone()).title(format!("kernelab-{name}")),
            None => {
                let names: Vec<String> = cmd
                    .get_subcommands()
                    .filter(|s| !s.is_hide_set())
                    .map(|s| s.get_name().to_string())
                    .collect();
                bail!("man {name}: no such command; one of {}", names.join(", "))
            }
        },
    };
    let mut out = Vec::new();
    man.render(&mut out)?;
    std::io::stdout().lock().write_all(&out)?;
    Ok(ExitStatus::Success)
}
