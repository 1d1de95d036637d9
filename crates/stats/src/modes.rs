//! Two separated groups in one side's samples (a bimodal baseline, such as a GPU that runs at
//! one of two clocks): a single median of such a side misleads, and only the paired ratios
//! under the planned looks stand.

use crate::rank::{median, robust_sd};

/// One group of a split sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Group {
    /// Values in it.
    pub count: usize,
    /// Their median.
    pub median: f64,
}

/// A sample split into two separated groups.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoGroups {
    /// The lower group.
    pub low: Group,
    /// The upper group.
    pub high: Group,
    /// The middle of the gap between them: values at most this are in the lower group.
    pub boundary: f64,
}

/// The fewest values in which two groups are looked for.
pub const MIN_VALUES: usize = 10;

/// The split of `values` into two separated groups, when there is one: at the widest gap
/// between neighbouring sorted values that leaves each side at least a fifth of them (and at
/// least 3), a gap more than 5 times the larger robust spread (1.4826 · MAD) within the sides
/// and more than `min_relative_gap` of the overall median. Values that are not finite are
/// left out; fewer than [`MIN_VALUES`] give `None`.
pub fn two_groups(values: &[f64], min_relative_gap: f64) -> Option<TwoGroups> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.len() < MIN_VALUES {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let least = (n / 5).max(3);
    let split =
        (least..=n - least).max_by(|&i, &j| (v[i] - v[i - 1]).total_cmp(&(v[j] - v[j - 1])))?;
    let (low, high) = v.split_at(split);
    let gap = high.first()? - low.last()?;
    let spread = robust_sd(low)?.max(robust_sd(high)?);
    let overall = median(&v)?.abs();
    if gap > 5.0 * spread && gap > min_relative_gap * overall {
        Some(TwoGroups {
            low: Group {
                count: low.len(),
                median: median(low)?,
            },
            high: Group {
                count: high.len(),
                median: median(high)?,
            },
            boundary: (low.last()? + high.first()?) / 2.0,
        })
    } else {
        None
    }
}

/// The change (candidate / baseline − 1, median of the pairs' log ratios) of the pairs whose
/// baseline ran in each of `groups` (lower, upper), with how many pairs each holds; `None` for
/// a group with no pair whose ratio is a finite number.
pub fn change_by_group(pairs: &[crate::Pair], groups: &TwoGroups) -> [(Option<f64>, usize); 2] {
    let change = |low: bool| {
        let logs: Vec<f64> = pairs
            .iter()
            .filter(|p| (p.a <= groups.boundary) == low)
            .map(|p| (p.b / p.a).ln())
            .filter(|x| x.is_finite())
            .collect();
        (median(&logs).map(f64::exp_m1), logs.len())
    };
    [change(true), change(false)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_at_two_clocks_is_split_and_noise_is_not() {
        // 12 runs near 100, 8 near 111 (an 11% slower clock), each with ±0.3% noise.
        let jitter = |k: usize| ((k * 7) % 5) as f64 * 0.15 - 0.3;
        let two: Vec<f64> = (0..20)
            .map(|k| if k % 5 < 3 { 100.0 } else { 111.0 } + jitter(k))
            .collect();
        let g = two_groups(&two, 0.02).expect("two groups");
        assert_eq!((g.low.count, g.high.count), (12, 8));
        assert!((g.low.median - 100.0).abs() < 0.5 && (g.high.median - 111.0).abs() < 0.5);
        // One spread-out group: no split.
        let one: Vec<f64> = (0..20).map(|k| 100.0 + (k as f64) * 0.5).collect();
        assert_eq!(two_groups(&one, 0.02), None);
        // Two outliers are no group (fewer than a fifth).
        let mut outliers: Vec<f64> = (0..18).map(|k| 100.0 + jitter(k)).collect();
        outliers.extend([150.0, 151.0]);
        assert_eq!(two_groups(&outliers, 0.02), None);
        // Groups closer than the threshold: no split worth naming.
        let close: Vec<f64> = (0..20)
            .map(|k| if k % 2 == 0 { 100.0 } else { 101.0 })
            .collect();
        assert_eq!(two_groups(&close, 0.02), None);
        assert_eq!(two_groups(&[1.0, f64::NAN], 0.02), None);
    }

    #[test]
    fn pairs_are_split_by_the_group_of_their_baseline() {
        let jitter = |k: usize| ((k * 7) % 5) as f64 * 0.15 - 0.3;
        let base: Vec<f64> = (0..20)
            .map(|k| if k % 5 < 3 { 100.0 } else { 111.0 } + jitter(k))
            .collect();
        let g = two_groups(&base, 0.02).expect("two groups");
        assert!(g.boundary > 101.0 && g.boundary < 110.0, "{g:?}");
        // The head is 5% slower when the base ran fast, the same when it ran slow.
        let pairs: Vec<crate::Pair> = base
            .iter()
            .map(|&a| crate::Pair {
                order: crate::Order::AB,
                a,
                b: if a < 105.0 { a * 1.05 } else { a },
            })
            .collect();
        let [(low, nl), (high, nh)] = change_by_group(&pairs, &g);
        assert_eq!((nl, nh), (12, 8));
        assert!((low.expect("low") - 0.05).abs() < 1e-9);
        assert!(high.expect("high").abs() < 1e-9);
        let [(none, n), _] = change_by_group(&pairs[12..12], &g);
        assert_eq!((none, n), (None, 0));
    }
}
