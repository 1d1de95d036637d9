//! Request impact: what a kernel's measured change does to the request it runs in.
//!
//! From a profile of the request (the family's share of kernel time and of busy time) and a
//! `kernel run` of that kernel (ratio candidate / baseline with its interval), the predicted
//! change of request kernel time is `share × (ratio − 1)` (equivalently, a saving of
//! `share × (1 − 1/speedup)`), carried through the interval's ends; the same change in
//! nanoseconds bounds the change of GPU busy time and of wall time. Measurements of the request
//! (a `compare` of profiles, an `ab` of the request) are then checked against the prediction;
//! each source is one function returning [`Measured`], so a new record kind (serving
//! benchmarks) plugs in as one more such function.
//!
//! Sign convention of every change: (candidate − baseline) / baseline.

use crate::format::{duration_ns, percent};
use crate::kinds::ab::AbBody;
use crate::kinds::compare::CompareBody;
use crate::kinds::kernel_run::KernelRunBody;
use crate::kinds::profile::ProfileBody;
use crate::table::{Align, Block, Table};
use kernelab_stats::{Change, Interval};
use kernelab_trace::FamilyDelta;
use serde::{Deserialize, Serialize};

mod record;

/// Why no prediction could be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImpactError {
    /// The kernel run has no timing analysis (a gate failed).
    #[error("the kernel run has no timing analysis (a gate failed, so timing was skipped)")]
    NoTiming,
    /// The family is not among the profile's rows.
    #[error("family `{family}` is not among the profile's {rows} rows (folded into `other` or absent; name it with --family, or re-profile with a larger --top); rows: {names}")]
    NoFamily {
        /// The family looked for.
        family: String,
        /// How many rows the profile has.
        rows: usize,
        /// The first few row names.
        names: String,
    },
    /// The profile has no kernel time.
    #[error("the profile has no kernel time")]
    EmptyProfile,
}

/// A predicted or measured figure with its interval: a change (a fraction, ratio − 1) or
/// nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Estimate {
    /// The point estimate; for changes, candidate / baseline − 1.
    pub value: f64,
    /// Its interval `{low, high}`; null when there is none.
    pub interval: Option<Interval>,
}

impl Estimate {
    /// The change (ratio − 1) of a [`Change`] with its interval; `None` when unavailable.
    pub fn of_change(c: &Change) -> Option<Estimate> {
        Some(Estimate {
            value: c.change()?,
            interval: c.change_interval(),
        })
    }
    /// `x` times this change (and its interval), ordered low to high.
    fn scaled(self, x: f64) -> Estimate {
        Estimate {
            value: self.value * x,
            interval: self.interval.and_then(|i| {
                Interval::new((i.low * x).min(i.high * x), (i.low * x).max(i.high * x))
            }),
        }
    }
}

/// A measurement of the request set against the prediction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Measured {
    /// What measured it: the record kind and label (`compare gdn_w4s3_run1`).
    pub source: String,
    /// The figure: `family kernel time`, `request kernel time`, or the A/B metric.
    pub figure: String,
    /// The measured change (candidate / baseline − 1) with its interval or run-to-run range
    /// (null when one run per side leaves the noise unknown).
    pub change: Estimate,
    /// The range of the change the prediction allows for this figure.
    pub predicted: Interval,
    /// Whether the measurement's interval overlaps the predicted range; null when unknown.
    pub consistent: Option<bool>,
}

/// The predicted request impact of one kernel change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Impact {
    /// The family (or kernel name) matched in the profile.
    pub family: String,
    /// The kernel run's symbol.
    pub symbol: String,
    /// The family's calls in the profile.
    pub calls: u64,
    /// The family's total time in the profile, ns.
    pub family_ns: u64,
    /// The request's kernel time, ns.
    pub kernel_time_ns: u64,
    /// The request's GPU busy time, ns (null when the profile lacks it).
    pub busy_ns: Option<u64>,
    /// The request's trace wall time, ns (null when the profile lacks it).
    pub wall_ns: Option<u64>,
    /// The family's share of kernel time (the profile's stored shares, summed over its rows).
    pub share: f64,
    /// The family's time over GPU busy time (can exceed `share` when streams overlap).
    pub busy_share: Option<f64>,
    /// The kernel run's candidate / baseline time: `ratio`, `change`, `interval`.
    pub kernel_run: Change,
    /// The kernel's own change: ratio − 1.
    pub kernel: Estimate,
    /// Predicted change of request kernel time: share × (ratio − 1).
    pub request: Estimate,
    /// Predicted change of request kernel time, ns.
    pub delta_ns: Estimate,
    /// Bound on the change of GPU busy time: the same nanoseconds over busy time (the busy
    /// time changes by at most this much, less where other streams hide the kernel).
    pub busy_bound: Option<Estimate>,
    /// Bound on the change of wall time: the same nanoseconds over the trace wall.
    pub wall_bound: Option<Estimate>,
    /// Measurements of the request checked against the prediction.
    pub measured: Vec<Measured>,
}

impl kernelab_model::Body for Impact {
    const KIND: &'static str = "impact";
}

/// Whether a profile row belongs to the family `f`.
fn row_matches(name: &str, family: &str, f: &str) -> bool {
    family == f || name == f
}

/// Predicts the request impact of `run` from the request `profile`. The family is `family`
/// when given, else the kernel run's baseline symbol, matched against each row's family and
/// name (then, for symbols the family rules shortened, rows whose name contains the symbol).
pub fn predict(
    profile: &ProfileBody,
    run: &KernelRunBody,
    family: Option<&str>,
) -> Result<Impact, ImpactError> {
    let a = run.run.analysis.as_ref().ok_or(ImpactError::NoTiming)?;
    let symbol = run
        .run
        .builds
        .first()
        .map(|b| b.symbol.clone())
        .unwrap_or_default();
    let wanted = family.unwrap_or(&symbol);
    let sm = &profile.summary;
    if sm.kernel_time_ns == 0 {
        return Err(ImpactError::EmptyProfile);
    }
    let mut rows: Vec<_> = profile
        .kernels
        .iter()
        .filter(|r| row_matches(&r.name, &r.family, wanted))
        .collect();
    if rows.is_empty() && family.is_none() && !symbol.is_empty() {
        rows = profile
            .kernels
            .iter()
            .filter(|r| r.name.contains(&symbol))
            .collect();
    }
    let Some(first) = rows.first() else {
        return Err(ImpactError::NoFamily {
            family: wanted.to_string(),
            rows: profile.kernels.len(),
            names: profile
                .kernels
                .iter()
                .take(8)
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        });
    };
    let family_name = if rows.len() == 1 {
        first.name.clone()
    } else {
        first.family.clone()
    };
    let family_ns: u64 = rows.iter().map(|r| r.total_ns).sum();
    let calls: u64 = rows.iter().map(|r| r.calls).sum();
    let share: f64 = rows.iter().map(|r| r.share).sum();
    let kernel = Estimate::of_change(&a.change).ok_or(ImpactError::NoTiming)?;
    let request = kernel.scaled(share);
    let delta_ns = kernel.scaled(family_ns as f64);
    let over = |d: Option<u64>| {
        d.filter(|&d| d > 0)
            .map(|d| kernel.scaled(family_ns as f64 / d as f64))
    };
    Ok(Impact {
        family: family_name,
        symbol,
        calls,
        family_ns,
        kernel_time_ns: sm.kernel_time_ns,
        busy_ns: sm.busy_ns,
        wall_ns: sm.wall_ns,
        share,
        busy_share: sm
            .busy_ns
            .filter(|&b| b > 0)
            .map(|b| family_ns as f64 / b as f64),
        kernel_run: a.change.clone(),
        kernel,
        request,
        delta_ns,
        busy_bound: over(sm.busy_ns),
        wall_bound: over(sm.wall_ns),
        measured: Vec::new(),
    })
}

/// The predicted range of a change: its interval, else the point.
fn range(c: Estimate) -> Interval {
    c.interval.unwrap_or(Interval {
        low: c.value,
        high: c.value,
    })
}

fn measured(source: &str, figure: &str, change: Estimate, predicted: Interval) -> Measured {
    Measured {
        source: source.to_string(),
        figure: figure.to_string(),
        change,
        predicted,
        consistent: change.interval.map(|i| i.overlaps(predicted)),
    }
}

/// The run-to-run range of a family's change: (cand min / base max − 1, cand max / base min − 1).
fn family_range(f: &FamilyDelta, runs: bool) -> Option<Interval> {
    (runs && f.base.total_max_ns > 0.0 && f.base.total_min_ns > 0.0)
        .then(|| {
            Interval::new(
                f.cand.total_min_ns / f.base.total_max_ns - 1.0,
                f.cand.total_max_ns / f.base.total_min_ns - 1.0,
            )
        })
        .flatten()
}

/// Measurements from a `compare` of request profiles that holds the family: the family's own
/// change against the kernel run's, and, when the comparison is of the profiled request
/// (`same_request`), the request kernel time's change against the prediction (with the
/// run-to-run spread of every family as its range; unknown with one run per side).
pub fn from_compare(
    impact: &Impact,
    source: &str,
    c: &CompareBody,
    same_request: bool,
) -> Vec<Measured> {
    let cmp = &c.comparison;
    let Some(f) = cmp
        .families
        .iter()
        .find(|f| f.family == impact.family || f.family == impact.symbol)
    else {
        return Vec::new();
    };
    let runs = cmp.base_runs > 1 && cmp.cand_runs > 1;
    let mut out = Vec::new();
    if let Some(change) = f.change.change() {
        out.push(measured(
            source,
            "family kernel time",
            Estimate {
                value: change,
                interval: family_range(f, runs),
            },
            range(impact.kernel),
        ));
    }
    let kt = cmp
        .summary
        .iter()
        .find(|s| same_request && s.figure == "kernel_time_ns");
    if let Some((Some(b), Some(cd))) = kt.map(|s| (s.baseline, s.candidate)) {
        if b > 0.0 {
            let change = cd / b - 1.0;
            let spread: f64 = cmp
                .families
                .iter()
                .chain(&cmp.other)
                .map(|f| {
                    (f.base.total_max_ns - f.base.total_min_ns)
                        .max(f.cand.total_max_ns - f.cand.total_min_ns)
                })
                .sum::<f64>()
                / b;
            out.push(measured(
                source,
                "request kernel time",
                Estimate {
                    value: change,
                    interval: runs
                        .then(|| Interval::new(change - spread, change + spread))
                        .flatten(),
                },
                range(impact.request),
            ));
        }
    }
    out
}

/// A measurement from an `ab` run of the request (its primary metric, taken as wall time):
/// the prediction allows a change between 0 (the kernel hidden behind other work) and the wall
/// bound (every nanosecond on the critical path).
pub fn from_ab(impact: &Impact, source: &str, ab: &AbBody) -> Option<Measured> {
    let m = ab.result.analyses.first()?;
    let bound = range(impact.wall_bound?);
    let predicted = Interval::new(bound.low.min(0.0), bound.high.max(0.0))?;
    Some(measured(
        source,
        &m.metric,
        Estimate::of_change(&m.analysis.change)?,
        predicted,
    ))
}

/// A change with its interval: `+2.76% [+2.70%, +2.84%]`.
pub fn change_text(c: Estimate) -> String {
    match c.interval {
        Some(i) => format!(
            "{} [{}, {}]",
            percent(c.value, true),
            percent(i.low, true),
            percent(i.high, true)
        ),
        None => percent(c.value, true),
    }
}

/// The one-line verdict on a measurement: consistent, inconsistent, or noise unknown.
pub fn consistency_text(m: &Measured) -> &'static str {
    match m.consistent {
        Some(true) => "consistent with the prediction",
        Some(false) => "NOT consistent with the prediction",
        None => "noise unknown (one run per side): consistency not judged",
    }
}

/// The prediction as lines (the family, its shares, the kernel's change, the predicted request
/// change and the bounds), each figure computed once in [`predict`].
pub fn impact_lines(i: &Impact) -> Vec<String> {
    let ns = |c: Estimate| match c.interval {
        Some(i) => format!(
            "{} [{}, {}]",
            signed_duration(c.value),
            signed_duration(i.low),
            signed_duration(i.high)
        ),
        None => signed_duration(c.value),
    };
    let mut lines = vec![
        format!(
            "`{}`: {} calls, {} of {} request kernel time ({} share){}",
            i.family,
            crate::format::thousands(i.calls),
            duration_ns(i.family_ns as f64),
            duration_ns(i.kernel_time_ns as f64),
            percent(i.share, false),
            i.busy_share
                .map(|b| format!("; {} of GPU busy time", percent(b, false)))
                .unwrap_or_default()
        ),
        format!(
            "kernel time change (kernel run, candidate / baseline − 1): {}",
            change_text(i.kernel)
        ),
        format!(
            "predicted request kernel time change (share × (ratio − 1)): {} = {}",
            change_text(i.request),
            ns(i.delta_ns)
        ),
    ];
    if let (Some(b), Some(busy)) = (i.busy_bound, i.busy_ns) {
        lines.push(format!(
            "bound on GPU busy time change: at most {} of {}",
            change_text(b),
            duration_ns(busy as f64)
        ));
    }
    if let (Some(w), Some(wall)) = (i.wall_bound, i.wall_ns) {
        lines.push(format!(
            "bound on wall time change: at most {} of {} trace wall (0 where other work hides the kernel)",
            change_text(w),
            duration_ns(wall as f64)
        ));
    }
    lines
}

use crate::format::signed_duration_ns as signed_duration;

/// The measurements as a table: source, figure, measured change, predicted range, verdict.
pub fn measured_table(i: &Impact) -> Option<Table> {
    if i.measured.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "Measured against predicted (change = (candidate − baseline) / baseline)",
        &[
            ("source", Align::Left),
            ("figure", Align::Left),
            ("measured", Align::Right),
            ("predicted", Align::Right),
            ("verdict", Align::Left),
        ],
    );
    for m in &i.measured {
        t.push(vec![
            m.source.clone(),
            m.figure.clone(),
            change_text(m.change),
            format!(
                "[{}, {}]",
                percent(m.predicted.low, true),
                percent(m.predicted.high, true)
            ),
            consistency_text(m).to_string(),
        ]);
    }
    Some(t)
}

/// The prediction as report sections (terminal and Markdown output of `kernelab impact`).
pub fn impact_sections(i: &Impact) -> Vec<Block> {
    let mut s = vec![Block::List {
        title: format!("Request impact of `{}`", i.symbol),
        lines: impact_lines(i),
    }];
    s.extend(measured_table(i).map(Block::Table));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_scale_and_order_their_intervals() {
        let c = Estimate {
            value: -0.2,
            interval: Interval::new(-0.3, -0.1),
        };
        let s = c.scaled(0.5);
        assert!((s.value + 0.1).abs() < 1e-12);
        let i = s.interval.expect("interval");
        assert!((i.low + 0.15).abs() < 1e-12 && (i.high + 0.05).abs() < 1e-12);
        // A negative factor flips the ends back into order.
        let i = c.scaled(-1.0).interval.expect("interval");
        assert!(i.low < i.high);
        assert_eq!(change_text(s), "-10.00% [-15.00%, -5.00%]");
        let (a, b) = (
            Interval::new(0.0, 1.0).expect("interval"),
            Interval::new(1.0, 2.0).expect("interval"),
        );
        assert!(a.overlaps(b) && !Interval::new(0.0, 0.9).expect("interval").overlaps(b));
    }
}
