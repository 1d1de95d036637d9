//! `metrics`: Nsight Compute per-launch counters.

use super::{plain, rendered, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use crate::figure::{Kind as FigureKind, Sink};
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
            crate::format::count(self.launches.len(), "profiled launch", "profiled launches"),
            Mark::Good,
        )
    }
    fn figures(&self, sink: &mut Sink<'_>) {
        for l in &self.launches {
            let s = Some(l.kernel.as_str());
            for (name, m) in &l.metrics {
                if let (kernelab_model::MetricValue::Number(x), "%") = (&m.value, m.unit.as_str()) {
                    sink.add(
                        FigureKind::Share,
                        x / 100.0,
                        &format!("launch {} {name}", l.id),
                        s,
                    );
                }
            }
            for (key, what, kind) in [
                ("gpu__time_duration.sum", "duration", FigureKind::Time),
                ("Duration", "duration", FigureKind::Time),
                ("dram__bytes.sum", "DRAM bytes", FigureKind::Count),
                ("dram__bytes_read.sum", "DRAM bytes read", FigureKind::Count),
            ] {
                if let Some(kernelab_model::MetricValue::Number(x)) =
                    l.metrics.get(key).map(|m| &m.value)
                {
                    sink.add(kind, *x, &format!("launch {} {what}", l.id), s);
                }
            }
        }
    }
}

/// `kernelab metrics` (`kind: "metrics"`).
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MetricsBody {
    /// The launches with every metric, in base units.
    pub launches: Vec<LaunchMetrics>,
}

impl kernelab_model::Body for MetricsBody {
    const KIND: &'static str = "metrics";
}
