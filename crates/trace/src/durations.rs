//! The duration figures of a group of dispatches: exact sums rounded once, and per-call
//! figures from the exact values. Inputs in whole nanoseconds (every format but fractional
//! rocprof-compute timestamps) take the plain integer path.

use kernelab_model::exact::{e9_to_f64, round_e9, Remainders};
use kernelab_model::KernelDispatch;

/// Total, mean, median, extremes and spread of call durations, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CallStats {
    /// Sum of the durations, exact, rounded once.
    pub(crate) total: u64,
    /// Mean call.
    pub(crate) mean: f64,
    /// Median call.
    pub(crate) median: Option<f64>,
    /// Fastest call, rounded once.
    pub(crate) min: Option<u64>,
    /// Slowest call, rounded once.
    pub(crate) max: Option<u64>,
    /// Sample standard deviation.
    pub(crate) stddev: Option<f64>,
}

/// The median of values already sorted (a dispatch table's durations: no copy, no sort, unlike
/// `kernelab_stats::rank::median`, which sorts a copy).
fn median<T: Copy>(v: &[T], f: impl Fn(T) -> f64) -> Option<f64> {
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(f(v[n / 2])),
        _ => Some((f(v[n / 2 - 1]) + f(v[n / 2])) / 2.0),
    }
}

/// The call durations of `ds` in nanoseconds, sorted (exact values as floats).
pub(crate) fn sorted_ns(rem: &Remainders, ds: &[&KernelDispatch]) -> Vec<f64> {
    if rem.is_empty() {
        let mut v: Vec<u64> = ds.iter().map(|d| d.duration.ns()).collect();
        v.sort_unstable();
        return v.into_iter().map(|x| x as f64).collect();
    }
    let mut v: Vec<i128> = ds.iter().map(|d| rem.duration_e9(*d)).collect();
    v.sort_unstable();
    v.into_iter().map(e9_to_f64).collect()
}

/// The sample standard deviation of `values` around `mean`.
fn stddev(values: impl Iterator<Item = f64>, mean: f64, n: usize) -> Option<f64> {
    let ss: f64 = values.map(|x| (x - mean).powi(2)).sum();
    (n > 1).then(|| (ss / (n - 1) as f64).sqrt())
}

/// The figures of `ds`.
pub(crate) fn call_stats(rem: &Remainders, ds: &[&KernelDispatch]) -> CallStats {
    let n = ds.len();
    // Rounding is monotone, so the extremes of the rounded durations are the rounded extremes.
    let min = ds.iter().map(|d| d.duration.ns()).min();
    let max = ds.iter().map(|d| d.duration.ns()).max();
    if rem.is_empty() {
        let mut durs: Vec<u64> = ds.iter().map(|d| d.duration.ns()).collect();
        durs.sort_unstable();
        let total: u64 = durs.iter().sum();
        let mean = if n > 0 { total as f64 / n as f64 } else { 0.0 };
        return CallStats {
            total,
            mean,
            median: median(&durs, |x| x as f64),
            min,
            max,
            stddev: stddev(durs.iter().map(|&x| x as f64), mean, n),
        };
    }
    let mut exact: Vec<i128> = ds.iter().map(|d| rem.duration_e9(*d)).collect();
    exact.sort_unstable();
    let sum: i128 = exact.iter().sum();
    let mean = if n > 0 {
        e9_to_f64(sum) / n as f64
    } else {
        0.0
    };
    CallStats {
        total: u64::try_from(round_e9(sum)).unwrap_or(u64::MAX),
        mean,
        median: median(&exact, e9_to_f64),
        min,
        max,
        stddev: stddev(exact.iter().map(|&x| e9_to_f64(x)), mean, n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernelab_model::exact::{SubNs, E9};
    use kernelab_model::{NameId, Nanos, Timestamp};

    fn d(start: Timestamp, duration: Nanos, sub_ns: u32) -> KernelDispatch {
        KernelDispatch {
            name: NameId(0),
            device: 0,
            stream: 0,
            start,
            duration,
            launch: 0,
            correlation: None,
            sub_ns,
        }
    }

    #[test]
    fn fractional_durations_sum_exactly_and_round_once() {
        // Durations 10.5, 10.5, 10.4 ns: rounded one by one 11 + 11 + 10 = 32; exactly 31.4 → 31.
        let mut rem = Remainders::default();
        let ds: Vec<KernelDispatch> = [
            (0, 10_500_000_000i128),
            (20, 10_500_000_000),
            (40, 10_400_000_000),
        ]
        .iter()
        .map(|&(s, dur)| {
            let (start, duration, sub) = SubNs::split(s * E9, s * E9 + dur).expect("span");
            let h = rem.handle(sub);
            d(start, duration, h)
        })
        .collect();
        let refs: Vec<&KernelDispatch> = ds.iter().collect();
        let rounded: u64 = ds.iter().map(|d| d.duration.ns()).sum();
        assert_eq!(rounded, 32);
        let s = call_stats(&rem, &refs);
        assert_eq!(s.total, 31);
        assert!((s.mean - 31.4 / 3.0).abs() < 1e-12, "{}", s.mean);
        assert_eq!(s.median, Some(10.5));
        assert_eq!((s.min, s.max), (Some(10), Some(11)));
        // Whole inputs: the integer path.
        let whole = [
            d(Timestamp::from_ns(0), Nanos::from_ns(3), 0),
            d(Timestamp::from_ns(5), Nanos::from_ns(4), 0),
        ];
        let refs: Vec<&KernelDispatch> = whole.iter().collect();
        let s = call_stats(&Remainders::default(), &refs);
        assert_eq!((s.total, s.mean, s.median), (7, 3.5, Some(3.5)));
    }
}
