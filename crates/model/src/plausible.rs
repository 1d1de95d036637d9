//! The ranges a launch figure read from a profiler's output must lie in to be shown as a
//! measurement, in one place (docs/json.md, "Plausible ranges"). A figure outside its range
//! cannot be true of any part kernelab reads (a JAX profile of ROCm writes an uninitialised
//! register count of about two billion into every kernel): it is unavailable, and the input's
//! notes name the field and the value, never a measurement. A duration outside its range
//! cannot be true either: the dispatch, copy or stats row that holds it is left out of every
//! figure, and the notes count and name them (a duration is no optional figure in the model).

use crate::dispatch::{LaunchConfig, RecordedWork, TransferKind, WorkOf};
use crate::profile::Profile;
use std::collections::BTreeMap;
use std::ops::RangeInclusive;

/// Registers per thread (NVIDIA: at most 255) or architectural VGPRs (AMD: at most 512).
pub const REGISTERS_PER_THREAD: RangeInclusive<u32> = 0..=512;
/// AMD accumulation VGPRs (AGPRs) per work-item: at most 256.
pub const AGPRS: RangeInclusive<u32> = 0..=256;
/// AMD scalar registers per wave: at most 128 (allocation granules included).
pub const SGPRS: RangeInclusive<u32> = 0..=128;
/// Shared memory (NVIDIA) or LDS (AMD) per block / work-group, bytes: at most 256 KiB (the
/// largest of any part: 228 KiB on H100/B200, 160 KiB of LDS on gfx950).
pub const SHARED_BYTES: RangeInclusive<u32> = 0..=256 * 1024;
/// Scratch / local memory per thread (work-item), bytes: at most 512 KiB (NVIDIA's limit on
/// local memory per thread; AMD's private segment is smaller).
pub const SCRATCH_BYTES: RangeInclusive<u32> = 0..=512 * 1024;
/// Threads per block / work-item per work-group, in each dimension and in all: at most 1024.
pub const BLOCK_THREADS: RangeInclusive<u64> = 1..=1024;
/// Each grid dimension (blocks, or work-items on rocprofv3): at least 1.
pub const GRID_DIM: RangeInclusive<u64> = 1..=u32::MAX as u64;

/// One kernel dispatch's, copy's or fill's duration, in nanoseconds: at most one day
/// (86,400 s). No profiled kernel runs that long; a larger figure is a corrupt or hostile
/// timestamp (a Kineto `dur` of 10^15 µs) that would otherwise become the whole trace's kernel
/// time, busy time and wall. An end before the start is no duration at all: every reader
/// refuses it (exit 2, naming the event, row or field).
pub const DURATION_NS: RangeInclusive<u64> = 0..=86_400_000_000_000;

/// Where one input's records begin in a profile: what it added is checked by [`check_input`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Marks {
    /// The first launch config the input interned.
    pub launches: usize,
    /// The input's first kernel dispatch.
    pub dispatches: usize,
    /// The input's first copy or fill.
    pub transfers: usize,
    /// The input's first per-kernel aggregate (stats-only inputs).
    pub aggregates: usize,
}

impl Marks {
    /// The ends of `profile` now, before an input is read into it.
    pub fn of(profile: &Profile) -> Marks {
        Marks {
            launches: profile.launches.len(),
            dispatches: profile.dispatches.len(),
            transfers: profile.transfers.len(),
            aggregates: profile.aggregates.len(),
        }
    }
}

/// Applies every range of this module to what one input added to `profile` (from `from` on):
/// launch figures outside their range become unavailable ([`check_profile`]), and dispatches,
/// copies, fills and stats rows whose duration is outside [`DURATION_NS`] are removed
/// ([`check_durations`]). Returns the notes for the input.
pub fn check_input(profile: &mut Profile, from: Marks) -> Vec<String> {
    let mut notes = check_profile(profile, from.launches);
    notes.extend(check_durations(profile, from));
    notes
}

/// How many implausible records a note names by place; the rest are counted.
const NAMED: usize = 3;

/// Removes from `profile` the kernel dispatches, copies and fills added from `from` on whose
/// duration is outside [`DURATION_NS`], and the stats rows whose longest, shortest or mean call
/// is; returns one note per kind of record removed, counting them and naming the first few
/// by their number in the input (1-based), name and duration. Cheap when there are none: only
/// dispatches of about 4.3 s or more are looked at.
pub fn check_durations(profile: &mut Profile, from: Marks) -> Vec<String> {
    let max = *DURATION_NS.end();
    let mut notes = Vec::new();
    let long = profile.dispatches.longer_than(from.dispatches, max);
    if !long.is_empty() {
        let named = long.iter().take(NAMED).filter_map(|&i| {
            let d = profile.dispatches.get(i)?;
            Some(format!(
                "#{} `{}` {}",
                i - from.dispatches + 1,
                short(profile.names.name(d.name)),
                nanos(d.duration.ns())
            ))
        });
        let what = ("kernel dispatch", "kernel dispatches");
        notes.extend(left_out(long.len(), named.collect(), what));
        profile.dispatches.remove(&long);
        reindex_work(&mut profile.recorded_work, &long, |w| match w {
            WorkOf::Dispatch(i) => Some(i),
            WorkOf::Aggregate(_) => None,
        });
    }
    // Copies and fills, then stats rows: the input's own are numbered from 1 in its order.
    let (mut i, mut n, mut gone) = (0usize, 0usize, Vec::new());
    profile.transfers.retain(|t| {
        i += 1;
        let k = i.saturating_sub(from.transfers);
        if k == 0 || DURATION_NS.contains(&t.duration.ns()) {
            return true;
        }
        let kind = match t.kind {
            TransferKind::Memset => "memset",
            _ => "memcpy",
        };
        n += 1;
        if gone.len() < NAMED {
            gone.push(format!("#{k} {kind} {}", nanos(t.duration.ns())));
        }
        false
    });
    notes.extend(left_out(n, gone, ("copy or fill", "copies and fills")));
    let (mut i, mut n, mut gone) = (0usize, 0usize, Vec::new());
    let names = &profile.names;
    let mut removed = Vec::new();
    profile.aggregates.retain(|a| {
        i += 1;
        let k = i.saturating_sub(from.aggregates);
        let mean = a.total.ns().checked_div(a.calls);
        let per_call = [a.max.map(|m| m.ns()), a.min.map(|m| m.ns()), mean];
        match per_call
            .into_iter()
            .flatten()
            .find(|d| !DURATION_NS.contains(d))
        {
            Some(d) if k > 0 => {
                n += 1;
                if gone.len() < NAMED {
                    let name = short(names.name(a.name));
                    gone.push(format!("#{k} `{name}` {} per call", nanos(d)));
                }
                removed.push(i - 1);
                false
            }
            _ => true,
        }
    });
    notes.extend(left_out(n, gone, ("kernel stats row", "kernel stats rows")));
    reindex_work(&mut profile.recorded_work, &removed, |w| match w {
        WorkOf::Aggregate(i) => Some(i),
        WorkOf::Dispatch(_) => None,
    });
    notes
}

/// Drops the recorded work of the items at `gone` (ascending indexes) and moves the later
/// items' indexes down, for the kind of item `index` reads (others are kept as they are).
fn reindex_work(work: &mut Vec<RecordedWork>, gone: &[usize], index: fn(WorkOf) -> Option<usize>) {
    if gone.is_empty() {
        return;
    }
    work.retain_mut(|w| {
        let Some(i) = index(w.of) else {
            return true;
        };
        let before = gone.partition_point(|&g| g < i);
        if gone.get(before) == Some(&i) {
            return false;
        }
        w.of = match w.of {
            WorkOf::Dispatch(_) => WorkOf::Dispatch(i - before),
            WorkOf::Aggregate(_) => WorkOf::Aggregate(i - before),
        };
        true
    });
}

/// The note for `n` records left out, the first few named in `named` (number in the input,
/// name, duration), none when `n` is 0; past the named ones, a count. See the unit test for
/// its exact words.
fn left_out(n: usize, named: Vec<String>, (one, many): (&str, &str)) -> Option<String> {
    let (what, durations) = match n {
        0 => return None,
        1 => (one, "a duration"),
        _ => (many, "durations"),
    };
    let mut list = named.join(", ");
    if n > named.len() {
        list.push_str(&format!(" and {} more", n - named.len()));
    }
    Some(format!(
        "{n} {what} with {durations} outside 0..=86400 s (1 day) left out of every figure: {list}"
    ))
}

/// A duration as the note names it: whole nanoseconds, exactly (`86400000000001 ns`).
fn nanos(ns: u64) -> String {
    format!("{ns} ns")
}

/// A name cut to 80 characters (a note names a record, it does not quote it whole).
fn short(name: &str) -> String {
    match name.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", name.get(..i).unwrap_or(name)),
        None => name.to_string(),
    }
}

/// `cfg` with every figure outside its range made unavailable, and a note per such figure
/// (`registers per thread 2147483647: outside 0..=512, shown as unavailable`).
pub fn launch(cfg: LaunchConfig) -> (LaunchConfig, Vec<String>) {
    let mut out = cfg;
    let mut notes = Vec::new();
    let mut check = |field: &mut Option<u32>, what: &str, range: &RangeInclusive<u32>| {
        if let Some(v) = *field {
            if !range.contains(&v) {
                notes.push(note(what, &v.to_string(), &format!("{range:?}")));
                *field = None;
            }
        }
    };
    let r = &mut out.resources;
    check(
        &mut r.registers,
        "registers per thread",
        &REGISTERS_PER_THREAD,
    );
    check(&mut r.agprs, "AGPRs per work-item", &AGPRS);
    check(&mut r.sgprs, "SGPRs", &SGPRS);
    check(
        &mut r.shared_bytes,
        "shared memory / LDS bytes per block",
        &SHARED_BYTES,
    );
    check(
        &mut r.scratch_bytes,
        "scratch bytes per thread",
        &SCRATCH_BYTES,
    );
    if let Some(b) = out.block {
        let threads: u64 = b.iter().map(|&x| u64::from(x)).product();
        if !BLOCK_THREADS.contains(&threads) {
            let text = format!("{}x{}x{}", b[0], b[1], b[2]);
            let range = format!("{BLOCK_THREADS:?} threads");
            notes.push(note("block", &text, &range));
            out.block = None;
        }
    }
    if let Some(g) = out.grid {
        if g.iter().any(|&x| !GRID_DIM.contains(&u64::from(x))) {
            let text = format!("{}x{}x{}", g[0], g[1], g[2]);
            notes.push(note("grid", &text, &format!("{GRID_DIM:?} per dimension")));
            out.grid = None;
        }
    }
    (out, notes)
}

fn note(what: &str, value: &str, range: &str) -> String {
    format!("{what} {value}: outside {range}, shown as unavailable")
}

/// Applies [`launch`] to the launch configs interned from index `from` on (those one input
/// added), in place; returns one note per distinct finding with the number of launch configs it
/// touched, for the input's notes.
pub fn check_profile(profile: &mut Profile, from: usize) -> Vec<String> {
    let mut found: BTreeMap<String, usize> = BTreeMap::new();
    profile.launches.map_from(from, |cfg| {
        let (fixed, notes) = launch(*cfg);
        for n in notes {
            *found.entry(n).or_insert(0) += 1;
        }
        fixed
    });
    found
        .into_iter()
        .map(|(n, k)| {
            if k == 1 {
                n
            } else {
                format!("{n} (in {k} launch configurations)")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_work_follows_the_dispatches_and_rows_left() {
        use crate::{RecordedWork, WorkOf};
        let w = |of| RecordedWork {
            of,
            flops: Some(1.0),
            width: crate::FlopWidth::Unsaid,
            bytes: None,
            flops_key: "kernel_flop",
            bytes_key: "kernel_num_gb",
        };
        let mut work = vec![
            w(WorkOf::Dispatch(0)),
            w(WorkOf::Dispatch(2)),
            w(WorkOf::Aggregate(2)),
            w(WorkOf::Dispatch(5)),
        ];
        reindex_work(&mut work, &[1, 2, 4], |o| match o {
            WorkOf::Dispatch(i) => Some(i),
            WorkOf::Aggregate(_) => None,
        });
        let of: Vec<WorkOf> = work.iter().map(|w| w.of).collect();
        assert_eq!(
            of,
            [
                WorkOf::Dispatch(0),
                WorkOf::Aggregate(2),
                WorkOf::Dispatch(2)
            ]
        );
    }
    use crate::dispatch::{KernelAggregate, KernelDispatch, Resources, Transfer};
    use crate::units::{Nanos, Timestamp};

    /// A profile of one earlier input (one dispatch of 2 days, kept: not this input's) and this
    /// input: 300 dispatches of which four are implausible (1 day + 1 ns, 10^18 ns, u64::MAX, 3 days),
    /// a copy of 2 days and a fill of 1 day exactly, a stats row whose longest call is 2 days.
    #[test]
    fn durations_outside_their_range_leave_the_input_with_a_note() {
        let mut p = Profile::default();
        let (k, j) = (p.names.intern_str("k"), p.names.intern_str("j"));
        let day = *DURATION_NS.end();
        let dispatch = |name, start: i64, dur: u64| KernelDispatch {
            name,
            device: 0,
            stream: 7,
            start: Timestamp::from_ns(start),
            duration: Nanos::from_ns(dur),
            launch: 0,
            correlation: None,
            sub_ns: 0,
        };
        p.dispatches.push(dispatch(j, 0, 2 * day));
        let from = Marks::of(&p);
        for i in 0..300u64 {
            let dur = match i {
                16 => day + 1,
                39 => 1_000_000_000_000_000_000,
                250 => u64::MAX,
                260 => 3 * day,
                199 => day,
                _ => 1_000 + i,
            };
            let start = i64::try_from(i * 10_000).expect("small");
            p.dispatches.push(dispatch(k, start, dur));
        }
        let transfer = |kind, dur| Transfer {
            kind,
            device: 0,
            stream: 7,
            start: Timestamp::from_ns(5),
            duration: Nanos::from_ns(dur),
            bytes: None,
            sub_ns: 0,
        };
        p.transfers.push(transfer(TransferKind::Memcpy, 2 * day));
        p.transfers.push(transfer(TransferKind::Memset, day));
        let row = |max| KernelAggregate {
            name: k,
            calls: 10,
            total: Nanos::from_ns(10_000),
            total_e9: 0,
            min: Some(Nanos::from_ns(900)),
            max: Some(Nanos::from_ns(max)),
            stddev_ns: None,
            median_ns: None,
        };
        p.aggregates.push(row(1_100));
        p.aggregates.push(row(2 * day));
        let notes = check_input(&mut p, from);
        assert_eq!(
            notes,
            vec![
                "4 kernel dispatches with durations outside 0..=86400 s (1 day) left out of every figure: #17 `k` 86400000000001 ns, #40 `k` 1000000000000000000 ns, #251 `k` 18446744073709551615 ns and 1 more",
                "1 copy or fill with a duration outside 0..=86400 s (1 day) left out of every figure: #1 memcpy 172800000000000 ns",
                "1 kernel stats row with a duration outside 0..=86400 s (1 day) left out of every figure: #2 `k` 172800000000000 ns per call",
            ]
        );
        assert_eq!(p.dispatches.len(), 1 + 296);
        assert_eq!(p.dispatches.timing(0).map(|t| t.1), Some(2 * day));
        let kept: u64 = (1..p.dispatches.len())
            .filter_map(|i| p.dispatches.timing(i))
            .map(|t| t.1)
            .sum();
        let want: u64 = (0..300u64)
            .map(|i| match i {
                16 | 39 | 250 | 260 => 0,
                199 => day,
                _ => 1_000 + i,
            })
            .sum();
        assert_eq!(kept, want);
        assert_eq!(p.transfers.len(), 1);
        assert_eq!(p.aggregates.len(), 1);
        // Nothing to remove: no note, nothing changed.
        let again = p.clone();
        assert!(check_input(&mut p, Marks::of(&again)).is_empty());
        assert!(check_durations(&mut p, Marks::default()).len() == 1);
    }

    #[test]
    fn figures_outside_their_range_are_unavailable_with_a_note() {
        let cfg = LaunchConfig {
            grid: Some([1, 1, 0]),
            block: Some([2048, 1, 1]),
            resources: Resources {
                registers: Some(2_147_483_647),
                shared_bytes: Some(49_280),
                scratch_bytes: Some(u32::MAX),
                ..Resources::default()
            },
        };
        let (c, notes) = launch(cfg);
        assert_eq!(c.resources.registers, None);
        assert_eq!(c.resources.shared_bytes, Some(49_280));
        assert_eq!(c.resources.scratch_bytes, None);
        assert_eq!((c.grid, c.block), (None, None));
        assert!(
            notes.contains(
                &"registers per thread 2147483647: outside 0..=512, shown as unavailable"
                    .to_string()
            ),
            "{notes:?}"
        );
        assert_eq!(notes.len(), 4, "{notes:?}");
        let fine = LaunchConfig {
            grid: Some([69_840, 1, 1]),
            block: Some([256, 1, 1]),
            resources: Resources {
                registers: Some(128),
                ..Resources::default()
            },
        };
        assert_eq!(launch(fine), (fine, vec![]));
    }
}
