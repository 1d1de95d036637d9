//! The one emitter: every command's [`Outcome`] is recorded, drawn in the chosen format at the
//! one width policy, written to standard output or `--out`, and turned into the exit status
//! here, and nowhere else.

use crate::cli::{FormatArg, OutputArgs};
use crate::output;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{bail, Context, Result};
use kernelab_commands::{Csv, Medium, Outcome, Status};
use kernelab_report::{render, OutputFormat};

/// The text of `outcome`'s view in the format `out` asks for.
pub(crate) fn text(outcome: &Outcome, out: &OutputArgs) -> Result<String> {
    let view = &outcome.view;
    Ok(match out.format {
        FormatArg::Table => render(
            &(view.blocks)(Medium::Terminal)?,
            OutputFormat::Terminal,
            output::terminal_width(out),
        ),
        FormatArg::Md => render(
            &(view.blocks)(Medium::Markdown)?,
            OutputFormat::Markdown,
            None,
        ),
        FormatArg::Json => (view.json)()?,
        FormatArg::Csv => match &view.csv {
            Csv::Rows(rows) => rows()?,
            Csv::Refused(why) => bail!("{why}"),
        },
    })
}

/// Emits `outcome`: its notes to standard error, its records made and kept when `session`
/// records (written once the command has succeeded), its files (charts) and its view written
/// where the user said; returns its exit status.
pub(crate) fn emit(
    outcome: Outcome,
    out: &OutputArgs,
    session: &mut Session,
) -> Result<ExitStatus> {
    for note in &outcome.notes {
        output::to_stderr(&format!("kernelab: {note}"));
    }
    let text = text(&outcome, out)?;
    if session.enabled() {
        for record in outcome.records {
            session.keep(record()?);
        }
    }
    for file in &outcome.files {
        output::write_file(&file.path, file.text.as_bytes(), out.force || file.replace)
            .with_context(|| format!("{}: cannot write", file.option))?;
    }
    output::write(out, &text)?;
    for note in &outcome.late_notes {
        output::to_stderr(&format!("kernelab: {note}"));
    }
    Ok(match outcome.status {
        Status::Pass => ExitStatus::Success,
        Status::Fail => ExitStatus::Failure,
        Status::Incomplete => ExitStatus::Error,
    })
}
