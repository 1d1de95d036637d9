//! Whole-trace figures: busy time as the union of kernel intervals, and the idle gaps on it.

use kernelab_model::exact::{round_e9, Remainders};
use kernelab_model::KernelDispatch;

/// Busy time, wall time and idle gaps of a set of dispatches, per device, summed over devices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timeline {
    /// Sum over devices of the union of kernel intervals (overlapping streams counted once).
    pub busy_ns: u64,
    /// First kernel start to last kernel end, over all devices.
    pub wall_ns: u64,
    /// Sum over devices of idle time between that device's first start and last end.
    pub gap_ns: u64,
    /// Number of idle gaps (positive distance between one busy stretch and the next).
    pub gaps: u64,
}

/// Computes the timeline of `dispatches` (any order). Fractional inputs (remainders in `rem`)
/// are computed exactly in 10⁻⁹ ns and each figure is rounded once.
pub fn timeline(rem: &Remainders, dispatches: &[&KernelDispatch]) -> Timeline {
    if dispatches.is_empty() {
        return Timeline::default();
    }
    if rem.is_empty() {
        let spans = dispatches
            .iter()
            .map(|d| (d.device, d.start.ns(), d.end().ns()))
            .collect();
        let (busy, wall, gap, gaps) = sweep(spans);
        let ns = |v: i128| u64::try_from(v).unwrap_or(0);
        return Timeline {
            busy_ns: ns(busy),
            wall_ns: ns(wall),
            gap_ns: ns(gap),
            gaps,
        };
    }
    let spans = dispatches
        .iter()
        .map(|d| {
            let s = rem.start_e9(*d);
            (d.device, s, s + rem.duration_e9(*d))
        })
        .collect();
    let (busy, wall, gap, gaps) = sweep(spans);
    let ns = |v: i128| u64::try_from(round_e9(v)).unwrap_or(0);
    Timeline {
        busy_ns: ns(busy),
        wall_ns: ns(wall),
        gap_ns: ns(gap),
        gaps,
    }
}

/// Busy, wall and gap time (in the spans' unit) and the gap count of `(device, start, end)`
/// spans.
fn sweep<T: Copy + Ord + Into<i128>>(mut by_device: Vec<(u32, T, T)>) -> (i128, i128, i128, u64) {
    by_device.sort_unstable();
    let (Some(first), Some(last)) = (
        by_device.iter().map(|x| x.1).min(),
        by_device.iter().map(|x| x.2).max(),
    ) else {
        return (0, 0, 0, 0);
    };
    let span = |a: T, b: T| (b.into() - a.into()).max(0);
    let (mut busy, mut gap, mut gaps) = (0i128, 0i128, 0u64);
    let mut i = 0;
    while i < by_device.len() {
        let dev = by_device[i].0;
        let (mut cur_s, mut cur_e) = (by_device[i].1, by_device[i].2);
        i += 1;
        while i < by_device.len() && by_device[i].0 == dev {
            let (s, e) = (by_device[i].1, by_device[i].2);
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
    (busy, span(first, last), gap, gaps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernelab_model::{NameId, Nanos, Timestamp};

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

    #[test]
    fn overlapping_streams_count_once_and_gaps_are_positive() {
        // [0,10) and [5,20) overlap -> busy 20; gap 20..30; [30,35) -> busy 25, wall 35.
        let v = [d(0, 0, 10), d(0, 5, 15), d(0, 30, 5)];
        let refs: Vec<&KernelDispatch> = v.iter().collect();
        assert_eq!(
            timeline(&Remainders::default(), &refs),
            Timeline {
                busy_ns: 25,
                wall_ns: 35,
                gap_ns: 10,
                gaps: 1
            }
        );
    }

    #[test]
    fn devices_are_separate_timelines() {
        let v = [d(0, 0, 10), d(1, 0, 10), d(1, 20, 10)];
        let refs: Vec<&KernelDispatch> = v.iter().collect();
        assert_eq!(
            timeline(&Remainders::default(), &refs),
            Timeline {
                busy_ns: 30,
                wall_ns: 30,
                gap_ns: 10,
                gaps: 1
            }
        );
    }
}
