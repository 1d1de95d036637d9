//! Rows of per-dispatch inputs: the selected dispatches grouped by kernel or family, ranked by
//! total time, with exact medians. The only per-dispatch memory is one array of durations laid
//! out group after group (4 bytes per dispatch when every duration fits 32 bits, else 8),
//! each group's part sorted in place; everything else is per context (name, device, stream,
//! launch), of which a trace has few. Fractional inputs go to `exact_rows.rs`.

use super::rows::{assemble, KernelRow};
use super::{Outlier, RankOptions};
use crate::durations::CallStats;
use kernelab_model::{Dispatches, Grouping, KernelDispatch, LaunchConfig, NameId, Profile};
use std::collections::{BTreeSet, HashMap};
use std::ops::Range;

/// The dispatches a figure looks at: all of them, or some, by index.
#[derive(Clone, Debug)]
pub(super) enum Selection {
    /// Every dispatch of the profile.
    All(usize),
    /// These indices, ascending.
    Some(Vec<u32>),
}

impl Selection {
    /// Number of dispatches selected.
    pub(super) fn len(&self) -> usize {
        match self {
            Selection::All(n) => *n,
            Selection::Some(v) => v.len(),
        }
    }

    /// True when nothing is selected.
    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The selected indices, in order.
    pub(super) fn iter(&self) -> SelectionIter<'_> {
        match self {
            Selection::All(n) => SelectionIter::All(0..*n),
            Selection::Some(v) => SelectionIter::Some(v.iter()),
        }
    }

    /// Calls `f` with the start, duration and context id of each selected dispatch, in order
    /// (every dispatch: one sequential pass over the store).
    pub(super) fn each_timing(&self, d: &Dispatches, mut f: impl FnMut(i64, u64, u32)) {
        match self {
            Selection::All(_) => d.timings().for_each(|(s, dur, c)| f(s, dur, c)),
            Selection::Some(v) => v
                .iter()
                .filter_map(|&i| d.timing(i as usize))
                .for_each(|(s, dur, c)| f(s, dur, c)),
        }
    }

    /// Count and total time per context id, and the first start, of the selected dispatches:
    /// one pass, shared by every figure that needs them.
    pub(super) fn tally(&self, d: &Dispatches) -> Tally {
        let n = d.contexts().len();
        let (mut counts, mut totals) = (vec![0u64; n], vec![0u64; n]);
        let mut first: Option<i64> = None;
        self.each_timing(d, |start, dur, c| {
            if let (Some(k), Some(t)) = (counts.get_mut(c as usize), totals.get_mut(c as usize)) {
                *k += 1;
                *t = t.saturating_add(dur);
            }
            first = Some(first.map_or(start, |f| f.min(start)));
        });
        Tally {
            counts,
            totals,
            first,
        }
    }
}

/// What one pass over the selected dispatches gives: see [`Selection::tally`].
pub(super) struct Tally {
    /// Selected dispatches per context id.
    pub(super) counts: Vec<u64>,
    /// Their summed durations per context id, ns (saturating).
    pub(super) totals: Vec<u64>,
    /// The earliest start among them.
    pub(super) first: Option<i64>,
}

impl Tally {
    /// The summed durations of every selected dispatch, ns (saturating, as summed one by one).
    pub(super) fn total(&self) -> u64 {
        self.totals.iter().fold(0u64, |a, &x| a.saturating_add(x))
    }
}

/// The indices of a [`Selection`].
pub(super) enum SelectionIter<'a> {
    All(std::ops::Range<usize>),
    Some(std::slice::Iter<'a, u32>),
}

impl Iterator for SelectionIter<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        match self {
            SelectionIter::All(r) => r.next(),
            SelectionIter::Some(v) => v.next().map(|&i| i as usize),
        }
    }
}

/// A duration as stored in the layout: `u32` when every duration fits, else `u64`.
trait Dur: Copy + Ord + Into<u64> + Default {
    fn from_ns(ns: u64) -> Self;
}
impl Dur for u32 {
    fn from_ns(ns: u64) -> Self {
        u32::try_from(ns).unwrap_or(u32::MAX)
    }
}
impl Dur for u64 {
    fn from_ns(ns: u64) -> Self {
        ns
    }
}

/// Groups of contexts: `of[context]` is a group id (`None`: not selected), groups numbered by
/// position in the order their parts are laid out.
struct Grouped {
    of: Vec<Option<u32>>,
    /// Dispatches per group.
    counts: Vec<u64>,
}

/// The selected durations of the groups `batch`, group after group, each group's part sorted;
/// `starts[g - batch.start]` is where group `g` begins (with one more entry for the end).
fn layout<T: Dur>(
    d: &Dispatches,
    sel: &Selection,
    g: &Grouped,
    batch: Range<usize>,
) -> (Vec<T>, Vec<usize>) {
    let counts = g.counts.get(batch.clone()).unwrap_or_default();
    let mut starts = Vec::with_capacity(counts.len() + 1);
    let mut at = 0usize;
    for &n in counts {
        starts.push(at);
        at += n as usize;
    }
    starts.push(at);
    let mut fill = starts.clone();
    let mut flat = vec![T::default(); at];
    sel.each_timing(d, |_, dur, c| {
        let Some(k) =
            g.of.get(c as usize)
                .copied()
                .flatten()
                .and_then(|gid| (gid as usize).checked_sub(batch.start))
        else {
            return;
        };
        if let Some(pos) = fill.get_mut(k).filter(|_| k < counts.len()) {
            if let Some(slot) = flat.get_mut(*pos) {
                *slot = T::from_ns(dur);
            }
            *pos += 1;
        }
    });
    for w in starts.windows(2) {
        if let Some(part) = flat.get_mut(w[0]..w[1]) {
            part.sort_unstable();
        }
    }
    (flat, starts)
}

/// The groups `groups` cut into consecutive batches laid out one at a time: a batch holds at
/// most the larger of the largest group and half of all selected dispatches, so the durations
/// held at once take 2 bytes per dispatch or less unless one group has more than half (a pass
/// over the dispatches per batch, at most five).
fn batches(counts: &[u64], groups: Range<usize>) -> Vec<Range<usize>> {
    let all: u64 = counts.iter().sum();
    let largest = counts.iter().copied().max().unwrap_or(0);
    let budget = largest.max(all.div_ceil(2));
    let mut out = Vec::new();
    let (mut from, mut held) = (groups.start, 0u64);
    for g in groups.clone() {
        let n = counts.get(g).copied().unwrap_or(0);
        if g > from && held + n > budget {
            out.push(from..g);
            (from, held) = (g, 0);
        }
        held += n;
    }
    if from < groups.end {
        out.push(from..groups.end);
    }
    out
}

/// Count and figures (total, mean, median, min, max, sample standard deviation) of sorted
/// durations, summed in ascending order (the order the figures have always been computed in).
fn stats<T: Dur>(durs: &[T]) -> (u64, CallStats) {
    let n = durs.len();
    let total = durs.iter().fold(0u64, |a, &x| a.saturating_add(x.into()));
    let mean = if n > 0 { total as f64 / n as f64 } else { 0.0 };
    let at = |i: usize| durs.get(i).map(|&x| x.into() as f64).unwrap_or(0.0);
    let median = match n {
        0 => None,
        _ if n % 2 == 1 => Some(at(n / 2)),
        _ => Some((at(n / 2 - 1) + at(n / 2)) / 2.0),
    };
    let stddev = (n > 1).then(|| {
        let ss: f64 = durs.iter().map(|&x| (x.into() as f64 - mean).powi(2)).sum();
        (ss / (n - 1) as f64).sqrt()
    });
    let s = CallStats {
        total,
        mean,
        median,
        min: durs.first().map(|&x| x.into()),
        max: durs.last().map(|&x| x.into()),
        stddev,
    };
    (n as u64, s)
}

/// One row from its sorted durations and the contexts it covers.
fn row<T: Dur>(
    profile: &Profile,
    name: String,
    family: String,
    durs: &[T],
    contexts: &[u32],
    kernel_time: u64,
) -> KernelRow {
    let (n, s) = stats(durs);
    let all = profile.dispatches.contexts();
    let ctx = || contexts.iter().filter_map(|&c| all.get(c as usize));
    let launch_ids: BTreeSet<u32> = ctx().map(|c| c.launch).collect();
    let configs: Vec<LaunchConfig> = launch_ids
        .iter()
        .filter_map(|&i| profile.launches.get(i).copied())
        .collect();
    let names: BTreeSet<NameId> = ctx().map(|c| c.name).collect();
    assemble(name, family, names.len(), n, &s, &configs, kernel_time)
}

type Ranked = (Vec<KernelRow>, Option<KernelRow>, usize);

/// The selected dispatches themselves, for fractional inputs (see `exact_rows.rs`).
fn materialized(profile: &Profile, sel: &Selection) -> Vec<KernelDispatch> {
    sel.iter()
        .filter_map(|i| profile.dispatches.get(i))
        .collect()
}

/// Total time of the selected dispatches: exact, rounded once for fractional inputs.
pub(super) fn total_ns(profile: &Profile, sel: &Selection, tally: &Tally) -> u64 {
    if profile.remainders.is_empty() {
        return tally.total();
    }
    profile
        .remainders
        .total_ns(materialized(profile, sel).iter())
}

/// Groups the selected dispatches into rows, ranks them by total time, keeps the top rows and
/// folds the rest into "other".
pub(super) fn rank_dispatches(
    profile: &Profile,
    sel: &Selection,
    tally: &Tally,
    options: &RankOptions,
    kernel_time: u64,
    key_of: &mut dyn FnMut(NameId) -> String,
) -> Ranked {
    if !profile.remainders.is_empty() {
        let ds = materialized(profile, sel);
        let refs: Vec<&KernelDispatch> = ds.iter().collect();
        return super::exact_rows::rank_dispatches(profile, &refs, options, kernel_time, key_of);
    }
    let d = &profile.dispatches;
    let per_context = &tally.counts;
    // Group keys per used context, and totals per key.
    let mut keys: Vec<String> = Vec::new();
    let mut key_ids: HashMap<String, u32> = HashMap::new();
    let mut by_name: HashMap<NameId, u32> = HashMap::new();
    let mut key_of_ctx: Vec<Option<u32>> = vec![None; per_context.len()];
    let mut members: Vec<Vec<u32>> = Vec::new();
    for (c, (&n, ctx)) in per_context.iter().zip(d.contexts()).enumerate() {
        if n == 0 {
            continue;
        }
        let id = *by_name.entry(ctx.name).or_insert_with(|| {
            let key = key_of(ctx.name);
            let next = keys.len() as u32;
            *key_ids.entry(key.clone()).or_insert_with(|| {
                keys.push(key);
                members.push(Vec::new());
                next
            })
        });
        key_of_ctx[c] = Some(id);
        if let Some(m) = members.get_mut(id as usize) {
            m.push(c as u32);
        }
    }
    let mut totals = vec![0u64; keys.len()];
    let mut counts = vec![0u64; keys.len()];
    for (c, k) in key_of_ctx.iter().enumerate() {
        if let Some(k) = k {
            let k = *k as usize;
            totals[k] = totals[k].saturating_add(tally.totals.get(c).copied().unwrap_or(0));
            counts[k] += per_context.get(c).copied().unwrap_or(0);
        }
    }
    // Rank order: total time, then name; parts are laid out in this order so that the rows
    // past the top are one contiguous tail, sorted once more for the "other" row.
    let mut order: Vec<u32> = (0..keys.len() as u32).collect();
    order.sort_by(|&a, &b| {
        totals[b as usize]
            .cmp(&totals[a as usize])
            .then_with(|| keys[a as usize].cmp(&keys[b as usize]))
    });
    let mut position = vec![0u32; keys.len()];
    for (p, &k) in order.iter().enumerate() {
        position[k as usize] = p as u32;
    }
    let grouped = Grouped {
        of: key_of_ctx
            .iter()
            .map(|k| k.map(|k| position[k as usize]))
            .collect(),
        counts: order.iter().map(|&k| counts[k as usize]).collect(),
    };
    let ctx_of = |p: usize| members[order[p] as usize].as_slice();
    if d.all_durations_fit_u32() {
        rows_from(
            profile,
            sel,
            options,
            kernel_time,
            &grouped,
            &order,
            &keys,
            ctx_of,
            0u32,
        )
    } else {
        rows_from(
            profile,
            sel,
            options,
            kernel_time,
            &grouped,
            &order,
            &keys,
            ctx_of,
            0u64,
        )
    }
}

#[allow(clippy::too_many_arguments)]
fn rows_from<'m, T: Dur>(
    profile: &Profile,
    sel: &Selection,
    options: &RankOptions,
    kernel_time: u64,
    grouped: &Grouped,
    order: &[u32],
    keys: &[String],
    ctx_of: impl Fn(usize) -> &'m [u32],
    _width: T,
) -> Ranked {
    let none = options.grouping == Grouping::None;
    let row_of = |p: usize, part: &[T]| {
        let key = keys[order[p] as usize].clone();
        let family = if none {
            options.rules.family_of(&key)
        } else {
            key.clone()
        };
        let mut r = row(profile, key, family, part, ctx_of(p), kernel_time);
        r.rank = p + 1;
        r
    };
    let n_groups = order.len();
    let head = options.top.min(n_groups);
    let mut rows: Vec<KernelRow> = Vec::with_capacity(head);
    for batch in batches(&grouped.counts, 0..head) {
        let (flat, starts) = layout::<T>(&profile.dispatches, sel, grouped, batch.clone());
        for (k, p) in batch.enumerate() {
            rows.push(row_of(
                p,
                flat.get(starts[k]..starts[k + 1]).unwrap_or_default(),
            ));
        }
    }
    // The rows past the top are laid out together: the "other" row sorts them as one.
    let other = (n_groups > head).then(|| {
        let (mut tail, starts) = layout::<T>(&profile.dispatches, sel, grouped, head..n_groups);
        let rest: Vec<KernelRow> = (head..n_groups)
            .enumerate()
            .map(|(k, p)| row_of(p, tail.get(starts[k]..starts[k + 1]).unwrap_or_default()))
            .collect();
        tail.sort_unstable();
        let contexts: Vec<u32> = (head..n_groups)
            .flat_map(|p| ctx_of(p).iter().copied())
            .collect();
        let label = format!(
            "other ({} {})",
            rest.len(),
            if none { "kernels" } else { "families" }
        );
        let mut o = row(profile, label.clone(), label, &tail, &contexts, kernel_time);
        o.variants = rest.iter().map(|r| r.variants).sum();
        o
    });
    (rows, other, n_groups)
}

/// Kernels (exact names, whatever the grouping) whose slowest call exceeds `factor` times their
/// median, slowest first.
pub(super) fn outliers(
    profile: &Profile,
    sel: &Selection,
    tally: &Tally,
    factor: f64,
) -> Vec<Outlier> {
    if !profile.remainders.is_empty() {
        let ds = materialized(profile, sel);
        let refs: Vec<&KernelDispatch> = ds.iter().collect();
        return super::exact_rows::outliers(profile, &refs, factor);
    }
    let d = &profile.dispatches;
    let per_context = &tally.counts;
    let mut ids: HashMap<NameId, u32> = HashMap::new();
    let mut names: Vec<NameId> = Vec::new();
    let mut of: Vec<Option<u32>> = vec![None; per_context.len()];
    let mut counts: Vec<u64> = Vec::new();
    for (c, (&n, ctx)) in per_context.iter().zip(d.contexts()).enumerate() {
        if n == 0 {
            continue;
        }
        let id = *ids.entry(ctx.name).or_insert_with(|| {
            names.push(ctx.name);
            counts.push(0);
            (names.len() - 1) as u32
        });
        of[c] = Some(id);
        counts[id as usize] += n;
    }
    let grouped = Grouped { of, counts };
    let mut out = if d.all_durations_fit_u32() {
        outliers_from::<u32>(profile, sel, &grouped, &names, factor)
    } else {
        outliers_from::<u64>(profile, sel, &grouped, &names, factor)
    };
    out.sort_by(|a, b| b.max_ns.cmp(&a.max_ns).then_with(|| a.name.cmp(&b.name)));
    out
}

fn outliers_from<T: Dur>(
    profile: &Profile,
    sel: &Selection,
    grouped: &Grouped,
    names: &[NameId],
    factor: f64,
) -> Vec<Outlier> {
    let mut out = Vec::new();
    for batch in batches(&grouped.counts, 0..names.len()) {
        let (flat, starts) = layout::<T>(&profile.dispatches, sel, grouped, batch.clone());
        for (k, g) in batch.enumerate() {
            let (Some(durs), Some(&name)) = (flat.get(starts[k]..starts[k + 1]), names.get(g))
            else {
                continue;
            };
            let (_, s) = stats(durs);
            let (Some(median), Some(max)) = (s.median, s.max) else {
                continue;
            };
            if median > 0.0 && max as f64 > factor * median {
                let limit = factor * median;
                let over = durs.iter().filter(|&&x| x.into() as f64 > limit).count() as u64;
                out.push(Outlier {
                    name: profile.names.name(name).to_string(),
                    max_ns: max,
                    median_ns: median,
                    calls_over: over,
                    factor,
                });
            }
        }
    }
    out
}
