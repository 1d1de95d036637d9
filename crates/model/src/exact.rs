//! Exact time for inputs whose timestamps carry fractions of a nanosecond (rocprof-compute
//! averages its profiling passes): every per-dispatch start and duration is shown rounded once
//! to whole nanoseconds, and the remainder is kept beside it, so that sums, unions and gaps
//! are computed exactly and rounded once at the end.
//!
//! ```
//! use kernelab_model::exact::{round_e9, split_e9, E9};
//! // 3 × 0.5 ns: rounded one by one 3 × 1 = 3 ns, exactly 1.5 ns, rounded once 2 ns.
//! let half = E9 / 2;
//! assert_eq!(round_e9(3 * half), 2);
//! assert_eq!(split_e9(half), (1, -half as i32));
//! ```

use crate::dispatch::{KernelDispatch, Transfer};
use crate::units::{Nanos, Timestamp};

/// Units of 10⁻⁹ ns in a nanosecond: exact values are integers in these units.
pub const E9: i128 = 1_000_000_000;

/// `v` (in 10⁻⁹ ns) rounded half up to whole nanoseconds.
pub fn round_e9(v: i128) -> i128 {
    (v + E9 / 2).div_euclid(E9)
}

/// `v` (in 10⁻⁹ ns) as whole nanoseconds rounded half up, and the remainder (in [−E9/2, E9/2)).
pub fn split_e9(v: i128) -> (i128, i32) {
    let whole = round_e9(v);
    // |v − whole·E9| ≤ E9/2 always fits an i32.
    let rest = i32::try_from(v - whole * E9).unwrap_or(0);
    (whole, rest)
}

/// `v` (in 10⁻⁹ ns) in nanoseconds as a float for display and statistics (the whole part is
/// converted alone, so a whole value converts exactly as its integer would).
pub fn e9_to_f64(v: i128) -> f64 {
    let (whole, frac) = (v.div_euclid(E9), v.rem_euclid(E9));
    if frac == 0 {
        whole as f64
    } else {
        whole as f64 + frac as f64 / 1e9
    }
}

/// What is left of a start and a duration after each was rounded once to whole nanoseconds, in
/// 10⁻⁹ ns (each in [−E9/2, E9/2)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubNs {
    /// Remainder of the start.
    pub start: i32,
    /// Remainder of the duration.
    pub duration: i32,
}

impl SubNs {
    /// The rounded start and duration of the exact interval `[start, end)` (in 10⁻⁹ ns), with
    /// their remainders; `None` when the end precedes the start or a value does not fit.
    pub fn split(start: i128, end: i128) -> Option<(Timestamp, Nanos, SubNs)> {
        let (s, rs) = split_e9(start);
        let (d, rd) = split_e9(end.checked_sub(start).filter(|d| *d >= 0)?);
        Some((
            Timestamp::from_ns(i64::try_from(s).ok()?),
            Nanos::from_ns(u64::try_from(d).ok()?),
            SubNs {
                start: rs,
                duration: rd,
            },
        ))
    }
}

/// Sub-nanosecond remainders, shared by the dispatches and transfers of a profile: an item
/// holds a handle (`sub_ns`), 0 for whole nanoseconds, else 1 + an index here, so whole inputs
/// cost nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Remainders {
    values: Vec<SubNs>,
}

impl Remainders {
    /// The handle for `s` (0 when both parts are zero).
    pub fn handle(&mut self, s: SubNs) -> u32 {
        if s == SubNs::default() {
            return 0;
        }
        self.values.push(s);
        u32::try_from(self.values.len()).unwrap_or(0)
    }
    /// The remainders behind a handle (zero for 0 or an unknown handle).
    pub fn get(&self, handle: u32) -> SubNs {
        (handle as usize)
            .checked_sub(1)
            .and_then(|i| self.values.get(i))
            .copied()
            .unwrap_or_default()
    }
    /// True when every item is in whole nanoseconds.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// An interval on a device's clock: a dispatch or a transfer.
pub trait Span {
    /// Start, rounded once.
    fn start(&self) -> Timestamp;
    /// Duration, rounded once.
    fn duration(&self) -> Nanos;
    /// Handle of the sub-nanosecond remainders.
    fn sub_ns(&self) -> u32;
}

impl Span for KernelDispatch {
    fn start(&self) -> Timestamp {
        self.start
    }
    fn duration(&self) -> Nanos {
        self.duration
    }
    fn sub_ns(&self) -> u32 {
        self.sub_ns
    }
}

impl Span for Transfer {
    fn start(&self) -> Timestamp {
        self.start
    }
    fn duration(&self) -> Nanos {
        self.duration
    }
    fn sub_ns(&self) -> u32 {
        self.sub_ns
    }
}

impl Remainders {
    /// The exact start of `x` in 10⁻⁹ ns.
    pub fn start_e9(&self, x: &impl Span) -> i128 {
        i128::from(x.start().ns()) * E9 + i128::from(self.get(x.sub_ns()).start)
    }
    /// The exact duration of `x` in 10⁻⁹ ns.
    pub fn duration_e9(&self, x: &impl Span) -> i128 {
        i128::from(x.duration().ns()) * E9 + i128::from(self.get(x.sub_ns()).duration)
    }
    /// The sum of the durations of `xs`, exact, rounded once to whole nanoseconds.
    pub fn total_ns<'a, S: Span + 'a>(&self, xs: impl IntoIterator<Item = &'a S>) -> u64 {
        if self.is_empty() {
            return xs.into_iter().map(|x| x.duration().ns()).sum();
        }
        let exact: i128 = xs.into_iter().map(|x| self.duration_e9(x)).sum();
        u64::try_from(round_e9(exact)).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_splits_and_handles() {
        assert_eq!(round_e9(1_499_999_999), 1);
        assert_eq!(round_e9(1_500_000_000), 2);
        assert_eq!(round_e9(-500_000_000), 0);
        assert_eq!(split_e9(2_250_000_000), (2, 250_000_000));
        assert_eq!(split_e9(2_750_000_000), (3, -250_000_000));
        assert_eq!(e9_to_f64(2_250_000_000), 2.25);
        assert_eq!(e9_to_f64(-E9), -1.0);
        // [10.5, 12.25): start 11 (−0.5), duration 1.75 → 2 (−0.25).
        let (s, d, r) = SubNs::split(10 * E9 + E9 / 2, 12 * E9 + E9 / 4).expect("interval");
        assert_eq!((s.ns(), d.ns()), (11, 2));
        assert_eq!(
            r,
            SubNs {
                start: -500_000_000,
                duration: -250_000_000
            }
        );
        assert!(SubNs::split(5, 4).is_none());
        let mut rem = Remainders::default();
        assert_eq!(rem.handle(SubNs::default()), 0);
        assert!(rem.is_empty());
        let h = rem.handle(r);
        assert_eq!((h, rem.get(h), rem.get(0)), (1, r, SubNs::default()));
    }
}
