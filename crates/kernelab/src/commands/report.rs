//! `kernelab report DIR`.

use crate::cli::{FormatArg, OutputArgs, ReportArgs, ReportFormat};
use crate::output;
use crate::ExitStatus;
use anyhow::{bail, Result};
use kernelab_model::Document;
use kernelab_report::bundle;
use kernelab_report::{evidence, evidence_html, evidence_markdown, Headline};
use serde::Serialize;

#[derive(Serialize)]
struct Summary<'a> {
    title: &'a str,
    records: &'a [Headline],
}

/// Runs the command.
pub fn run(args: ReportArgs) -> Result<ExitStatus> {
    let out = OutputArgs {
        format: FormatArg::Md,
        out: args.out.clone(),
        force: args.force,
    };
    output::check_target(&out)?;
    if !args.dir.is_dir() {
        bail!(
            "{}: not a directory; expected a bundle written with --record DIR",
            args.dir.display()
        );
    }
    let records = bundle::read(&args.dir)?;
    if records.is_empty() {
        bail!(
            "{}: no records; run commands with --record {} first",
            args.dir.display(),
            args.dir.display()
        );
    }
    let (parts, heads) = evidence(&records);
    let text = match args.format {
        ReportFormat::Md => evidence_markdown(&args.title, &heads, &parts),
        ReportFormat::Html => evidence_html(&args.title, &heads, &parts),
        ReportFormat::Json => output::json(&Document::new(
            "report",
            Summary {
                title: &args.title,
                records: &heads,
            },
        ))?,
    };
    output::write(&out, &text)?;
    Ok(ExitStatus::Success)
}
