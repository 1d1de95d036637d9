//! `kernelab report DIR` and `kernelab report check NOTE --bundle DIR`.

use crate::cli::{
    FormatArg, OutputArgs, ReportArgs, ReportCheckArgs, ReportCommand, ReportFormat,
    ReportVerifyArgs,
};
use crate::emit::emit;
use crate::output;
use crate::progress::CliHooks;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{bail, Result};
use kernelab_commands::bundle::{
    bundle_report, check_note, pr_body_with_appendix, read_intro, report_summary,
};
use kernelab_report::{evidence_html, GITHUB_BODY_LIMIT};
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

/// `kernelab report check`: the note's mismatches against the bundle; exit 1 when any.
fn check(args: ReportCheckArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&args.output)?;
    if args.output.format == FormatArg::Csv {
        bail!("kernelab report check writes table, md or json, not csv");
    }
    emit(
        check_note(&args.note, &args.bundle, args.strict)?,
        &args.output,
        session,
    )
}

/// `kernelab report verify`: the bundle's records re-run by this binary; exit 1 when any
/// moved.
fn verify(args: ReportVerifyArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&args.output)?;
    if args.output.format == FormatArg::Csv {
        bail!("kernelab report verify writes table, md or json, not csv");
    }
    let settings = kernelab_commands::verify::VerifySettings {
        bundle: args.bundle,
        exe: crate::self_exe()?,
    };
    let outcome = kernelab_commands::verify::verify(&settings, &CliHooks::in_place())?;
    emit(outcome, &args.output, session)
}

/// Runs the command.
pub(crate) fn run(args: ReportArgs, session: &mut Session) -> Result<ExitStatus> {
    match args.command {
        Some(ReportCommand::Check(c)) => return check(c, session),
        Some(ReportCommand::Verify(v)) => return verify(v, session),
        None => {}
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
        report.intro = Some(read_intro(p)?);
    }
    let text = match args.format {
        ReportFormat::Md => {
            let appendix = appendix_path(&args);
            let (body, rest) = pr_body_with_appendix(&args.title, &report, appendix.as_deref())?;
            if let (Some(rest), Some(appendix)) = (rest, appendix) {
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
