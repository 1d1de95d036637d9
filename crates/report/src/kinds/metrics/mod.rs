//! `metrics`: Nsight Compute per-launch counters.

use super::{plain, rendered, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use crate::format::opt_duration_ns;
use crate::format::thousands;
use crate::sink::{Kind as FigureKind, Sink};
use crate::table::Align;
use crate::table::Block;
use crate::table::Table;
use kernelab_model::LaunchMetrics;
use kernelab_model::MetricValue;
use serde::{Deserialize, Serialize};

pub(crate) mod view;

impl RecordKind for MetricsBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Code]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        rendered(metrics_part(self))
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        plain(
            crate::format::count(self.launches.len(), "profiled launch", "profiled launches"),
            Mark::Good,
        )
    }
    fn figures(&self, sink: &mut Sink<'_>) {
        // About the noun phrase the summary writes after the count (`2 profiled launches`).
        let n = self.launches.len();
        let phrase = if n == 1 {
            "profiled launch"
        } else {
            "profiled launches"
        };
        sink.add(
            FigureKind::Count,
            n as f64,
            "profiled launches",
            Some(phrase),
        );
        for l in &self.launches {
            let s = Some(l.kernel.as_str());
            // Every number of the table, in the unit the view draws it in.
            for (name, m) in &l.metrics {
                if let kernelab_model::MetricValue::Number(x) = &m.value {
                    let (kind, v) = match m.unit.as_str() {
                        "%" => (FigureKind::Share, x / 100.0),
                        "ns" => (FigureKind::Time, *x),
                        _ => (FigureKind::Count, *x),
                    };
                    sink.add(kind, v, &format!("launch {} {name}", l.id), s);
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

pub(crate) fn metrics_part(r: &MetricsBody) -> (Vec<Block>, String) {
    let mut t = Table::new(
        "Per-launch counters",
        &[
            ("ID", Align::Right),
            ("kernel", Align::Left),
            ("duration", Align::Right),
            ("DRAM bytes", Align::Right),
        ],
    );
    let number = |l: &kernelab_model::LaunchMetrics, keys: &[&str]| {
        keys.iter().find_map(|k| match l.metrics.get(*k)?.value {
            MetricValue::Number(x) => Some(x),
            MetricValue::Text(_) => None,
        })
    };
    for l in &r.launches {
        let dur = number(l, &["gpu__time_duration.sum", "Duration"]);
        let dram = number(l, &["dram__bytes.sum", "dram__bytes_read.sum"])
            .map(|x| thousands(x as u64))
            .unwrap_or_else(|| "–".into());
        t.push(vec![
            l.id.clone(),
            crate::format::shorten(&l.kernel, 60),
            opt_duration_ns(dur),
            dram,
        ]);
    }
    (
        vec![Block::Table(t)],
        crate::format::count(r.launches.len(), "profiled launch", "profiled launches"),
    )
}
