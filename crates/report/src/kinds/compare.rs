//! `compare`: two profiles (or runs of each) family by family.

use super::{rendered, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use crate::figure::{Kind as FigureKind, Sink};
use crate::format::percent;
use crate::profile::InputDoc;
use kernelab_trace::Comparison;
use kernelab_trace::Status;
use serde::{Deserialize, Serialize};

impl RecordKind for CompareBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Request]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        rendered(crate::evidence::parts::compare_part(self))
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
