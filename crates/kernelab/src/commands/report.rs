//! `kernelab report DIR`.

use crate::cli::{FormatArg, OutputArgs, ReportArgs, ReportFormat};
use crate::output;
use crate::ExitStatus;
use anyhow::{bail, Result};
use kernelab_model::Document;
use kernelab_report::bundle;
use kernelab_report::impact::Impact;
use kernelab_report::{evidence, evidence_html, pr_body, Headline, GITHUB_BODY_LIMIT};
use serde::Serialize;
use std::path::PathBuf;

#[derive(Serialize)]
struct Summary<'a> {
    title: &'a str,
    records: &'a [Headline],
    impacts: &'a [Impact],
}

/// Where the appendix goes when the body is too long: `--appendix`, else beside `--out`
/// (`pr.md` → `pr.appendix.md`), else `appendix.md` in the working directory.
fn appendix_path(args: &ReportArgs) -> PathBuf {
    if let Some(a) = &args.appendix {
        return a.clone();
    }
    match &args.out {
        Some(out) => {
            let stem = out
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "report".into());
            out.with_file_name(format!("{stem}.appendix.md"))
        }
        None => PathBuf::from("appendix.md"),
    }
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
    let report = evidence(&records);
    let text = match args.format {
        ReportFormat::Md => {
            let appendix = appendix_path(&args);
            let name = appendix
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let (body, rest) = pr_body(&args.title, &report, GITHUB_BODY_LIMIT, &name);
            if let Some(rest) = rest {
                let target = OutputArgs {
                    format: FormatArg::Md,
                    out: Some(appendix.clone()),
                    force: args.force,
                };
                output::write(&target, &rest)?;
                eprintln!(
                    "kernelab: the report passes GitHub's {GITHUB_BODY_LIMIT}-character limit; the rest is in {}",
                    appendix.display()
                );
            }
            body
        }
        ReportFormat::Html => evidence_html(&args.title, &report),
        ReportFormat::Json => output::json(&Document::new(
            "report",
            Summary {
                title: &args.title,
                records: &report.heads,
                impacts: &report.impacts,
            },
        ))?,
    };
    output::write(&out, &text)?;
    Ok(ExitStatus::Success)
}
