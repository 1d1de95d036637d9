//! Per-name statistics CSVs: rocprofv3 `kernel_stats.csv`, legacy rocprof `results.stats.csv`
//! (kernel names with unquoted commas included), rocprof-compute `pmc_kernel_top.csv` and
//! `nsys stats` CSV; and the files that share their header but hold no kernels — legacy
//! `results.hip_stats.csv` / `results.copy_stats.csv`, rocprofv3 `hip_api_stats.csv`,
//! `memory_copy_stats.csv` and `domain_stats.csv` — told apart by the names they hold.

use super::csv::{records, Columns, Lines, Row};
use crate::error::{Error, Result};
use kernelab_model::{
    parse_scaled_decimal_wide, ActivityAggregate, ActivityKind, KernelAggregate, Nanos, Profile,
    SourceInfo,
};
use std::io::Read;

/// One statistics line, before the file is known to hold kernels or not.
struct Line {
    name: String,
    calls: u64,
    total_e9: u128,
    min: Option<Nanos>,
    max: Option<Nanos>,
    stddev_ns: Option<f64>,
    median_ns: Option<f64>,
}

/// Sub-nanosecond digits kept in exact totals.
const SCALE: i32 = 9;
const E9: u128 = 1_000_000_000;

/// `v` (in units of 10⁻⁹ ns) rounded half up to whole nanoseconds.
pub(crate) fn round_e9(v: u128) -> Nanos {
    Nanos::from_ns(u64::try_from((v + E9 / 2) / E9).unwrap_or(u64::MAX))
}

/// The names a copy statistics line carries (legacy rocprof and rocprofv3).
fn is_copy(name: &str) -> bool {
    matches!(
        name,
        "CopyHostToDevice"
            | "CopyDeviceToHost"
            | "CopyDeviceToDevice"
            | "CopyHostToHost"
            | "FillBuffer"
    ) || name.starts_with("MEMORY_COPY_")
}

/// rocprofv3 tracing domains (`domain_stats.csv`).
fn is_domain(name: &str) -> bool {
    let upper = !name.is_empty()
        && name
            .bytes()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_');
    upper
        && (name.ends_with("_API")
            || matches!(
                name,
                "KERNEL_DISPATCH"
                    | "MEMORY_COPY"
                    | "MEMORY_ALLOCATION"
                    | "SCRATCH_MEMORY"
                    | "PAGE_MIGRATION"
                    | "COUNTER_COLLECTION"
            ))
}

/// Host runtime API functions (`hipMemcpy`, `hsa_signal_wait_scacquire`, `roctxRangePushA`).
fn is_host_api(name: &str) -> bool {
    let ident = name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
    ident
        && ["hip", "__hip", "hsa_", "hsaKmt", "roctx", "rccl", "nccl"]
            .iter()
            .any(|p| name.starts_with(p))
}

/// What every line of the file counts, or `None` for kernels (any line that is none of the
/// others makes it a kernel file).
fn classify(lines: &[Line]) -> Option<ActivityKind> {
    if lines.is_empty() {
        return None;
    }
    let all = |f: fn(&str) -> bool| lines.iter().all(|l| f(&l.name));
    if all(is_copy) {
        Some(ActivityKind::Copy)
    } else if all(is_domain) {
        Some(ActivityKind::Domain)
    } else if all(is_host_api) {
        Some(ActivityKind::HostApi)
    } else {
        None
    }
}

/// The record with the first column's unquoted commas joined back: legacy rocprof wrote
/// `results.stats.csv` names unquoted, so a longer row is a name split at its commas followed
/// by the numeric columns, which are the last ones.
fn rejoin(row: &Row<'_>, name: usize) -> Result<Option<csv::StringRecord>> {
    let (have, want) = (row.rec.len(), row.header.names.len());
    if have == want {
        return Ok(None);
    }
    if have < want || name != 0 {
        return Err(Error::syntax(
            row.loc(name),
            format!("{want} fields as in the header"),
            format!("{have} fields"),
        ));
    }
    let extra = have - want;
    let fields: Vec<&str> = row.rec.iter().collect();
    let mut out = csv::StringRecord::new();
    out.push_field(&fields[..=extra].join(","));
    for f in &fields[extra + 1..] {
        out.push_field(f);
    }
    Ok(Some(out))
}

/// Reads a statistics CSV: kernel lines become aggregates, other files activity totals.
pub(super) fn read<R: Read>(
    rdr: &mut Lines<R>,
    cols: &Columns,
    p: &mut Profile,
    source: &mut SourceInfo,
) -> Result<()> {
    let name = cols.require(&["Name", "Kernel_Name"], 1)?;
    let calls = cols.require(&["Calls", "Count", "Instances"], 1)?;
    let total = cols.require(&["TotalDurationNs", "Sum(ns)", "Total Time (ns)"], 1)?;
    let min = cols.find(&["MinNs", "Min (ns)"]);
    let max = cols.find(&["MaxNs", "Max (ns)"]);
    let sd = cols.find(&["StdDev", "StdDev (ns)"]);
    let median = cols.find(&["Median(ns)", "Med (ns)"]);
    let mut lines = Vec::new();
    let mut rejoined = 0u64;
    records(rdr, cols, |raw| {
        let fixed = rejoin(raw, name)?;
        rejoined += u64::from(fixed.is_some());
        let rec = fixed.as_ref().unwrap_or(raw.rec);
        let row = Row {
            rec,
            line: raw.line,
            header: cols,
        };
        lines.push(line(&row, name, calls, total, [min, max, sd, median])?);
        Ok(())
    })?;
    if rejoined > 0 {
        source.notes.push(format!(
            "{rejoined} rows had kernel names with unquoted commas (legacy rocprof): the name was joined back from the leading fields"
        ));
    }
    let v3 = min.is_some();
    match classify(&lines) {
        Some(kind) => {
            let (format, what) = match (kind, v3) {
                (ActivityKind::HostApi, false) => ("rocprof-hip-stats", "host API calls"),
                (ActivityKind::HostApi, true) => ("rocprofv3-api-stats", "host API calls"),
                (ActivityKind::Copy, false) => ("rocprof-copy-stats", "copies and fills"),
                (ActivityKind::Copy, true) => ("rocprofv3-memory-copy-stats", "copies"),
                (_, _) => ("rocprofv3-domain-stats", "whole tracing domains"),
            };
            source.format = format.into();
            source.notes.push(format!(
                "statistics of {what}, not kernels: shown apart, never counted as kernel GPU time"
            ));
            p.activities
                .extend(lines.into_iter().map(|l| ActivityAggregate {
                    kind,
                    name: l.name,
                    calls: l.calls,
                    total: round_e9(l.total_e9),
                    total_e9: l.total_e9,
                }));
        }
        None => {
            source.notes.push("aggregates only: no per-dispatch records, so busy time, wall time and gaps are unavailable".into());
            if median.is_none() {
                source
                    .notes
                    .push("the file has no median column, so medians are unavailable".into());
            }
            if cols.find(&["Sum(ns)"]).is_some() {
                source.notes.push("rocprof-compute averages its figures over its profiling passes: fractional totals are summed exactly and rounded once to whole nanoseconds".into());
            }
            let (queue, kernels): (Vec<Line>, Vec<Line>) = lines
                .into_iter()
                .partition(|l| super::is_queue_packet(&l.name));
            if !queue.is_empty() {
                let calls: u64 = queue.iter().map(|l| l.calls).sum();
                source.notes.push(format!(
                    "{calls} barrier/marker packets ({} rows) are queue activity, not kernel executions: shown beside copies, never counted as kernel GPU time",
                    queue.len()
                ));
            }
            p.activities
                .extend(queue.into_iter().map(|l| ActivityAggregate {
                    kind: ActivityKind::Queue,
                    name: l.name.trim_matches('"').to_string(),
                    calls: l.calls,
                    total: round_e9(l.total_e9),
                    total_e9: l.total_e9,
                }));
            for l in kernels {
                p.aggregates.push(KernelAggregate {
                    name: p.names.intern_str(&l.name),
                    calls: l.calls,
                    total: round_e9(l.total_e9),
                    total_e9: l.total_e9,
                    min: l.min,
                    max: l.max,
                    stddev_ns: l.stddev_ns,
                    median_ns: l.median_ns,
                });
            }
        }
    }
    Ok(())
}

fn line(
    row: &Row<'_>,
    name: usize,
    calls: usize,
    total: usize,
    [min, max, sd, median]: [Option<usize>; 4],
) -> Result<Line> {
    // Durations, counts and spreads are never negative, NaN or infinite.
    let float = |c: usize, what: &str| -> Result<f64> {
        row.text(c)
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| {
                Error::syntax(
                    row.loc(c),
                    format!("{what} (finite, not negative)"),
                    format!("{:?}", row.text(c)),
                )
            })
    };
    let count = |c: usize, what: &str| -> Result<u64> {
        let v = row.int(c, what)?;
        u64::try_from(v)
            .map_err(|_| Error::syntax(row.loc(c), format!("{what} (not negative)"), v.to_string()))
    };
    let n = |c: Option<usize>, what: &str| -> Result<Option<Nanos>> {
        c.map(|c| count(c, what).map(Nanos::from_ns)).transpose()
    };
    // `nsys stats` may write thousands separators inside quoted numbers.
    let text = row.text(total).replace(',', "");
    if text.contains(['e', 'E']) {
        row.int(total, "a total duration in ns")?;
    }
    let total_e9 = parse_scaled_decimal_wide(&text, SCALE)
        .and_then(|v| u128::try_from(v).ok())
        .ok_or_else(|| {
            Error::syntax(
                row.loc(total),
                "a total duration in ns (a decimal number, not negative)",
                format!("{:?}", row.text(total)),
            )
        })?;
    Ok(Line {
        name: row.text(name).to_string(),
        calls: count(calls, "a call count")?,
        total_e9,
        min: n(min, "a minimum duration in ns")?,
        max: n(max, "a maximum duration in ns")?,
        stddev_ns: sd
            .map(|c| float(c, "a standard deviation in ns"))
            .transpose()?,
        median_ns: median.map(|c| float(c, "a median in ns")).transpose()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_classify_files() {
        assert!(is_host_api("hipMemcpy") && is_host_api("hsa_signal_wait_scacquire"));
        assert!(!is_host_api("hip_kernel(float*, int)") && !is_host_api("vector_add"));
        assert!(is_copy("CopyHostToDevice") && is_copy("MEMORY_COPY_DEVICE_TO_HOST"));
        assert!(is_domain("KERNEL_DISPATCH") && is_domain("HIP_RUNTIME_API"));
        assert!(!is_domain("GEMM_KERNEL"));
        assert!(super::super::is_queue_packet("<barrier packet>"));
        assert!(super::super::is_queue_packet("\"<barrier packet>\""));
        assert!(super::super::is_queue_packet("<Marker packet>"));
        assert!(!super::super::is_queue_packet("barrier_kernel(float*)"));
        assert!(!super::super::is_queue_packet("<lambda packet>"));
        assert_eq!(round_e9(4_358_035_070_312_500), Nanos::from_ns(4_358_035));
        assert_eq!(round_e9(1_500_000_000), Nanos::from_ns(2));
    }
}
