//! The A/B design of `docs/ab-statistics.md`: paired log ratios, Hodges–Lehmann with
//! the exact Wilcoxon interval, three-way verdicts against a threshold, planned looks with
//! Bonferroni, `--until` (width only), `--watch` (anytime-valid sign-count confidence sequence),
//! and the diagnostics (A/A, order effect, drift, outliers, resolution, MDE).

use crate::order::Prefix;
use crate::rank::{hodges_lehmann, kendall_tau, median, robust_sd, shift_estimate, sign_ci};
use crate::until::{half_width, ratio_ci};
use serde::{Deserialize, Serialize};

/// Which run of a pair came first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Order {
    /// Baseline first.
    AB,
    /// Candidate first.
    BA,
}

/// The order of pair `k` in ABBA scheduling from a starting order.
pub fn abba_order(k: usize, start: Order) -> Order {
    let flip = k % 2 == 1;
    match (start, flip) {
        (Order::AB, false) | (Order::BA, true) => Order::AB,
        _ => Order::BA,
    }
}

/// One adjacent pair: a baseline and a candidate run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pair {
    /// Which ran first.
    pub order: Order,
    /// Baseline value.
    pub a: f64,
    /// Candidate value.
    pub b: f64,
}

/// Whether smaller values are better (times) or larger (throughputs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Times, latencies.
    #[default]
    LowerIsBetter,
    /// Throughputs.
    HigherIsBetter,
}

/// How to stop.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopRule {
    /// Planned looks at 8, 16, 32, … pairs with Bonferroni over the looks; stop at a decisive
    /// verdict or when the half-width is at most `resolution`.
    Auto {
        /// Target half-width (fraction, 0.005 = ±0.5%).
        resolution: f64,
    },
    /// Stop on width only (plain 1 − α intervals, Chow–Robbins).
    Until {
        /// Target half-width.
        resolution: f64,
    },
    /// Anytime-valid sign-count confidence sequence, checked after every pair.
    Watch,
    /// All pairs, one interval at 1 − α.
    Fixed,
}

/// Settings of an analysis.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Design {
    /// Error rate.
    pub alpha: f64,
    /// Practical threshold δ (fraction): changes smaller than this are "negligible".
    pub threshold: f64,
    /// First look.
    pub min_pairs: usize,
    /// Last look.
    pub max_pairs: usize,
    /// Stopping rule.
    pub stop: StopRule,
    /// Metric direction.
    pub direction: Direction,
}

impl Default for Design {
    fn default() -> Self {
        Design {
            alpha: 0.05,
            threshold: 0.005,
            min_pairs: 8,
            max_pairs: 256,
            stop: StopRule::Auto { resolution: 0.005 },
            direction: Direction::LowerIsBetter,
        }
    }
}

/// The three-way verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    /// The candidate is faster (interval below 1).
    Faster,
    /// The candidate is slower (interval above 1).
    Slower,
    /// Within ±δ.
    Same,
    /// None of the above at this resolution.
    Inconclusive,
}

/// The result at one look.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Look {
    /// Pairs used.
    pub pairs: usize,
    /// Candidate/baseline ratio (exp of the HL estimate of the log ratios).
    pub ratio: f64,
    /// Interval on the ratio, when one exists at this n and level.
    pub ci: Option<(f64, f64)>,
    /// Confidence level of the interval.
    pub level: f64,
    /// The verdict at this look.
    pub verdict: Verdict,
}

/// Order effect: how much slower the second run of a pair is, with its interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OrderEffect {
    /// Estimated second-in-pair effect (fraction).
    pub estimate: f64,
    /// Interval (fraction).
    pub ci: (f64, f64),
}

/// Drift of the baseline over the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    /// Kendall's tau of baseline values against time.
    pub tau: f64,
    /// Median of the last quarter of baseline values over the first quarter, minus 1.
    pub change: f64,
}

/// A complete analysis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// Pairs used for the final answer.
    pub pairs: usize,
    /// Pairs available.
    pub pairs_available: usize,
    /// Candidate/baseline ratio for times (B/A); for higher-is-better metrics the ratio of
    /// baseline over candidate, so that < 1 always means the candidate is better.
    pub ratio: f64,
    /// Its interval.
    pub ci: Option<(f64, f64)>,
    /// Confidence level used (Bonferroni-corrected under planned looks).
    pub level: f64,
    /// Verdict.
    pub verdict: Verdict,
    /// Human-readable verdict with the threshold qualifier.
    pub verdict_text: String,
    /// The practical threshold δ the verdict was judged against (fraction); absent in records
    /// written before it was stored.
    #[serde(default)]
    pub threshold: Option<f64>,
    /// Resolution: half-width of the interval (fraction).
    pub resolution: Option<f64>,
    /// Minimum detectable effect at 80% power ≈ 1.43 · resolution (1.5 below 10 pairs).
    pub mde: Option<f64>,
    /// The median of the log ratios with its sign-test interval (no symmetry assumption).
    pub sign_ci: Option<(f64, f64)>,
    /// Looks taken.
    pub looks: Vec<Look>,
    /// Why it stopped.
    pub stopped_by: String,
    /// Robust sd of the per-pair log ratios.
    pub noise_sd: Option<f64>,
    /// Pairs with |d − median| > 5·MAD.
    pub outliers: usize,
    /// Second-in-pair effect, when both orders occur.
    pub order_effect: Option<OrderEffect>,
    /// Baseline drift over the run.
    pub drift: Option<Drift>,
    /// Pairs needed in total for the requested resolution at the measured noise.
    pub pairs_for_resolution: Option<usize>,
    /// Warnings (unstable runs, no interval possible, …).
    pub warnings: Vec<String>,
}

/// Per-pair log ratios d = ln(t_B / t_A) (inverted for higher-is-better metrics).
pub fn log_ratios(pairs: &[Pair], direction: Direction) -> Vec<f64> {
    pairs
        .iter()
        .map(|p| match direction {
            Direction::LowerIsBetter => (p.b / p.a).ln(),
            Direction::HigherIsBetter => (p.a / p.b).ln(),
        })
        .collect()
}

/// The verdict of an interval on the ratio against δ, worded with the ratio's point estimate
/// (the Hodges–Lehmann estimate, or the median under `Watch`).
pub fn verdict(estimate: f64, ci: Option<(f64, f64)>, threshold: f64) -> (Verdict, String) {
    let Some((lo, hi)) = ci else {
        return (
            Verdict::Inconclusive,
            "INCONCLUSIVE: too few pairs for an interval".into(),
        );
    };
    let (l, u, e) = (lo - 1.0, hi - 1.0, estimate - 1.0);
    let pct = |x: f64| crate::percent(x, false);
    if l > 0.0 {
        let q = if l > threshold {
            format!("≥ threshold {}", pct(threshold))
        } else if u < threshold {
            format!("negligible (< {})", pct(threshold))
        } else {
            format!("magnitude vs {} unresolved", pct(threshold))
        };
        (
            Verdict::Slower,
            format!("SLOWER by {} (CI {} to {}), {q}", pct(e), pct(l), pct(u)),
        )
    } else if u < 0.0 {
        let q = if -u > threshold {
            format!("≥ threshold {}", pct(threshold))
        } else if -l < threshold {
            format!("negligible (< {})", pct(threshold))
        } else {
            format!("magnitude vs {} unresolved", pct(threshold))
        };
        (
            Verdict::Faster,
            format!("FASTER by {} (CI {} to {}), {q}", pct(-e), pct(-u), pct(-l)),
        )
    } else if -threshold < l && u < threshold {
        (
            Verdict::Same,
            format!(
                "SAME within ±{} (CI {} to {})",
                pct(threshold),
                pct(l),
                pct(u)
            ),
        )
    } else {
        (
            Verdict::Inconclusive,
            format!("INCONCLUSIVE (CI {} to {})", pct(l), pct(u)),
        )
    }
}

fn look(d: &[f64], level_alpha: f64, threshold: f64) -> Look {
    let hl = hodges_lehmann(d).unwrap_or(0.0);
    let ci = ratio_ci(d, level_alpha);
    Look {
        pairs: d.len(),
        ratio: hl.exp(),
        ci,
        level: 1.0 - level_alpha,
        verdict: verdict(hl.exp(), ci, threshold).0,
    }
}

/// The planned look sizes: n₀·2^j up to the maximum, and the maximum itself.
pub fn planned_looks(min: usize, max: usize) -> Vec<usize> {
    let mut v = Vec::new();
    let mut n = min.max(1);
    while n < max {
        v.push(n);
        n *= 2;
    }
    v.push(max);
    v
}

/// ρ of the sign-count confidence sequence, tightest near `n_star` pairs.
fn watch_rho(n_star: usize, alpha: f64) -> f64 {
    let l = (1.0 / alpha).ln();
    (n_star as f64 / 4.0) / (2.0 * l + (1.0 + 2.0 * l).ln())
}

/// The sign-count confidence sequence on the median after `n` pairs, as the 1-based order
/// statistics `(lo, hi)` of the first `n` values that bound it; `None` while it is unbounded.
fn watch_bounds(n: usize, alpha: f64, rho: f64) -> Option<(usize, usize)> {
    let nf = n as f64;
    let v = nf / 4.0 + rho;
    let b = (v * (v / (rho * alpha * alpha)).ln()).sqrt();
    let jlo = (nf / 2.0 - b).floor() + 1.0;
    let jhi = (nf / 2.0 + b).ceil() - 1.0;
    if !(jlo >= 1.0 && jhi + 1.0 <= nf) {
        return None;
    }
    Some((jlo as usize, jhi as usize + 1))
}

/// What the runner should do after `n` pairs.
#[derive(Clone, Debug, PartialEq)]
pub enum Next {
    /// Take more pairs.
    Continue,
    /// Stop; the analysis is final.
    Stop(Box<Analysis>),
}

/// Replays the stopping rule over `pairs` in order and returns the analysis at the first stop
/// (or at the last pair). Deterministic: the same pairs always give the same answer.
pub fn analyze(pairs: &[Pair], design: &Design) -> Analysis {
    let d = log_ratios(pairs, design.direction);
    let n_all = d.len();
    let mut looks = Vec::new();
    let (mut used, mut final_look, mut stopped_by) = (n_all, None, String::new());
    match design.stop {
        StopRule::Fixed => {
            final_look = Some(look(&d, design.alpha, design.threshold));
            stopped_by = "fixed: all pairs".into();
        }
        StopRule::Auto { resolution } => {
            let plan = planned_looks(design.min_pairs, design.max_pairs);
            let k = plan.len() as f64;
            for &n in plan.iter().filter(|&&n| n <= n_all) {
                let l = look(&d[..n], design.alpha / k, design.threshold);
                looks.push(l.clone());
                let decisive = l.verdict != Verdict::Inconclusive;
                let narrow = half_width(l.ci).is_some_and(|h| h <= resolution);
                if decisive || narrow {
                    used = n;
                    stopped_by = if decisive {
                        format!("decisive verdict at look {n}")
                    } else {
                        format!(
                            "resolution ±{} reached at {n}",
                            crate::percent(resolution, false)
                        )
                    };
                    final_look = Some(l);
                    break;
                }
            }
            if final_look.is_none() {
                let l = look(&d, design.alpha / k, design.threshold);
                stopped_by = if n_all >= design.max_pairs {
                    "maximum pairs reached".into()
                } else {
                    format!("data ends at {n_all} pairs, before the last planned look")
                };
                final_look = Some(l);
            }
        }
        StopRule::Until { resolution } => {
            // Incremental: a full interval only where the counts cannot rule the width out.
            let start = design.min_pairs.max(2);
            match crate::until::first_narrow(&d, start, design.alpha, resolution) {
                Some(n) => {
                    let l = look(&d[..n], design.alpha, design.threshold);
                    used = n;
                    stopped_by = format!(
                        "resolution ±{} reached at {n} pairs",
                        crate::percent(resolution, false)
                    );
                    looks.push(l.clone());
                    final_look = Some(l);
                }
                None => {
                    stopped_by = "resolution not reached".into();
                    final_look = Some(look(&d, design.alpha, design.threshold));
                }
            }
        }
        StopRule::Watch => {
            let rho = watch_rho(design.max_pairs, design.alpha);
            let mut cs = (f64::NEG_INFINITY, f64::INFINITY);
            // Incremental: one sort of all pairs, then O(log n) per pair (no sort per prefix).
            let mut prefix = Prefix::new(&d);
            for n in 1..=n_all {
                prefix.push(n - 1);
                let bounds = watch_bounds(n, design.alpha, rho)
                    .and_then(|(lo, hi)| Some((prefix.kth(lo)?, prefix.kth(hi)?)));
                if let Some((lo, hi)) = bounds {
                    cs = (cs.0.max(lo), cs.1.min(hi));
                }
                if cs.0.is_finite() && cs.1.is_finite() {
                    let ci = Some((cs.0.exp(), cs.1.exp()));
                    let hl = prefix.median(n).unwrap_or(0.0);
                    let (v, _) = verdict(hl.exp(), ci, design.threshold);
                    if v != Verdict::Inconclusive {
                        used = n;
                        stopped_by = format!("confidence sequence decisive at {n} pairs");
                        final_look = Some(Look {
                            pairs: n,
                            ratio: hl.exp(),
                            ci,
                            level: 1.0 - design.alpha,
                            verdict: v,
                        });
                        break;
                    }
                }
            }
            if final_look.is_none() {
                stopped_by = "confidence sequence not decisive".into();
                let hl = median(&d).unwrap_or(0.0);
                let ci = (cs.0.is_finite() && cs.1.is_finite()).then(|| (cs.0.exp(), cs.1.exp()));
                final_look = Some(Look {
                    pairs: n_all,
                    ratio: hl.exp(),
                    ci,
                    level: 1.0 - design.alpha,
                    verdict: verdict(hl.exp(), ci, design.threshold).0,
                });
            }
        }
    }
    let fl = final_look.unwrap_or_else(|| look(&d, design.alpha, design.threshold));
    let du = &d[..used];
    let (v, text) = verdict(fl.ratio, fl.ci, design.threshold);
    let resolution = half_width(fl.ci);
    let mde = resolution.map(|h| h * if used < 10 { 1.5 } else { 1.43 });
    let noise_sd = robust_sd(du);
    let med = median(du).unwrap_or(0.0);
    let mad = noise_sd.map(|s| s / 1.4826).unwrap_or(0.0);
    let outliers = du
        .iter()
        .filter(|x| mad > 0.0 && (*x - med).abs() > 5.0 * mad)
        .count();
    let mut warnings = Vec::new();
    if outliers * 10 > used.max(1) {
        warnings.push(format!(
            "{outliers} of {used} pairs are outliers (|d − median| > 5·MAD): the run is unstable"
        ));
    }
    if fl.ci.is_none() {
        warnings.push(format!(
            "no interval exists with {used} pairs at level {:.4}",
            fl.level
        ));
    }
    let target = match design.stop {
        StopRule::Auto { resolution } | StopRule::Until { resolution } => Some(resolution),
        _ => None,
    };
    let pairs_for_resolution = match (resolution, target) {
        (Some(h), Some(r)) if r > 0.0 => Some(((used as f64) * (h / r).powi(2)).ceil() as usize),
        _ => None,
    };
    Analysis {
        pairs: used,
        pairs_available: n_all,
        ratio: fl.ratio,
        ci: fl.ci,
        level: fl.level,
        verdict: v,
        verdict_text: text,
        threshold: Some(design.threshold),
        resolution,
        mde,
        sign_ci: sign_ci(du, 1.0 - fl.level).map(|(l, h)| (l.exp(), h.exp())),
        looks,
        stopped_by,
        noise_sd,
        outliers,
        order_effect: order_effect(&pairs[..used], design),
        drift: drift(&pairs[..used]),
        pairs_for_resolution,
        warnings,
    }
}

/// The second-in-pair effect: (HL of d over AB pairs − HL of d over BA pairs) / 2.
pub fn order_effect(pairs: &[Pair], design: &Design) -> Option<OrderEffect> {
    let d = log_ratios(pairs, design.direction);
    let ab: Vec<f64> = d
        .iter()
        .zip(pairs)
        .filter(|(_, p)| p.order == Order::AB)
        .map(|(x, _)| *x)
        .collect();
    let ba: Vec<f64> = d
        .iter()
        .zip(pairs)
        .filter(|(_, p)| p.order == Order::BA)
        .map(|(x, _)| *x)
        .collect();
    if ab.len() < 2 || ba.len() < 2 {
        return None;
    }
    let (est, lo, hi) = shift_estimate(&ab, &ba, design.alpha)?;
    Some(OrderEffect {
        estimate: est / 2.0,
        ci: (lo / 2.0, hi / 2.0),
    })
}

/// Baseline drift: Kendall's tau against time, and last-quarter over first-quarter medians.
pub fn drift(pairs: &[Pair]) -> Option<Drift> {
    let a: Vec<f64> = pairs.iter().map(|p| p.a).collect();
    if a.len() < 8 {
        return None;
    }
    let q = a.len() / 4;
    let first = median(&a[..q])?;
    let last = median(&a[a.len() - q..])?;
    Some(Drift {
        tau: kendall_tau(&a)?,
        change: last / first - 1.0,
    })
}

/// A/A calibration: does the harness show a difference between two identical slots?
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AaCheck {
    /// The A/A analysis (fixed design at 1 − α).
    pub analysis: Analysis,
    /// True when the A/A interval excludes 1: the harness itself differs between slots.
    pub harness_bias: bool,
}

/// Analyses A/A pairs (the baseline in both slots).
pub fn aa_check(pairs: &[Pair], design: &Design) -> AaCheck {
    let fixed = Design {
        stop: StopRule::Fixed,
        ..*design
    };
    let analysis = analyze(pairs, &fixed);
    let harness_bias = analysis.ci.is_some_and(|(lo, hi)| lo > 1.0 || hi < 1.0);
    AaCheck {
        analysis,
        harness_bias,
    }
}

/// What a live runner should do after `pairs`: stop once the replayed stopping rule stops at
/// or before the last pair (a resumed run whose earlier pairs already stopped stops at once),
/// or at the maximum.
pub fn next(pairs: &[Pair], design: &Design) -> Next {
    let n = pairs.len();
    if n >= design.max_pairs {
        return Next::Stop(Box::new(analyze(pairs, design)));
    }
    if design.stop == StopRule::Fixed || n < design.min_pairs {
        return Next::Continue;
    }
    let a = analyze(pairs, design);
    let open = a.stopped_by.starts_with("data ends")
        || a.stopped_by == "resolution not reached"
        || a.stopped_by == "confidence sequence not decisive";
    if open {
        Next::Continue
    } else {
        Next::Stop(Box::new(a))
    }
}
