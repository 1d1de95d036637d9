//! `kernelab runs`: the experiment runs kept in the state folder.

use crate::cli::tools::{RunsArgs, RunsFormat};
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{anyhow, bail, Result};
use kernelab_report::{render, OutputFormat};
use kernelab_report::{Align, Block, Table};
use std::io::Write;

/// Runs the command.
pub(crate) fn run(args: RunsArgs, _session: &mut Session) -> Result<ExitStatus> {
    let root = match &args.dir {
        None => kernelab_runner::run::state_dir().map_err(|e| anyhow!(e))?,
        Some(dir) if dir.join("runs").is_dir() => dir.join("runs"),
        Some(dir) if dir.is_dir() => dir.clone(),
        Some(dir) => bail!(
            "{}: {} (expected a runs folder or a sweep's results folder)",
            dir.display(),
            if dir.exists() {
                "not a folder"
            } else {
                "no such folder"
            }
        ),
    };
    let runs = kernelab_runner::run::list_in(&root).map_err(|e| anyhow!(e))?;
    let text = match args.format {
        RunsFormat::Json => crate::output::json(&runs)?,
        RunsFormat::Table => {
            let title = format!(
                "{} in {}",
                kernelab_report::format::count(runs.len(), "run", "runs"),
                root.display()
            );
            let mut t = Table::new(
                title,
                &[
                    ("id", Align::Left),
                    ("kind", Align::Left),
                    ("label", Align::Left),
                    ("started", Align::Left),
                    ("done", Align::Right),
                    ("state", Align::Left),
                ],
            );
            for r in &runs {
                let kind = r.kind.map_or("unreadable", |k| k.name());
                let unit = r.kind.map_or("", |k| k.unit());
                t.push(vec![
                    r.id.clone(),
                    kind.to_string(),
                    r.label.clone(),
                    r.started.clone(),
                    format!("{} {unit}", r.count),
                    r.state.clone(),
                ]);
            }
            render(&[Block::Table(t)], OutputFormat::Terminal, None)
        }
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    Ok(ExitStatus::Success)
}
