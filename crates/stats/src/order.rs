//! Order statistics of growing samples: a Fenwick tree over ranks, for `--watch` and
//! Kendall's tau in O(n log n).

/// A Fenwick (binary indexed) tree of counts over ranks 1..=n.
#[derive(Clone, Debug)]
pub(crate) struct Fenwick {
    tree: Vec<u64>,
}

impl Fenwick {
    /// An empty tree over ranks 1..=n.
    pub(crate) fn new(n: usize) -> Self {
        Fenwick {
            tree: vec![0; n + 1],
        }
    }
    /// Adds one at rank `i` (1-based).
    pub(crate) fn add(&mut self, mut i: usize) {
        while let Some(x) = self.tree.get_mut(i) {
            if i == 0 {
                return;
            }
            *x += 1;
            i += i & i.wrapping_neg();
        }
    }
    /// The count at ranks 1..=i.
    pub(crate) fn prefix(&self, mut i: usize) -> u64 {
        let mut total = 0;
        while i > 0 {
            total += self.tree.get(i).copied().unwrap_or(0);
            i -= i & i.wrapping_neg();
        }
        total
    }
    /// The smallest rank r with prefix(r) ≥ k (k ≥ 1), by binary lifting; `None` past the end.
    pub(crate) fn kth(&self, k: u64) -> Option<usize> {
        let n = self.tree.len().saturating_sub(1);
        let mut pos = 0usize;
        let mut rem = k;
        let mut step = n.checked_next_power_of_two().unwrap_or(0);
        while step > 0 {
            let next = pos + step;
            if let Some(&c) = self.tree.get(next) {
                if next <= n && c < rem {
                    pos = next;
                    rem -= c;
                }
            }
            step /= 2;
        }
        (pos < n && k >= 1).then_some(pos + 1)
    }
}

/// The order statistics of a growing prefix of `d`: every value's rank is found once by one
/// sort, and a Fenwick tree over the ranks answers "k-th smallest so far" in O(log n).
pub(crate) struct Prefix {
    sorted: Vec<f64>,
    rank: Vec<usize>,
    tree: Fenwick,
}

impl Prefix {
    pub(crate) fn new(d: &[f64]) -> Self {
        let mut order: Vec<usize> = (0..d.len()).collect();
        order.sort_by(|&i, &j| d[i].total_cmp(&d[j]));
        let mut rank = vec![0; d.len()];
        for (r, &i) in order.iter().enumerate() {
            rank[i] = r + 1;
        }
        Prefix {
            sorted: order.iter().map(|&i| d[i]).collect(),
            rank,
            tree: Fenwick::new(d.len()),
        }
    }
    /// Adds value `i` of `d` to the prefix.
    pub(crate) fn push(&mut self, i: usize) {
        if let Some(&r) = self.rank.get(i) {
            self.tree.add(r);
        }
    }
    /// How many values of the prefix satisfy `below`, a predicate that holds on an initial run
    /// of the sorted values of `d` and nowhere after it: one binary search and one tree query.
    pub(crate) fn count_while(&self, below: impl FnMut(&f64) -> bool) -> u64 {
        self.tree.prefix(self.sorted.partition_point(below))
    }
    /// The k-th smallest (1-based) value of the prefix.
    pub(crate) fn kth(&self, k: usize) -> Option<f64> {
        let r = self.tree.kth(k as u64)?;
        self.sorted.get(r - 1).copied()
    }
    /// The median of the first `n` values (the prefix must hold them).
    pub(crate) fn median(&self, n: usize) -> Option<f64> {
        if n % 2 == 1 {
            self.kth(n / 2 + 1)
        } else {
            Some((self.kth(n / 2)? + self.kth(n / 2 + 1)?) / 2.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_order_statistics_match_sorting_every_prefix() {
        let mut x = 88172645463325252u64;
        let d: Vec<f64> = (0..400)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 50) as f64 - 25.0
            })
            .collect();
        let mut p = Prefix::new(&d);
        for n in 1..=d.len() {
            p.push(n - 1);
            let mut s = d[..n].to_vec();
            s.sort_by(f64::total_cmp);
            for k in [1, n / 2 + 1, n] {
                assert_eq!(p.kth(k), Some(s[k - 1]), "n = {n}, k = {k}");
            }
            assert_eq!(p.median(n), crate::rank::median(&d[..n]), "n = {n}");
            assert_eq!(p.kth(n + 1), None);
        }
        assert_eq!(Fenwick::new(0).kth(1), None);
    }
}
