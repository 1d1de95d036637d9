//! Whole-trace figures: busy time as the union of kernel intervals, and the idle gaps on it.
//! One streaming pass when each device's dispatches come in start order (Nsight Systems and
//! most Kineto traces); otherwise the indices (4 bytes per dispatch) are sorted first.
//! Fractional inputs (rocprof-compute averages, with sub-nanosecond remainders) are computed
//! exactly in 10⁻⁹ ns and each figure is rounded once.

use super::groups::Selection;
use kernelab_model::exact::{round_e9, Remainders};
use kernelab_model::Dispatches;
use std::collections::HashMap;

/// Busy time, wall time and idle gaps of a set of dispatches, per device, summed over devices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Timeline {
    /// Sum over devices of the union of kernel intervals (overlapping streams counted once).
    pub busy_ns: u64,
    /// First kernel start to last kernel end, over all devices.
    pub wall_ns: u64,
    /// Sum over devices of idle time between that device's first start and last end.
    pub gap_ns: u64,
    /// Number of idle gaps (positive distance between one busy stretch and the next).
    pub gaps: u64,
}

/// The busy stretch being extended on one device.
#[derive(Clone, Copy)]
struct Stretch {
    start: i64,
    end: i64,
    /// The latest dispatch start seen (to check the order).
    last: i64,
}

fn end_of(start: i64, dur: u64) -> i64 {
    start.saturating_add(i64::try_from(dur).unwrap_or(i64::MAX))
}

fn span(a: i64, b: i64) -> u64 {
    b.checked_sub(a)
        .and_then(|x| u64::try_from(x).ok())
        .unwrap_or(0)
}

/// Adds one dispatch to its device's stretch; false when it starts before the previous one.
fn add(t: &mut Timeline, s: &mut Stretch, start: i64, end: i64) -> bool {
    if start < s.last {
        return false;
    }
    s.last = start;
    if start > s.end {
        t.busy_ns += span(s.start, s.end);
        t.gap_ns += span(s.end, start);
        t.gaps += 1;
        s.start = start;
        s.end = end;
    } else if end > s.end {
        s.end = end;
    }
    true
}

/// The timeline when it takes one streaming pass and no memory per dispatch: integer times, and
/// each device's selected dispatches in start order; `None` otherwise ([`not_in_order`] then).
pub(super) fn in_order(rem: &Remainders, d: &Dispatches, sel: &Selection) -> Option<Timeline> {
    if !rem.is_empty() {
        return None;
    }
    streaming(d, sel.iter())
}

/// Computes the timeline of the selected dispatches (any order).
pub(super) fn timeline(rem: &Remainders, d: &Dispatches, sel: &Selection) -> Timeline {
    in_order(rem, d, sel).unwrap_or_else(|| not_in_order(rem, d, sel))
}

/// The timeline where [`in_order`] has none: exact for fractional inputs, else with the
/// dispatches visited in (device, start, end) order.
pub(super) fn not_in_order(rem: &Remainders, d: &Dispatches, sel: &Selection) -> Timeline {
    if !rem.is_empty() {
        return exact(rem, d, sel);
    }
    let device = |i: usize| {
        d.timing(i)
            .and_then(|(_, _, c)| d.contexts().get(c as usize))
    };
    let mut idx: Vec<u32> = sel.iter().map(|i| i as u32).collect();
    idx.sort_unstable_by_key(|&i| {
        let (s, dur, _) = d.timing(i as usize).unwrap_or_default();
        (device(i as usize).map(|c| c.device), s, end_of(s, dur))
    });
    streaming(d, idx.iter().map(|&i| i as usize)).unwrap_or_default()
}

/// The timeline in one pass over `order`, or `None` when some device's dispatches are not in
/// start order.
fn streaming(d: &Dispatches, order: impl Iterator<Item = usize>) -> Option<Timeline> {
    let contexts = d.contexts();
    let mut t = Timeline::default();
    let mut slot: HashMap<u32, usize> = HashMap::new();
    let mut stretches: Vec<Stretch> = Vec::new();
    let (mut first, mut last) = (i64::MAX, i64::MIN);
    let mut current: Option<(u32, usize)> = None;
    for i in order {
        let (start, dur, c) = d.timing(i)?;
        let device = contexts.get(c as usize).map_or(0, |c| c.device);
        let end = end_of(start, dur);
        first = first.min(start);
        last = last.max(end);
        let k = match current {
            Some((dev, k)) if dev == device => k,
            _ => {
                let k = *slot.entry(device).or_insert_with(|| {
                    stretches.push(Stretch {
                        start,
                        end,
                        last: start,
                    });
                    stretches.len() - 1
                });
                current = Some((device, k));
                k
            }
        };
        if !add(&mut t, stretches.get_mut(k)?, start, end) {
            return None;
        }
    }
    if stretches.is_empty() {
        return Some(Timeline::default());
    }
    t.busy_ns += stretches.iter().map(|s| span(s.start, s.end)).sum::<u64>();
    t.wall_ns = span(first, last);
    Some(t)
}

/// The timeline of a fractional input, from exact spans sorted by device and start.
fn exact(rem: &Remainders, d: &Dispatches, sel: &Selection) -> Timeline {
    let mut by_device: Vec<(u32, i128, i128)> = sel
        .iter()
        .filter_map(|i| d.get(i))
        .map(|x| {
            let s = rem.start_e9(&x);
            (x.device, s, s + rem.duration_e9(&x))
        })
        .collect();
    by_device.sort_unstable();
    let (Some(first), Some(last)) = (
        by_device.iter().map(|x| x.1).min(),
        by_device.iter().map(|x| x.2).max(),
    ) else {
        return Timeline::default();
    };
    let span = |a: i128, b: i128| (b - a).max(0);
    let (mut busy, mut gap, mut gaps) = (0i128, 0i128, 0u64);
    let mut i = 0;
    while let Some(&(dev, s0, e0)) = by_device.get(i) {
        let (mut cur_s, mut cur_e) = (s0, e0);
        i += 1;
        while let Some(&(_, s, e)) = by_device.get(i).filter(|x| x.0 == dev) {
            if s > cur_e {
                busy += span(cur_s, cur_e);
                gap += span(cur_e, s);
                gaps += 1;
                cur_s = s;
                cur_e = e;
            } else if e > cur_e {
                cur_e = e;
            }
            i += 1;
        }
        busy += span(cur_s, cur_e);
    }
    let ns = |v: i128| u64::try_from(round_e9(v)).unwrap_or(0);
    Timeline {
        busy_ns: ns(busy),
        wall_ns: ns(span(first, last)),
        gap_ns: ns(gap),
        gaps,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernelab_model::{KernelDispatch, NameId, Nanos, Timestamp};

    fn d(device: u32, start: i64, dur: u64) -> KernelDispatch {
        KernelDispatch {
            name: NameId(0),
            device,
            stream: 0,
            start: Timestamp::from_ns(start),
            duration: Nanos::from_ns(dur),
            launch: 0,
            correlation: None,
            sub_ns: 0,
        }
    }

    fn of(v: &[KernelDispatch]) -> Timeline {
        let store: Dispatches = v.iter().copied().collect();
        timeline(&Remainders::default(), &store, &Selection::All(store.len()))
    }

    #[test]
    fn overlapping_streams_count_once_and_gaps_are_positive() {
        // [0,10) and [5,20) overlap -> busy 20; gap 20..30; [30,35) -> busy 25, wall 35.
        let want = Timeline {
            busy_ns: 25,
            wall_ns: 35,
            gap_ns: 10,
            gaps: 1,
        };
        assert_eq!(of(&[d(0, 0, 10), d(0, 5, 15), d(0, 30, 5)]), want);
        // The same out of order: sorted first, same figures.
        assert_eq!(of(&[d(0, 30, 5), d(0, 5, 15), d(0, 0, 10)]), want);
    }

    #[test]
    fn devices_are_separate_timelines() {
        let want = Timeline {
            busy_ns: 30,
            wall_ns: 30,
            gap_ns: 10,
            gaps: 1,
        };
        assert_eq!(of(&[d(0, 0, 10), d(1, 0, 10), d(1, 20, 10)]), want);
        assert_eq!(of(&[d(1, 20, 10), d(0, 0, 10), d(1, 0, 10)]), want);
    }

    #[test]
    fn streaming_and_sorted_agree() {
        let mut seed = 99u64;
        let mut v = Vec::new();
        for _ in 0..500 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            v.push(d(
                (seed >> 60) as u32 % 3,
                (seed >> 40) as i64 % 10_000,
                (seed >> 20) % 300,
            ));
        }
        let mut sorted = v.clone();
        sorted.sort_by_key(|x| (x.device, x.start, x.end()));
        assert_eq!(of(&v), of(&sorted));
    }
}
