//! `--until ±r` without re-analysing every prefix: the first n at which the half-width of the
//! 1 − α Wilcoxon interval of the first n log ratios is at most r, found with counts kept up to
//! date pair by pair.
//!
//! After a full interval at n (a sort and two selections, O(n log n)) that is still too wide, a
//! grid of thresholds is laid around both of its ends, a quarter of its excess over r apart.
//! Its counts are taken once per end (one O(n) count, then the few averages between its points
//! enumerated and bucketed). The number of Walsh averages at or below each threshold is then
//! kept exact as pairs arrive:
//! a new value x adds the n averages (x + v)/2, counted per threshold with one binary search
//! over the sorted values and one Fenwick-tree query over ranks, O(log n). While some
//! threshold t_i has at least k averages at or below it and some t_j at most M − k, with
//! t_j − t_i wider than 2r, the interval's ends lie outside [t_i, t_j]: it is provably still too
//! wide and no full interval is needed. A new grid is laid only when the interval has closed
//! most of its excess, or wandered off its grid, so full intervals are few (10, 14 and 23 for
//! stops at 5,000, 20,000 and 80,000 pairs in the tests); everything else is O(log n) per pair
//! and threshold. Every n that could stop gets the same full interval as before, so the answer
//! is the one of the from-scratch scan.

use crate::order::Prefix;
use crate::rank::{order_key, sorted_finite, walsh_count_le, walsh_len, wilcoxon_ci, wilcoxon_k};

/// Half-width of a log-ratio interval as the analysis computes it (through the ratio scale).
pub(crate) fn half_width(ci: Option<(f64, f64)>) -> Option<f64> {
    ci.map(|(l, h)| (h.ln() - l.ln()) / 2.0)
}

/// The interval of `d` on the ratio scale, as a look reports it.
pub(crate) fn ratio_ci(d: &[f64], alpha: f64) -> Option<(f64, f64)> {
    wilcoxon_ci(d, alpha).map(|(l, h)| (l.exp(), h.exp()))
}

/// Thresholds around both ends of the last too-wide interval, with the exact number of Walsh
/// averages at or below each.
struct Grid {
    /// Thresholds, increasing.
    at: Vec<f64>,
    /// Their order keys.
    keys: Vec<u64>,
    /// Walsh averages ≤ each threshold so far (non-decreasing).
    counts: Vec<u64>,
}

impl Grid {
    /// A grid for the interval (lo, hi) of the first `n` values of `d` whose half-width
    /// exceeds `r`: points `excess/4` apart around each end, far enough out to follow the
    /// interval as it moves while it narrows; `None` when the excess is too small to certify
    /// anything.
    fn around(d: &[f64], lo: f64, hi: f64, r: f64) -> Option<Grid> {
        let hw = (hi - lo) / 2.0;
        let excess = hw - r;
        if !(excess.is_finite() && excess > margin(lo, hi, r)) {
            return None;
        }
        let step = excess / 4.0;
        // The ends wander by about √(excess · hw) while the interval narrows by the excess.
        let half = (4.0 * (hw / excess).sqrt()).clamp(4.0, 128.0) as i32;
        let s = sorted_finite(d)?;
        // Each end's points counted together (they are close), then both ends merged.
        let mut points: Vec<(f64, u64, u64)> = Vec::new();
        for c in [lo, hi] {
            let mut at: Vec<f64> = (-half..=half)
                .map(|i| c + f64::from(i) * step)
                .filter(|x| x.is_finite())
                .collect();
            at.sort_by(f64::total_cmp);
            at.dedup();
            let keys: Vec<u64> = at.iter().map(|&x| order_key(x)).collect();
            let counts = count_all(&s, &keys);
            points.extend(
                at.into_iter()
                    .zip(keys)
                    .zip(counts)
                    .map(|((a, k), c)| (a, k, c)),
            );
        }
        points.sort_by_key(|p| p.1);
        points.dedup_by_key(|p| p.1);
        Some(Grid {
            at: points.iter().map(|p| p.0).collect(),
            keys: points.iter().map(|p| p.1).collect(),
            counts: points.iter().map(|p| p.2).collect(),
        })
    }

    /// Counts the averages (x + v)/2 of the newly added `x` with every value v of the prefix
    /// (x included).
    fn add(&mut self, prefix: &Prefix, x: f64) {
        for (c, &key) in self.counts.iter_mut().zip(&self.keys) {
            *c += prefix.count_while(|v| order_key((v + x) / 2.0) <= key);
        }
    }

    /// True when the interval of ranks (k, M + 1 − k) of n values provably has a half-width
    /// above `r`: some threshold t_i has at least k averages at or below it (so the lower end
    /// is ≤ t_i) and some t_j at most M − k (so the upper end is > t_j), with t_j − t_i wide
    /// enough.
    fn too_wide(&self, n: usize, k: u64, r: f64) -> bool {
        let m = walsh_len(n);
        let i = self.counts.partition_point(|&c| c < k);
        let j = self.counts.partition_point(|&c| c <= m - k);
        match (
            self.at.get(i),
            j.checked_sub(1).and_then(|j| self.at.get(j)),
        ) {
            (Some(&ti), Some(&tj)) => (tj - ti) / 2.0 > r * (1.0 + 1e-9) + margin(ti, tj, r),
            _ => false,
        }
    }
}

/// The Walsh averages of the sorted `s` at or below each of the increasing `keys`: one count at
/// the first key, then the averages above it and at most the last key enumerated row by row
/// (two pointers) and put in their bucket, when there are fewer of them than a count per key
/// would visit; else a count per key.
fn count_all(s: &[f64], keys: &[u64]) -> Vec<u64> {
    let (Some(&first), Some(&last)) = (keys.first(), keys.last()) else {
        return Vec::new();
    };
    let base = walsh_count_le(s, first);
    let between = walsh_count_le(s, last) - base;
    if between > keys.len() as u64 * s.len() as u64 {
        return keys.iter().map(|&k| walsh_count_le(s, k)).collect();
    }
    let mut in_bucket = vec![0u64; keys.len()];
    // Row i: the averages (s_i + s_j)/2, j ≥ i, grow with j; the first j above a key only moves
    // left as i grows.
    let (mut lo, mut hi) = (s.len(), s.len());
    for (i, x) in s.iter().enumerate() {
        let key_at = |j: usize| s.get(j).map_or(u64::MAX, |y| order_key((x + y) / 2.0));
        while hi > 0 && key_at(hi - 1) > last {
            hi -= 1;
        }
        while lo > 0 && key_at(lo - 1) > first {
            lo -= 1;
        }
        for j in lo.max(i)..hi.max(i) {
            let k = key_at(j);
            if let Some(b) = in_bucket.get_mut(keys.partition_point(|&t| t < k)) {
                *b += 1;
            }
        }
    }
    let mut acc = base;
    in_bucket
        .iter()
        .map(|c| {
            acc += c;
            acc
        })
        .collect()
}

/// A margin far above the rounding of ln(exp(·)) on the way to a look's half-width, so that a
/// certified width is always above r as the look computes it.
fn margin(a: f64, b: f64, r: f64) -> f64 {
    1e-9 * (1.0 + a.abs() + b.abs() + r)
}

/// The first n in `start..=d.len()` at which the half-width of the 1 − `alpha` interval of
/// `d[..n]` (through the ratio scale, as a look computes it) is at most `r`; `None` when no n
/// reaches it. Equal to checking every prefix from scratch.
pub(crate) fn first_narrow(d: &[f64], start: usize, alpha: f64, r: f64) -> Option<usize> {
    search(d, start, alpha, r).0
}

/// [`first_narrow`] and the number of full intervals it computed.
fn search(d: &[f64], start: usize, alpha: f64, r: f64) -> (Option<usize>, usize) {
    let mut full = 0;
    // No prefix holding a non-finite value has an interval.
    let end = d.iter().position(|x| !x.is_finite()).unwrap_or(d.len());
    let d = &d[..end];
    let mut prefix = Prefix::new(d);
    let mut grid: Option<Grid> = None;
    for (i, &x) in d.iter().enumerate() {
        let n = i + 1;
        prefix.push(i);
        if let Some(g) = grid.as_mut() {
            g.add(&prefix, x);
        }
        if n < start {
            continue;
        }
        let Some(k) = wilcoxon_k(n, alpha) else {
            continue;
        };
        if grid.as_ref().is_some_and(|g| g.too_wide(n, k, r)) {
            continue;
        }
        full += 1;
        let w = wilcoxon_ci(&d[..n], alpha);
        if half_width(w.map(|(l, h)| (l.exp(), h.exp()))).is_some_and(|h| h <= r) {
            return (Some(n), full);
        }
        grid = w.and_then(|(lo, hi)| Grid::around(&d[..n], lo, hi, r));
    }
    (None, full)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The from-scratch scan `analyze` ran before: a full interval at every n.
    fn scan(d: &[f64], start: usize, alpha: f64, r: f64) -> Option<usize> {
        (start..=d.len()).find(|&n| half_width(ratio_ci(&d[..n], alpha)).is_some_and(|h| h <= r))
    }

    fn data(seed: u64, n: usize, sd: f64) -> Vec<f64> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let u = (x % 100_000) as f64 / 100_000.0 - 0.5;
                // Ties and exact zeros too.
                if x % 11 == 0 {
                    0.0
                } else {
                    sd * u * if x % 13 == 0 { 8.0 } else { 1.0 }
                }
            })
            .collect()
    }

    #[test]
    fn equals_the_scan_of_every_prefix() {
        let mut stops = 0;
        for seed in 1..120u64 {
            let n = 40 + (seed as usize * 37) % 400;
            let sd = [0.002, 0.01, 0.05][seed as usize % 3];
            let d = data(seed * 7919, n, sd);
            for (alpha, r) in [(0.05, 0.002), (0.01, 0.004), (0.2, 0.001), (0.05, 0.02)] {
                let start = 2 + seed as usize % 9;
                let want = scan(&d, start, alpha, r);
                assert_eq!(
                    first_narrow(&d, start, alpha, r),
                    want,
                    "seed {seed} n {n} alpha {alpha} r {r}"
                );
                stops += usize::from(want.is_some_and(|w| w > start + 8));
            }
        }
        assert!(stops > 50, "too few late stops to test anything: {stops}");
    }

    #[test]
    fn non_finite_values_end_the_search() {
        let mut d = data(5, 300, 0.01);
        // Reached at some n past 10 with clean data, never once a NaN sits at index 10.
        let clean = scan(&d, 2, 0.05, 0.002);
        assert!(clean.is_some_and(|n| n > 10), "{clean:?}");
        assert_eq!(first_narrow(&d, 2, 0.05, 0.002), clean);
        d[10] = f64::NAN;
        assert_eq!(scan(&d, 2, 0.05, 0.002), None);
        assert_eq!(first_narrow(&d, 2, 0.05, 0.002), None);
        // A wide target is reached before the NaN.
        let early = scan(&d, 2, 0.05, 0.5);
        assert!(early.is_some_and(|n| n <= 10), "{early:?}");
        assert_eq!(first_narrow(&d, 2, 0.05, 0.5), early);
        d[0] = f64::INFINITY;
        assert_eq!(first_narrow(&d, 2, 0.05, 0.5), None);
    }

    #[test]
    fn grid_counts_equal_one_count_per_key() {
        let mut d = data(3, 500, 0.01);
        d.sort_by(f64::total_cmp);
        let mut at: Vec<f64> = (-20..=20).map(|i| f64::from(i) * 1e-4).collect();
        at.extend([-0.0, 0.01, 1.0]);
        at.sort_by(f64::total_cmp);
        let keys: Vec<u64> = at.iter().map(|&x| order_key(x)).collect();
        let want: Vec<u64> = keys.iter().map(|&k| walsh_count_le(&d, k)).collect();
        assert_eq!(count_all(&d, &keys), want);
        assert_eq!(count_all(&d, &keys[3..6]), want[3..6].to_vec());
        assert!(count_all(&d, &[]).is_empty());
    }

    #[test]
    fn full_intervals_are_few() {
        // 100,000 values whose interval never gets narrow enough, and a target reached late:
        // a handful of full intervals each, not one per pair.
        let mut x = 99u64;
        let d: Vec<f64> = (0..100_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 1_000_003) as f64 / 1e8 - 0.005
            })
            .collect();
        let (never, full) = search(&d, 8, 0.05, 1e-6);
        assert_eq!(never, None);
        assert!(full < 100, "{full} full intervals");
        let (late, full) = search(&d, 8, 0.05, 4e-5);
        assert!(late.is_some_and(|n| n > 10_000), "{late:?}");
        assert!(full < 200, "{full} full intervals");
    }
}
