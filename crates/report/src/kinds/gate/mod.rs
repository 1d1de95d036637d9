//! `gate`: the decision of `kernelab gate` (docs/gate.md): base and head revisions measured in
//! one job, the verdict of each metric, and why it ended as it did. The bundle holds it beside
//! the `ab` record of the measurement.

use super::{plain, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use crate::sink::{Kind as FigureKind, Sink};
use crate::table::{Align, Block, Table};
use kernelab_stats::{Analysis, Verdict};
use serde::{Deserialize, Serialize};

/// How a gate ended, with its exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// No metric that must not regress is worse beyond the threshold (exit 0).
    Pass,
    /// A metric that must not regress is worse beyond the threshold (exit 1).
    Regression,
    /// A correctness gate of the head failed (finite, bitwise or oracle, repeats, graph
    /// replay): no timing decides (exit 1; schema version 9 on).
    GatesFailed,
    /// The measurement ended (budget or most pairs) before deciding (exit 3).
    Inconclusive,
    /// The timing setup is not trustworthy: the A/A pre-flight shows a harness bias (exit 2).
    Unreliable,
    /// The sides were not measured under the same conditions: a field of the environment
    /// fingerprint changed during the run (exit 2).
    Refused,
}

impl Decision {
    /// The process exit status: 0 pass, 1 regression, 2 unreliable, 3 inconclusive.
    pub fn code(self) -> u8 {
        match self {
            Decision::Pass => 0,
            Decision::Regression | Decision::GatesFailed => 1,
            Decision::Unreliable | Decision::Refused => 2,
            Decision::Inconclusive => 3,
        }
    }

    /// A short headline word.
    pub fn headline(self) -> &'static str {
        match self {
            Decision::Pass => "pass",
            Decision::Regression => "regression",
            Decision::GatesFailed => "a correctness gate failed",
            Decision::Inconclusive => "inconclusive",
            Decision::Unreliable => "unreliable timing",
            Decision::Refused => "refused, the conditions changed",
        }
    }

    /// The symbol a summary heads with.
    pub fn mark(self) -> &'static str {
        match self {
            Decision::Pass => "✅",
            Decision::Regression | Decision::GatesFailed => "❌",
            Decision::Inconclusive | Decision::Unreliable | Decision::Refused => "⚠️",
        }
    }
}

/// One side of the gate: the revision as named and its commit.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Side {
    /// The revision as given (or how the default was found).
    pub name: String,
    /// Its commit (full hex).
    pub commit: String,
}

impl Side {
    /// The commit's first 12 hex digits.
    pub fn short(&self) -> &str {
        self.commit.get(..12).unwrap_or(&self.commit)
    }
}

/// One metric's verdict, head against base.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MetricVerdict {
    /// The metric.
    pub metric: String,
    /// Whether its regression fails the gate.
    pub gated: bool,
    /// Its verdict.
    pub verdict: Verdict,
    /// head / base − 1, when measured.
    pub change: Option<f64>,
    /// The interval of the change, when one exists.
    pub interval: Option<(f64, f64)>,
    /// The interval's confidence level.
    pub level: f64,
    /// Pairs used.
    pub pairs: usize,
}

impl MetricVerdict {
    /// The verdict of `analysis` of `metric`.
    pub fn of(metric: &str, analysis: &Analysis, gated: bool) -> MetricVerdict {
        MetricVerdict {
            metric: metric.to_string(),
            gated,
            verdict: analysis.verdict,
            change: analysis.change.change(),
            interval: analysis.change.change_interval().map(|i| (i.low, i.high)),
            level: analysis.level,
            pairs: analysis.pairs,
        }
    }

    /// The change as a signed percentage (`n/a` when not measured).
    pub fn change_text(&self) -> String {
        self.change.map_or("n/a".into(), pct)
    }

    /// The change's interval in percentages (`none` when there is none).
    pub fn interval_text(&self) -> String {
        self.interval
            .map_or("none".into(), |(l, h)| format!("{} … {}", pct(l), pct(h)))
    }
}

/// A signed percentage with one decimal.
fn pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

/// What a gate found, in the forms reviewers read.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GateReport {
    /// The decision.
    pub decision: Decision,
    /// Its exit status.
    pub exit_status: u8,
    /// The base (baseline).
    pub base: Side,
    /// The head (candidate).
    pub head: Side,
    /// The practical threshold (fraction).
    pub threshold: f64,
    /// One verdict per metric, the primary first.
    pub metrics: Vec<MetricVerdict>,
    /// What the A/A pre-flight found (or that none ran).
    pub aa: String,
    /// Why it ended as it did, beyond the verdicts (budget spent, harness bias).
    pub reasons: Vec<String>,
    /// The samples file of the A/B run.
    pub samples: Option<String>,
    /// The conditions of the first pair (the environment fingerprint, one line), when recorded.
    pub conditions: Option<String>,
    /// What was measured and how: the `ab` command pair, the launch spec or the Python
    /// function (schema version 9 on; empty in earlier records).
    #[serde(default)]
    pub benchmark: String,
    /// Both sides' machine code compared before timing (`identical machine code: any
    /// difference is noise`, or what differs), when the benchmark launches known code.
    #[serde(default)]
    pub code: Option<String>,
}

impl GateReport {
    /// The headline: decision, sides and threshold.
    pub fn headline(&self) -> String {
        format!(
            "kernelab gate: {} (exit {}), head {} against base {}, threshold ±{:.1}%",
            self.decision.headline(),
            self.exit_status,
            self.head.short(),
            self.base.short(),
            self.threshold * 100.0
        )
    }

    /// Plain lines for a terminal.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![
            self.headline(),
            format!("base     {} ({})", self.base.commit, self.base.name),
            format!("head     {} ({})", self.head.commit, self.head.name),
        ];
        if !self.benchmark.is_empty() {
            out.push(format!("measured {}", self.benchmark));
        }
        out.push(self.aa.clone());
        if let Some(c) = &self.code {
            out.push(c.clone());
        }
        if let Some(c) = &self.conditions {
            out.push(format!("conditions {c}"));
        }
        for m in &self.metrics {
            out.push(format!(
                "{:<8} {} {} (interval {}, {} pairs){}",
                m.metric,
                m.verdict.name(),
                m.change_text(),
                m.interval_text(),
                m.pairs,
                if m.gated { ", must not regress" } else { "" }
            ));
        }
        out.extend(self.reasons.iter().cloned());
        out
    }
}

impl kernelab_model::Body for GateReport {
    const KIND: &'static str = "gate";
}

impl RecordKind for GateReport {
    fn places(&self) -> &'static [Place] {
        &[Place::Timing]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        let mut t = Table::new(
            "Gate verdicts, head against base",
            &[
                ("metric", Align::Left),
                ("verdict", Align::Left),
                ("change", Align::Right),
                ("interval", Align::Left),
                ("pairs", Align::Right),
                ("gate", Align::Left),
            ],
        );
        for m in &self.metrics {
            t.push(vec![
                m.metric.clone(),
                m.verdict.name().into(),
                m.change_text(),
                m.interval_text(),
                m.pairs.to_string(),
                if m.gated { "must not regress" } else { "shown" }.into(),
            ]);
        }
        Rendered {
            blocks: vec![Block::Lines(self.lines()), Block::Table(t)],
            headline: self.headline(),
        }
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        let mark = match self.decision {
            Decision::Pass => Mark::Good,
            Decision::Regression | Decision::GatesFailed => Mark::Fail,
            _ => Mark::Warn,
        };
        // The metric that decided: a regressed one for a regression, else the first gated.
        let decisive = self
            .metrics
            .iter()
            .find(|m| {
                m.gated && (self.decision != Decision::Regression || m.verdict == Verdict::Slower)
            })
            .or(self.metrics.first());
        match decisive.and_then(|m| Some((m, m.change?))) {
            Some((m, c)) => Summary {
                gates: None,
                verdict: format!(
                    "{} ({} {})",
                    self.decision.headline(),
                    m.metric,
                    m.verdict.name()
                ),
                ratio: Some((1.0 + c, m.interval.map(|(l, h)| (1.0 + l, 1.0 + h)))),
                mark,
            },
            None => plain(self.decision.headline().into(), mark),
        }
    }
    fn pass(&self) -> Option<bool> {
        Some(self.decision == Decision::Pass)
    }
    fn figures(&self, sink: &mut Sink<'_>) {
        sink.add(FigureKind::Share, self.threshold, "threshold", None);
        sink.add(
            FigureKind::Count,
            f64::from(self.exit_status),
            "exit status",
            None,
        );
        for m in &self.metrics {
            let name = &m.metric;
            if let Some(c) = m.change {
                sink.add(FigureKind::Change, c, &format!("{name} change"), None);
                sink.add(FigureKind::Ratio, 1.0 + c, &format!("{name} ratio"), None);
            }
            if let Some((l, h)) = m.interval {
                for (x, end) in [(l, "low"), (h, "high")] {
                    let what = format!("{name} change, interval {end}");
                    sink.add(FigureKind::Change, x, &what, None);
                    let what = format!("{name} ratio, interval {end}");
                    sink.add(FigureKind::Ratio, 1.0 + x, &what, None);
                }
            }
            sink.add(
                FigureKind::Share,
                m.level,
                &format!("{name} confidence level"),
                None,
            );
            sink.add(
                FigureKind::Count,
                m.pairs as f64,
                &format!("{name} pairs"),
                None,
            );
        }
    }
}
