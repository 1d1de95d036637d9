//! `report` and `report check`: the records of an evidence bundle, its report, and the audit of
//! a note against it.

use anyhow::{anyhow, bail, Context, Result};
use kernelab_model::Document;
use kernelab_report::bundle::{self, Bad, Entry};
use std::io::Read;
use std::path::Path;

/// The records of the bundle `dir` and those that could not be read: at least one record, or
/// an error naming the folder.
pub fn bundle_records(dir: &Path) -> Result<(Vec<Entry>, Vec<Bad>)> {
    if !dir.is_dir() {
        bail!(
            "{}: not a directory; expected a bundle written with --record DIR",
            dir.display()
        );
    }
    let (records, bad) = bundle::read_all(dir)?;
    if records.is_empty() {
        if let Some(b) = bad.into_iter().next() {
            return Err(b.error.into());
        }
        bail!(
            "{}: no records; run commands with --record {} first",
            dir.display(),
            dir.display()
        );
    }
    Ok((records, bad))
}

/// The largest note read.
pub const MAX_NOTE_BYTES: u64 = 64 << 20;

/// The text of the note `path` that `report check` audits: UTF-8, at most [`MAX_NOTE_BYTES`].
pub fn read_note(path: &Path) -> Result<String> {
    let file = kernelab_model::open_regular(path).with_context(|| path.display().to_string())?;
    let mut bytes = Vec::new();
    file.take(MAX_NOTE_BYTES + 1)
        .read_to_end(&mut bytes)
        .with_context(|| path.display().to_string())?;
    if bytes.len() as u64 > MAX_NOTE_BYTES {
        bail!(
            "{}: larger than {MAX_NOTE_BYTES} bytes; not a note",
            path.display()
        );
    }
    String::from_utf8(bytes).map_err(|e| {
        anyhow!(
            "{}: not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

/// The evidence report of the bundle `dir`: records that cannot be read are listed as
/// unreadable (with a warning from the caller), or refused with `strict`.
pub fn bundle_report(dir: &Path, strict: bool) -> Result<kernelab_report::Report> {
    let (records, mut bad) = bundle_records(dir)?;
    if strict && !bad.is_empty() {
        return Err(bad.swap_remove(0).error.into());
    }
    let mut report = kernelab_report::evidence(&records);
    report.unreadable = bad.iter().map(Bad::unreadable).collect();
    Ok(report)
}

/// The largest introduction read (`report --intro`).
pub const MAX_INTRO_BYTES: u64 = 1 << 20;

/// The introduction at `path` (`report --intro`): UTF-8 text of at most [`MAX_INTRO_BYTES`].
pub fn read_intro(path: &Path) -> Result<String> {
    let f = kernelab_model::open_regular(path)
        .with_context(|| format!("{}: reading the introduction", path.display()))?;
    let mut text = String::new();
    f.take(MAX_INTRO_BYTES + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("{}: not UTF-8 text", path.display()))?;
    if text.len() as u64 > MAX_INTRO_BYTES {
        bail!(
            "{}: larger than {MAX_INTRO_BYTES} bytes; an introduction is a few paragraphs",
            path.display()
        );
    }
    Ok(text)
}

/// The pull-request body of `report` within GitHub's limit, and what passes it (the
/// appendix, to be written at `appendix`, which the body names); an error when the body passes
/// the limit and there is no appendix to write.
pub fn pr_body_with_appendix(
    title: &str,
    report: &kernelab_report::Report,
    appendix: Option<&Path>,
) -> Result<(String, Option<String>)> {
    use kernelab_report::GITHUB_BODY_LIMIT;
    let name = appendix
        .and_then(|a| a.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (body, rest) = kernelab_report::pr_body(title, report, GITHUB_BODY_LIMIT, &name);
    if rest.is_some() && appendix.is_none() {
        bail!(
            "the report passes GitHub's {GITHUB_BODY_LIMIT}-character pull-request body limit, so part of it goes to an appendix: give --out FILE (the appendix goes beside it) or --appendix FILE"
        );
    }
    Ok((body, rest))
}

/// `kernelab report --format json` (`kind: "report"`): the title, every record's headline
/// and the request impacts (the one type of the document, with its JSON Schema).
pub fn report_summary(
    title: &str,
    report: &kernelab_report::Report,
) -> Document<kernelab_report::schema::ReportSummary> {
    Document::of(kernelab_report::schema::ReportSummary {
        title: title.to_string(),
        records: report.heads.clone(),
        impacts: report.impacts.clone(),
    })
}

/// The `report_check` document: the figures of `note` that the bundle `dir` does not
/// support, and the records that could not be read (the note is checked against the others).
pub fn report_check(
    note: &str,
    dir: &Path,
) -> Result<(
    Document<kernelab_report::audit::Audit>,
    Vec<kernelab_report::bundle::Unreadable>,
)> {
    let (entries, bad) = bundle_records(dir)?;
    let found = kernelab_report::audit::audit(note, &entries);
    Ok((
        Document::of(found),
        bad.iter().map(Bad::unreadable).collect(),
    ))
}

/// `report check`: the figures of the note `note` that the bundle `dir` contradicts, failing
/// when any (and, with `strict`, when any figure is not backed by the bundle). Records that
/// cannot be read are named in the outcome's notes (the note is checked against the others).
pub fn check_note(note: &Path, dir: &Path, strict: bool) -> Result<crate::Outcome> {
    let text = read_note(note)?;
    let (doc, unreadable) = report_check(&text, dir)?;
    let pass = doc.body.mismatches.is_empty() && (!strict || doc.body.unbacked.is_empty());
    let view = crate::View::shared(doc, |doc, _| {
        kernelab_report::audit::audit_sections(&doc.body)
    })
    .without_csv("kernelab report check writes table, md or json, not csv");
    let mut outcome = crate::Outcome::new(view, crate::Status::of(pass));
    for u in &unreadable {
        outcome = outcome.noting(format!(
            "warning: {}: not read ({}); the note is checked against the other records",
            u.path.display(),
            u.reason
        ));
    }
    Ok(outcome)
}
