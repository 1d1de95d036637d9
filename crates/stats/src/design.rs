//! The A/B design of `docs/ab-statistics.md`: paired log ratios, Hodges–Lehmann with
//! the exact Wilcoxon interval, three-way verdicts against a threshold, planned looks with
//! Bonferroni, `--until` (width only), `--watch` (anytime-valid sign-count confidence sequence),
//! and the diagnostics (A/A, order effect, drift, outliers, resolution, MDE).

use crate::change::{Change, Direction, Interval};
use crate::order::Prefix;
use crate::rank::{hodges_lehmann, kendall_tau, median, robust_sd, shift_estimate, sign_ci};
use crate::until::{half_width, ratio_ci};
use serde::{Deserialize, Serialize};

/// Which run of a pair came first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Pair {
    /// Which ran first.
    pub order: Order,
    /// Baseline value.
    pub a: f64,
    /// Candidate value.
    pub b: f64,
}

/// How to stop.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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

/// The three-way verdict, judged on the interval of the ratio against the practical threshold δ
/// and the metric's direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    /// The candidate is better (times lower, throughputs higher): the interval leaves ±δ on
    /// the better side of 1.
    Faster,
    /// The candidate is worse: the interval leaves ±δ on the worse side of 1.
    Slower,
    /// The whole interval of the change lies within ±δ (negligible, even when it excludes 0).
    Same,
    /// None of the above at this resolution.
    Inconclusive,
}

impl Verdict {
    /// Whether this verdict calls a change (FASTER or SLOWER).
    pub fn is_call(self) -> bool {
        matches!(self, Verdict::Faster | Verdict::Slower)
    }
    /// The verdict's name as written (`FASTER`, `SLOWER`, `SAME`, `INCONCLUSIVE`).
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Faster => "FASTER",
            Verdict::Slower => "SLOWER",
            Verdict::Same => "SAME",
            Verdict::Inconclusive => "INCONCLUSIVE",
        }
    }
}

/// The result at one look.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Look {
    /// Pairs used.
    pub pairs: usize,
    /// Candidate / baseline (exp of the HL estimate of the log ratios) with its interval, when
    /// one exists at this n and level.
    #[serde(flatten)]
    pub change: Change,
    /// Confidence level of the interval.
    pub level: f64,
    /// The verdict at this look.
    pub verdict: Verdict,
}

/// Order effect: how much slower the second run of a pair is, with its interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OrderEffect {
    /// Estimated second-in-pair effect (fraction).
    pub estimate: f64,
    /// Interval (fraction).
    pub interval: Interval,
}

/// Drift of the baseline over the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Drift {
    /// Kendall's tau of baseline values against time.
    pub tau: f64,
    /// Median of the last quarter of baseline values over the first quarter, minus 1.
    pub change: f64,
}

/// A complete analysis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Analysis {
    /// Pairs used for the final answer.
    pub pairs: usize,
    /// Pairs available.
    pub pairs_available: usize,
    /// Whether lower or higher values of the metric are better: the verdict's direction.
    pub direction: Direction,
    /// Candidate / baseline of the metric as measured (exp of the Hodges–Lehmann estimate of
    /// the per-pair log ratios), `change` = ratio − 1, and the interval on the ratio.
    #[serde(flatten)]
    pub change: Change,
    /// Confidence level used (Bonferroni-corrected under planned looks).
    pub level: f64,
    /// Verdict.
    pub verdict: Verdict,
    /// The practical threshold δ the verdict was judged against (fraction).
    pub threshold: f64,
    /// Resolution: half-width of the interval (fraction).
    pub resolution: Option<f64>,
    /// Minimum detectable effect at 80% power ≈ 1.43 · resolution (1.5 below 10 pairs).
    pub mde: Option<f64>,
    /// The sign-test interval on the ratio (of the median log ratio; no symmetry assumption).
    pub sign_interval: Option<Interval>,
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

impl Analysis {
    /// candidate / baseline, when there is an estimate.
    pub fn ratio(&self) -> Option<f64> {
        self.change.ratio()
    }
    /// The interval on the ratio, when one exists.
    pub fn interval(&self) -> Option<Interval> {
        self.change.interval()
    }
    /// The verdict in words, from the figures (never stored apart from them).
    pub fn verdict_text(&self) -> String {
        verdict_text(self.verdict, &self.change, self.threshold)
    }
}

/// Per-pair log ratios d = ln(candidate / baseline), whatever the metric's direction.
pub fn log_ratios(pairs: &[Pair]) -> Vec<f64> {
    pairs.iter().map(|p| (p.b / p.a).ln()).collect()
}

/// Whether a pair can be analysed: both values finite and above 0 (a log ratio exists).
pub fn usable(p: &Pair) -> bool {
    p.a.is_finite() && p.b.is_finite() && p.a > 0.0 && p.b > 0.0
}

/// The verdict of a ratio's interval against the practical threshold δ (a fraction) and the
/// metric's direction: SAME when the whole interval of the change lies within ±δ (even when it
/// excludes 0); FASTER or SLOWER when it excludes 0 and leaves that band; else INCONCLUSIVE.
pub fn verdict(change: &Change, threshold: f64, direction: Direction) -> Verdict {
    let Some(i) = change.change_interval() else {
        return Verdict::Inconclusive;
    };
    let (l, u) = (i.low, i.high);
    let worse_up = direction == Direction::LowerIsBetter;
    if -threshold < l && u < threshold {
        Verdict::Same
    } else if l > 0.0 {
        if worse_up {
            Verdict::Slower
        } else {
            Verdict::Faster
        }
    } else if u < 0.0 {
        if worse_up {
            Verdict::Faster
        } else {
            Verdict::Slower
        }
    } else {
        Verdict::Inconclusive
    }
}

/// The verdict in words, always with the signed change (ratio − 1) of the estimate and its
/// interval: `SLOWER: change +16.36% [+15.99%, +16.81%], beyond ±1.00%`.
pub fn verdict_text(verdict: Verdict, change: &Change, threshold: f64) -> String {
    let pct = |x: f64| crate::percent(x, true);
    let band = crate::percent(threshold, false);
    let (Some(e), Some(i)) = (change.change(), change.change_interval()) else {
        return match change.change() {
            Some(e) => format!(
                "{}: change {} with too few pairs for an interval",
                verdict.name(),
                pct(e)
            ),
            None => format!(
                "{}: no estimate ({})",
                verdict.name(),
                change.unavailable_reason().unwrap_or("no pairs")
            ),
        };
    };
    let figures = format!("change {} [{}, {}]", pct(e), pct(i.low), pct(i.high));
    let qualifier = match verdict {
        Verdict::Same => format!("within ±{band} (negligible)"),
        Verdict::Faster | Verdict::Slower => {
            if i.low.abs().min(i.high.abs()) >= threshold {
                format!("beyond ±{band}")
            } else {
                format!("magnitude against ±{band} unresolved")
            }
        }
        Verdict::Inconclusive => format!("the interval holds 0 and leaves ±{band}"),
    };
    format!("{}: {figures}, {qualifier}", verdict.name())
}

fn estimate(hl: Option<f64>, ci: Option<(f64, f64)>) -> Change {
    match hl {
        Some(hl) => Change::from_ratio(hl.exp(), ci.and_then(Interval::from_pair)),
        None => Change::unavailable("no pairs"),
    }
}

fn look(d: &[f64], level_alpha: f64, design: &Design) -> Look {
    let change = estimate(hodges_lehmann(d), ratio_ci(d, level_alpha));
    Look {
        pairs: d.len(),
        verdict: verdict(&change, design.threshold, design.direction),
        change,
        level: 1.0 - level_alpha,
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
    let given = pairs.len();
    let kept: Vec<Pair>;
    let pairs = if pairs.iter().all(usable) {
        pairs
    } else {
        kept = pairs.iter().copied().filter(usable).collect();
        &kept[..]
    };
    let dropped = given - pairs.len();
    let d = log_ratios(pairs);
    let n_all = d.len();
    let mut looks = Vec::new();
    let (mut used, mut final_look, mut stopped_by) = (n_all, None, String::new());
    match design.stop {
        StopRule::Fixed => {
            final_look = Some(look(&d, design.alpha, design));
            stopped_by = "fixed: all pairs".into();
        }
        StopRule::Auto { resolution } => {
            let plan = planned_looks(design.min_pairs, design.max_pairs);
            let k = plan.len() as f64;
            for &n in plan.iter().filter(|&&n| n <= n_all) {
                let l = look(&d[..n], design.alpha / k, design);
                looks.push(l.clone());
                let decisive = l.verdict != Verdict::Inconclusive;
                let narrow = half_width(l.change.interval().map(|i| (i.low, i.high)))
                    .is_some_and(|h| h <= resolution);
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
                let l = look(&d, design.alpha / k, design);
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
                    let l = look(&d[..n], design.alpha, design);
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
                    final_look = Some(look(&d, design.alpha, design));
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
                    let change = estimate(prefix.median(n), Some((cs.0.exp(), cs.1.exp())));
                    let v = verdict(&change, design.threshold, design.direction);
                    if v != Verdict::Inconclusive {
                        used = n;
                        stopped_by = format!("confidence sequence decisive at {n} pairs");
                        final_look = Some(Look {
                            pairs: n,
                            change,
                            level: 1.0 - design.alpha,
                            verdict: v,
                        });
                        break;
                    }
                }
            }
            if final_look.is_none() {
                stopped_by = "confidence sequence not decisive".into();
                let ci = (cs.0.is_finite() && cs.1.is_finite()).then(|| (cs.0.exp(), cs.1.exp()));
                let change = estimate(median(&d), ci);
                final_look = Some(Look {
                    pairs: n_all,
                    verdict: verdict(&change, design.threshold, design.direction),
                    change,
                    level: 1.0 - design.alpha,
                });
            }
        }
    }
    let fl = final_look.unwrap_or_else(|| look(&d, design.alpha, design));
    let du = &d[..used];
    let fl_ci = fl.change.interval().map(|i| (i.low, i.high));
    let resolution = half_width(fl_ci);
    let mde = resolution.map(|h| h * if used < 10 { 1.5 } else { 1.43 });
    let noise_sd = robust_sd(du);
    let med = median(du).unwrap_or(0.0);
    let mad = noise_sd.map(|s| s / 1.4826).unwrap_or(0.0);
    let outliers = du
        .iter()
        .filter(|x| mad > 0.0 && (*x - med).abs() > 5.0 * mad)
        .count();
    let mut warnings = Vec::new();
    if dropped > 0 {
        warnings.push(format!(
            "{dropped} of {given} pairs left out: a value is not a finite number above 0 (no log ratio)"
        ));
    }
    if outliers * 10 > used.max(1) {
        warnings.push(format!(
            "{outliers} of {used} pairs are outliers (|d − median| > 5·MAD): the run is unstable"
        ));
    }
    if fl.change.interval().is_none() {
        warnings.push(format!(
            "no interval exists with {used} pairs at level {:.4}",
            fl.level
        ));
    }
    let target = match design.stop {
        StopRule::Auto { resolution } | StopRule::Until { resolution } => Some(resolution),
        _ => None,
    };
    let pairs_for_resolution = match (resolution, target, noise_sd) {
        // From the interval's width now: the half-width shrinks as 1/√n.
        (Some(h), Some(r), _) if r > 0.0 => Some(((used as f64) * (h / r).powi(2)).ceil() as usize),
        // No interval yet (too few pairs at this level): from the spread of the log ratios,
        // h ≈ z·sd/√n, and never fewer than the pairs an interval needs at this level.
        (None, Some(r), Some(sd)) if r > 0.0 && sd.is_finite() => {
            let z = crate::rank::normal_quantile(1.0 - (1.0 - fl.level) / 2.0);
            let n = ((z * sd / r).powi(2)).ceil();
            let least = crate::rank::min_pairs_for_interval(1.0 - fl.level).unwrap_or(1);
            (n.is_finite() && n < 1e12).then(|| (n as usize).max(least))
        }
        _ => None,
    };
    Analysis {
        pairs: used,
        pairs_available: n_all,
        direction: design.direction,
        verdict: fl.verdict,
        change: fl.change,
        level: fl.level,
        threshold: design.threshold,
        resolution,
        mde,
        sign_interval: sign_ci(du, 1.0 - fl.level)
            .and_then(|(l, h)| Interval::new(l.exp(), h.exp())),
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
    let d = log_ratios(pairs);
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
    if !est.is_finite() {
        return None;
    }
    Some(OrderEffect {
        estimate: est / 2.0,
        interval: Interval::new(lo / 2.0, hi / 2.0)?,
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    let harness_bias = analysis.change.interval().is_some_and(|i| !i.contains(1.0));
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
