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

/// All Walsh averages (d_i + d_j)/2 for i ≤ j, sorted.
pub fn walsh_averages(d: &[f64]) -> Vec<f64> {
    let n = d.len();
    let mut w = Vec::with_capacity(n * (n + 1) / 2);
    for i in 0..n {
        for j in i..n {
            w.push((d[i] + d[j]) / 2.0);
        }
    }
    w.sort_by(f64::total_cmp);
    w
}

/// The Hodges–Lehmann estimate: the median of the Walsh averages.
pub fn hodges_lehmann(d: &[f64]) -> Option<f64> {
    let w = walsh_averages(d);
    median(&w)
}

/// P(T+ ≤ t) for t = 0..=M under the null, for n pairs (exact, by the subset-sum recursion).
pub fn signed_rank_cdf(n: usize) -> Vec<f64> {
    let m = n * (n + 1) / 2;
    let mut p = vec![0.0f64; m + 1];
    p[0] = 1.0;
    let mut top = 0;
    for k in 1..=n {
        top += k;
        for s in (0..=top).rev() {
            let add = if s >= k { p[s - k] } else { 0.0 };
            p[s] = (p[s] + add) / 2.0;
        }
    }
    let mut acc = 0.0;
    for x in &mut p {
        acc += *x;
        *x = acc;
    }
    p
}

/// The exact signed-rank confidence interval at level 1 − alpha, from sorted Walsh averages:
/// `[W_(k), W_(M+1−k)]` with `k = max{k : P(T+ ≤ k−1) ≤ alpha/2}`; `None` when no interval
/// exists at this n and alpha (e.g. n < 6 at 95%).
pub fn wilcoxon_ci(d: &[f64], alpha: f64) -> Option<(f64, f64)> {
    let n = d.len();
    if n == 0 {
        return None;
    }
    let w = walsh_averages(d);
    let m = w.len();
    let k = if n <= 1000 {
        let cdf = signed_rank_cdf(n);
        // k − 1 is the largest t with P(T+ ≤ t) ≤ alpha/2.
        let t = cdf.iter().take_while(|&&p| p <= alpha / 2.0).count();
        if t == 0 {
            return None;
        }
        t
    } else {
        let z = normal_quantile(1.0 - alpha / 2.0);
        let nf = n as f64;
        let k = (m as f64 / 2.0 - z * (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt()).floor();
        if k < 1.0 {
            return None;
        }
        k as usize
    };
    Some((w[k - 1], w[m - k]))
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
    Some((s[k - 1], s[n - k]))
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

/// Kendall's tau-a of `v` against its index (a monotone trend gives ±1).
pub fn kendall_tau(v: &[f64]) -> Option<f64> {
    let n = v.len();
    if n < 2 {
        return None;
    }
    let mut s = 0i64;
    for i in 0..n {
        for j in i + 1..n {
            s += match v[j].partial_cmp(&v[i]) {
                Some(std::cmp::Ordering::Greater) => 1,
                Some(std::cmp::Ordering::Less) => -1,
                _ => 0,
            };
        }
    }
    Some(s as f64 / (n * (n - 1) / 2) as f64)
}

/// Two-sample Hodges–Lehmann shift (median of x_i − y_j) with a normal-approximation
/// Mann–Whitney interval at 1 − alpha.
pub fn shift_estimate(x: &[f64], y: &[f64], alpha: f64) -> Option<(f64, f64, f64)> {
    if x.is_empty() || y.is_empty() {
        return None;
    }
    let mut diffs: Vec<f64> = x
        .iter()
        .flat_map(|a| y.iter().map(move |b| a - b))
        .collect();
    diffs.sort_by(f64::total_cmp);
    let (m, n) = (x.len() as f64, y.len() as f64);
    let z = normal_quantile(1.0 - alpha / 2.0);
    let k = (m * n / 2.0 - z * (m * n * (m + n + 1.0) / 12.0).sqrt()).floor();
    let est = median(&diffs)?;
    if k < 1.0 {
        return Some((est, f64::NEG_INFINITY, f64::INFINITY));
    }
    let k = k as usize;
    Some((est, diffs[k - 1], diffs[diffs.len() - k]))
}

#[cfg(test)]
mod tests {
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
