//! The report's first lines: the status of the change (ready, blocked by a failed gate, a
//! regression where a timing verdict is SLOWER, or inconclusive, naming the record that decides) and one row per change label with what a
//! reviewer asks first: gates, code, kernel timing, predicted against measured request impact,
//! serving. Records of one change that disagree (kernel-run and A/B intervals that do not
//! overlap, a measured impact outside the prediction) are flagged there.

use crate::bundle::Entry;
use crate::documents::Evidence;
use crate::format::{fixed, percent};
use crate::kinds::impact::Impact;
use crate::kinds::Ctx;
use crate::table::{Align, Table};
use kernelab_stats::{Analysis, Interval, Verdict};

/// The status of a change (or of the whole bundle).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum State {
    /// Every gate passed and every timing verdict is decided.
    Ready,
    /// A timing verdict is INCONCLUSIVE (or there is no timing).
    Inconclusive,
    /// Every gate passed and a timing or serving verdict is SLOWER.
    Regression,
    /// A gate failed.
    Blocked,
}

impl State {
    fn word(self) -> &'static str {
        match self {
            State::Ready => "ready",
            State::Inconclusive => "inconclusive",
            State::Regression => "regression",
            State::Blocked => "blocked",
        }
    }
}

/// The status line and the table of changes.
#[derive(Clone, Debug)]
pub struct Headline {
    /// `**Status: blocked** by a failed gate: check_bitwise of w8s2`.
    pub status: String,
    /// One row per change label.
    pub changes: Table,
    /// Disagreements between records of one change.
    pub flags: Vec<String>,
}

fn ratio_text(a: &Analysis) -> String {
    match (a.ratio(), a.interval()) {
        (Some(r), Some(i)) => format!("{} {} {i}", a.verdict.name(), fixed(r, 4)),
        (Some(r), None) => format!("{} {}", a.verdict.name(), fixed(r, 4)),
        (None, _) => a.verdict.name().to_string(),
    }
}

fn disjoint(a: Option<Interval>, b: Option<Interval>) -> Option<(Interval, Interval)> {
    let (a, b) = (a?, b?);
    (!a.overlaps(b)).then_some((a, b))
}

/// Builds the headline from the records and the request impacts the bundle supports
/// (`(profile label, kernel-run label, impact)`).
pub(super) fn headline(entries: &[Entry], impacts: &[(String, String, Impact)]) -> Headline {
    let mut labels: Vec<&str> = Vec::new();
    for e in entries {
        if !labels.contains(&e.record.label.as_str()) {
            labels.push(&e.record.label);
        }
    }
    let mut t = Table::new(
        "Changes (ratio = candidate / baseline of the time; below 1 is faster)",
        &[
            ("change", Align::Left),
            ("gates", Align::Right),
            ("code", Align::Left),
            ("kernel timing", Align::Left),
            ("request impact, predicted → measured", Align::Left),
            ("serving", Align::Left),
            ("status", Align::Left),
        ],
    );
    let mut flags = Vec::new();
    let mut worst: Option<(State, String)> = None;
    for label in labels {
        let mine: Vec<&Entry> = entries.iter().filter(|e| e.record.label == label).collect();
        let marked: [String; 0] = [];
        let (mut passed, mut run) = (0, 0);
        let mut failed: Vec<String> = Vec::new();
        let mut code = Vec::new();
        let mut kernel: Option<&Analysis> = None;
        let mut ab: Option<&Analysis> = None;
        let mut serving: Option<String> = None;
        let mut serve_state = State::Ready;
        let mut serve_slower = false;
        let mut timed_by = String::new();
        // A gate's decision is the state of its change; a sweep's timed configs carry no
        // verdict of their own (a gate over the sweep judges them).
        let mut decided: Option<(State, String)> = None;
        let mut timed_configs = 0;
        for e in &mine {
            let ctx = Ctx {
                label,
                marked: &marked,
            };
            let s = e.evidence.kind().summary(&ctx);
            if let Some((p, n)) = s.gates {
                passed += p;
                run += n;
                if p < n {
                    failed.push(e.record.kind.clone());
                }
            }
            match &e.evidence {
                Evidence::CodeDiff(_) | Evidence::CodeMatrix(_) => code.push(s.verdict.clone()),
                Evidence::KernelRun(k) => {
                    if let Some(a) = &k.run.analysis {
                        kernel = Some(a);
                        timed_by = format!("kernel_run {label}");
                    }
                }
                Evidence::Ab(b) => {
                    if let Some(m) = b.result.analyses.first() {
                        ab = Some(&m.analysis);
                    }
                }
                Evidence::Gate(g) => {
                    use crate::kinds::gate::Decision;
                    let state = match g.decision {
                        Decision::Pass => State::Ready,
                        Decision::Regression => State::Regression,
                        Decision::GatesFailed => State::Blocked,
                        Decision::Inconclusive | Decision::Unreliable | Decision::Refused => {
                            State::Inconclusive
                        }
                    };
                    // Several gates of one change: the worst decides.
                    if decided.as_ref().is_none_or(|(d, _)| state > *d) {
                        decided = Some((state, format!("gate {label}: {}", s.verdict)));
                    }
                }
                Evidence::Sweep(m) => {
                    timed_configs += m
                        .points
                        .iter()
                        .filter(|p| p.change.ratio().is_some())
                        .count();
                }
                Evidence::Serve(_) => {
                    serving = Some(s.verdict.clone());
                    if s.verdict.starts_with("INCONCLUSIVE") {
                        serve_state = State::Inconclusive;
                    }
                    serve_slower |= s.verdict.starts_with("SLOWER");
                }
                _ => {}
            }
        }
        let timing = kernel.or(ab);
        if timed_by.is_empty() && ab.is_some() {
            timed_by = format!("ab {label}");
        }
        let changed = run > 0
            || !code.is_empty()
            || timing.is_some()
            || serving.is_some()
            || decided.is_some();
        if !changed {
            continue;
        }
        if let (Some(k), Some(a)) = (kernel, ab) {
            if let Some((x, y)) = disjoint(k.interval(), a.interval()) {
                flags.push(format!(
                    "{label}: the kernel run's interval [{:.4}, {:.4}] and the A/B run's [{:.4}, {:.4}] do not overlap: they measure different things (batching, clocks, inputs) or one of them is biased",
                    x.low, x.high, y.low, y.high
                ));
            }
        }
        let impact: Vec<String> = impacts
            .iter()
            .filter(|(_, k, _)| k == label)
            .map(|(p, _, i)| {
                let measured: Vec<String> = i
                    .measured
                    .iter()
                    .map(|m| {
                        if m.consistent == Some(false) {
                            flags.push(format!(
                                "{label}: the measured {} ({}) is outside the predicted range [{}, {}]",
                                m.figure,
                                m.source,
                                percent(m.predicted.low, true),
                                percent(m.predicted.high, true)
                            ));
                        }
                        format!("{} {}", m.figure, percent(m.change.value, true))
                    })
                    .collect();
                format!(
                    "request kernel time of {p} {} → {}",
                    percent(i.request.value, true),
                    if measured.is_empty() {
                        "not measured".to_string()
                    } else {
                        measured.join("; ")
                    }
                )
            })
            .collect();
        let slower = timing.is_some_and(|a| a.verdict == Verdict::Slower);
        let state = if let Some((g, _)) = &decided {
            (*g).max(if failed.is_empty() {
                State::Ready
            } else {
                State::Blocked
            })
        } else if !failed.is_empty() {
            State::Blocked
        } else if slower || serve_slower {
            State::Regression
        } else if timing.is_none() && timed_configs > 0 {
            serve_state
        } else if timing.is_none_or(|a| a.verdict == Verdict::Inconclusive) {
            State::Inconclusive
        } else {
            serve_state
        };
        let why = match state {
            _ if decided.is_some() && failed.is_empty() => {
                decided.as_ref().map(|(_, w)| w.clone()).unwrap_or_default()
            }
            State::Blocked => format!("a gate failed: {}", failed.join(", ")),
            State::Inconclusive if timing.is_none() => "no kernel timing".to_string(),
            State::Inconclusive if timing.is_some_and(|a| a.verdict == Verdict::Inconclusive) => {
                format!("{timed_by} decides")
            }
            State::Inconclusive => format!("serve {label} decides"),
            State::Regression if slower => format!("{timed_by} is SLOWER"),
            State::Regression => format!("serve {label} is SLOWER"),
            State::Ready => String::new(),
        };
        if worst.as_ref().is_none_or(|(w, _)| state > *w) {
            worst = Some((state, format!("{label}: {why}")));
        }
        t.push(vec![
            label.to_string(),
            if run > 0 {
                format!("{passed}/{run}")
            } else {
                "–".into()
            },
            if code.is_empty() {
                "–".into()
            } else {
                code.join("; ")
            },
            match (timing, timed_configs) {
                (Some(a), _) => ratio_text(a),
                (None, 0) => "–".into(),
                (None, n) => format!("{n} timed configs, no verdict of their own"),
            },
            if impact.is_empty() {
                "–".into()
            } else {
                impact.join("; ")
            },
            serving.unwrap_or_else(|| "–".into()),
            if why.is_empty() {
                state.word().to_string()
            } else {
                format!("{} ({why})", state.word())
            },
        ]);
    }
    let status = match worst {
        None => "**Status: no change recorded** (the bundle holds no gate, code or timing record)"
            .to_string(),
        Some((State::Ready, _)) => {
            "**Status: ready**: every gate passed and every timing verdict is decided".to_string()
        }
        Some((s, why)) => format!("**Status: {}**: {why}", s.word()),
    };
    Headline {
        status,
        changes: t,
        flags,
    }
}
