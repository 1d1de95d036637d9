//! `report verify`: each record of a bundle re-run on this machine with the kernelab binary
//! given, its new result held against the recorded one (docs/report.md, "Re-measuring a
//! bundle").

use crate::bundle::bundle_records;
use crate::{Hooks, Outcome, Status, View};
use anyhow::Result;
use kernelab_model::Document;
use kernelab_report::bundle::{self, Entry};
use kernelab_report::verify::{
    compare_entries, conditions_changes, conditions_of, environment_changes, verify_sections,
    Finding, RecordVerification, Verification,
};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `report verify` as a user asks for it.
#[derive(Clone, Debug)]
pub struct VerifySettings {
    /// The bundle whose records are re-run.
    pub bundle: PathBuf,
    /// The kernelab binary that re-runs them (the running one, for the CLI).
    pub exe: PathBuf,
}

/// Options that name where a record went or how it was shown: left off a re-run, which records
/// into a bundle of its own and writes JSON.
const DROPPED: [&str; 4] = ["--record", "--label", "--out", "--format"];

/// The arguments that re-run the command `argv` recorded (its program left off), recording
/// into `into` under `label`.
fn rerun_args(argv: &[String], into: &Path, label: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut args = argv.iter().skip(1);
    while let Some(a) = args.next() {
        if DROPPED.contains(&a.as_str()) {
            args.next();
            continue;
        }
        if a == "--force" || DROPPED.iter().any(|d| a.starts_with(&format!("{d}="))) {
            continue;
        }
        out.push(a.clone());
    }
    out.extend([
        "--record".into(),
        into.display().to_string(),
        "--label".into(),
        label.to_string(),
        "--format".into(),
        "json".into(),
    ]);
    out
}

/// Why the record `e` cannot be re-run here before trying: no command, or an input its command
/// names that is missing or changed since it was recorded (a re-run would measure something
/// else). Files a run wrote itself (an `ab` run's samples) are not its inputs.
fn not_rerunnable(e: &Entry) -> Option<String> {
    let p = &e.record.provenance;
    if p.argv.len() < 2 {
        return Some("no command recorded".into());
    }
    let named = |path: &str| {
        let name = Path::new(path).file_name();
        p.argv.iter().any(|a| Path::new(a).file_name() == name)
    };
    for i in p.inputs.iter().filter(|i| named(&i.path)) {
        let Some(want) = &i.sha256 else { continue };
        let file = match kernelab_model::open_regular(Path::new(&i.path)) {
            Ok(f) => f,
            Err(_) => return Some(format!("input {} is not here", i.path)),
        };
        match kernelab_model::sha256_reader(std::io::BufReader::new(file)) {
            Ok((got, _)) if &got == want => {}
            Ok(_) => return Some(format!("input {} changed since it was recorded", i.path)),
            Err(e) => return Some(format!("input {}: cannot read: {e}", i.path)),
        }
    }
    None
}

/// The recorded result of the record file `path` (its `result`, the command's document).
fn result_of(path: &Path) -> Result<Value> {
    let text = bundle::read_record_text(path)?;
    let v: Value = serde_json::from_str(&text)?;
    Ok(v.get("result").cloned().unwrap_or(Value::Null))
}

/// The last line of `stderr`, for a re-run that failed.
fn last_line(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no message")
        .chars()
        .take(200)
        .collect()
}

/// Re-runs the record `e` with `exe`, recording into `into`, and holds the new result against
/// the recorded one.
fn one(e: &Entry, exe: &Path, into: &Path) -> RecordVerification {
    let mut v = RecordVerification {
        file: e
            .path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default(),
        kind: e.record.kind.clone(),
        label: e.record.label.clone(),
        finding: Finding::NotRerunnable,
        detail: String::new(),
        environment: Vec::new(),
        recorded_conditions: None,
        rerun_conditions: None,
    };
    if let Some(why) = not_rerunnable(e) {
        v.detail = why;
        return v;
    }
    let args = rerun_args(&e.record.provenance.argv, into, &e.record.label);
    let out = match std::process::Command::new(exe)
        .args(&args)
        .stdin(std::process::Stdio::null())
        .output()
    {
        Ok(o) => o,
        Err(err) => {
            v.detail = format!("{}: cannot start: {err}", exe.display());
            return v;
        }
    };
    // 0 and 1 (a gate failed) both leave a result; 2 is an error or bad input here.
    if !matches!(out.status.code(), Some(0 | 1)) {
        v.detail = format!("the command failed here: {}", last_line(&out.stderr));
        return v;
    }
    let now = match bundle::read_all(into) {
        Ok((entries, _)) => entries.into_iter().find(|n| n.record.kind == e.record.kind),
        Err(_) => None,
    };
    let Some(now) = now else {
        v.detail = "the command ran but recorded nothing of this kind".into();
        return v;
    };
    v.environment = environment_changes(&e.record.provenance, &now.record.provenance);
    let results = (result_of(&e.path), result_of(&now.path));
    if let (Ok(a), Ok(b)) = &results {
        v.recorded_conditions = conditions_of(a);
        v.rerun_conditions = conditions_of(b);
        v.environment.extend(conditions_changes(
            v.recorded_conditions.as_ref(),
            v.rerun_conditions.as_ref(),
        ));
    }
    let (was_gpu, now_gpu) = (&e.record.provenance.gpu, &now.record.provenance.gpu);
    if let (Some(a), Some(b)) = (was_gpu, now_gpu) {
        if a != b {
            v.detail = format!("recorded on {a}; this machine's GPU is {b}");
            return v;
        }
    }
    match results {
        (Ok(a), Ok(b)) => {
            let (finding, detail) = compare_entries(e, &now, &a, &b);
            v.finding = finding;
            v.detail = detail;
        }
        (Err(err), _) | (_, Err(err)) => v.detail = format!("cannot read a result: {err}"),
    }
    v
}

/// `report verify`: every record of the bundle re-run here and held against the recorded one;
/// failing when any moved. Records that cannot be read are named in the notes.
pub fn verify(s: &VerifySettings, hooks: &dyn Hooks) -> Result<Outcome> {
    let (entries, bad) = bundle_records(&s.bundle)?;
    let scratch = tempfile::tempdir()?;
    let bar = hooks.counter(
        entries.len() as u64,
        "re-running {bar:30} record {pos}/{len}",
        "records",
    );
    let mut found = Verification::default();
    for (i, e) in entries.iter().enumerate() {
        let into = scratch.path().join(format!("{i:04}"));
        found.records.push(one(e, &s.exe, &into));
        bar.set_position(i as u64 + 1);
    }
    bar.finish();
    let pass = found.reproduced();
    let doc = Document::of(found);
    let record = crate::Recordable::of(&doc, &[], None)?;
    let view = View::shared(doc, |d, _| verify_sections(&d.body))
        .without_csv("kernelab report verify writes table, md or json, not csv");
    let mut outcome = Outcome::new(view, Status::of(pass)).recording(record);
    for b in &bad {
        let u = b.unreadable();
        outcome = outcome.noting(format!(
            "warning: {}: not read ({}); not re-run",
            u.path.display(),
            u.reason
        ));
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rerun_drops_where_the_record_went_and_records_into_its_own_bundle() {
        let argv: Vec<String> = [
            "/opt/kernelab",
            "check",
            "bitwise",
            "a.npz",
            "b.npz",
            "--record",
            "/b",
            "--label=x",
            "--out",
            "o.json",
            "--force",
            "--format",
            "md",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            rerun_args(&argv, Path::new("/tmp/r"), "w8s2"),
            [
                "check", "bitwise", "a.npz", "b.npz", "--record", "/tmp/r", "--label", "w8s2",
                "--format", "json"
            ]
        );
    }
}
