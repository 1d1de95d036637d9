//! `kernelab report DIR` and `kernelab report check NOTE --bundle DIR`.

use crate::cli::{FormatArg, OutputArgs, ReportArgs, ReportCheckArgs, ReportCommand, ReportFormat};
use crate::emit::emit;
use crate::output;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{bail, Context, Result};
use kernelab_commands::bundle::{bundle_report, check_note, report_summary};
use kernelab_report::{evidence_html, pr_body, GITHUB_BODY_LIMIT};
use std::io::Read;
use std::path::PathBuf;

/// Where the appendix goes when the body is too long: `--appendix`, else beside `--out`
/// (`pr.md` → `pr.appendix.md`); `None` when the body goes to standard output (nothing is
/// written where the user did not ask).
fn appendix_path(args: &ReportArgs) -> Option<PathBuf> {
    if let Some(a) = &args.appendix {
        return Some(a.clone());
    }
    args.out.as_ref().map(|out| {
        let stem = out
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "report".into());
        out.with_file_name(format!("{stem}.appendix.md"))
    })
}

/// The largest introduction read.
const MAX_INTRO_BYTES: u64 = 1 << 20;

/// `kernelab report check`: the note's mismatches against the bundle; exit 1 when any.
fn check(args: ReportCheckArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&args.output)?;
    if args.output.format == FormatArg::Csv {
        bail!("kernelab report check writes table, md or json, not csv");
    }
    emit(check_note(&args.note, &args.bundle)?, &args.output, session)
}

/// Runs the command.
pub(crate) fn run(args: ReportArgs, session: &mut Session) -> Result<ExitStatus> {
    if let Some(ReportCommand::Check(c)) = args.command {
        return check(c, session);
    }
    let Some(dir) = args.dir.clone() else {
        bail!("kernelab report needs a bundle directory (or `check NOTE --bundle DIR`)");
    };
    let out = OutputArgs {
        format: FormatArg::Md,
        out: args.out.clone(),
        force: args.force,
        wide: false,
    };
    output::check_target(&out)?;
    let mut report = bundle_report(&dir, args.strict)?;
    for u in &report.unreadable {
        output::to_stderr(&format!(
            "kernelab: warning: {}: not read ({}); the rest of the bundle renders (--strict refuses)",
            u.path.display(),
            u.reason
        ));
    }
    if let Some(p) = &args.intro {
        let f = kernelab_model::open_regular(p)
            .with_context(|| format!("{}: reading the introduction", p.display()))?;
        let mut text = String::new();
        f.take(MAX_INTRO_BYTES + 1)
            .read_to_string(&mut text)
            .with_context(|| format!("{}: not UTF-8 text", p.display()))?;
        if text.len() as u64 > MAX_INTRO_BYTES {
            bail!(
                "{}: larger than {MAX_INTRO_BYTES} bytes; an introduction is a few paragraphs",
                p.display()
            );
        }
        report.intro = Some(text);
    }
    let text = match args.format {
        ReportFormat::Md => {
            let appendix = appendix_path(&args);
            let name = appendix
                .as_ref()
                .and_then(|a| a.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let (body, rest) = pr_body(&args.title, &report, GITHUB_BODY_LIMIT, &name);
            if let Some(rest) = rest {
                let Some(appendix) = appendix else {
                    bail!(
                        "the report passes GitHub's {GITHUB_BODY_LIMIT}-character pull-request body limit, so part of it goes to an appendix: give --out FILE (the appendix goes beside it) or --appendix FILE"
                    );
                };
                let target = OutputArgs {
                    format: FormatArg::Md,
                    out: Some(appendix.clone()),
                    force: args.force,
                    wide: false,
                };
                output::write(&target, &rest)?;
                output::to_stderr(&format!(
                    "kernelab: the report passes GitHub's {GITHUB_BODY_LIMIT}-character limit; the rest is in {}",
                    appendix.display()
                ));
            }
            body
        }
        ReportFormat::Html => evidence_html(&args.title, &report),
        ReportFormat::Json => kernelab_commands::json(&report_summary(&args.title, &report))?,
    };
    output::write(&out, &text)?;
    Ok(ExitStatus::Success)
}
