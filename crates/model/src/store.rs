//! Kernel dispatches stored in 12 bytes each: start (4 bytes: an offset from the first start of
//! its block of 256 dispatches), duration (4 bytes), and an id (4 bytes) of what dispatches
//! share: name, device, stream and launch config, interned as a [`Context`]. A start more than
//! about 2.1 s from its block's first, or a duration of about 4.3 s or more, goes to a side
//! table, so every value is kept exactly; traces come in time order, where that is rare. A
//! trace of millions of dispatches of a few hundred kernels on a few streams then costs 12
//! bytes per dispatch. Correlation ids (16 more bytes) are kept only when asked for.

use crate::dispatch::KernelDispatch;
use crate::intern::NameId;
use crate::units::{Nanos, Timestamp};
use std::collections::HashMap;

/// What a group of dispatches shares: name, device, stream and launch config.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Context {
    /// Kernel name.
    pub name: NameId,
    /// Device (GPU index).
    pub device: u32,
    /// Stream or queue.
    pub stream: u64,
    /// Index into the profile's launch-config interner.
    pub launch: u32,
}

/// One dispatch: start offset (or [`FAR`]), duration (or [`LONG`]) and context id.
#[derive(Clone, Copy, Debug, Default)]
struct Record {
    offset: i32,
    duration: u32,
    context: u32,
}

/// A duration that does not fit 32 bits: the real one is in the side table.
const LONG: u32 = u32::MAX;
/// A start too far from its block's base: the real one is in the side table.
const FAR: i32 = i32::MIN;
/// Dispatches per block (one base start each).
const BLOCK: usize = 256;

/// Slots of the direct-mapped cache in front of the context table.
const CACHE: usize = 1 << 12;

/// Kernel dispatches, in the order they were added. See the module documentation.
#[derive(Clone, Debug)]
pub struct Dispatches {
    records: Vec<Record>,
    /// The start of the first dispatch of each block of [`BLOCK`].
    bases: Vec<i64>,
    /// Starts that do not fit an offset, by record index, ascending.
    far: Vec<(usize, i64)>,
    /// Durations of [`LONG`] nanoseconds or more, by record index, ascending.
    long: Vec<(usize, u64)>,
    /// Sub-nanosecond remainder handles that are not 0, by record index, ascending.
    subs: Vec<(usize, u32)>,
    contexts: Vec<Context>,
    index: HashMap<Context, u32>,
    /// A direct-mapped cache (one context per slot, replaced on a miss) that spares most
    /// pushes the keyed hash of `index`; a slot holds no chain, so no input can make it slow.
    cache: Vec<Option<(Context, u32)>>,
    /// Correlation ids, when kept.
    correlations: Option<Vec<Option<u64>>>,
}

impl Default for Dispatches {
    fn default() -> Self {
        Dispatches {
            records: Vec::new(),
            bases: Vec::new(),
            far: Vec::new(),
            long: Vec::new(),
            subs: Vec::new(),
            contexts: Vec::new(),
            index: HashMap::new(),
            cache: Vec::new(),
            correlations: Some(Vec::new()),
        }
    }
}

impl PartialEq for Dispatches {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

fn slot(c: &Context) -> usize {
    let mut h = u64::from(c.name.0) ^ (u64::from(c.device) << 32);
    h = (h ^ c.stream.rotate_left(17) ^ (u64::from(c.launch) << 7))
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> 52) as usize % CACHE
}

impl Dispatches {
    /// Whether correlation ids are kept (the default); without them every dispatch reads
    /// back with `correlation: None`, and each costs 12 bytes instead of 28.
    pub fn keep_correlations(&mut self, keep: bool) {
        match (keep, &self.correlations) {
            (true, None) => self.correlations = Some(vec![None; self.records.len()]),
            (false, Some(_)) => self.correlations = None,
            _ => {}
        }
    }

    /// Whether correlation ids are kept.
    pub fn keeps_correlations(&self) -> bool {
        self.correlations.is_some()
    }

    /// Number of dispatches.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The id of a context, added if new.
    fn context_id(&mut self, c: Context) -> u32 {
        if self.cache.is_empty() {
            self.cache = vec![None; CACHE];
        }
        let s = slot(&c);
        if let Some(Some((k, id))) = self.cache.get(s) {
            if *k == c {
                return *id;
            }
        }
        let next = u32::try_from(self.contexts.len()).unwrap_or(u32::MAX);
        let id = *self.index.entry(c).or_insert(next);
        if id == next {
            self.contexts.push(c);
        }
        if let Some(e) = self.cache.get_mut(s) {
            *e = Some((c, id));
        }
        id
    }

    /// Adds a dispatch.
    pub fn push(&mut self, d: KernelDispatch) {
        let context = self.context_id(Context {
            name: d.name,
            device: d.device,
            stream: d.stream,
            launch: d.launch,
        });
        self.push_record(
            context,
            d.start.ns(),
            d.duration.ns(),
            d.sub_ns,
            d.correlation,
        );
    }

    /// Appends every dispatch of `other` in order, its names and launch configs renamed
    /// through `name` and `launch`: the same as pushing each of `other.iter()` renamed, but
    /// each context of `other` is looked up once and nothing else is hashed.
    pub fn append(
        &mut self,
        other: &Dispatches,
        name: impl Fn(NameId) -> NameId,
        launch: impl Fn(u32) -> u32,
    ) {
        let mut map: Vec<Option<u32>> = vec![None; other.contexts.len()];
        let (mut far, mut long, mut subs) = (0usize, 0usize, 0usize);
        self.records.reserve(other.records.len());
        for (i, r) in other.records.iter().enumerate() {
            let c = r.context as usize;
            let context = match map.get(c).copied().flatten() {
                Some(id) => id,
                None => {
                    let Some(&ctx) = other.contexts.get(c) else {
                        continue;
                    };
                    let id = self.context_id(Context {
                        name: name(ctx.name),
                        launch: launch(ctx.launch),
                        ..ctx
                    });
                    if let Some(e) = map.get_mut(c) {
                        *e = Some(id);
                    }
                    id
                }
            };
            let start = if r.offset != FAR {
                let base = other.bases.get(i / BLOCK).copied().unwrap_or(0);
                base.wrapping_add(i64::from(r.offset))
            } else {
                at(&other.far, &mut far, i).unwrap_or(0)
            };
            let duration = if r.duration != LONG {
                u64::from(r.duration)
            } else {
                at(&other.long, &mut long, i).unwrap_or(u64::from(LONG))
            };
            let sub = at(&other.subs, &mut subs, i).unwrap_or(0);
            let correlation = other
                .correlations
                .as_ref()
                .and_then(|v| v.get(i).copied().flatten());
            self.push_record(context, start, duration, sub, correlation);
        }
    }

    /// Indexes (ascending, from `from` on) of the dispatches lasting more than `max_ns`, where
    /// `max_ns` is at least `u32::MAX - 1`: only the side table of long durations is looked at.
    pub fn longer_than(&self, from: usize, max_ns: u64) -> Vec<usize> {
        let max_ns = max_ns.max(u64::from(LONG) - 1);
        self.long
            .iter()
            .filter(|&&(i, d)| i >= from && d > max_ns)
            .map(|&(i, _)| i)
            .collect()
    }

    /// Removes the dispatches at `indexes` (ascending), keeping the others in order with their
    /// contexts, sub-nanosecond remainders and correlation ids. The store is rebuilt once, so
    /// this is for the rare dispatch that must go (an implausible duration), not for filtering.
    pub fn remove(&mut self, indexes: &[usize]) {
        if indexes.is_empty() {
            return;
        }
        let mut old = std::mem::take(self);
        self.contexts = std::mem::take(&mut old.contexts);
        self.index = std::mem::take(&mut old.index);
        self.cache = std::mem::take(&mut old.cache);
        self.correlations = old.correlations.as_ref().map(|_| Vec::new());
        self.records
            .reserve(old.records.len().saturating_sub(indexes.len()));
        let mut gone = indexes.iter().copied().peekable();
        let mut subs = 0usize;
        for (i, (start, duration, context)) in old.timings().enumerate() {
            while gone.next_if(|&j| j < i).is_some() {}
            if gone.next_if_eq(&i).is_some() {
                continue;
            }
            let sub = at(&old.subs, &mut subs, i).unwrap_or(0);
            let correlation = old
                .correlations
                .as_ref()
                .and_then(|v| v.get(i).copied().flatten());
            self.push_record(context, start, duration, sub, correlation);
        }
    }

    /// Adds the record of a dispatch of context id `context`.
    fn push_record(
        &mut self,
        context: u32,
        start: i64,
        duration_ns: u64,
        sub_ns: u32,
        correlation: Option<u64>,
    ) {
        let duration = match u32::try_from(duration_ns) {
            Ok(x) if x != LONG => x,
            _ => {
                self.long.push((self.records.len(), duration_ns));
                LONG
            }
        };
        let i = self.records.len();
        if sub_ns != 0 {
            self.subs.push((i, sub_ns));
        }
        if i % BLOCK == 0 {
            self.bases.push(start);
        }
        let base = self.bases.last().copied().unwrap_or(start);
        let offset = match start.checked_sub(base).map(i32::try_from) {
            Some(Ok(x)) if x != FAR => x,
            _ => {
                self.far.push((i, start));
                FAR
            }
        };
        self.records.push(Record {
            offset,
            duration,
            context,
        });
        if let Some(c) = self.correlations.as_mut() {
            c.push(correlation);
        }
    }

    /// The start of record `i` in nanoseconds.
    #[inline]
    fn start_of(&self, i: usize, r: &Record) -> i64 {
        if r.offset != FAR {
            let base = self.bases.get(i / BLOCK).copied().unwrap_or(0);
            return base.wrapping_add(i64::from(r.offset));
        }
        match self.far.binary_search_by_key(&i, |&(j, _)| j) {
            Ok(k) => self.far.get(k).map(|&(_, s)| s).unwrap_or(0),
            Err(_) => 0,
        }
    }

    /// The duration of record `i` in nanoseconds.
    #[inline]
    fn duration_of(&self, i: usize, r: &Record) -> u64 {
        if r.duration != LONG {
            return u64::from(r.duration);
        }
        match self.long.binary_search_by_key(&i, |&(j, _)| j) {
            Ok(k) => self.long.get(k).map(|&(_, d)| d).unwrap_or(0),
            Err(_) => u64::from(LONG),
        }
    }

    /// The dispatch at `i`.
    pub fn get(&self, i: usize) -> Option<KernelDispatch> {
        let r = self.records.get(i)?;
        let c = self.contexts.get(r.context as usize)?;
        Some(KernelDispatch {
            name: c.name,
            device: c.device,
            stream: c.stream,
            start: Timestamp::from_ns(self.start_of(i, r)),
            duration: Nanos::from_ns(self.duration_of(i, r)),
            launch: c.launch,
            correlation: self
                .correlations
                .as_ref()
                .and_then(|v| v.get(i).copied().flatten()),
            sub_ns: if self.subs.is_empty() {
                0
            } else {
                self.subs
                    .binary_search_by_key(&i, |&(j, _)| j)
                    .ok()
                    .and_then(|k| self.subs.get(k))
                    .map_or(0, |&(_, h)| h)
            },
        })
    }

    /// Every dispatch, in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            dispatches: self,
            next: 0,
        }
    }

    /// Start, duration in nanoseconds and context id of dispatch `i` (what the ranking reads,
    /// without building a whole [`KernelDispatch`]).
    #[inline]
    pub fn timing(&self, i: usize) -> Option<(i64, u64, u32)> {
        let r = self.records.get(i)?;
        Some((self.start_of(i, r), self.duration_of(i, r), r.context))
    }

    /// Start, duration in nanoseconds and context id of every dispatch, in order: what
    /// [`Dispatches::timing`] gives for each index, read block by block without a lookup per
    /// dispatch (for passes over the whole store).
    pub fn timings(&self) -> impl Iterator<Item = (i64, u64, u32)> + '_ {
        self.records
            .chunks(BLOCK)
            .zip(&self.bases)
            .enumerate()
            .flat_map(move |(b, (block, &base))| {
                block.iter().enumerate().map(move |(k, r)| {
                    let i = b * BLOCK + k;
                    let start = if r.offset != FAR {
                        base.wrapping_add(i64::from(r.offset))
                    } else {
                        self.start_of(i, r)
                    };
                    (start, self.duration_of(i, r), r.context)
                })
            })
    }

    /// True when every duration is below `u32::MAX` nanoseconds (about 4.3 s).
    pub fn all_durations_fit_u32(&self) -> bool {
        self.long.is_empty()
    }

    /// The distinct contexts, by id.
    pub fn contexts(&self) -> &[Context] {
        &self.contexts
    }

    /// Renumbers the devices of dispatches `from..` through `f`.
    pub fn map_devices(&mut self, from: usize, f: impl Fn(u32) -> u32) {
        for i in from..self.records.len() {
            let Some(&r) = self.records.get(i) else { break };
            let Some(&c) = self.contexts.get(r.context as usize) else {
                continue;
            };
            let context = self.context_id(Context {
                device: f(c.device),
                ..c
            });
            if let Some(r) = self.records.get_mut(i) {
                r.context = context;
            }
        }
    }

    /// Bytes held per dispatch beyond the context table and side tables, for checks of the
    /// memory bound (12, or 28 with correlation ids).
    pub fn bytes_per_dispatch(&self) -> usize {
        std::mem::size_of::<Record>()
            + self
                .correlations
                .as_ref()
                .map_or(0, |_| std::mem::size_of::<Option<u64>>())
    }
}

/// The side-table value at record `i`, `k` a cursor that only moves forward (the tables are
/// ascending by record, and records are visited in order).
fn at<T: Copy>(table: &[(usize, T)], k: &mut usize, i: usize) -> Option<T> {
    while table.get(*k).is_some_and(|&(j, _)| j < i) {
        *k += 1;
    }
    table.get(*k).filter(|&&(j, _)| j == i).map(|&(_, v)| v)
}

/// The dispatches of a [`Dispatches`], in order, by value.
#[derive(Clone, Debug)]
pub struct Iter<'a> {
    dispatches: &'a Dispatches,
    next: usize,
}

impl Iterator for Iter<'_> {
    type Item = KernelDispatch;

    fn next(&mut self) -> Option<KernelDispatch> {
        let d = self.dispatches.get(self.next)?;
        self.next += 1;
        Some(d)
    }

    fn nth(&mut self, n: usize) -> Option<KernelDispatch> {
        self.next = self.next.saturating_add(n);
        self.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.dispatches.len().saturating_sub(self.next);
        (n, Some(n))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a Dispatches {
    type Item = KernelDispatch;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl FromIterator<KernelDispatch> for Dispatches {
    fn from_iter<I: IntoIterator<Item = KernelDispatch>>(iter: I) -> Self {
        let mut d = Dispatches::default();
        for x in iter {
            d.push(x);
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(name: u32, start: i64, dur: u64, corr: Option<u64>) -> KernelDispatch {
        KernelDispatch {
            name: NameId(name),
            device: name % 2,
            stream: 7,
            start: Timestamp::from_ns(start),
            duration: Nanos::from_ns(dur),
            launch: 3,
            correlation: corr,
            sub_ns: if name == 2 { 5 } else { 0 },
        }
    }

    #[test]
    fn reads_back_what_was_pushed_including_long_durations() {
        let input = vec![
            d(1, -5, 10, Some(4)),
            d(2, 1 << 62, u64::from(u32::MAX), None),
            d(1, 0, u64::MAX, Some(9)),
            d(3, i64::MIN, u64::from(u32::MAX) - 1, Some(0)),
        ];
        let store: Dispatches = input.iter().copied().collect();
        assert_eq!(store.len(), 4);
        assert_eq!(store.iter().collect::<Vec<_>>(), input);
        assert_eq!(store.contexts().len(), 3);
        assert_eq!(store.timing(2), Some((0, u64::MAX, 0)));
        assert_eq!(store.bytes_per_dispatch(), 28);
    }

    #[test]
    fn removing_long_dispatches_keeps_the_rest_exactly() {
        let day = 86_400_000_000_000u64;
        let input: Vec<KernelDispatch> = (0..700u32)
            .map(|i| {
                let dur = match i % 97 {
                    5 => day + 1,
                    6 => u64::from(u32::MAX) + 3,
                    _ => u64::from(i) * 11,
                };
                d(i % 4, i64::from(i) * 3_000_000_000, dur, Some(u64::from(i)))
            })
            .collect();
        let mut store: Dispatches = input.iter().copied().collect();
        let long = store.longer_than(100, day);
        assert_eq!(long, vec![102, 199, 296, 393, 490, 587, 684]);
        store.remove(&long);
        let want: Vec<KernelDispatch> = input
            .iter()
            .enumerate()
            .filter(|(i, _)| !long.contains(i))
            .map(|(_, x)| *x)
            .collect();
        assert_eq!(store.iter().collect::<Vec<_>>(), want);
        assert_eq!(store.longer_than(0, day), vec![5]);
        let mut bare: Dispatches = input.iter().copied().collect();
        bare.keep_correlations(false);
        bare.remove(&[0, 699]);
        assert_eq!(bare.len(), 698);
        assert!(!bare.keeps_correlations());
        assert_eq!(
            bare.get(0),
            input.get(1).map(|x| KernelDispatch {
                correlation: None,
                ..*x
            })
        );
    }

    #[test]
    fn starts_far_apart_or_out_of_order_are_exact() {
        let starts: Vec<i64> = (0..1000i64)
            .map(|i| match i % 7 {
                0 => i * 1_000_000_000_000,
                1 => -i,
                2 => i64::MAX - i,
                3 => i64::MIN + i,
                _ => 5_000_000_000 + i * 3,
            })
            .collect();
        let store: Dispatches = starts.iter().map(|&s| d(1, s, 1, None)).collect();
        let back: Vec<i64> = store.iter().map(|x| x.start.ns()).collect();
        assert_eq!(back, starts);
        let (n, f) = (store.len(), store.far.len());
        assert!(f < n, "{f} of {n} starts in the side table");
    }

    #[test]
    fn timings_block_by_block_are_timing_of_each_index() {
        // Far starts, long durations, several blocks and a partial last one.
        let store: Dispatches = (0..(3 * BLOCK as i64 + 17))
            .map(|i| {
                let start = match i % 7 {
                    0 => i * 1_000_000_000_000,
                    1 => -i,
                    2 => i64::MIN + i,
                    _ => 5_000_000_000 + i * 3,
                };
                let dur = match i % 5 {
                    0 => u64::MAX - 1,
                    1 => u64::from(LONG),
                    _ => 10 + i as u64,
                };
                d((i % 4) as u32, start, dur, None)
            })
            .collect();
        assert!(!store.far.is_empty() && !store.long.is_empty());
        let by_index: Vec<_> = (0..store.len()).filter_map(|i| store.timing(i)).collect();
        assert_eq!(by_index.len(), store.len());
        assert_eq!(store.timings().collect::<Vec<_>>(), by_index);
        assert_eq!(Dispatches::default().timings().count(), 0);
    }

    #[test]
    fn correlations_are_dropped_on_request() {
        let mut store = Dispatches::default();
        store.keep_correlations(false);
        store.push(d(1, 0, 1, Some(5)));
        assert_eq!(store.get(0).and_then(|x| x.correlation), None);
        assert_eq!(store.bytes_per_dispatch(), 12);
        store.keep_correlations(true);
        store.push(d(1, 0, 1, Some(6)));
        let c: Vec<_> = store.iter().map(|x| x.correlation).collect();
        assert_eq!(c, vec![None, Some(6)]);
    }

    #[test]
    fn devices_are_renumbered_from_an_index() {
        let mut store: Dispatches = (0..6).map(|i| d(i, 0, 1, None)).collect();
        store.map_devices(3, |dev| dev + 10);
        let devs: Vec<u32> = store.iter().map(|x| x.device).collect();
        assert_eq!(devs, vec![0, 1, 0, 11, 10, 11]);
    }

    #[test]
    fn append_is_pushing_each_renamed() {
        let mut input: Vec<KernelDispatch> = (0..1000i64)
            .map(|i| {
                let start = match i % 7 {
                    0 => i * 1_000_000_000_000,
                    1 => -i,
                    2 => i64::MAX - i,
                    _ => 5_000_000_000 + i * 3,
                };
                let dur = match i % 5 {
                    0 => u64::MAX - 1,
                    1 => u64::from(LONG),
                    _ => 10 + i as u64,
                };
                d((i % 9) as u32, start, dur, (i % 3 != 0).then_some(i as u64))
            })
            .collect();
        input.push(d(2, 0, 1, None));
        let name = |n: NameId| NameId(n.0 * 3 % 7);
        let launch = |l: u32| l + 1;
        for keep in [(true, true), (true, false), (false, true)] {
            let mut head: Dispatches = input.iter().take(300).copied().collect();
            head.keep_correlations(keep.0);
            let mut want = head.clone();
            let mut tail = Dispatches::default();
            tail.keep_correlations(keep.1);
            for x in input.iter().skip(300) {
                tail.push(*x);
            }
            for x in tail.iter() {
                want.push(KernelDispatch {
                    name: name(x.name),
                    launch: launch(x.launch),
                    ..x
                });
            }
            head.append(&tail, name, launch);
            assert_eq!(
                head.iter().collect::<Vec<_>>(),
                want.iter().collect::<Vec<_>>()
            );
            assert_eq!(head.contexts(), want.contexts());
            assert_eq!(head.far, want.far);
            assert_eq!(head.long, want.long);
            assert_eq!(head.subs, want.subs);
        }
    }

    #[test]
    fn many_contexts_colliding_in_the_cache_stay_distinct() {
        let store: Dispatches = (0..20_000).map(|i| d(i, i64::from(i), 1, None)).collect();
        assert_eq!(store.contexts().len(), 20_000);
        assert!(store
            .iter()
            .enumerate()
            .all(|(i, x)| x.name.0 as usize == i));
    }
}
