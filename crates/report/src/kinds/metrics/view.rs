//! The `metrics` view: one row per profiled launch, one column per metric.

use crate::format::{decimal, duration_ns, thousands};
use crate::table::{Align, Block, Table};
use kernelab_model::{LaunchMetrics, MetricValue};

/// Metrics shown when the user names none (those present in the input are used).
pub const DEFAULT_METRICS: [&str; 8] = [
    "gpu__time_duration.sum",
    "Duration",
    "dram__bytes.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "Registers Per Thread",
];

/// The metrics to show: `wanted`, or the defaults present in `launches`.
pub fn metric_columns(launches: &[LaunchMetrics], wanted: &[String]) -> Vec<String> {
    if !wanted.is_empty() {
        return wanted.to_vec();
    }
    DEFAULT_METRICS
        .iter()
        .filter(|m| launches.iter().any(|l| l.metrics.contains_key(**m)))
        .map(|m| m.to_string())
        .collect()
}

fn cell(l: &LaunchMetrics, name: &str) -> String {
    let Some(m) = l.metrics.get(name) else {
        return "unavailable".into();
    };
    match &m.value {
        MetricValue::Text(t) => t.clone(),
        MetricValue::Number(x) => match m.unit.as_str() {
            "ns" => duration_ns(*x),
            "%" => crate::format::percent(*x / 100.0, false),
            "byte" if x.fract() == 0.0 && *x >= 0.0 => format!("{} B", thousands(*x as u64)),
            u => {
                let n = if x.fract() == 0.0 {
                    decimal(*x, 0)
                } else {
                    decimal(*x, 2)
                };
                if u.is_empty() {
                    n
                } else {
                    format!("{n} {u}")
                }
            }
        },
    }
}

/// The per-launch table.
pub fn metrics_tables(
    launches: &[LaunchMetrics],
    columns: &[String],
    name_width: usize,
) -> Vec<Block> {
    let mut cols: Vec<(&str, Align)> = vec![("ID", Align::Right), ("kernel", Align::Left)];
    cols.extend(columns.iter().map(|c| (c.as_str(), Align::Right)));
    let mut t = Table::new(
        crate::format::count(launches.len(), "profiled launch", "profiled launches"),
        &cols,
    );
    for l in launches {
        let mut row = vec![l.id.clone(), crate::format::shorten(&l.kernel, name_width)];
        row.extend(columns.iter().map(|c| cell(l, c)));
        t.push(row);
    }
    vec![Block::Table(t)]
}

/// A flat CSV of the chosen metrics (numbers in base units; empty when unavailable).
pub fn metrics_csv(launches: &[LaunchMetrics], columns: &[String]) -> crate::Result<String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let mut header = vec!["id".to_string(), "kernel".to_string()];
    header.extend(columns.iter().cloned());
    w.write_record(&header)?;
    for l in launches {
        let mut rec = vec![l.id.clone(), l.kernel.clone()];
        for c in columns {
            rec.push(match l.metrics.get(c).map(|m| &m.value) {
                Some(MetricValue::Number(x)) => x.to_string(),
                Some(MetricValue::Text(t)) => t.clone(),
                None => String::new(),
            });
        }
        w.write_record(&rec)?;
    }
    crate::render::csv_finish(w)
}
