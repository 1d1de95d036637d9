//! `compare`: two profiles (or runs of each) family by family.

use super::{rendered, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use crate::format::duration_ns;
use crate::format::percent;
use crate::format::thousands;
use crate::kinds::profile::view::InputDoc;
use crate::sink::{Kind as FigureKind, Sink};
use crate::table::Align;
use crate::table::Block;
use crate::table::Table;
use kernelab_trace::Comparison;
use kernelab_trace::Status;
use serde::{Deserialize, Serialize};

pub(crate) mod view;

impl RecordKind for CompareBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Request]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        rendered(compare_part(self))
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        let changed: Vec<_> = self
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
        Summary {
            gates: None,
            verdict,
            ratio: (changed.len() == 1)
                .then(|| changed[0].change.ratio().map(|r| (r, None)))
                .flatten(),
            mark: if slower { Mark::Warn } else { Mark::Good },
        }
    }
    fn csv(&self) -> Option<crate::Result<String>> {
        Some(view::compare_csv(&self.comparison))
    }
    fn figures(&self, sink: &mut Sink<'_>) {
        let cmp = &self.comparison;
        for f in cmp.families.iter().chain(&cmp.other) {
            let s = Some(f.family.as_str());
            let n = &f.family;
            for (side, x) in [("baseline", &f.base), ("candidate", &f.cand)] {
                sink.add(
                    FigureKind::Time,
                    x.total_ns,
                    &format!("{n} {side} total"),
                    s,
                );
                sink.add(FigureKind::Share, x.share, &format!("{n} {side} share"), s);
                sink.add(FigureKind::Count, x.calls, &format!("{n} {side} calls"), s);
            }
            sink.add(FigureKind::Time, f.delta_ns, &format!("{n} Δ"), s);
            if let Some(r) = f.change.ratio() {
                sink.add(FigureKind::Change, r - 1.0, &format!("{n} change"), s);
                sink.add(FigureKind::Ratio, r, &format!("{n} ratio"), s);
            }
        }
        for g in cmp.graphs.iter().flat_map(|g| &g.rows) {
            let n = format!("{} → {}", g.baseline_graph, g.candidate_graph);
            for (i, side) in ["baseline", "candidate"].iter().enumerate() {
                sink.add(
                    FigureKind::Time,
                    g.kernel_ns_per_replay[i] as f64,
                    &format!("{n} {side} per replay"),
                    None,
                );
                sink.add(
                    FigureKind::Count,
                    g.replays[i] as f64,
                    &format!("{n} {side} replays"),
                    None,
                );
                sink.add(
                    FigureKind::Count,
                    g.kernels_per_replay[i] as f64,
                    &format!("{n} {side} kernels per replay"),
                    None,
                );
            }
            if let Some(r) = g.change.ratio() {
                sink.add(FigureKind::Change, r - 1.0, &format!("{n} change"), None);
                sink.add(FigureKind::Ratio, r, &format!("{n} ratio"), None);
            }
        }
        for fig in &cmp.summary {
            let (Some(b), Some(c)) = (fig.baseline, fig.candidate) else {
                continue;
            };
            let name = fig.figure.trim_end_matches("_ns").replace('_', " ");
            if fig.figure.ends_with("_ns") {
                sink.add(FigureKind::Time, b, &format!("{name}, baseline"), None);
                sink.add(FigureKind::Time, c, &format!("{name}, candidate"), None);
                sink.add(FigureKind::Time, c - b, &format!("{name} Δ"), None);
            }
            if let Some(r) = fig.change.ratio() {
                sink.add(FigureKind::Change, r - 1.0, &format!("{name} change"), None);
                sink.add(FigureKind::Ratio, r, &format!("{name} ratio"), None);
            }
        }
    }
}

/// `kernelab compare` (`kind: "compare"`).
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CompareBody {
    /// Baseline inputs.
    #[serde(rename = "baseline_inputs")]
    pub base_inputs: Vec<InputDoc>,
    /// Candidate inputs.
    #[serde(rename = "candidate_inputs")]
    pub cand_inputs: Vec<InputDoc>,
    /// The comparison.
    #[serde(flatten)]
    pub comparison: Comparison,
}

impl kernelab_model::Body for CompareBody {
    const KIND: &'static str = "compare";
}

/// A count that may be a median over runs: whole numbers without decimals.
fn count(x: f64) -> String {
    if x.fract() == 0.0 && x >= 0.0 {
        thousands(x as u64)
    } else {
        format!("{x:.1}")
    }
}

fn status_text(s: Status) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(|x| x.replace('_', " ")))
        .unwrap_or_default()
}

/// A family's change (candidate / baseline − 1), as stored in the comparison.
fn change_text(c: &kernelab_stats::Change) -> String {
    c.change()
        .map(|x| percent(x, true))
        .unwrap_or_else(|| "–".into())
}

pub(crate) fn compare_part(r: &CompareBody) -> (Vec<Block>, String) {
    let fams = &r.comparison.families;
    let mut t = Table::new(
        "Per-family change (baseline → candidate; change = candidate / baseline − 1)",
        &[
            ("family", Align::Left),
            ("calls", Align::Left),
            ("baseline", Align::Right),
            ("candidate", Align::Right),
            ("change", Align::Right),
            ("verdict", Align::Left),
        ],
    );
    for f in fams.iter().take(12) {
        t.push(vec![
            crate::format::shorten(&f.family, 60),
            format!("{} → {}", count(f.base.calls), count(f.cand.calls)),
            duration_ns(f.base.total_ns),
            duration_ns(f.cand.total_ns),
            change_text(&f.change),
            status_text(f.status),
        ]);
    }
    let changed = fams
        .iter()
        .find(|f| matches!(f.status, Status::Faster | Status::Slower | Status::Changed));
    let head = match changed {
        Some(f) => format!(
            "{} {} {} → {} ({})",
            f.family,
            status_text(f.status),
            duration_ns(f.base.total_ns),
            duration_ns(f.cand.total_ns),
            change_text(&f.change)
        ),
        None => "no family changed beyond the noise".into(),
    };
    let mut whole = Table::new(
        "Whole trace (medians over runs; change = candidate / baseline − 1)",
        &[
            ("figure", Align::Left),
            ("baseline", Align::Right),
            ("candidate", Align::Right),
            ("delta", Align::Right),
            ("change", Align::Right),
        ],
    );
    for f in &r.comparison.summary {
        let (Some(b), Some(c)) = (f.baseline, f.candidate) else {
            continue;
        };
        if f.figure == "kernel_count" || (b == 0.0 && c == 0.0) {
            continue;
        }
        whole.push(vec![
            f.figure.trim_end_matches("_ns").replace('_', " "),
            duration_ns(b),
            duration_ns(c),
            crate::format::signed_duration_ns(c - b),
            change_text(&f.change),
        ]);
    }
    let mut blocks = vec![Block::Table(t)];
    if !whole.rows.is_empty() {
        blocks.push(Block::Table(whole));
    }
    if let Some(g) = r.comparison.graphs.as_ref().filter(|g| !g.rows.is_empty()) {
        blocks.push(Block::Table(crate::kinds::compare::view::graph_table(g)));
    }
    (blocks, head)
}
