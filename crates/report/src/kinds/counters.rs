//! `counters`: hardware counters, one group per fresh profiler process, diffed.

use super::{plain, rendered, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use crate::figure::{Kind as FigureKind, Sink};
use kernelab_model::counters::CountersRun;
use serde::{Deserialize, Serialize};

impl RecordKind for CountersBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Counters]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        rendered(crate::evidence::counters_part(self))
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        let flagged = self.run.changes.iter().filter(|x| x.flagged).count();
        let failed = self.run.failures().count();
        plain(
            format!(
                "{} beyond the repeat spread; {failed} of {} failed",
                crate::format::count(flagged, "counter change", "counter changes"),
                crate::format::count(
                    self.run.processes.len(),
                    "profiler process",
                    "profiler processes"
                )
            ),
            if failed > 0 { Mark::Warn } else { Mark::Good },
        )
    }
    fn figures(&self, sink: &mut Sink<'_>) {
        for c in &self.run.changes {
            let s = Some(c.kernel.as_str());
            let what = format!("{} {}", c.kernel, c.metric);
            for (side, v) in [("baseline", c.baseline), ("candidate", c.candidate)] {
                if let Some(v) = v {
                    sink.add(FigureKind::Count, v, &format!("{what}, {side}"), s);
                }
            }
            if let Some(x) = c.change.change() {
                sink.add(FigureKind::Change, x, &format!("{what}, change"), s);
            }
        }
    }
}

/// `kernelab counters` (`kind: "counters"`).
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CountersBody {
    /// The folder that keeps every profiler process's output and stderr.
    pub work_dir: String,
    /// What the run found.
    #[serde(flatten)]
    pub run: CountersRun,
}

impl kernelab_model::Body for CountersBody {
    const KIND: &'static str = "counters";
}
