//! `counters --from FILE [--from FILE]`: the metric values a rocprof-compute analysis
//! database stores per kernel, as a `counters` document: one side per file (`run`, or
//! `baseline` and `candidate`), each value as stored (one per kernel and metric, no repeats),
//! a NULL value unavailable, never estimated.

use super::CountersSettings;
use crate::{setting, Hooks, Outcome};
use anyhow::{anyhow, Result};
use kernelab_model::counters::{CounterSample, CounterStat, CountersRun};
use kernelab_runner::counters::summary;
use kernelab_trace::{read_compute_analysis, ComputeAnalysis, ComputeMetricDef};
use std::path::{Path, PathBuf};

/// The metrics shown when `--metrics` names none: rocprof-compute's System Speed-of-Light
/// table (its own summary of a kernel).
pub(super) const DEFAULT_SELECTION: &str = "2.1";

/// Whether `m` is selected by one `--metrics` entry: its `metric_id` equal to the entry or
/// under it (`2.1` selects `2.1.0`, `2.1.17`), or its name equal (ASCII case ignored).
fn selects(entry: &str, m: &ComputeMetricDef) -> bool {
    let e = entry.trim();
    m.metric_id == e
        || m.metric_id
            .strip_prefix(e)
            .is_some_and(|rest| rest.starts_with('.'))
        || m.name.eq_ignore_ascii_case(e)
}

/// The counters document of the databases in `a.from` (one or two).
pub(super) fn run(a: &CountersSettings, hooks: &dyn Hooks) -> Result<Outcome> {
    let sides: &[&str] = match a.from.len() {
        1 => &["run"],
        2 => &["baseline", "candidate"],
        n => {
            return Err(setting(format!(
                "--from given {n} times: give one database, or two (baseline, candidate)"
            )))
        }
    };
    let kernel = match &a.kernel {
        Some(k) => Some(regex::Regex::new(k).map_err(|e| setting(format!("--kernel {k}: {e}")))?),
        None => None,
    };
    let selection: Vec<String> = if a.metrics.is_empty() {
        vec![DEFAULT_SELECTION.to_string()]
    } else {
        a.metrics
            .iter()
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty())
            .collect()
    };
    let mut samples = Vec::new();
    let mut stats = Vec::new();
    let mut metrics: Vec<String> = Vec::new();
    let mut unavailable = Vec::new();
    let mut notes = Vec::new();
    for (path, side) in a.from.iter().zip(sides) {
        let _progress = hooks.reading(path);
        let db = read_compute_analysis(path)?;
        if db.metrics.is_empty() {
            return Err(anyhow!(
                "{}: holds no metric values (compute_metric_definition, compute_kernel_metric_value are missing or empty)",
                path.display()
            ));
        }
        for e in &selection {
            if !db.metrics.iter().any(|m| selects(e, m)) {
                unavailable.push(format!("{e} (not in {})", path.display()));
            }
        }
        let (nulls, infinite, shown, kernels) = side_stats(
            &db,
            side,
            &selection,
            kernel.as_ref(),
            &mut metrics,
            &mut samples,
            &mut stats,
        );
        notes.push(format!(
            "{side}: {} ({}{}): {shown} values of {kernels} of its {} kernels, {nulls} of them NULL and {infinite} an infinity or NaN in the database (unavailable)",
            path.display(),
            db.version
                .as_deref()
                .map_or_else(|| "rocprof-compute".to_string(), |v| format!("rocprof-compute {v}")),
            db.device
                .as_deref()
                .map(|d| format!(", {d}"))
                .unwrap_or_default(),
            db.kernels.len()
        ));
    }
    notes.push(format!(
        "values as rocprof-compute computed and stored them per kernel (compute_kernel_metric_value), \
         over all of a kernel's profiled dispatches: one value per kernel and metric, no repeats, \
         so no change is flagged; each metric is named `metric_id name (value_name)` with the \
         database's unit; selected: {} (--metrics takes metric ids, which select the ids under \
         them, or names)",
        selection.join(", ")
    ));
    let changes = summary::changes(&stats);
    let any = stats.iter().any(|s| s.median.is_some());
    let target = a
        .from
        .iter()
        .zip(sides)
        .map(|(p, s)| format!("{} ({s})", p.display()))
        .collect::<Vec<_>>()
        .join(", ");
    let run = CountersRun {
        profiler: "rocprof-compute".into(),
        target,
        sides: sides.iter().map(|s| s.to_string()).collect(),
        repeats: 1,
        group_size: 0,
        kernel_filter: a.kernel.clone(),
        launch: None,
        metrics,
        unavailable,
        check_failed: None,
        processes: Vec::new(),
        samples,
        stats,
        changes,
        notes,
    };
    let inputs: Vec<PathBuf> = a.from.clone();
    let mut outcome = super::outcome(run, Path::new(""), &inputs)?;
    // No profiler process ran: the run passes when the selection holds a value.
    outcome.status = crate::Status::of(any);
    Ok(outcome)
}

/// One side's statistics (one value each) for the selected metrics of the kernels `kernel`
/// matches; returns how many selected values are NULL, how many not finite, how many there
/// are, and of how many kernels.
fn side_stats(
    db: &ComputeAnalysis,
    side: &str,
    selection: &[String],
    kernel: Option<&regex::Regex>,
    metrics: &mut Vec<String>,
    samples: &mut Vec<CounterSample>,
    stats: &mut Vec<CounterStat>,
) -> (usize, usize, usize, usize) {
    let chosen: Vec<bool> = db
        .metrics
        .iter()
        .map(|m| selection.iter().any(|e| selects(e, m)))
        .collect();
    let (mut nulls, mut infinite, mut shown, mut kernels) = (0, 0, 0, 0);
    for k in &db.kernels {
        if kernel.is_some_and(|r| !r.is_match(&k.name)) {
            continue;
        }
        kernels += 1;
        for v in &k.values {
            if !chosen.get(v.metric).copied().unwrap_or(false) {
                continue;
            }
            let label = db.value_label(v);
            // rocprof-compute derives its `Pct of Peak` rows as a percentage of the `Peak`
            // row; the definition's unit is the metric's own.
            let unit = if v.value_name == "Pct of Peak" {
                "Percent".to_string()
            } else {
                db.metrics
                    .get(v.metric)
                    .map(|m| m.unit.clone())
                    .unwrap_or_default()
            };
            if !metrics.contains(&label) {
                metrics.push(label.clone());
            }
            shown += 1;
            if let Some(x) = v.value {
                samples.push(CounterSample {
                    side: side.into(),
                    kernel: k.name.clone(),
                    metric: label.clone(),
                    unit: unit.clone(),
                    repeat: 0,
                    value: x,
                });
            } else if v.not_finite {
                infinite += 1;
            } else {
                nulls += 1;
            }
            stats.push(CounterStat {
                side: side.into(),
                kernel: k.name.clone(),
                metric: label,
                unit,
                values: v.value.into_iter().collect(),
                median: v.value,
                min: v.value,
                max: v.value,
                formula: None,
            });
        }
    }
    (nulls, infinite, shown, kernels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_selects_its_id_the_ids_under_it_or_a_name() {
        let m = ComputeMetricDef {
            metric_id: "2.1.17".into(),
            name: "Wavefront Occupancy".into(),
            unit: "Wavefronts".into(),
        };
        assert!(selects("2.1", &m));
        assert!(selects("2.1.17", &m));
        assert!(selects("wavefront occupancy", &m));
        assert!(!selects("2.1.1", &m));
        assert!(selects("2", &m));
    }
}
