//! `kernelab report verify`: a bundle's records re-measured. Each record's command runs again
//! on this machine where it can, and its new result is held against the recorded one: the
//! same verdict with overlapping intervals (or, for a reading of files, the same document) is
//! reproduced; anything else moved, with the difference; a record this machine cannot re-run
//! says why. The environment of both runs is compared and what differs is named.

use crate::bundle::Entry;
use crate::table::{Align, Block, Table};
use kernelab_model::Provenance;
use kernelab_stats::Analysis;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What re-running a record found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Finding {
    /// The same verdict and overlapping intervals, or the same document.
    Reproduced,
    /// Another verdict, intervals that do not overlap, or another document.
    Moved,
    /// This machine cannot re-run it (why: `detail`).
    NotRerunnable,
}

impl Finding {
    /// Its name in the table.
    pub fn word(self) -> &'static str {
        match self {
            Finding::Reproduced => "reproduced",
            Finding::Moved => "moved",
            Finding::NotRerunnable => "not re-runnable here",
        }
    }
}

/// One record re-measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RecordVerification {
    /// The record's file in the bundle.
    pub file: String,
    /// Its kind.
    pub kind: String,
    /// Its label.
    pub label: String,
    /// What re-running it found.
    pub finding: Finding,
    /// The recorded figure and the new one (a verdict and interval, or the first difference
    /// between the documents), or why it was not re-run.
    pub detail: String,
    /// How this run's environment differs from the recorded one (host, GPU, kernelab version,
    /// git commit, and each field of the environment fingerprint); empty when nothing recorded
    /// differs.
    pub environment: Vec<String>,
    /// The conditions the recorded run measured under (its first round's environment
    /// fingerprint), where it recorded them (schema version 8 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_conditions: Option<kernelab_model::fingerprint::Fingerprint>,
    /// The conditions of the re-run here, where it recorded them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun_conditions: Option<kernelab_model::fingerprint::Fingerprint>,
}

/// `kernelab report verify BUNDLE` (`kind: "report_verify"`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Verification {
    /// One line per record, in the bundle's order.
    pub records: Vec<RecordVerification>,
}

impl kernelab_model::Body for Verification {
    const KIND: &'static str = "report_verify";
}

impl Verification {
    /// Whether every record that could be re-run was reproduced.
    pub fn reproduced(&self) -> bool {
        self.records.iter().all(|r| r.finding != Finding::Moved)
    }
}

/// A verdict with its ratio and interval: `SLOWER 1.0763 [1.0712, 1.0814]`.
fn verdict_text(a: &Analysis) -> String {
    match (a.ratio(), a.interval()) {
        (Some(r), Some(i)) => format!("{} {r:.4} [{:.4}, {:.4}]", a.verdict.name(), i.low, i.high),
        (Some(r), None) => format!("{} {r:.4}", a.verdict.name()),
        _ => a.verdict.name().to_string(),
    }
}

/// The recorded analysis `was` against the new one `now`: reproduced when the verdicts are
/// the same and the intervals overlap.
pub fn compare_analyses(was: &Analysis, now: &Analysis) -> (Finding, String) {
    let same = was.verdict == now.verdict;
    // `None`: one of them has no interval (too few pairs), so only the verdicts compare.
    let overlap = match (was.interval(), now.interval()) {
        (Some(a), Some(b)) => Some(a.overlaps(b)),
        _ => None,
    };
    let finding = if same && overlap != Some(false) {
        Finding::Reproduced
    } else {
        Finding::Moved
    };
    let why = match (same, overlap) {
        (true, Some(true)) => "same verdict, intervals overlap",
        (true, Some(false)) => "same verdict, intervals do not overlap",
        (true, None) => "same verdict; no interval to compare",
        (false, Some(true)) => "another verdict, intervals overlap",
        (false, Some(false)) => "another verdict, intervals do not overlap",
        (false, None) => "another verdict",
    };
    (
        finding,
        format!("{} → {} ({why})", verdict_text(was), verdict_text(now)),
    )
}

/// The recorded document `was` against the new one `now` (the records' `result`), without the
/// fields that name the writer (`kernelab_version`, `schema_version`): reproduced when equal,
/// else the first JSON path where they differ.
pub fn compare_documents(was: &Value, now: &Value) -> (Finding, String) {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove("kernelab_version");
            o.remove("schema_version");
        }
        v
    };
    match first_difference(&strip(was), &strip(now), String::new()) {
        None => (Finding::Reproduced, "the same document".into()),
        Some((path, a, b)) => (
            Finding::Moved,
            format!(
                "differs at {}: {} → {}",
                if path.is_empty() { "/" } else { &path },
                short(&a),
                short(&b)
            ),
        ),
    }
}

/// A value as JSON, cut to 80 characters.
fn short(v: &Value) -> String {
    let t = v.to_string();
    if t.chars().count() > 80 {
        format!("{}…", t.chars().take(79).collect::<String>())
    } else {
        t
    }
}

/// The first path (JSON pointer) where `a` and `b` differ, with the two values there.
fn first_difference(a: &Value, b: &Value, at: String) -> Option<(String, Value, Value)> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|k| {
                let (p, q) = (
                    x.get(k).cloned().unwrap_or(Value::Null),
                    y.get(k).cloned().unwrap_or(Value::Null),
                );
                first_difference(&p, &q, format!("{at}/{k}"))
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, format!("{at}/{i}"))),
        _ if a == b => None,
        _ => Some((at, a.clone(), b.clone())),
    }
}

/// What differs between the recorded environment `was` and this run's `now`: host, GPU,
/// kernelab version and git commit, each named with both values.
pub fn environment_changes(was: &Provenance, now: &Provenance) -> Vec<String> {
    let mut out = Vec::new();
    let mut differ = |what: &str, a: Option<&str>, b: Option<&str>| {
        if a != b {
            out.push(format!(
                "{what}: {} → {}",
                a.unwrap_or("not recorded"),
                b.unwrap_or("not recorded")
            ));
        }
    };
    differ("host", was.host.as_deref(), now.host.as_deref());
    differ("GPU", was.gpu.as_deref(), now.gpu.as_deref());
    differ(
        "kernelab",
        Some(was.kernelab_version.as_str()),
        Some(now.kernelab_version.as_str()),
    );
    differ(
        "git commit",
        was.git.as_ref().map(|g| g.commit.as_str()),
        now.git.as_ref().map(|g| g.commit.as_str()),
    );
    out
}

/// The environment fingerprint a record's result holds (`conditions.fingerprint` of an `ab` or
/// `kernel_run` document), when it holds one.
pub fn conditions_of(result: &Value) -> Option<kernelab_model::fingerprint::Fingerprint> {
    serde_json::from_value(result.get("conditions")?.get("fingerprint")?.clone()).ok()
}

/// Each field of the environment fingerprint that differs between the recorded run and the
/// re-run, as `field: recorded → now` (nothing when either recorded none).
pub fn conditions_changes(
    was: Option<&kernelab_model::fingerprint::Fingerprint>,
    now: Option<&kernelab_model::fingerprint::Fingerprint>,
) -> Vec<String> {
    let (Some(was), Some(now)) = (was, now) else {
        return Vec::new();
    };
    let v = |x: Option<String>| x.unwrap_or_else(|| "unavailable".into());
    was.differences(now)
        .into_iter()
        .map(|(field, a, b)| format!("{field}: {} → {}", v(a), v(b)))
        .collect()
}

/// The recorded entry `was` against its re-run `now`: its analysis when the kind has one,
/// else its document (`was_result`, `now_result`).
pub fn compare_entries(
    was: &Entry,
    now: &Entry,
    was_result: &Value,
    now_result: &Value,
) -> (Finding, String) {
    match (
        was.evidence.kind().analysis(),
        now.evidence.kind().analysis(),
    ) {
        (Some(a), Some(b)) => compare_analyses(a, b),
        _ => compare_documents(was_result, now_result),
    }
}

/// The verification as a headline and one row per record.
pub fn verify_sections(v: &Verification) -> Vec<Block> {
    let count = |f: Finding| v.records.iter().filter(|r| r.finding == f).count();
    let head = Block::List {
        title: "Re-measured on this machine".into(),
        lines: vec![format!(
            "{} reproduced, {} moved, {} not re-runnable here, of {}",
            count(Finding::Reproduced),
            count(Finding::Moved),
            count(Finding::NotRerunnable),
            crate::format::count(v.records.len(), "record", "records")
        )],
    };
    let mut t = Table::new(
        "Records",
        &[
            ("record", Align::Left),
            ("kind", Align::Left),
            ("label", Align::Left),
            ("finding", Align::Left),
            ("recorded → now", Align::Left),
            ("environment changes", Align::Left),
        ],
    );
    for r in &v.records {
        t.push(vec![
            r.file.clone(),
            r.kind.clone(),
            r.label.clone(),
            r.finding.word().into(),
            r.detail.clone(),
            if r.environment.is_empty() {
                "none recorded".into()
            } else {
                r.environment.join("; ")
            },
        ]);
    }
    let mut out = vec![head, Block::Table(t)];
    let mut lines = Vec::new();
    for r in &v.records {
        let line = |c: &Option<kernelab_model::fingerprint::Fingerprint>| {
            c.as_ref().map_or("not recorded".into(), |f| f.line())
        };
        if r.recorded_conditions.is_some() || r.rerun_conditions.is_some() {
            lines.push(format!(
                "{} recorded under: {}",
                r.file,
                line(&r.recorded_conditions)
            ));
            lines.push(format!(
                "{} re-run under: {}",
                r.file,
                line(&r.rerun_conditions)
            ));
        }
    }
    if !lines.is_empty() {
        out.push(Block::List {
            title: "Conditions (environment fingerprints)".into(),
            lines,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn documents_are_compared_without_the_writer_and_name_the_first_difference() {
        let was =
            json!({"kernelab_version": "0.1.0", "schema_version": 6, "rows": [1, 2, {"a": 3}]});
        let same =
            json!({"kernelab_version": "0.2.0", "schema_version": 7, "rows": [1, 2, {"a": 3}]});
        assert_eq!(compare_documents(&was, &same).0, Finding::Reproduced);
        let moved = json!({"kernelab_version": "0.1.0", "rows": [1, 2, {"a": 4}]});
        assert_eq!(
            compare_documents(&was, &moved),
            (Finding::Moved, "differs at /rows/2/a: 3 → 4".to_string())
        );
        let longer = json!({"rows": [1, 2, {"a": 3}, 5]});
        assert_eq!(
            compare_documents(&was, &longer).1,
            "differs at /rows: [1,2,{\"a\":3}] → [1,2,{\"a\":3},5]"
        );
    }

    #[test]
    fn environments_name_what_differs() {
        let was = Provenance {
            host: Some("a".into()),
            kernelab_version: "0.1.0".into(),
            ..Provenance::default()
        };
        let now = Provenance {
            host: Some("b".into()),
            kernelab_version: "0.1.0".into(),
            ..Provenance::default()
        };
        assert_eq!(
            environment_changes(&was, &now),
            vec!["host: a → b".to_string()]
        );
        assert!(environment_changes(&was, &was).is_empty());
    }
}
