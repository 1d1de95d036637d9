//! Whole-trace figures: busy time as the union of kernel intervals, and the idle gaps on it.

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

/// Computes the timeline of `dispatches` (any order).
pub fn timeline(dispatches: &[&KernelDispatch]) -> Timeline {
    if dispatches.is_empty() {
        return Timeline::default();
    }
    let mut by_device: Vec<(u32, i64, i64)> = dispatches
        .iter()
        .map(|d| (d.device, d.start.ns(), d.end().ns()))
        .collect();
    by_device.sort_unstable();
    let first = by_device.iter().map(|x| x.1).min().unwrap_or(0);
    let last = by_device.iter().map(|x| x.2).max().unwrap_or(0);
    let mut t = Timeline {
        wall_ns: u64::try_from(last - first).unwrap_or(0),
        ..Timeline::default()
    };
    let mut i = 0;
    while i < by_device.len() {
        let dev = by_device[i].0;
        let (mut cur_s, mut cur_e) = (by_device[i].1, by_device[i].2);
        i += 1;
        while i < by_device.len() && by_device[i].0 == dev {
            let (s, e) = (by_device[i].1, by_device[i].2);
            if s > cur_e {
                t.busy_ns += u64::try_from(cur_e - cur_s).unwrap_or(0);
                t.gap_ns += u64::try_from(s - cur_e).unwrap_or(0);
                t.gaps += 1;
                cur_s = s;
                cur_e = e;
            } else if e > cur_e {
                cur_e = e;
            }
            i += 1;
        }
        t.busy_ns += u64::try_from(cur_e - cur_s).unwrap_or(0);
    }
    t
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
        }
    }

    #[test]
    fn overlapping_streams_count_once_and_gaps_are_positive() {
        // [0,10) and [5,20) overlap -> busy 20; gap 20..30; [30,35) -> busy 25, wall 35.
        let v = [d(0, 0, 10), d(0, 5, 15), d(0, 30, 5)];
        let refs: Vec<&KernelDispatch> = v.iter().collect();
        assert_eq!(
            timeline(&refs),
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
            timeline(&refs),
            Timeline {
                busy_ns: 30,
                wall_ns: 30,
                gap_ns: 10,
                gaps: 1
            }
        );
    }
}
