//! The rank statistics against SciPy: `tests/oracle/stats_cases.py` draws seeded, tie-free data
//! sets of 8 to 256 values and writes them with the Hodges–Lehmann estimate (brute force in
//! NumPy), the exact Wilcoxon signed-rank interval (exact null distribution, checked against
//! `scipy.stats.wilcoxon`) and the sign-test interval (`scipy.stats.binom`) at four levels to
//! `tests/expected/stats_cases.json`. Numbers are read from their JSON text with Rust's own
//! correctly rounded parser, so this test sees exactly the doubles Python wrote.

use kernelab_stats::rank::{hodges_lehmann, sign_ci, walsh_averages, wilcoxon_ci};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::path::PathBuf;

#[derive(Deserialize)]
struct Doc {
    alphas: Vec<Box<RawValue>>,
    cases: Vec<Case>,
    sign_long_runs: Vec<LongRun>,
}

/// The sign interval's k for a long run (the data are 0, 1, …, n − 1).
#[derive(Deserialize)]
struct LongRun {
    n: usize,
    alpha: Box<RawValue>,
    k: usize,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    n: usize,
    data: Vec<Box<RawValue>>,
    hodges_lehmann: Box<RawValue>,
    intervals: Vec<Level>,
}

#[derive(Deserialize)]
struct Level {
    alpha: Box<RawValue>,
    wilcoxon: Option<Interval>,
    sign: Option<Interval>,
}

#[derive(Deserialize)]
struct Interval {
    /// 1-based order statistic of the lower end.
    k: usize,
    lo: Box<RawValue>,
    hi: Box<RawValue>,
}

fn num(r: &RawValue) -> f64 {
    r.get()
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", r.get()))
}

fn load() -> Doc {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/expected/stats_cases.json");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Both intervals must exist or not; when they do, the ends must be the same doubles.
fn same_interval(what: &str, got: Option<(f64, f64)>, want: &Option<Interval>) {
    match (got, want) {
        (None, None) => {}
        (Some((lo, hi)), Some(w)) => {
            assert_eq!(
                (lo.to_bits(), hi.to_bits()),
                (num(&w.lo).to_bits(), num(&w.hi).to_bits()),
                "{what}: kernelab [{lo}, {hi}], SciPy [{}, {}] (k = {})",
                num(&w.lo),
                num(&w.hi),
                w.k
            );
        }
        (got, want) => panic!(
            "{what}: kernelab {got:?}, SciPy {}",
            if want.is_some() {
                "an interval"
            } else {
                "none"
            }
        ),
    }
}

#[test]
fn rank_statistics_match_scipy() {
    let doc = load();
    assert_eq!(doc.cases.len(), 70, "data sets");
    assert_eq!(doc.alphas.len(), 4, "levels");
    let (mut intervals, mut absent) = (0, 0);
    for case in &doc.cases {
        let d: Vec<f64> = case.data.iter().map(|r| num(r)).collect();
        assert_eq!(d.len(), case.n, "{}", case.name);
        let want = num(&case.hodges_lehmann);
        let got = hodges_lehmann(&d).expect("non-empty");
        assert!(
            (got - want).abs() <= 1e-12 * want.abs(),
            "{}: Hodges–Lehmann kernelab {got}, NumPy {want}",
            case.name
        );
        let walsh = walsh_averages(&d);
        let mut sorted = d.clone();
        sorted.sort_by(f64::total_cmp);
        for level in &case.intervals {
            let alpha = num(&level.alpha);
            let what = |kind: &str| format!("{} alpha {alpha}: {kind}", case.name);
            let w = wilcoxon_ci(&d, alpha);
            same_interval(&what("Wilcoxon"), w, &level.wilcoxon);
            if let Some(i) = &level.wilcoxon {
                // The ends are the k-th smallest and k-th largest Walsh averages.
                assert_eq!(num(&i.lo), walsh[i.k - 1], "{}", what("Wilcoxon k"));
                assert_eq!(
                    num(&i.hi),
                    walsh[walsh.len() - i.k],
                    "{}",
                    what("Wilcoxon k")
                );
                intervals += 1;
            } else {
                absent += 1;
            }
            same_interval(&what("sign"), sign_ci(&d, alpha), &level.sign);
            if let Some(i) = &level.sign {
                assert_eq!(num(&i.lo), sorted[i.k - 1], "{}", what("sign k"));
                assert_eq!(num(&i.hi), sorted[d.len() - i.k], "{}", what("sign k"));
            }
        }
    }
    assert_eq!(intervals + absent, 280);
    assert!(
        absent > 0 && intervals > 250,
        "{intervals} intervals, {absent} absent"
    );
}

#[test]
fn sign_interval_of_long_runs_matches_scipy() {
    let doc = load();
    assert!(
        doc.sign_long_runs.iter().any(|r| r.n > 1074),
        "a run past 2^-1074"
    );
    for run in &doc.sign_long_runs {
        let alpha = num(&run.alpha);
        let d: Vec<f64> = (0..run.n).map(|i| i as f64).collect();
        let got = sign_ci(&d, alpha);
        let want = ((run.k - 1) as f64, (run.n - run.k) as f64);
        assert_eq!(got, Some(want), "n = {} alpha {alpha}", run.n);
    }
}
