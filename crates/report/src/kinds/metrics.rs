//! `metrics`: Nsight Compute per-launch counters.

use super::{plain, rendered, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use kernelab_model::LaunchMetrics;
use serde::{Deserialize, Serialize};

impl RecordKind for MetricsBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Code]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        rendered(crate::evidence::parts::metrics_part(self))
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        plain(
            format!("{} profiled launches", self.launches.len()),
            Mark::Good,
        )
    }
}

/// `kernelab metrics` (`kind: "metrics"`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MetricsBody {
    /// The launches with every metric, in base units.
    pub launches: Vec<LaunchMetrics>,
}
