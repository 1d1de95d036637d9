//! Ranking a profile's GPU time per kernel or family, with whole-trace figures, outliers and
//! phases.

mod exact_rows;
pub(crate) mod graphs;
mod groups;
mod intervals;
mod phase;
pub(crate) mod ranks;
mod rows;
pub(crate) mod shapes;
mod timeline;

pub use rows::{Geometry, KernelRow, ValueRange};

use crate::error::{Error, ErrorKind, Result};
use groups::{Selection, Tally};
use kernelab_model::{
    ActivityKind, FamilyRules, Grouping, Location, NameId, Profile, TransferKind,
};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use timeline::Timeline;

/// The fewest selected dispatches for which the timeline is computed on a thread of its own.
const PARALLEL_MIN: usize = 1 << 16;

/// A time window relative to the first kernel start of the input, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimeRange {
    /// Start offset (inclusive).
    pub start_ns: i64,
    /// End offset (exclusive); `None` for the end of the trace.
    pub end_ns: Option<i64>,
}

/// Parses `START:END` with units `ns`, `us`, `ms` (the default) or `s`; either side may be empty.
pub fn parse_time_range(text: &str) -> Result<TimeRange> {
    let (a, b) = text
        .split_once(':')
        .ok_or_else(|| Error::argument(format!("{text:?}: expected START:END, e.g. 10ms:250ms")))?;
    let one = |s: &str| -> Result<Option<i64>> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(None);
        }
        let (num, scale) = if let Some(n) = s.strip_suffix("ns") {
            (n, 0)
        } else if let Some(n) = s.strip_suffix("us").or_else(|| s.strip_suffix("µs")) {
            (n, 3)
        } else if let Some(n) = s.strip_suffix("ms") {
            (n, 6)
        } else if let Some(n) = s.strip_suffix('s') {
            (n, 9)
        } else {
            (s, 6)
        };
        kernelab_model::parse_scaled_decimal(num, scale)
            .map(Some)
            .ok_or_else(|| {
                Error::argument(format!(
                    "{s:?}: expected a time such as 250ms, 1.5s, 300us or 1000ns"
                ))
            })
    };
    let start_ns = one(a)?.unwrap_or(0);
    let end_ns = one(b)?;
    if end_ns.is_some_and(|e| e <= start_ns) {
        return Err(Error::argument(format!(
            "{text:?}: the end must be after the start"
        )));
    }
    Ok(TimeRange { start_ns, end_ns })
}

/// `ns` in the largest unit that writes it whole (`10 ms`, `300 µs`, `1500 ns`).
fn time_text(ns: i64) -> String {
    match ns {
        0 => "0 ms".to_string(),
        n if n % 1_000_000 == 0 => format!("{} ms", n / 1_000_000),
        n if n % 1_000 == 0 => format!("{} µs", n / 1_000),
        n => format!("{n} ns"),
    }
}

/// Which dispatches to keep.
#[derive(Clone, Debug, Default)]
pub struct Filters {
    /// Only this device.
    pub device: Option<u32>,
    /// Only this stream or queue.
    pub stream: Option<u64>,
    /// Only kernels whose full name matches.
    pub name: Option<Regex>,
    /// Only kernels that start in this window.
    pub time_range: Option<TimeRange>,
}

impl Filters {
    /// The filters given, in words, for every view of the figures they shape (`None`: none
    /// given). A table pasted elsewhere then still says it covers a window or a subset.
    pub fn describe(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(r) = &self.time_range {
            let end = r.end_ns.map_or_else(|| "the end".to_string(), time_text);
            parts.push(format!(
                "--time-range: kernels starting {} to {end} after the first kernel's start",
                time_text(r.start_ns)
            ));
        }
        if let Some(re) = &self.name {
            parts.push(format!("--name: full names matching {:?}", re.as_str()));
        }
        if let Some(d) = self.device {
            parts.push(format!("--device: device {d} only"));
        }
        if let Some(s) = self.stream {
            parts.push(format!("--stream: stream {s} only"));
        }
        (!parts.is_empty()).then(|| {
            format!(
                "filtered ({}): every figure covers only the kernels kept",
                parts.join("; ")
            )
        })
    }

    /// Whether an operation on `device`/`stream` starting `offset_ns` after the first kernel
    /// passes the device, stream and time filters.
    /// `offset_ns` is `None` for inputs without start times, which the time filter keeps.
    fn keeps(&self, device: u32, stream: u64, offset_ns: Option<i64>) -> bool {
        self.device.is_none_or(|x| device == x)
            && self.stream.is_none_or(|x| stream == x)
            && self
                .time_range
                .zip(offset_ns)
                .is_none_or(|(r, off)| off >= r.start_ns && r.end_ns.is_none_or(|e| off < e))
    }
}

/// How to rank.
#[derive(Clone, Debug)]
pub struct RankOptions {
    /// Rows per exact name or per family.
    pub grouping: Grouping,
    /// User family rules (applied before the default family key).
    pub rules: FamilyRules,
    /// Number of rows before the "other" row.
    pub top: usize,
    /// Dispatch filters.
    pub filters: Filters,
    /// Attribute time to annotated phases.
    pub by_phase: bool,
    /// A kernel whose slowest call exceeds this many times its median is an outlier.
    pub outlier_factor: f64,
}

impl Default for RankOptions {
    fn default() -> Self {
        RankOptions {
            grouping: Grouping::Family,
            rules: FamilyRules::default(),
            top: 20,
            filters: Filters::default(),
            by_phase: false,
            outlier_factor: 10.0,
        }
    }
}

/// Whole-trace figures. `None` means the input does not have what the figure needs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Summary {
    /// Sum of kernel durations.
    pub kernel_time_ns: u64,
    /// Union of kernel intervals over streams, per device, summed over devices.
    pub busy_ns: Option<u64>,
    /// First kernel start to last kernel end.
    pub wall_ns: Option<u64>,
    /// Idle time between busy stretches (positive launch gaps), per device, summed.
    pub gap_ns: Option<u64>,
    /// Number of idle gaps.
    pub gap_count: Option<u64>,
    /// Number of kernel executions.
    pub kernel_count: u64,
    /// Number of distinct kernel names.
    pub distinct_kernels: usize,
    /// Number of rows before truncation (families or names).
    pub groups: usize,
    /// Devices seen.
    pub devices: Vec<u32>,
    /// Number of distinct (device, stream) pairs with kernels.
    pub streams: Option<usize>,
    /// Sum of memcpy durations (kept apart from kernel time).
    pub memcpy_ns: Option<u64>,
    /// Number of memcpys.
    pub memcpy_count: Option<u64>,
    /// Sum of memset durations.
    pub memset_ns: Option<u64>,
    /// Number of memsets.
    pub memset_count: Option<u64>,
    /// Start of the first kernel, on the input's clock.
    pub first_start_ns: Option<i64>,
}

/// A kernel whose slowest call is far slower than its median.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Outlier {
    /// Row name.
    pub name: String,
    /// Slowest call.
    pub max_ns: u64,
    /// Median call.
    pub median_ns: f64,
    /// Number of calls above the factor times the median.
    pub calls_over: u64,
    /// The factor used.
    pub factor: f64,
}

/// Time attributed to one annotated range.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PhaseRow {
    /// Range name, or `(no phase)`.
    pub phase: String,
    /// Kernel executions in it.
    pub calls: u64,
    /// Kernel time in it.
    pub total_ns: u64,
    /// Share of all kernel time.
    pub share: f64,
    /// Its top kernels or families.
    pub kernels: Vec<KernelRow>,
}

/// Host API calls, copies, tracing domains or queue packets of one name (statistics files and
/// legacy rocprof traces): never counted as kernel GPU time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ActivityRow {
    /// What the row counts.
    pub kind: ActivityKind,
    /// API function, copy direction or domain.
    pub name: String,
    /// Number of calls or operations.
    pub calls: u64,
    /// Total duration.
    pub total_ns: u64,
}

/// Activity rows by kind, then total time, largest first (one row per kind and name).
fn activity_rows(profile: &Profile) -> Vec<ActivityRow> {
    // Totals exact (10⁻⁹ ns) over lines, rounded once.
    let mut by: HashMap<(ActivityKind, &str), (u64, u128)> = HashMap::new();
    for a in &profile.activities {
        let e = by.entry((a.kind, a.name.as_str())).or_default();
        e.0 += a.calls;
        e.1 += a.total_e9;
    }
    let mut out: Vec<ActivityRow> = by
        .into_iter()
        .map(|((kind, name), (calls, total_e9))| ActivityRow {
            kind,
            name: name.to_string(),
            calls,
            total_ns: crate::rocprof::round_e9(total_e9).ns(),
        })
        .collect();
    let order = |k: ActivityKind| match k {
        ActivityKind::HostApi => 0,
        ActivityKind::Copy => 1,
        ActivityKind::Queue => 2,
        _ => 3,
    };
    out.sort_by(|a, b| {
        order(a.kind)
            .cmp(&order(b.kind))
            .then(b.total_ns.cmp(&a.total_ns))
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

/// The result of ranking.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Ranking {
    /// Top rows by total time.
    pub rows: Vec<KernelRow>,
    /// Everything below the top rows, as one row.
    pub other: Option<KernelRow>,
    /// Whole-trace figures.
    pub summary: Summary,
    /// Kernels with extreme slow calls.
    pub outliers: Vec<Outlier>,
    /// Per-phase attribution, when requested.
    pub phases: Option<Vec<PhaseRow>>,
    /// Things the reader should know about these figures.
    pub notes: Vec<String>,
    /// Host API calls, copies, queue packets and domains (not kernel time).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub activities: Vec<ActivityRow>,
}

/// Ranks the profile's kernel time.
pub fn rank(profile: &Profile, options: &RankOptions) -> Result<Ranking> {
    if profile.has_dispatches() && !profile.aggregates.is_empty() {
        return Err(Error::new(Location::default(), ErrorKind::MixedInputs));
    }
    let mut keys: HashMap<NameId, String> = HashMap::new();
    let mut key_of = |id: NameId| -> String {
        keys.entry(id)
            .or_insert_with(|| {
                let name = profile.names.name(id);
                match options.grouping {
                    Grouping::None => name.to_string(),
                    _ => options.rules.family_of(name),
                }
            })
            .clone()
    };
    if !profile.aggregates.is_empty() {
        let mut r = rows::rank_aggregates(profile, options, &mut key_of);
        r.activities = activity_rows(profile);
        return Ok(r);
    }
    // Offsets from the first kernel start matter only to a time range.
    let origin = if options.filters.time_range.is_some() {
        origin(profile)
    } else {
        0
    };
    let selected = select(profile, &options.filters, origin);
    let d = &profile.dispatches;
    let tally = selected.tally(d);
    let kernel_time = groups::total_ns(profile, &selected, &tally);
    let mut notes: Vec<String> = options.filters.describe().into_iter().collect();
    let mut ranked = || {
        let rows = groups::rank_dispatches(
            profile,
            &selected,
            &tally,
            options,
            kernel_time,
            &mut key_of,
        );
        let outliers = groups::outliers(profile, &selected, &tally, options.outlier_factor);
        (rows, outliers)
    };
    // The timeline in one streaming pass needs no memory per dispatch, so it runs beside the
    // rows when there are cores to spare; a timeline that must sort comes after them, once
    // their durations are freed.
    let (((rows, other, groups), outliers), t) = if selected.len() >= PARALLEL_MIN
        && crate::kineto::reader_threads() > 1
    {
        std::thread::scope(|s| {
            let t = s.spawn(|| timeline::in_order(&profile.remainders, d, &selected));
            let r = ranked();
            let t = t.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            let t = t.unwrap_or_else(|| timeline::not_in_order(&profile.remainders, d, &selected));
            (r, t)
        })
    } else {
        let r = ranked();
        (r, timeline::timeline(&profile.remainders, d, &selected))
    };
    let summary = summarize(profile, &selected, options, &tally, kernel_time, &t, origin);
    let summary = Summary { groups, ..summary };
    let phases = if options.by_phase {
        if profile.annotations.is_empty() {
            notes.push("--by-phase: the input has no annotated ranges, so no phase table".into());
            None
        } else {
            Some(phase_rows(
                profile,
                &selected,
                options,
                summary.kernel_time_ns,
                &mut key_of,
            ))
        }
    } else {
        None
    };
    if profile.untimed && options.filters.time_range.is_some() {
        notes.push(
            "--time-range needs start times, which this input does not have; every launch was kept"
                .into(),
        );
    }
    if profile.dispatches.is_empty() {
        notes.push(if profile.activities.is_empty() {
            "the input has no kernel dispatches".into()
        } else {
            "the input has no kernel dispatches: its statistics are host API calls, copies or domains, shown apart".into()
        });
    } else if selected.is_empty() {
        notes.push("no kernel matched the filters".into());
    }
    Ok(Ranking {
        rows,
        other,
        summary,
        outliers,
        phases,
        notes,
        activities: activity_rows(profile),
    })
}

/// The first kernel start: time ranges are offsets from it.
fn origin(profile: &Profile) -> i64 {
    let d = &profile.dispatches;
    (0..d.len())
        .filter_map(|i| d.timing(i).map(|t| t.0))
        .min()
        .unwrap_or(0)
}

/// The dispatches the filters keep (`origin`: the first kernel start, for a time range).
fn select(profile: &Profile, f: &Filters, origin: i64) -> Selection {
    let d = &profile.dispatches;
    if f.device.is_none() && f.stream.is_none() && f.name.is_none() && f.time_range.is_none() {
        return Selection::All(d.len());
    }
    let mut name_ok: HashMap<NameId, bool> = HashMap::new();
    // Device, stream and name are properties of the context: decided once per context.
    let context_ok: Vec<bool> = d
        .contexts()
        .iter()
        .map(|c| {
            f.keeps(c.device, c.stream, None)
                && match &f.name {
                    None => true,
                    Some(re) => *name_ok
                        .entry(c.name)
                        .or_insert_with(|| re.is_match(profile.names.name(c.name))),
                }
        })
        .collect();
    let mut keep = Vec::new();
    for i in 0..d.len() {
        let Some((start, _, c)) = d.timing(i) else {
            continue;
        };
        let Some(c) = context_ok.get(c as usize).and_then(|&ok| ok.then_some(c)) else {
            continue;
        };
        let Some(ctx) = d.contexts().get(c as usize) else {
            continue;
        };
        let offset = (!profile.untimed).then(|| start - origin);
        if f.keeps(ctx.device, ctx.stream, offset) {
            keep.push(u32::try_from(i).unwrap_or(u32::MAX));
        }
    }
    Selection::Some(keep)
}

fn summarize(
    profile: &Profile,
    selected: &Selection,
    options: &RankOptions,
    tally: &Tally,
    kernel_time: u64,
    t: &Timeline,
    origin: i64,
) -> Summary {
    let d = &profile.dispatches;
    let per_context = &tally.counts;
    let used = || {
        per_context
            .iter()
            .zip(d.contexts())
            .filter(|(&n, _)| n > 0)
            .map(|(_, c)| c)
    };
    let mut devices: Vec<u32> = used().map(|c| c.device).collect();
    devices.sort_unstable();
    devices.dedup();
    let mut streams: Vec<(u32, u64)> = used().map(|c| (c.device, c.stream)).collect();
    streams.sort_unstable();
    streams.dedup();
    let mut names: Vec<NameId> = used().map(|c| c.name).collect();
    names.sort_unstable();
    names.dedup();
    let first = tally.first;
    let f = &options.filters;
    let transfers: Vec<_> = profile
        .transfers
        .iter()
        .filter(|x| {
            f.keeps(
                x.device,
                x.stream,
                (!profile.untimed).then(|| x.start.ns() - origin),
            )
        })
        .collect();
    let sum = |k: TransferKind| {
        let of_kind = transfers.iter().copied().filter(|x| x.kind == k);
        profile.remainders.total_ns(of_kind)
    };
    let count = |k: TransferKind| transfers.iter().filter(|x| x.kind == k).count() as u64;
    // Without a timeline (Nsight Compute) the interval figures do not exist.
    let empty = selected.is_empty() || profile.untimed;
    // Copies and fills are unknown, not zero, when no input records them.
    let unrecorded = profile.transfers.is_empty()
        && !profile.sources.is_empty()
        && profile.sources.iter().all(|s| s.copies_unrecorded);
    let copies = !profile.untimed && !unrecorded;
    Summary {
        kernel_time_ns: kernel_time,
        busy_ns: (!empty).then_some(t.busy_ns),
        wall_ns: (!empty).then_some(t.wall_ns),
        gap_ns: (!empty).then_some(t.gap_ns),
        gap_count: (!empty).then_some(t.gaps),
        kernel_count: selected.len() as u64,
        distinct_kernels: names.len(),
        groups: 0,
        devices,
        streams: Some(streams.len()),
        memcpy_ns: copies.then(|| sum(TransferKind::Memcpy)),
        memcpy_count: copies.then(|| count(TransferKind::Memcpy)),
        memset_ns: copies.then(|| sum(TransferKind::Memset)),
        memset_count: copies.then(|| count(TransferKind::Memset)),
        first_start_ns: if empty { None } else { first },
    }
}

fn phase_rows(
    profile: &Profile,
    selected: &Selection,
    options: &RankOptions,
    kernel_time: u64,
    key_of: &mut dyn FnMut(NameId) -> String,
) -> Vec<PhaseRow> {
    let assigned = phase::assign(profile, selected);
    let mut by_phase: HashMap<Option<NameId>, Vec<u32>> = HashMap::new();
    for (i, a) in selected.iter().zip(assigned) {
        by_phase
            .entry(a)
            .or_default()
            .push(u32::try_from(i).unwrap_or(u32::MAX));
    }
    let mut out: Vec<PhaseRow> = by_phase
        .into_iter()
        .map(|(phase, ds)| {
            let ds = Selection::Some(ds);
            let tally = ds.tally(&profile.dispatches);
            let total = groups::total_ns(profile, &ds, &tally);
            let (kernels, _, _) =
                groups::rank_dispatches(profile, &ds, &tally, options, kernel_time, key_of);
            PhaseRow {
                phase: phase
                    .map(|p| profile.names.name(p).to_string())
                    .unwrap_or_else(|| "(no phase)".into()),
                calls: ds.len() as u64,
                total_ns: total,
                share: if kernel_time > 0 {
                    total as f64 / kernel_time as f64
                } else {
                    0.0
                },
                kernels,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.phase.cmp(&b.phase))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_ranges_parse_with_units() {
        assert_eq!(
            parse_time_range("10ms:250ms").ok(),
            Some(TimeRange {
                start_ns: 10_000_000,
                end_ns: Some(250_000_000)
            })
        );
        assert_eq!(
            parse_time_range("1.5s:").ok(),
            Some(TimeRange {
                start_ns: 1_500_000_000,
                end_ns: None
            })
        );
        assert_eq!(
            parse_time_range(":300us").ok(),
            Some(TimeRange {
                start_ns: 0,
                end_ns: Some(300_000)
            })
        );
        assert_eq!(
            parse_time_range("5:7").ok(),
            Some(TimeRange {
                start_ns: 5_000_000,
                end_ns: Some(7_000_000)
            })
        );
        let e = parse_time_range("7ms:5ms").expect_err("end before start");
        assert_eq!(
            e.to_string(),
            "\"7ms:5ms\": the end must be after the start"
        );
        assert!(parse_time_range("10ms").is_err());
        assert!(parse_time_range("xms:").is_err());
    }
}
