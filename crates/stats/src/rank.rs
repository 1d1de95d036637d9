//! Rank statistics: Walsh averages, Hodges–Lehmann, the exact Wilcoxon signed-rank interval,
//! the sign-test interval, and robust spread.

/// The median of a slice (sorted copy); `None` when empty.
pub fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    Some(if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    })
}

/// Robust standard deviation: 1.4826 · MAD.
pub fn robust_sd(v: &[f64]) -> Option<f64> {
    let m = median(v)?;
    let dev: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
    median(&dev).map(|mad| 1.4826 * mad)
}

/// All Walsh averages (d_i + d_j)/2 for i ≤ j, sorted: n(n+1)/2 values, so for tests and
/// small n only; the estimators below select order statistics without building this array.
pub fn walsh_averages(d: &[f64]) -> Vec<f64> {
    let mut w = Vec::with_capacity(d.len() * (d.len() + 1) / 2);
    for (i, x) in d.iter().enumerate() {
        for y in d.iter().skip(i) {
            w.push((x + y) / 2.0);
        }
    }
    w.sort_by(f64::total_cmp);
    w
}

/// The position of `x` in the total order of `f64` (`f64::total_cmp`) as an unsigned key.
pub(crate) fn order_key(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// The `f64` whose [`order_key`] is `key`.
fn from_order_key(key: u64) -> f64 {
    if key >> 63 == 1 {
        f64::from_bits(key & !(1 << 63))
    } else {
        f64::from_bits(!key)
    }
}

/// The smallest value `v` (in total order) between `lo` and `hi` with `count_le(key(v)) ≥ k`:
/// the k-th smallest element of a multiset whose elements ≤ a key `count_le` counts. At most
/// 64 bisection steps over the keys, so O(64 · cost of one count).
fn select_by_count(k: u64, lo: f64, hi: f64, count_le: impl Fn(u64) -> u64) -> f64 {
    let (mut lo, mut hi) = (order_key(lo), order_key(hi));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if count_le(mid) >= k {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    from_order_key(lo)
}

/// A sorted copy of `d`, or `None` when it is empty or holds a non-finite value.
pub(crate) fn sorted_finite(d: &[f64]) -> Option<Vec<f64>> {
    if d.is_empty() || d.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let mut s = d.to_vec();
    s.sort_by(f64::total_cmp);
    Some(s)
}

/// Counts Walsh averages (s_i + s_j)/2, i ≤ j, of the sorted `s` whose key is at most `key`:
/// O(n) with two pointers, since each row and column is monotone.
pub(crate) fn walsh_count_le(s: &[f64], key: u64) -> u64 {
    let n = s.len();
    let mut hi = n;
    let mut count = 0u64;
    for (i, x) in s.iter().enumerate() {
        while hi > 0
            && s.get(hi - 1)
                .is_some_and(|y| order_key((x + y) / 2.0) > key)
        {
            hi -= 1;
        }
        if hi <= i {
            break;
        }
        count += (hi - i) as u64;
    }
    count
}

/// The k-th smallest (1-based) Walsh average of the sorted, finite, non-empty `s`.
fn walsh_kth(s: &[f64], k: u64) -> f64 {
    let (lo, hi) = match (s.first(), s.last()) {
        (Some(a), Some(b)) => (*a, *b),
        _ => return f64::NAN,
    };
    select_by_count(k, lo, hi, |key| walsh_count_le(s, key))
}

/// The number of Walsh averages of n values.
pub(crate) fn walsh_len(n: usize) -> u64 {
    let n = n as u64;
    n * (n + 1) / 2
}

/// The Hodges–Lehmann estimate: the median of the Walsh averages, selected in O(n log n)
/// without building them; `None` when `d` is empty or holds a non-finite value.
pub fn hodges_lehmann(d: &[f64]) -> Option<f64> {
    let s = sorted_finite(d)?;
    let m = walsh_len(s.len());
    Some(if m % 2 == 1 {
        walsh_kth(&s, m / 2 + 1)
    } else {
        (walsh_kth(&s, m / 2) + walsh_kth(&s, m / 2 + 1)) / 2.0
    })
}

/// P(T+ ≤ t) for t = 0..=M under the null, for n pairs (exact, by the subset-sum recursion).
pub fn signed_rank_cdf(n: usize) -> Vec<f64> {
    let mut p = vec![1.0f64];
    extend_signed_rank(&mut p, 0, n);
    let mut acc = 0.0;
    for x in &mut p {
        acc += *x;
        *x = acc;
    }
    p
}

/// Advances the null density of T+ in `p` from `from` to `to` pairs (one step per pair).
fn extend_signed_rank(p: &mut Vec<f64>, from: usize, to: usize) {
    for k in from + 1..=to {
        let top = k * (k + 1) / 2;
        p.resize(top + 1, 0.0);
        // p[s] = (p[s] + p[s − k]) / 2 from the top down, a block of k at a time: each block
        // reads only the block below it, still unchanged (and the loop vectorizes).
        let mut end = top + 1;
        while end > k {
            let start = end.saturating_sub(k).max(k);
            let (low, high) = p.split_at_mut(start);
            for (x, &y) in high[..end - start].iter_mut().zip(&low[start - k..end - k]) {
                *x = (*x + y) / 2.0;
            }
            end = start;
        }
        for x in p.iter_mut().take(k.min(top + 1)) {
            *x /= 2.0;
        }
    }
}

thread_local! {
    /// The null density of T+ for the last n asked (sequential looks ask n, n + 1, …, so each
    /// look costs one recursion step instead of n).
    static SIGNED_RANK: std::cell::RefCell<(usize, Vec<f64>)> =
        std::cell::RefCell::new((0, vec![1.0]));
}

/// The largest exact Wilcoxon k = max{k : P(T+ ≤ k−1) ≤ alpha/2} for n ≤ 1000 (0 when none).
fn exact_wilcoxon_k(n: usize, alpha: f64) -> usize {
    SIGNED_RANK.with(|cell| {
        let mut cell = cell.borrow_mut();
        let (cached_n, p) = &mut *cell;
        if n < *cached_n {
            *p = vec![1.0];
            *cached_n = 0;
        }
        extend_signed_rank(p, *cached_n, n);
        *cached_n = n;
        let mut acc = 0.0;
        p.iter()
            .take_while(|&&x| {
                acc += x;
                acc <= alpha / 2.0
            })
            .count()
    })
}

/// The exact signed-rank confidence interval at level 1 − alpha, from the Walsh averages:
/// `[W_(k), W_(M+1−k)]` with `k = max{k : P(T+ ≤ k−1) ≤ alpha/2}` (exact to n = 1000, the
/// normal approximation beyond), both ends selected in O(n log n); `None` when no interval
/// exists at this n and alpha (e.g. n < 6 at 95%) or `d` holds a non-finite value.
pub fn wilcoxon_ci(d: &[f64], alpha: f64) -> Option<(f64, f64)> {
    let k = wilcoxon_k(d.len(), alpha)?;
    let s = sorted_finite(d)?;
    let m = walsh_len(d.len());
    Some((walsh_kth(&s, k), walsh_kth(&s, m + 1 - k)))
}

/// The rank `k` of the lower end of the 1 − alpha signed-rank interval of n values (the upper
/// end is `M + 1 − k`, M = n(n+1)/2): exact to n = 1000, the normal approximation beyond;
/// `None` when no interval exists at this n and alpha.
pub(crate) fn wilcoxon_k(n: usize, alpha: f64) -> Option<u64> {
    if n == 0 || !(alpha > 0.0 && alpha < 1.0) {
        return None;
    }
    let m = walsh_len(n);
    let k = if n <= 1000 {
        exact_wilcoxon_k(n, alpha) as u64
    } else {
        let z = normal_quantile(1.0 - alpha / 2.0);
        let nf = n as f64;
        let k = (m as f64 / 2.0 - z * (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt()).floor();
        if k < 1.0 {
            0
        } else {
            k as u64
        }
    };
    (k >= 1 && k <= m).then_some(k)
}

/// The fewest values n for which a 1 − alpha signed-rank interval exists (6 at 95%, 8 at
/// 98.75%: the most extreme Walsh averages must carry at most alpha/2 each); `None` for an
/// alpha outside (0, 1).
pub fn min_pairs_for_interval(alpha: f64) -> Option<usize> {
    (1..=1001).find(|&n| wilcoxon_k(n, alpha).is_some())
}

/// The distribution-free interval for the median from order statistics and the binomial(n, ½).
pub fn sign_ci(d: &[f64], alpha: f64) -> Option<(f64, f64)> {
    let n = d.len();
    let mut s = d.to_vec();
    s.sort_by(f64::total_cmp);
    // P(B ≤ j) for B ~ Binomial(n, 1/2), the pmf carried as a logarithm: 2^-n underflows to
    // zero from n = 1075 (and loses precision as a subnormal before), which made every
    // P(B ≤ j) zero and the interval vanish for long runs.
    let mut cdf = Vec::with_capacity(n + 1);
    let mut ln_pmf = -(n as f64) * std::f64::consts::LN_2;
    let mut acc = 0.0;
    for j in 0..=n {
        acc += ln_pmf.exp();
        cdf.push(acc);
        ln_pmf += ((n - j) as f64 / (j + 1) as f64).ln();
    }
    let k = cdf.iter().take_while(|&&p| p <= alpha / 2.0).count();
    if k == 0 || k > n {
        return None;
    }
    Some((*s.get(k - 1)?, *s.get(n - k)?))
}

/// The standard normal quantile (Acklam's rational approximation, |error| < 1.2e-9).
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.38357751867269e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e1,
        1.615858368580409e2,
        -1.556989798598866e2,
        6.680131188771972e1,
        -1.328068155288572e1,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-3,
        3.224671290700398e-1,
        2.445134137142996,
        3.754408661907416,
    ];
    let pl = 0.02425;
    if p < pl {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - pl {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        -normal_quantile(1.0 - p)
    }
}

/// Kendall's tau-a of `v` against its index (a monotone trend gives ±1), in O(n log n) with a
/// Fenwick tree over ranks; pairs holding a NaN count as ties.
pub fn kendall_tau(v: &[f64]) -> Option<f64> {
    let n = v.len();
    if n < 2 {
        return None;
    }
    // Dense ranks of the non-NaN values (numerically equal values share a rank).
    let mut order: Vec<usize> = (0..n)
        .filter(|&i| v.get(i).is_some_and(|x| !x.is_nan()))
        .collect();
    order.sort_by(|&i, &j| v[i].total_cmp(&v[j]));
    let mut rank = vec![0usize; n];
    let mut r = 0;
    let mut prev: Option<f64> = None;
    for &i in &order {
        let x = v[i];
        if prev.is_some_and(|p| p != x) {
            r += 1;
        }
        prev = Some(x);
        rank[i] = r + 1;
    }
    let mut tree = crate::order::Fenwick::new(r + 1);
    let (mut s, mut seen) = (0i64, 0i64);
    for (i, x) in v.iter().enumerate() {
        if x.is_nan() {
            continue;
        }
        let rk = rank[i];
        let below = tree.prefix(rk - 1) as i64;
        let same = tree.prefix(rk) as i64 - below;
        s += below - (seen - below - same);
        tree.add(rk);
        seen += 1;
    }
    Some(s as f64 / (n as f64 * (n as f64 - 1.0) / 2.0))
}

/// Two-sample Hodges–Lehmann shift (median of x_i − y_j) with a normal-approximation
/// Mann–Whitney interval at 1 − alpha, selected in O((m + n) log) without the m·n differences;
/// `None` when either sample is empty or holds a non-finite value.
pub fn shift_estimate(x: &[f64], y: &[f64], alpha: f64) -> Option<(f64, f64, f64)> {
    let xs = sorted_finite(x)?;
    let ys = sorted_finite(y)?;
    let total = xs.len() as u64 * ys.len() as u64;
    let lo = xs.first()? - ys.last()?;
    let hi = xs.last()? - ys.first()?;
    // x_i − y_j grows with i and falls with j: for growing x_i the first j with
    // x_i − y_j ≤ t only moves right, so one pass with two pointers counts them.
    let count_le = |key: u64| {
        let mut j = 0usize;
        let mut count = 0u64;
        for a in &xs {
            while ys.get(j).is_some_and(|b| order_key(a - b) > key) {
                j += 1;
            }
            count += (ys.len() - j) as u64;
        }
        count
    };
    let kth = |k: u64| select_by_count(k, lo, hi, count_le);
    let est = if total % 2 == 1 {
        kth(total / 2 + 1)
    } else {
        (kth(total / 2) + kth(total / 2 + 1)) / 2.0
    };
    let (m, n) = (xs.len() as f64, ys.len() as f64);
    let z = normal_quantile(1.0 - alpha / 2.0);
    let k = (m * n / 2.0 - z * (m * n * (m + n + 1.0) / 12.0).sqrt()).floor();
    if k.is_nan() || k < 1.0 {
        return Some((est, f64::NEG_INFINITY, f64::INFINITY));
    }
    let k = k as u64;
    Some((est, kth(k), kth(total + 1 - k)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_fewest_pairs_for_an_interval_are_where_2_over_2_to_the_n_fits_alpha() {
        // P(T+ = 0) = 2^-n on each side: an interval exists once 2 · 2^-n ≤ alpha.
        for alpha in [0.05, 0.025, 0.0125, 0.01, 0.001] {
            let n = super::min_pairs_for_interval(alpha).expect("exists");
            assert!(2.0 * 0.5f64.powi(n as i32) <= alpha, "{alpha}: {n}");
            assert!(2.0 * 0.5f64.powi(n as i32 - 1) > alpha, "{alpha}: {n}");
        }
        assert_eq!(super::min_pairs_for_interval(0.05), Some(6));
        assert_eq!(super::min_pairs_for_interval(0.05 / 4.0), Some(8));
        assert_eq!(super::min_pairs_for_interval(0.0), None);
    }

    use super::*;

    #[test]
    fn cdf_matches_small_tables() {
        // n = 5: 32 subsets; P(T+ = 0) = 1/32, P(T+ <= 1) = 2/32, P(T+ <= 2) = 3/32.
        let c = signed_rank_cdf(5);
        assert!((c[0] - 1.0 / 32.0).abs() < 1e-15);
        assert!((c[2] - 3.0 / 32.0).abs() < 1e-15);
        assert!((c[15] - 1.0).abs() < 1e-12);
        // n = 6 at alpha 0.05: P(T+ <= 0) = 1/64 <= 0.025, P(T+ <= 1) = 2/64 > 0.025 -> k = 1.
        let d = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let w = walsh_averages(&d);
        assert_eq!(wilcoxon_ci(&d, 0.05), Some((w[0], w[w.len() - 1])));
        assert_eq!(
            wilcoxon_ci(&d[..5], 0.05),
            None,
            "no 95% interval with 5 pairs"
        );
    }

    #[test]
    fn hl_and_walsh() {
        assert_eq!(hodges_lehmann(&[1.0, 2.0, 3.0]), Some(2.0));
        assert_eq!(walsh_averages(&[0.0, 2.0]), vec![0.0, 1.0, 2.0]);
    }

    /// A deterministic generator (xorshift) with ties and both signs.
    fn data(seed: u64, n: usize) -> Vec<f64> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let v = (x % 2001) as f64 / 1000.0 - 1.0;
                if x % 7 == 0 {
                    v.round()
                } else {
                    v * 0.37
                }
            })
            .collect()
    }

    fn brute_median(w: &[f64]) -> f64 {
        let m = w.len();
        if m % 2 == 1 {
            w[m / 2]
        } else {
            (w[m / 2 - 1] + w[m / 2]) / 2.0
        }
    }

    #[test]
    fn selection_matches_brute_force_on_random_data() {
        for (seed, n) in (1..60u64).zip((1..300).step_by(5)) {
            let d = data(seed * 7919, n);
            let w = walsh_averages(&d);
            let hl = hodges_lehmann(&d).expect("finite data");
            assert_eq!(hl.to_bits(), brute_median(&w).to_bits(), "HL n = {n}");
            let mut sorted = d.clone();
            sorted.sort_by(f64::total_cmp);
            for k in [1, w.len().min(2), w.len() / 3 + 1, w.len()] {
                assert_eq!(walsh_kth(&sorted, k as u64), w[k - 1], "k = {k}, n = {n}");
            }
            for alpha in [0.5, 0.05, 0.01, 1e-6] {
                let cdf = signed_rank_cdf(n);
                let t = cdf.iter().take_while(|&&p| p <= alpha / 2.0).count();
                let want = (t > 0).then(|| (w[t - 1], w[w.len() - t]));
                assert_eq!(wilcoxon_ci(&d, alpha), want, "n = {n} alpha {alpha}");
            }
            let (x, y) = d.split_at(n / 2);
            if !x.is_empty() && !y.is_empty() {
                let mut diffs: Vec<f64> = x
                    .iter()
                    .flat_map(|a| y.iter().map(move |b| a - b))
                    .collect();
                diffs.sort_by(f64::total_cmp);
                let (est, lo, hi) = shift_estimate(x, y, 0.05).expect("finite");
                assert_eq!(
                    est.to_bits(),
                    brute_median(&diffs).to_bits(),
                    "shift n = {n}"
                );
                let (m, k) = (x.len() as f64, y.len() as f64);
                let kk = (m * k / 2.0 - 1.959963984540054 * (m * k * (m + k + 1.0) / 12.0).sqrt())
                    .floor();
                if kk >= 1.0 {
                    let kk = kk as usize;
                    assert_eq!(
                        (lo, hi),
                        (diffs[kk - 1], diffs[diffs.len() - kk]),
                        "shift CI n = {n}"
                    );
                }
            }
            let mut brute = 0i64;
            for i in 0..n {
                for j in i + 1..n {
                    brute += match d[j].partial_cmp(&d[i]) {
                        Some(std::cmp::Ordering::Greater) => 1,
                        Some(std::cmp::Ordering::Less) => -1,
                        _ => 0,
                    };
                }
            }
            if n >= 2 {
                let want = brute as f64 / (n * (n - 1) / 2) as f64;
                assert_eq!(kendall_tau(&d), Some(want), "tau n = {n}");
            }
        }
    }

    #[test]
    fn hodges_lehmann_of_100k_pairs_is_fast() {
        let d = data(42, 100_000);
        let t = std::time::Instant::now();
        let hl = hodges_lehmann(&d).expect("finite");
        let ci = wilcoxon_ci(&d, 0.05).expect("interval");
        let elapsed = t.elapsed();
        eprintln!("Hodges–Lehmann and Wilcoxon CI at n = 100,000: {elapsed:?}");
        assert!(ci.0 <= hl && hl <= ci.1, "{ci:?} {hl}");
        // Seconds with a quadratic algorithm (5·10⁹ Walsh averages, 40 GB); milliseconds here.
        assert!(
            elapsed.as_secs_f64() < 1.0,
            "HL + CI at n = 100,000 took {elapsed:?}"
        );
        let t = std::time::Instant::now();
        assert!(kendall_tau(&d).is_some());
        let (x, y) = d.split_at(50_000);
        assert!(shift_estimate(x, y, 0.05).is_some());
        assert!(
            t.elapsed().as_secs_f64() < 1.0,
            "tau and shift took {:?}",
            t.elapsed()
        );
    }

    #[test]
    fn non_finite_data_give_no_estimate() {
        assert_eq!(hodges_lehmann(&[1.0, f64::NAN]), None);
        assert_eq!(wilcoxon_ci(&[f64::INFINITY; 10], 0.05), None);
        assert_eq!(shift_estimate(&[1.0], &[f64::NEG_INFINITY], 0.05), None);
        assert_eq!(hodges_lehmann(&[]), None);
    }

    #[test]
    fn quantiles_and_tau() {
        assert!((normal_quantile(0.975) - 1.959963985).abs() < 1e-7);
        assert!((normal_quantile(0.025) + 1.959963985).abs() < 1e-7);
        assert_eq!(kendall_tau(&[1.0, 2.0, 3.0]), Some(1.0));
        assert_eq!(kendall_tau(&[3.0, 2.0, 1.0]), Some(-1.0));
    }

    #[test]
    fn sign_interval_covers_median() {
        let d: Vec<f64> = (0..20).map(f64::from).collect();
        let (lo, hi) = sign_ci(&d, 0.05).expect("interval");
        assert!(lo <= 9.5 && hi >= 9.5);
        // Binomial(20, 1/2): P(B <= 5) = 0.0207 <= 0.025 < P(B <= 6) -> k = 6.
        assert_eq!((lo, hi), (5.0, 14.0));
    }

    #[test]
    fn sign_interval_exists_for_long_runs() {
        // 2^-2000 is zero in f64; the interval must still be there, and near the normal
        // approximation k ≈ n/2 − 1.96·√n/2 (SciPy's exact k for these n is checked in
        // tests/scipy.rs).
        let d: Vec<f64> = (0..2000).map(f64::from).collect();
        let (lo, hi) = sign_ci(&d, 0.05).expect("interval at n = 2000");
        let k = lo + 1.0;
        assert!(
            (k - (1000.0 - 1.96 * 2000f64.sqrt() / 2.0)).abs() < 2.0,
            "k = {k}"
        );
        assert_eq!(hi, 2000.0 - k);
    }
}
