//! `counters`: hardware counters, one group per fresh profiler process, diffed.

use super::{plain, rendered, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use kernelab_model::counters::CountersRun;
use serde::{Deserialize, Serialize};

impl RecordKind for CountersBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Code]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        rendered(crate::evidence::counters_part(self))
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        let flagged = self.run.changes.iter().filter(|x| x.flagged).count();
        let failed = self.run.failures().count();
        plain(
            format!(
                "{} counter change(s) beyond the repeat spread; {} of {} profiler process(es) failed",
                flagged,
                failed,
                self.run.processes.len()
            ),
            if failed > 0 { Mark::Warn } else { Mark::Good },
        )
    }
}

/// `kernelab counters` (`kind: "counters"`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CountersBody {
    /// The folder that keeps every profiler process's output and stderr.
    pub work_dir: String,
    /// What the run found.
    #[serde(flatten)]
    pub run: CountersRun,
}
