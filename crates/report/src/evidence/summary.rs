//! The summary at the top of the report: one row per label and kind (gates N/N, verdict, ratio
//! with its interval, a status mark), and the verdicts the forest plot draws.

use crate::bundle::Entry;
use crate::documents::Evidence;
use crate::format::percent;
use crate::table::{Align, Table};
use kernelab_stats::{Change, Verdict};
use kernelab_trace::Status;

/// How a row reads at a glance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Mark {
    /// Gates passed, no slower verdict.
    Good,
    /// Slower, or no decision.
    Warn,
    /// A gate failed.
    Fail,
}

impl Mark {
    fn text(self) -> &'static str {
        match self {
            Mark::Good => "✔",
            Mark::Warn => "⚠",
            Mark::Fail => "✘",
        }
    }
}

/// One verdict with an interval, for the forest plot.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdicts {
    /// Label (and kind, when the label has several timed records).
    pub name: String,
    /// Candidate / baseline.
    pub ratio: f64,
    /// Its interval.
    pub ci: Option<(f64, f64)>,
    /// The practical threshold δ (fraction), when known.
    pub threshold: Option<f64>,
    /// The verdict word.
    pub verdict: String,
}

/// A summary row before merging.
struct Row {
    label: String,
    kind: String,
    gates: Option<(usize, usize)>,
    verdict: String,
    ratio: Option<(f64, Option<(f64, f64)>)>,
    mark: Mark,
}

/// A change as the summary's (ratio, interval) pair; `None` when unavailable.
fn pair(c: &Change) -> Option<(f64, Option<(f64, f64)>)> {
    Some((c.ratio()?, super::parts::ends(c.interval())))
}

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => "FASTER",
        Verdict::Slower => "SLOWER",
        Verdict::Same => "SAME",
        Verdict::Inconclusive => "INCONCLUSIVE",
    }
}

fn verdict_mark(v: Verdict) -> Mark {
    match v {
        Verdict::Faster | Verdict::Same => Mark::Good,
        Verdict::Slower | Verdict::Inconclusive => Mark::Warn,
    }
}

fn gate_mark(passed: usize, total: usize) -> Mark {
    if passed == total {
        Mark::Good
    } else {
        Mark::Fail
    }
}

fn count<T>(items: &[T], ok: impl Fn(&T) -> bool) -> (usize, usize) {
    (items.iter().filter(|t| ok(t)).count(), items.len())
}

/// A record's gates as the summary counts them: (passed, run), for gate records.
pub(crate) fn gates(e: &Entry) -> Option<(usize, usize)> {
    row(e).gates
}

fn row(e: &Entry) -> Row {
    let (gates, verdict, ratio, mark): (Option<(usize, usize)>, String, _, Mark) = match &e.evidence
    {
        Evidence::KernelRun(k) => {
            let g = count(&k.run.gates, |g| g.passed);
            match &k.run.analysis {
                Some(a) => (
                    Some(g),
                    verdict_word(a.verdict).into(),
                    pair(&a.change),
                    gate_mark(g.0, g.1).max(verdict_mark(a.verdict)),
                ),
                None => (Some(g), "not timed".into(), None, gate_mark(g.0, g.1)),
            }
        }
        Evidence::Serve(s) => {
            let id = &s.result.identity;
            let g = (id.identical, id.compared);
            let called = s
                .result
                .metrics
                .iter()
                .filter(|m| m.metric == "e2e_mean_s" || m.metric == "tpot_mean_s")
                .find_map(|m| Some((m, m.analysis.as_ref()?)));
            match called {
                Some((m, a)) => (
                    Some(g),
                    format!(
                        "{} ({} at concurrency {})",
                        verdict_word(a.verdict),
                        m.metric,
                        m.concurrency
                    ),
                    pair(&a.change),
                    gate_mark(g.0, g.1).max(verdict_mark(a.verdict)),
                ),
                None => (Some(g), "no metric analysed".into(), None, Mark::Warn),
            }
        }
        Evidence::Ab(a) => match a.result.analyses.first() {
            Some(m) => (
                None,
                format!("{} ({})", verdict_word(m.analysis.verdict), m.metric),
                pair(&m.analysis.change),
                verdict_mark(m.analysis.verdict),
            ),
            None => (None, "no metric analysed".into(), None, Mark::Warn),
        },
        Evidence::Compare(c) => {
            let changed: Vec<_> = c
                .comparison
                .families
                .iter()
                .filter(|f| matches!(f.status, Status::Faster | Status::Slower | Status::Changed))
                .collect();
            let slower = changed.iter().any(|f| f.status == Status::Slower);
            let verdict = match changed.first() {
                None => "no family changed beyond the noise".into(),
                Some(_) => changed
                    .iter()
                    .map(|f| {
                        format!(
                            "{} {}",
                            f.family,
                            f.change
                                .change()
                                .map(|c| percent(c, true))
                                .unwrap_or_default()
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("; "),
            };
            let ratio = (changed.len() == 1)
                .then(|| changed[0].change.ratio().map(|r| (r, None)))
                .flatten();
            let mark = if slower { Mark::Warn } else { Mark::Good };
            (None, verdict, ratio, mark)
        }
        Evidence::Profile(p) => (
            None,
            p.kernels
                .first()
                .map(|r| format!("top: {} {}", r.name, percent(r.share, false)))
                .unwrap_or_else(|| "no kernels".into()),
            None,
            Mark::Good,
        ),
        Evidence::CodeDiff(d) => {
            let changed = d
                .kernels
                .iter()
                .filter(|k| k.code_changed.unwrap_or(true))
                .count();
            let text = format!(
                "{changed} of {} kernels changed{}",
                d.kernels.len(),
                if d.callouts.is_empty() {
                    ""
                } else {
                    "; spills or scratch"
                }
            );
            let mark = if d.callouts.is_empty() {
                Mark::Good
            } else {
                Mark::Warn
            };
            (None, text, None, mark)
        }
        Evidence::Counters(c) => {
            let flagged = c.run.changes.iter().filter(|x| x.flagged).count();
            let failed = c.run.failures().count();
            (
                None,
                format!(
                    "{} counter change(s) beyond the repeat spread; {} of {} profiler process(es) failed",
                    flagged,
                    failed,
                    c.run.processes.len()
                ),
                None,
                if failed > 0 { Mark::Warn } else { Mark::Good },
            )
        }
        Evidence::CodeMatrix(m) => (
            None,
            format!("{} of {} builds changed", m.changed, m.total),
            None,
            if m.callouts.is_empty() {
                Mark::Good
            } else {
                Mark::Warn
            },
        ),
        Evidence::CodeShow(s) => (
            None,
            format!(
                "{} kernels read",
                s.objects.iter().map(|o| o.kernels.len()).sum::<usize>()
            ),
            None,
            Mark::Good,
        ),
        Evidence::Ceilings(c) => (None, crate::roofline::ceilings_part(c).1, None, Mark::Good),
        Evidence::Roofline(r) => (None, crate::roofline::roofline_part(r).1, None, Mark::Good),
        Evidence::Metrics(m) => (
            None,
            format!("{} profiled launches", m.launches.len()),
            None,
            Mark::Good,
        ),
        Evidence::CheckBitwise(b) => {
            let g = count(&b.tensors, |t| {
                t.problem.is_none() && t.result.as_ref().is_some_and(|r| r.differing == 0)
            });
            (Some(g), pass_word(b.pass), None, pass_mark(b.pass))
        }
        Evidence::CheckClose(c, _) => {
            let g = count(&c.tensors, |t| {
                t.problem.is_none() && t.result.as_ref().is_some_and(|r| r.mismatches == 0)
            });
            (Some(g), pass_word(c.pass), None, pass_mark(c.pass))
        }
        Evidence::Sweep(m) => (
            Some((m.passed, m.total)),
            m.lines
                .first()
                .cloned()
                .unwrap_or_else(|| pass_word(m.pass)),
            None,
            gate_mark(m.passed, m.total),
        ),
        Evidence::CheckFinite(f) => {
            let all: Vec<_> = f.files.iter().flat_map(|f| &f.tensors).collect();
            let g = count(&all, |t| t.report.all_finite());
            (Some(g), pass_word(f.pass), None, pass_mark(f.pass))
        }
        Evidence::CheckRepeat(r) => (
            Some((usize::from(r.pass), 1)),
            pass_word(r.pass),
            None,
            pass_mark(r.pass),
        ),
        Evidence::CheckSweep(s) => (
            Some(
                s.gates
                    .iter()
                    .fold((0, 0), |(p, t), g| (p + g.passed, t + g.total)),
            ),
            pass_word(s.pass),
            None,
            pass_mark(s.pass),
        ),
    };
    Row {
        label: e.record.label.clone(),
        kind: e.record.kind.clone(),
        gates,
        verdict,
        ratio,
        mark,
    }
}

fn pass_word(pass: bool) -> String {
    if pass { "pass" } else { "FAIL" }.into()
}

fn pass_mark(pass: bool) -> Mark {
    if pass {
        Mark::Good
    } else {
        Mark::Fail
    }
}

/// A ratio with its interval: `1.1636 [1.1599, 1.1681]`.
pub fn ratio_text(c: &Change) -> String {
    match (c.ratio(), c.interval()) {
        (Some(r), Some(i)) => format!("{r:.4} [{:.4}, {:.4}]", i.low, i.high),
        (Some(r), None) => format!("{r:.4}"),
        (None, _) => crate::format::UNAVAILABLE.to_string(),
    }
}

/// A (ratio, interval) pair as text, for the plots.
pub fn pair_text(ratio: f64, ci: Option<(f64, f64)>) -> String {
    match ci {
        Some((l, h)) => format!("{ratio:.4} [{l:.4}, {h:.4}]"),
        None => format!("{ratio:.4}"),
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
pub fn verdicts(entries: &[Entry]) -> Vec<Verdicts> {
    let timed: Vec<(&Entry, &kernelab_stats::Analysis)> = entries
        .iter()
        .filter_map(|e| match &e.evidence {
            Evidence::KernelRun(k) => k.run.analysis.as_ref().map(|a| (e, a)),
            Evidence::Ab(a) => a.result.analyses.first().map(|m| (e, &m.analysis)),
            _ => None,
        })
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
                ci: super::parts::ends(a.interval()),
                threshold: Some(a.threshold),
                verdict: verdict_word(a.verdict).into(),
            })
        })
        .collect()
}
