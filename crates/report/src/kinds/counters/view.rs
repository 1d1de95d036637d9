//! The `counters` view: baseline versus candidate per kernel and metric (median, range, change
//! with an arrow, flagged only beyond the repeat spread), per-side medians, and every failed
//! profiler process with the end of its stderr.

use crate::format::{count, decimal, duration_ns, percent, thousands, UNAVAILABLE};
use crate::format::{with_unit, Unit};
use crate::table::{Align, Block, Table};
use kernelab_model::counters::{CounterStat, CountersRun};
use serde::Serialize;

/// A value in its unit: durations scaled, percentages with two decimals, byte/second in GB/s,
/// whole counts with separators.
pub(crate) fn value(x: Option<f64>, unit: &str) -> String {
    let Some(x) = x else {
        return UNAVAILABLE.into();
    };
    match unit {
        "ns" => duration_ns(x),
        "%" => with_unit(x / 100.0, 2, Unit::Percent),
        "byte/second" => with_unit(x, 1, Unit::GigaBytesPerS),
        "byte" if x.fract() == 0.0 && x >= 0.0 => format!("{} B", thousands(x as u64)),
        _ if x.fract() == 0.0 && x.abs() < 1e15 => decimal(x, 0),
        _ if x.abs() >= 1000.0 => decimal(x, 1),
        _ => decimal(x, 3),
    }
}

/// The metric as shown: with its unit in brackets when [`value`] does not write the unit
/// itself (a rocprof-compute database's `Gflop/s`, `Percent`).
fn metric_cell(metric: &str, unit: &str) -> String {
    match unit {
        "" | "ns" | "%" | "byte/second" | "byte" => metric.to_string(),
        u => format!("{metric} [{u}]"),
    }
}

fn range(s: &CounterStat) -> String {
    match (s.min, s.max) {
        (Some(a), Some(b)) if a == b => {
            format!("{} (n={})", value(Some(a), &s.unit), s.values.len())
        }
        (Some(a), Some(b)) => format!(
            "{} – {} (n={})",
            value(Some(a), &s.unit),
            value(Some(b), &s.unit),
            s.values.len()
        ),
        _ => UNAVAILABLE.into(),
    }
}

/// The comparison table (two sides) or the per-kernel table (one side).
pub fn counters_tables(r: &CountersRun, name_width: usize) -> Vec<Block> {
    let short = |k: &str| {
        if k.chars().count() > name_width {
            format!(
                "{}…",
                k.chars()
                    .take(name_width.saturating_sub(1))
                    .collect::<String>()
            )
        } else {
            k.to_string()
        }
    };
    let mut out = Vec::new();
    if !r.changes.is_empty() {
        let mut t = Table::new(
            "Baseline versus candidate (change = (candidate − baseline) / baseline; * = beyond the repeat spread)",
            &[
                ("kernel", Align::Left),
                ("metric", Align::Left),
                ("baseline", Align::Right),
                ("candidate", Align::Right),
                ("change", Align::Right),
                ("", Align::Left),
            ],
        );
        for c in &r.changes {
            t.push(vec![
                short(&c.kernel),
                metric_cell(&c.metric, &c.unit),
                value(c.baseline, &c.unit),
                value(c.candidate, &c.unit),
                c.change
                    .change()
                    .map(|x| format!("{} {}", c.arrow(), percent(x, true)))
                    .unwrap_or_else(|| UNAVAILABLE.into()),
                if c.flagged { "*".into() } else { String::new() },
            ]);
        }
        out.push(Block::Table(t));
    }
    let mut t = Table::new(
        "Per side: median and range over repeats",
        &[
            ("side", Align::Left),
            ("kernel", Align::Left),
            ("metric", Align::Left),
            ("median", Align::Right),
            ("range", Align::Right),
        ],
    );
    for s in &r.stats {
        t.push(vec![
            s.side.clone(),
            short(&s.kernel),
            metric_cell(&s.metric, &s.unit),
            value(s.median, &s.unit),
            range(s),
        ]);
    }
    out.push(Block::Table(t));
    let mut lines = vec![if r.processes.is_empty() && r.group_size == 0 {
        // Values read from recorded files (`counters --from`): no profiler process ran.
        format!(
            "{} over {}: {}, as recorded (no profiler process ran)",
            r.profiler,
            r.target,
            count(r.metrics.len(), "metric", "metrics"),
        )
    } else {
        format!(
            "{} over {}: {}, {} per process, {}, {}, {} failed",
            r.profiler,
            r.target,
            count(r.metrics.len(), "metric", "metrics"),
            r.group_size,
            count(r.repeats, "repeat", "repeats"),
            count(r.processes.len(), "process", "processes"),
            r.failures().count()
        )
    }];
    if !r.unavailable.is_empty() {
        lines.push(format!(
            "unavailable {} (not measured, not estimated): {}",
            if r.processes.is_empty() && r.group_size == 0 {
                "in the recorded files"
            } else {
                "on this GPU"
            },
            r.unavailable.join(", ")
        ));
    }
    lines.extend(r.notes.iter().cloned());
    out.push(Block::List {
        title: "Notes".into(),
        lines,
    });
    let failures: Vec<String> = r
        .failures()
        .map(|p| {
            let last = p.stderr.trim().lines().last().unwrap_or("").to_string();
            format!(
                "{} group {} ({}) repeat {}: {:?}: {}{}",
                p.side,
                p.group,
                p.metrics.join(","),
                p.repeat,
                p.failure.as_ref().map_or("", |k| k.describe()),
                p.message.clone().unwrap_or_default(),
                if last.is_empty() {
                    String::new()
                } else {
                    format!(" — stderr: {last}")
                }
            )
        })
        .collect();
    if !failures.is_empty() {
        out.push(Block::List {
            title: "Failed profiler processes (the run went on)".into(),
            lines: failures,
        });
    }
    out
}

/// One CSV row per side, kernel and metric, with the change where there is one.
#[derive(Serialize, schemars::JsonSchema)]
struct Row<'a> {
    side: &'a str,
    kernel: &'a str,
    metric: &'a str,
    unit: &'a str,
    n: usize,
    median: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
    formula: Option<&'a str>,
}

/// The per-side statistics as CSV, then the changes as a second table after a blank line.
pub fn counters_csv(r: &CountersRun) -> crate::Result<String> {
    let rows: Vec<Row> = r
        .stats
        .iter()
        .map(|s| Row {
            side: &s.side,
            kernel: &s.kernel,
            metric: &s.metric,
            unit: &s.unit,
            n: s.values.len(),
            median: s.median,
            min: s.min,
            max: s.max,
            formula: s.formula.as_deref(),
        })
        .collect();
    let mut text = crate::render::csv_rows(&rows)?;
    if !r.changes.is_empty() {
        text.push('\n');
        text.push_str(&crate::render::csv_rows(&r.changes)?);
    }
    Ok(text)
}
