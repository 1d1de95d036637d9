#!/usr/bin/env python3
"""Independent oracle for the rank statistics of kernelab-stats (`rank::hodges_lehmann`,
`rank::wilcoxon_ci`, `rank::sign_ci`): seeded, tie-free data sets of 8 to 256 values, with
expected figures computed here with NumPy and SciPy, sharing no code with kernelab. Writes
tests/expected/stats_cases.json, which crates/stats/tests/scipy.rs reads (data included).

Definitions (two-sided, level 1 - alpha; order statistics 1-based):
  * Hodges-Lehmann: the median of the n(n+1)/2 Walsh averages (d_i + d_j)/2, i <= j, by brute
    force.
  * Wilcoxon signed-rank interval: [W_(k), W_(M+1-k)] over the sorted Walsh averages, M =
    n(n+1)/2, with k the largest integer such that P(T+ <= k-1) <= alpha/2 under the null
    (Hollander & Wolfe; R's wilcox.test). The null distribution of T+ is counted exactly with
    integers here and checked against scipy.stats.wilcoxon(method="exact") p-values at k-1 and
    k; the interval is then checked by inverting scipy's exact two-sided test on the data: a
    shift just inside each end is not rejected at alpha, one just outside is. No interval
    (null) when P(T+ = 0) = 2^-n > alpha/2.
  * Sign-test interval for the median: [x_(k), x_(n+1-k)] with k the largest integer such
    that P(B <= k-1) <= alpha/2, B ~ Binomial(n, 1/2), from scipy.stats.binom.cdf, checked
    with exact integer binomial sums and by inverting scipy.stats.binomtest. Also its k alone
    for runs of 1,000 to 5,000 values, where 2^-n underflows a double.

alphas: 0.1, 0.05 (the design's default), 0.05/6 (Bonferroni over the six planned looks of 8
to 256 pairs) and 0.005 (no interval at small n).

Usage: python3 tests/oracle/stats_cases.py [--out-dir tests/expected]
(needs numpy and scipy; deterministic, seed 11)
"""
import json
import math
import sys
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import scipy.stats as st

SIZES = [8, 9, 10, 12, 16, 20, 25, 32, 50, 64, 100, 128, 200, 256]
ALPHAS = [0.1, 0.05, 0.05 / 6, 0.005]
LONG_RUNS = [1000, 1074, 1075, 1100, 2000, 5000]


def draw(rng, dist, n):
    """Per-pair log ratios of a few shapes; all continuous, so ties have probability 0."""
    if dist == "normal":
        return rng.normal(0.01, 0.02, n)
    if dist == "student_t3":  # heavy tails
        return 0.005 + 0.01 * rng.standard_t(3, n)
    if dist == "skewed":  # exponential minus a shift: a long right tail around a small median
        return rng.exponential(0.02, n) - 0.01
    if dist == "uniform":
        return rng.uniform(-0.03, 0.05, n)
    if dist == "log_timing":  # ln(B/A) of lognormal timings with a 3% slowdown
        a = 100 * rng.lognormal(0, 0.02, n)
        b = 103 * rng.lognormal(0, 0.02, n)
        return np.log(b / a)
    raise ValueError(dist)


DISTS = ["normal", "student_t3", "skewed", "uniform", "log_timing"]


def walsh(d):
    i, j = np.triu_indices(len(d))
    return np.sort((d[i] + d[j]) / 2)


def signed_rank_counts(sizes):
    """For each n in sizes: counts[t] = number of subsets of {1..n} with sum t (exact integers),
    the null distribution of T+ times 2^n."""
    out, counts = {}, [1]
    for k in range(1, max(sizes) + 1):
        new = counts + [0] * k
        for t, c in enumerate(counts):
            new[t + k] += c
        counts = new
        if k in sizes:
            out[k] = counts
    return out


def scipy_cdf_at(n, t):
    """P(T+ <= t) for n pairs from scipy's exact one-sided test on data whose T+ is t."""
    positive, rest = set(), t
    for r in range(n, 0, -1):  # greedy: any 0 <= t <= n(n+1)/2 is a sum of distinct ranks
        if r <= rest:
            positive.add(r)
            rest -= r
    assert rest == 0
    x = np.array([r if r in positive else -r for r in range(1, n + 1)], dtype=float)
    res = st.wilcoxon(x, alternative="less", method="exact")
    assert res.statistic == t
    return res.pvalue


def two_sided_p(d, theta):
    return st.wilcoxon(d - theta, method="exact").pvalue


def wilcoxon_interval(d, w, cum, alpha):
    n, m = len(d), len(w)
    total = 2**n
    bound = Fraction(alpha) / 2
    k = 0
    while k < len(cum) and Fraction(cum[k], total) <= bound:
        k += 1
    # k - 1 is now the largest t with P(T+ <= t) <= alpha/2 (k = 0: none).
    p_k = scipy_cdf_at(n, k)
    assert p_k > alpha / 2 and math.isclose(p_k, cum[k] / total, rel_tol=1e-9), (n, k, p_k)
    if k == 0:
        return None
    p_below = scipy_cdf_at(n, k - 1)
    assert p_below <= alpha / 2 and math.isclose(p_below, cum[k - 1] / total, rel_tol=1e-9)
    lo, hi = w[k - 1], w[m - k]
    # Test inversion with scipy on the data itself.
    inside_lo, inside_hi = (w[k - 1] + w[k]) / 2, (w[m - k - 1] + w[m - k]) / 2
    outside_lo = (w[k - 2] + w[k - 1]) / 2 if k >= 2 else w[0] - 1.0
    outside_hi = (w[m - k] + w[m - k + 1]) / 2 if k >= 2 else w[-1] + 1.0
    assert two_sided_p(d, inside_lo) > alpha and two_sided_p(d, inside_hi) > alpha
    assert two_sided_p(d, outside_lo) <= alpha and two_sided_p(d, outside_hi) <= alpha
    return {"k": k, "lo": float(lo), "hi": float(hi)}


def sign_interval(d, alpha):
    n = len(d)
    x = np.sort(d)
    k = sign_k(n, alpha)
    if k == 0:
        return None
    # Inversion of scipy's exact sign test: k - 1 values below the median is rejected at alpha,
    # k values is not.
    assert st.binomtest(k - 1, n, 0.5).pvalue <= alpha < st.binomtest(k, n, 0.5).pvalue
    return {"k": k, "lo": float(x[k - 1]), "hi": float(x[n - k])}


def sign_k(n, alpha):
    """k of the sign-test interval for n values (0: none), from scipy.stats.binom, checked with
    exact integer binomial sums."""
    cdf = st.binom.cdf(np.arange(n + 1), n, 0.5)
    k = int(np.sum(cdf <= alpha / 2))
    bound, acc, exact = Fraction(alpha) / 2 * 2**n, 0, 0
    for j in range(n + 1):
        acc += math.comb(n, j)
        if acc > bound:
            break
        exact += 1
    assert k == exact, (n, alpha, k, exact)
    return k


def main(argv):
    out_dir = Path(argv[argv.index("--out-dir") + 1]) if "--out-dir" in argv else Path("tests/expected")
    out_dir.mkdir(parents=True, exist_ok=True)
    warnings.simplefilter("error")  # scipy warns when it cannot use the exact distribution
    rng = np.random.default_rng(11)
    counts = signed_rank_counts(SIZES)
    cases = []
    for dist in DISTS:
        for n in SIZES:
            d = draw(rng, dist, n)
            a = np.abs(d)
            assert np.all(a > 0) and len(np.unique(a)) == n, "ties or zeros"
            w = walsh(d)
            assert len(w) == n * (n + 1) // 2
            cum = list(np.cumsum(np.array(counts[n], dtype=object)))
            intervals = [
                {
                    "alpha": alpha,
                    "wilcoxon": wilcoxon_interval(d, w, cum, alpha),
                    "sign": sign_interval(d, alpha),
                }
                for alpha in ALPHAS
            ]
            cases.append(
                {
                    "name": f"{dist}_n{n}",
                    "distribution": dist,
                    "n": n,
                    "data": [float(v) for v in d],
                    "hodges_lehmann": float(np.median(w)),
                    "intervals": intervals,
                }
            )
    # Long runs, where 2^-n underflows a double: only the sign interval's k (kernelab's test
    # uses the data 0, 1, ..., n-1, whose interval is [k-1, n-k]).
    long_runs = [{"n": n, "alpha": alpha, "k": sign_k(n, alpha)} for n in LONG_RUNS for alpha in ALPHAS]
    doc = {
        "generator": "tests/oracle/stats_cases.py",
        "alphas": ALPHAS,
        "cases": cases,
        "sign_long_runs": long_runs,
    }
    dest = out_dir / "stats_cases.json"
    dest.write_text(json.dumps(doc, indent=1) + "\n")
    none_w = sum(1 for c in cases for i in c["intervals"] if i["wilcoxon"] is None)
    print(f"{dest}: {len(cases)} data sets x {len(ALPHAS)} levels ({none_w} without a Wilcoxon interval)")


if __name__ == "__main__":
    main(sys.argv[1:])
