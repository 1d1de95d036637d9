//! Where reviewers read a gate's decision: the Markdown summary (`$GITHUB_STEP_SUMMARY`, a
//! GitLab report artifact), one pull-request comment body that a job updates in place (found
//! by its hidden marker), and GitHub workflow commands (`::error title=…::…`) for the checks.

use kernelab_stats::{Analysis, Verdict};
use serde::Serialize;

/// The hidden first line of the comment body: a job finds its earlier comment by it and
/// updates that one instead of adding another.
pub const COMMENT_MARKER: &str = "<!-- kernelab-gate -->";

/// How a gate ended, with its exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// No metric that must not regress is worse beyond the threshold (exit 0).
    Pass,
    /// A metric that must not regress is worse beyond the threshold (exit 1).
    Regression,
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
            Decision::Regression => 1,
            Decision::Unreliable | Decision::Refused => 2,
            Decision::Inconclusive => 3,
        }
    }

    /// A short headline word.
    pub fn headline(self) -> &'static str {
        match self {
            Decision::Pass => "pass",
            Decision::Regression => "regression",
            Decision::Inconclusive => "inconclusive",
            Decision::Unreliable => "unreliable timing",
            Decision::Refused => "refused, the conditions changed",
        }
    }

    fn mark(self) -> &'static str {
        match self {
            Decision::Pass => "✅",
            Decision::Regression => "❌",
            Decision::Inconclusive | Decision::Unreliable | Decision::Refused => "⚠️",
        }
    }
}

/// One side of the gate: the revision as named and its commit.
#[derive(Clone, Debug, Serialize)]
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
#[derive(Clone, Debug, Serialize)]
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

    fn change_text(&self) -> String {
        self.change.map_or("n/a".into(), pct)
    }

    fn interval_text(&self) -> String {
        self.interval
            .map_or("none".into(), |(l, h)| format!("{} … {}", pct(l), pct(h)))
    }
}

/// A signed percentage with one decimal.
fn pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

/// What a gate found, in the forms reviewers read.
#[derive(Clone, Debug, Serialize)]
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
            self.aa.clone(),
        ];
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

    /// The Markdown summary (GitHub-flavoured).
    pub fn summary_markdown(&self) -> String {
        let mut s = format!(
            "## {} kernelab gate: {}\n\n",
            self.decision.mark(),
            self.decision.headline()
        );
        s.push_str(&format!(
            "Head `{}` against base `{}` ({}), measured in this job: ABBA pairs of fresh \
             processes. {}. Threshold ±{:.1}%; exit status {}.\n\n",
            self.head.short(),
            self.base.short(),
            md_escape(&self.base.name),
            md_escape(&self.aa),
            self.threshold * 100.0,
            self.exit_status
        ));
        s.push_str("| metric | verdict | change | interval | pairs | gate |\n");
        s.push_str("|---|---|---:|---|---:|---|\n");
        for m in &self.metrics {
            s.push_str(&format!(
                "| {} | **{}** | {} | {} ({:.1}%) | {} | {} |\n",
                md_escape(&m.metric),
                m.verdict.name(),
                m.change_text(),
                m.interval_text(),
                m.level * 100.0,
                m.pairs,
                if m.gated { "must not regress" } else { "shown" }
            ));
        }
        if let Some(c) = &self.conditions {
            s.push_str(&format!(
                "\nConditions (checked before each pair): {}\n",
                md_escape(c)
            ));
        }
        if !self.reasons.is_empty() {
            s.push('\n');
            for r in &self.reasons {
                s.push_str(&format!("- {}\n", md_escape(r)));
            }
        }
        s
    }

    /// The pull-request comment body: the marker on its first line, then the summary.
    pub fn comment(&self) -> String {
        format!("{COMMENT_MARKER}\n{}", self.summary_markdown())
    }

    /// GitHub workflow commands: an error per gated metric that regressed, a warning when the
    /// gate could not decide, else a notice.
    pub fn annotations(&self) -> Vec<String> {
        let range = format!(
            "head {} against base {}",
            self.head.short(),
            self.base.short()
        );
        let mut out = Vec::new();
        for m in &self.metrics {
            if m.gated && m.verdict == Verdict::Slower {
                out.push(workflow_command(
                    "error",
                    &format!("kernelab gate - {} regressed", m.metric),
                    &format!(
                        "{} is worse by {} (interval {}), beyond the ±{:.1}% threshold ({range})",
                        m.metric,
                        m.change_text(),
                        m.interval_text(),
                        self.threshold * 100.0
                    ),
                ));
            }
        }
        match self.decision {
            Decision::Regression => {}
            Decision::Pass => out.push(workflow_command(
                "notice",
                "kernelab gate - pass",
                &format!(
                    "no regression beyond the ±{:.1}% threshold ({range})",
                    self.threshold * 100.0
                ),
            )),
            Decision::Inconclusive | Decision::Unreliable | Decision::Refused => {
                out.push(workflow_command(
                    "warning",
                    &format!("kernelab gate - {}", self.decision.headline()),
                    &format!("{} ({range})", self.reasons.join("; ")),
                ))
            }
        }
        out
    }
}

/// A GitHub workflow command `::KIND title=TITLE::MESSAGE`, its property and data escaped as
/// GitHub's runner does (docs: "Workflow commands for GitHub Actions").
pub fn workflow_command(kind: &str, title: &str, message: &str) -> String {
    format!(
        "::{kind} title={}::{}",
        escape_property(title),
        escape_data(message)
    )
}

/// A workflow command's data: `%`, `\r` and `\n` escaped.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value: as data, and `:` and `,` escaped too.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// Text safe inside a Markdown table cell or list line: `|`, `<`, `>` and backquotes escaped,
/// line breaks as spaces.
fn md_escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('`', "\\`")
        .replace(['\r', '\n'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_commands_escape_as_github_documents() {
        assert_eq!(
            workflow_command("error", "a: b, c", "50% slower\nnext"),
            "::error title=a%3A b%2C c::50%25 slower%0Anext"
        );
        assert_eq!(escape_data("x\r\ny"), "x%0D%0Ay");
    }

    #[test]
    fn the_comment_starts_with_the_marker_and_cells_are_escaped() {
        let r = GateReport {
            decision: Decision::Regression,
            exit_status: 1,
            base: Side {
                name: "merge base of HEAD and main".into(),
                commit: "a".repeat(40),
            },
            head: Side {
                name: "HEAD".into(),
                commit: "b".repeat(40),
            },
            threshold: 0.02,
            metrics: vec![MetricVerdict {
                metric: "t|x".into(),
                gated: true,
                verdict: Verdict::Slower,
                change: Some(0.1),
                interval: Some((0.08, 0.12)),
                level: 0.95,
                pairs: 8,
            }],
            aa: "no A/A pre-flight".into(),
            reasons: Vec::new(),
            samples: None,
            conditions: None,
        };
        let c = r.comment();
        assert!(
            c.starts_with("<!-- kernelab-gate -->\n## ❌ kernelab gate: regression"),
            "{c}"
        );
        assert!(
            c.contains("| t\\|x | **SLOWER** | +10.0% | +8.0% … +12.0% (95.0%) | 8 |"),
            "{c}"
        );
        let a = r.annotations();
        assert_eq!(a.len(), 1);
        assert!(
            a[0].starts_with("::error title=kernelab gate - t|x regressed::t|x is worse by +10.0%"),
            "{}",
            a[0]
        );
    }
}
