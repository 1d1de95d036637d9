//! Where reviewers read a gate's decision: the Markdown summary (`$GITHUB_STEP_SUMMARY`, a
//! GitLab report artifact), one pull-request comment body that a job updates in place (found
//! by its hidden marker), and GitHub workflow commands (`::error title=…::…`) for the checks.

use kernelab_stats::Verdict;

/// The hidden first line of the comment body: a job finds its earlier comment by it and
/// updates that one instead of adding another.
pub const COMMENT_MARKER: &str = "<!-- kernelab-gate -->";

pub use kernelab_report::kinds::gate::{Decision, GateReport, MetricVerdict, Side};

/// The forms of a gate's report that reviewers read where the CI shows them.
pub trait Publish {
    /// The Markdown summary (GitHub-flavoured).
    fn summary_markdown(&self) -> String;
    /// The pull-request comment body: the marker on its first line, then the summary.
    fn comment(&self) -> String;
    /// GitHub workflow commands: an error per gated metric that regressed, a warning when the
    /// gate could not decide, else a notice.
    fn annotations(&self) -> Vec<String>;
    /// Workflow commands on the kernel source lines the head changed (`changed`, the first
    /// [`MAX_SOURCE_ANNOTATIONS`]): a warning with the regression, else a notice with the
    /// decision.
    fn source_annotations(&self, changed: &[super::annotate::ChangedLines]) -> Vec<String>;
}

/// The most source-line annotations written: GitHub shows ten warnings (and ten notices) of
/// one step.
pub const MAX_SOURCE_ANNOTATIONS: usize = 10;

/// The most metrics named one error each: GitHub shows ten errors of one step, so past nine
/// (a sweep's configs; eight beside a failed correctness gate's error) one more error counts
/// the rest.
pub const MAX_METRIC_ANNOTATIONS: usize = 9;

/// The gated metrics of a source-line annotation named one by one, past which they are counted.
const MAX_METRICS_NAMED: usize = 8;

impl Publish for GateReport {
    /// The Markdown summary (GitHub-flavoured).
    fn summary_markdown(&self) -> String {
        let mut s = format!(
            "## {} kernelab gate: {}\n\n",
            self.decision.mark(),
            self.decision.headline()
        );
        let how = if self.benchmark.is_empty() {
            "ABBA pairs of fresh processes"
        } else {
            &self.benchmark
        };
        s.push_str(&format!(
            "Head `{}` against base `{}` ({}), measured in this job: {}. {}. Threshold ±{:.1}%; \
             exit status {}.\n\n",
            self.head.short(),
            self.base.short(),
            md_escape(&self.base.name),
            md_escape(how),
            md_escape(&self.aa),
            self.threshold * 100.0,
            self.exit_status
        ));
        if let Some(c) = &self.code {
            s.push_str(&format!("Machine code: {}.\n\n", md_escape(c)));
        }
        if !self.metrics.is_empty() {
            s.push_str("| metric | verdict | change | interval | pairs | gate |\n");
            s.push_str("|---|---|---:|---|---:|---|\n");
        }
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
    fn comment(&self) -> String {
        format!("{COMMENT_MARKER}\n{}", self.summary_markdown())
    }

    /// GitHub workflow commands: an error per gated metric that regressed, a warning when the
    /// gate could not decide, else a notice.
    fn annotations(&self) -> Vec<String> {
        let range = format!(
            "head {} against base {}",
            self.head.short(),
            self.base.short()
        );
        // The decision first: GitHub shows the first ten errors of a step, and the one that
        // says why the check failed must be among them.
        let mut out = Vec::new();
        match self.decision {
            Decision::Regression => {}
            Decision::GatesFailed => out.push(workflow_command(
                "error",
                "kernelab gate - a correctness gate failed",
                &format!("{} ({range})", self.reasons.join("; ")),
            )),
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
        let regressed: Vec<&MetricVerdict> = self
            .metrics
            .iter()
            .filter(|m| m.gated && m.verdict == Verdict::Slower)
            .collect();
        let named = MAX_METRIC_ANNOTATIONS - usize::from(self.decision == Decision::GatesFailed);
        for m in regressed.iter().take(named) {
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
        if regressed.len() > named {
            out.push(workflow_command(
                "error",
                "kernelab gate - more metrics regressed",
                &format!(
                    "{} more metrics are worse beyond the ±{:.1}% threshold: see the summary ({range})",
                    regressed.len() - named,
                    self.threshold * 100.0
                ),
            ));
        }
        out
    }
    fn source_annotations(&self, changed: &[super::annotate::ChangedLines]) -> Vec<String> {
        let gated: Vec<&MetricVerdict> = self.metrics.iter().filter(|m| m.gated).collect();
        let mut what = gated
            .iter()
            .take(MAX_METRICS_NAMED)
            .map(|m| format!("{} {} {}", m.metric, m.verdict.name(), m.change_text()))
            .collect::<Vec<_>>()
            .join(", ");
        if gated.len() > MAX_METRICS_NAMED {
            what.push_str(&format!(" and {} more", gated.len() - MAX_METRICS_NAMED));
        }
        let (kind, title) = match self.decision {
            Decision::Regression => ("warning", "kernelab gate - regression in this change"),
            Decision::GatesFailed => ("warning", "kernelab gate - a correctness gate failed"),
            _ => ("notice", "kernelab gate - this change was measured"),
        };
        let message =
            format!(
            "kernel code changed here; kernelab gate: {} (exit {}), head {} against base {}: {}",
            self.decision.headline(),
            self.exit_status,
            self.head.short(),
            self.base.short(),
            if what.is_empty() { "no gated metric" } else { &what }
        );
        changed
            .iter()
            .take(MAX_SOURCE_ANNOTATIONS)
            .map(|c| file_command(kind, c, title, &message))
            .collect()
    }
}

/// A GitHub workflow command on lines of a file, `::KIND
/// file=FILE,line=LINE,endLine=END,title=TITLE::MESSAGE`, escaped as [`workflow_command`].
pub fn file_command(
    kind: &str,
    at: &super::annotate::ChangedLines,
    title: &str,
    message: &str,
) -> String {
    format!(
        "::{kind} file={},line={},endLine={},title={}::{}",
        escape_property(&at.file),
        at.line,
        at.end_line,
        escape_property(title),
        escape_data(message)
    )
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
pub(crate) fn md_escape(s: &str) -> String {
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
        let at = super::super::annotate::ChangedLines {
            file: "src/a,b:c.cu".into(),
            line: 3,
            end_line: 5,
        };
        assert_eq!(
            file_command("warning", &at, "t: x", "m"),
            "::warning file=src/a%2Cb%3Ac.cu,line=3,endLine=5,title=t%3A x::m"
        );
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
            benchmark: String::new(),
            code: None,
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
        // A sweep of 12 regressed configs and one shown (identical code): nine errors by
        // name, one counting the other three, none for the shown config; a source line names
        // eight and counts the rest.
        let config = |i: usize, gated: bool| MetricVerdict {
            metric: format!("kernel_time at T={i}"),
            gated,
            ..r.metrics[0].clone()
        };
        let mut sweep = r.clone();
        sweep.metrics = (0..12).map(|i| config(i, true)).collect();
        sweep.metrics.push(config(99, false));
        let a = sweep.annotations();
        assert_eq!(a.len(), MAX_METRIC_ANNOTATIONS + 1, "{a:?}");
        assert!(
            a[MAX_METRIC_ANNOTATIONS].contains("3 more metrics are worse"),
            "{a:?}"
        );
        assert!(!a.iter().any(|l| l.contains("T=99")), "{a:?}");
        let at = super::super::annotate::ChangedLines {
            file: "k.cu".into(),
            line: 1,
            end_line: 1,
        };
        let lines = sweep.source_annotations(&[at]);
        assert!(
            lines[0].contains("T=7 SLOWER") && lines[0].contains("and 4 more"),
            "{lines:?}"
        );
        assert!(!lines[0].contains("T=8 SLOWER"), "{lines:?}");
    }
}
