//! Nsight Compute `--csv` output: the details page (long format, one row per metric, rule rows,
//! rows shorter than the header) and the raw page (`--page raw`: header, units row, one row per
//! launch). `==PROF==`/`==WARNING==` lines and program output around the CSV are skipped;
//! thousands separators are removed and auto-scaled units are converted to base units.
//! See `docs/formats.md` (Nsight Compute CSV).

use crate::error::{Error, ErrorKind, Result};
use kernelab_model::{
    normalize_unit, KernelDispatch, LaunchConfig, LaunchMetrics, Location, Metric, MetricValue,
    Nanos, Profile, Resources, SourceInfo, Timestamp,
};
use std::io::Read;

/// Identification columns of both pages (everything else on the raw page is a metric).
const ID_COLUMNS: [&str; 13] = [
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Kernel Time",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
    "Section Name",
];

/// Parses `"1,234.5"` (thousands separators) into a number.
fn number(text: &str) -> Option<f64> {
    let t = text.trim().replace(',', "");
    if t.is_empty() {
        return None;
    }
    t.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// `"(128, 32, 1)"` → `[128, 32, 1]`.
fn dims(text: &str) -> Option<[u32; 3]> {
    let inner = text.trim().trim_start_matches('(').trim_end_matches(')');
    let v: Vec<u32> = inner
        .split(',')
        .map(|p| p.trim().parse::<u32>())
        .collect::<std::result::Result<_, _>>()
        .ok()?;
    match v.as_slice() {
        [x, y, z] => Some([*x, *y, *z]),
        [x] => Some([*x, 1, 1]),
        _ => None,
    }
}

fn metric(unit: &str, raw: &str) -> Metric {
    match number(raw) {
        Some(v) => {
            let (unit, value) = normalize_unit(unit.trim(), v);
            Metric {
                unit,
                value: MetricValue::Number(value),
            }
        }
        None => Metric {
            unit: unit.trim().to_string(),
            value: MetricValue::Text(raw.to_string()),
        },
    }
}

/// The CSV text without tool framing lines, with the physical line number of each kept line.
fn csv_lines(text: &str) -> (String, Vec<u64>) {
    let mut out = String::with_capacity(text.len());
    let mut lines = Vec::new();
    let mut started = false;
    for (i, line) in text.lines().enumerate() {
        if !started {
            if line.starts_with("\"ID\",") {
                started = true;
            } else {
                continue;
            }
        }
        if line.starts_with("==") || line.trim().is_empty() {
            continue;
        }
        out.push_str(line);
        out.push('\n');
        lines.push(i as u64 + 1);
    }
    (out, lines)
}

/// The largest Nsight Compute CSV kernelab reads (it is read whole).
pub(crate) const MAX_NCU_CSV_BYTES: u64 = 512 << 20;

/// Reads an Nsight Compute CSV into per-launch metric tables, with the physical line each
/// launch starts at.
fn read_lined<R: Read>(r: R) -> Result<(Vec<LaunchMetrics>, Vec<u64>)> {
    let mut bytes = Vec::new();
    r.take(MAX_NCU_CSV_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::new(Location::byte(0), ErrorKind::Io(e)))?;
    if bytes.len() as u64 > MAX_NCU_CSV_BYTES {
        return Err(Error::new(
            Location::byte(MAX_NCU_CSV_BYTES),
            ErrorKind::TooLarge {
                what: "an Nsight Compute CSV".into(),
                limit: MAX_NCU_CSV_BYTES,
            },
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        Error::syntax(
            Location::byte(e.utf8_error().valid_up_to() as u64),
            "UTF-8 text",
            "invalid UTF-8",
        )
    })?;
    let (csv_text, line_of) = csv_lines(&text);
    let header_line = line_of.first().copied().unwrap_or(1);
    if csv_text.is_empty() {
        return Err(Error::syntax(
            Location::line(1),
            "an Nsight Compute CSV header starting with \"ID\"",
            "none",
        ));
    }
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(true)
        .has_headers(true)
        .from_reader(csv_text.as_bytes());
    let header: Vec<String> = rdr
        .headers()
        .map_err(|e| Error::syntax(Location::line(header_line), "a CSV header", e.to_string()))?
        .iter()
        .map(str::to_string)
        .collect();
    let col = |n: &str| header.iter().position(|h| h == n);
    let kernel = col("Kernel Name").ok_or_else(|| {
        Error::syntax(
            Location::line(header_line).with_field("Kernel Name"),
            "a `Kernel Name` column",
            header.join(","),
        )
    })?;
    let id = col("ID").unwrap_or(0);
    let long = col("Metric Name").zip(col("Metric Value"));
    let mut launches: Vec<LaunchMetrics> = Vec::new();
    let mut first_lines: Vec<u64> = Vec::new();
    let mut units: Option<Vec<String>> = None;
    for (k, rec) in rdr.records().enumerate() {
        let line = line_of.get(k + 1).copied().unwrap_or(0);
        let rec =
            rec.map_err(|e| Error::syntax(Location::line(line), "a CSV record", e.to_string()))?;
        let get = |i: usize| rec.get(i).unwrap_or("");
        if get(id).is_empty() {
            // The raw page's units row.
            units = Some(rec.iter().map(str::to_string).collect());
            continue;
        }
        let same = launches
            .last()
            .is_some_and(|l| l.id == get(id) && long.is_some());
        if !same {
            let mut l = LaunchMetrics {
                id: get(id).to_string(),
                kernel: get(kernel).to_string(),
                ..LaunchMetrics::default()
            };
            for name in ID_COLUMNS {
                if let Some(i) = col(name) {
                    if !get(i).is_empty() && name != "Section Name" {
                        l.ids.insert(name.to_string(), get(i).to_string());
                    }
                }
            }
            l.grid = col("Grid Size").and_then(|i| dims(get(i)));
            l.block = col("Block Size").and_then(|i| dims(get(i)));
            launches.push(l);
            first_lines.push(line);
        }
        let Some(l) = launches.last_mut() else {
            continue;
        };
        match long {
            Some((name_col, value_col)) => {
                let name = get(name_col);
                if name.is_empty() {
                    continue; // a rule row
                }
                let unit = col("Metric Unit").map(get).unwrap_or("");
                l.metrics
                    .insert(name.to_string(), metric(unit, get(value_col)));
            }
            None => {
                for (i, h) in header.iter().enumerate() {
                    if ID_COLUMNS.contains(&h.as_str()) || get(i).is_empty() {
                        continue;
                    }
                    let unit = units
                        .as_ref()
                        .and_then(|u| u.get(i))
                        .map(String::as_str)
                        .unwrap_or("");
                    l.metrics.insert(h.clone(), metric(unit, get(i)));
                }
            }
        }
    }
    if launches.is_empty() {
        return Err(Error::syntax(
            Location::line(header_line),
            "at least one profiled launch after the header",
            "none",
        ));
    }
    Ok((launches, first_lines))
}

/// Reads an Nsight Compute CSV (details or raw page) into its per-launch metric tables, in
/// base units, without requiring durations.
pub fn read_launches<R: Read>(r: R) -> Result<Vec<LaunchMetrics>> {
    read_lined(r).map(|(l, _)| l)
}

/// The duration metric of a launch in ns (`gpu__time_duration.sum`, else the SpeedOfLight
/// `Duration`): its name, and its value or, when it is not a finite number, its text.
fn duration(l: &LaunchMetrics) -> Option<(&'static str, std::result::Result<f64, String>)> {
    for name in [
        "gpu__time_duration.sum",
        "Duration",
        "gpu__time_duration.avg",
    ] {
        if let Some(m) = l.metrics.get(name) {
            if m.unit == "ns" || matches!(m.value, MetricValue::Text(_)) {
                return Some(match &m.value {
                    MetricValue::Number(v) => (name, Ok(*v)),
                    MetricValue::Text(t) => (name, Err(t.clone())),
                });
            }
        }
    }
    None
}

/// Reads an Nsight Compute CSV into `profile`: the metric table, and one dispatch per launch
/// timed by `gpu__time_duration.sum`.
pub(crate) fn read<R: Read>(
    r: R,
    metrics_only: bool,
    p: &mut Profile,
    source: &mut SourceInfo,
) -> Result<()> {
    let (launches, lines) = read_lined(r)?;
    if metrics_only {
        p.launch_metrics.extend(launches);
        return Ok(());
    }
    let page = if launches.iter().any(|l| l.metrics.len() > 100) {
        "raw"
    } else {
        "details"
    };
    source
        .facts
        .push(("launches".into(), launches.len().to_string()));
    source.facts.push(("page".into(), page.into()));
    p.untimed = true;
    for (l, &line) in launches.iter().zip(&lines) {
        let (metric, value) = duration(l).ok_or_else(|| {
            Error::syntax(
                Location::default().with_field("gpu__time_duration.sum"),
                format!(
                    "a duration for launch {} ({}): collect `--metrics gpu__time_duration.sum` or `--section SpeedOfLight`",
                    l.id,
                    l.kernel.chars().take(80).collect::<String>()
                ),
                "no duration metric",
            )
        })?;
        let ns = match value {
            Ok(v) if v.is_finite() && v >= 0.0 => v,
            Ok(v) => return Err(bad_duration(line, metric, &v.to_string())),
            Err(text) => return Err(bad_duration(line, metric, &format!("{text:?}"))),
        };
        let int = |n: &str| {
            l.number(n).and_then(|v| {
                if v >= 0.0 && v <= f64::from(u32::MAX) {
                    Some(v as u32)
                } else {
                    None
                }
            })
        };
        let shared = match (
            int("Static Shared Memory Per Block"),
            int("Dynamic Shared Memory Per Block"),
        ) {
            (Some(s), Some(d)) => s.checked_add(d),
            (s, d) => s.or(d).or_else(|| {
                int("launch__shared_mem_per_block_static")?
                    .checked_add(int("launch__shared_mem_per_block_dynamic")?)
            }),
        };
        let launch = p.launches.intern(LaunchConfig {
            grid: l.grid,
            block: l.block,
            resources: Resources {
                registers: int("launch__registers_per_thread")
                    .or_else(|| int("Registers Per Thread")),
                shared_bytes: shared,
                ..Resources::default()
            },
        });
        p.dispatches.push(KernelDispatch {
            name: p.names.intern_str(&l.kernel),
            device: l
                .ids
                .get("Device")
                .and_then(|d| d.parse().ok())
                .unwrap_or(0),
            stream: l
                .ids
                .get("Stream")
                .and_then(|d| d.parse().ok())
                .unwrap_or(0),
            start: Timestamp::from_ns(0),
            duration: Nanos::from_ns(ns.round() as u64),
            launch,
            correlation: None,
            sub_ns: 0,
        });
    }
    source.notes.push("Nsight Compute replays kernels one at a time: there is no timeline, so busy time, wall time and gaps are unavailable, and durations are under the profiler's clock and cache control".into());
    p.launch_metrics.extend(launches);
    Ok(())
}

/// A duration that is negative, not finite or not a number, at the launch's first line.
fn bad_duration(line: u64, metric: &str, found: &str) -> Error {
    Error::syntax(
        Location::line(line).with_field(metric),
        "a non-negative, finite duration in ns",
        found,
    )
}
