//! The summary at the top of the report: one row per label and kind (gates N/N, verdict, ratio
//! with its interval, a status mark), and the verdicts the forest plot draws.

use crate::bundle::Entry;
use crate::format::pair_text;
use crate::svg::Verdicts;
use crate::table::{Align, Table};

use crate::kinds::Mark;

/// A summary row before merging.
struct Row {
    label: String,
    kind: String,
    gates: Option<(usize, usize)>,
    verdict: String,
    ratio: Option<(f64, Option<(f64, f64)>)>,
    mark: Mark,
}

/// A record's gates as the summary counts them: (passed, run), for gate records.
pub(crate) fn gates(e: &Entry) -> Option<(usize, usize)> {
    row(e).gates
}

fn row(e: &Entry) -> Row {
    let marked: [String; 0] = [];
    let ctx = crate::kinds::Ctx {
        label: &e.record.label,
        marked: &marked,
    };
    let s = e.evidence.kind().summary(&ctx);
    Row {
        label: e.record.label.clone(),
        kind: e.record.kind.clone(),
        gates: s.gates,
        verdict: s.verdict,
        ratio: s.ratio,
        mark: s.mark,
    }
}

/// The summary table: one row per label and kind, in the order labels first appear; several
/// records of one label and kind add their gates and join their verdicts.
pub(super) fn summary_table(entries: &[Entry]) -> Table {
    let mut rows: Vec<Row> = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    for e in entries {
        let r = row(e);
        if !labels.contains(&r.label) {
            labels.push(r.label.clone());
        }
        match rows
            .iter_mut()
            .find(|x| x.label == r.label && x.kind == r.kind)
        {
            Some(x) => {
                x.gates = match (x.gates, r.gates) {
                    (Some((p, t)), Some((q, u))) => Some((p + q, t + u)),
                    (a, b) => a.or(b),
                };
                if !x.verdict.contains(&r.verdict) {
                    x.verdict = format!("{}; {}", x.verdict, r.verdict);
                }
                x.ratio = None;
                x.mark = x.mark.max(r.mark);
            }
            None => rows.push(r),
        }
    }
    rows.sort_by_key(|r| labels.iter().position(|l| *l == r.label));
    let mut t = Table::new(
        "Summary (ratio = candidate / baseline; < 1 is faster)",
        &[
            ("", Align::Left),
            ("label", Align::Left),
            ("evidence", Align::Left),
            ("gates", Align::Right),
            ("verdict", Align::Left),
            ("ratio [interval]", Align::Right),
        ],
    );
    for r in rows {
        t.push(vec![
            r.mark.text().into(),
            r.label,
            r.kind,
            r.gates
                .map(|(p, t)| format!("{p}/{t}"))
                .unwrap_or_else(|| "–".into()),
            r.verdict,
            r.ratio
                .map(|(x, ci)| pair_text(x, ci))
                .unwrap_or_else(|| "–".into()),
        ]);
    }
    t
}

/// Every timed verdict with an interval (kernel runs and A/B runs), for the forest plot.
pub(crate) fn verdicts(entries: &[Entry]) -> Vec<Verdicts> {
    let timed: Vec<(&Entry, &kernelab_stats::Analysis)> = entries
        .iter()
        .filter_map(|e| e.evidence.kind().analysis().map(|a| (e, a)))
        .collect();
    timed
        .iter()
        .filter_map(|(e, a)| {
            let same_label = timed
                .iter()
                .filter(|(o, _)| o.record.label == e.record.label)
                .count();
            Some(Verdicts {
                name: if same_label > 1 {
                    format!("{} ({})", e.record.label, e.record.kind)
                } else {
                    e.record.label.clone()
                },
                ratio: a.ratio()?,
                ci: crate::kinds::ends(a.interval()),
                threshold: Some(a.threshold),
                verdict: a.verdict.name().into(),
            })
        })
        .collect()
}
