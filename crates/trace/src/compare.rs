//! Comparing a baseline and a candidate: per-family deltas, whole-trace figures side by side,
//! and an honest noise statement from repeated runs or unchanged control families.

use crate::error::Result;
use crate::rank::{rank, RankOptions, Ranking};
use kernelab_model::{Change, Profile};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// How to compare.
#[derive(Clone, Debug, Default)]
pub struct CompareOptions {
    /// Compare graph replays per graph (the profiles must be read with
    /// `ReadOptions::graphs`).
    pub by_graph: bool,
    /// Grouping, rules and filters, as for ranking (`top` limits the rows shown).
    pub rank: RankOptions,
    /// Families whose code did not change: their deltas measure the run-to-run noise.
    pub controls: Vec<String>,
}

/// One side's figures for a family over its runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Side {
    /// Runs in which the family appears.
    pub present_runs: usize,
    /// Median over runs of the number of calls.
    pub calls: f64,
    /// Median over runs of the total time.
    pub total_ns: f64,
    /// Smallest total over runs.
    pub total_min_ns: f64,
    /// Largest total over runs.
    pub total_max_ns: f64,
    /// Median over runs of the share of that run's kernel time.
    pub share: f64,
}

/// The verdict on one family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Status {
    /// The candidate takes less time, beyond the noise.
    Faster,
    /// The candidate takes more time, beyond the noise.
    Slower,
    /// The change is not larger than the run-to-run spread.
    WithinNoise,
    /// One run per side and no controls: a change whose noise is unknown.
    Changed,
    /// Exactly the same total.
    Same,
    /// Only in the baseline.
    #[serde(rename = "only_baseline")]
    OnlyBase,
    /// Only in the candidate.
    OnlyCandidate,
}

/// Per-family comparison row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FamilyDelta {
    /// Family key (or kernel name with grouping `none`).
    pub family: String,
    /// Baseline figures.
    #[serde(rename = "baseline")]
    pub base: Side,
    /// Candidate figures.
    #[serde(rename = "candidate")]
    pub cand: Side,
    /// Candidate total minus baseline total (medians), ns.
    pub delta_ns: f64,
    /// Candidate total / baseline total (medians): `ratio`, `change` = ratio − 1, and
    /// `interval` (null: the totals are medians over runs, not a paired estimate).
    #[serde(flatten)]
    pub change: Change,
    /// The verdict.
    pub status: Status,
    /// Whether the user named this family as a control.
    pub control: bool,
}

/// A whole-trace figure on both sides (medians over runs; `None` when unavailable).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FigureDelta {
    /// Figure name (as in the profile summary: `kernel_time_ns`, `busy_ns`, ...).
    pub figure: String,
    /// Baseline.
    pub baseline: Option<f64>,
    /// Candidate.
    pub candidate: Option<f64>,
    /// Candidate / baseline.
    #[serde(flatten)]
    pub change: Change,
}

/// The result of comparing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Comparison {
    /// Runs on the baseline side.
    #[serde(rename = "baseline_runs")]
    pub base_runs: usize,
    /// Runs on the candidate side.
    #[serde(rename = "candidate_runs")]
    pub cand_runs: usize,
    /// Rows by combined total time, top N.
    pub families: Vec<FamilyDelta>,
    /// Rows below the top N, folded.
    pub other: Option<FamilyDelta>,
    /// Whole-trace figures.
    pub summary: Vec<FigureDelta>,
    /// Largest |change| among the control families, when controls were given.
    pub control_noise: Option<f64>,
    /// Exact kernel names seen only in the baseline.
    #[serde(rename = "only_baseline_names")]
    pub only_base_names: Vec<String>,
    /// Exact kernel names seen only in the candidate.
    #[serde(rename = "only_candidate_names")]
    pub only_cand_names: Vec<String>,
    /// Notes on how to read the figures.
    pub notes: Vec<String>,
    /// Graph replays compared per graph (`--by-graph`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graphs: Option<crate::GraphComparison>,
}

/// The workspace's median (`kernelab_stats`), 0 for no values.
fn median(v: &mut [f64]) -> f64 {
    kernelab_stats::rank::median(v).unwrap_or(0.0)
}

fn side(rankings: &[Ranking], family: &str) -> Side {
    let rows: Vec<Option<&crate::KernelRow>> = rankings
        .iter()
        .map(|r| r.rows.iter().find(|x| x.name == family))
        .collect();
    let mut totals: Vec<f64> = rows
        .iter()
        .map(|r| r.map_or(0.0, |x| x.total_ns as f64))
        .collect();
    let mut calls: Vec<f64> = rows
        .iter()
        .map(|r| r.map_or(0.0, |x| x.calls as f64))
        .collect();
    let mut shares: Vec<f64> = rows.iter().map(|r| r.map_or(0.0, |x| x.share)).collect();
    let min = totals.iter().copied().fold(f64::INFINITY, f64::min);
    let max = totals.iter().copied().fold(0.0, f64::max);
    Side {
        present_runs: rows.iter().filter(|r| r.is_some()).count(),
        calls: median(&mut calls),
        total_ns: median(&mut totals),
        total_min_ns: if min.is_finite() { min } else { 0.0 },
        total_max_ns: max,
        share: median(&mut shares),
    }
}

fn rank_all(profiles: &[Profile], options: &RankOptions) -> Result<Vec<Ranking>> {
    let all = RankOptions {
        top: usize::MAX,
        ..options.clone()
    };
    profiles.iter().map(|p| rank(p, &all)).collect()
}

fn status(
    base: &Side,
    cand: &Side,
    delta: f64,
    change: &Change,
    noise_runs: bool,
    control: Option<f64>,
) -> Status {
    if base.present_runs == 0 {
        return Status::OnlyCandidate;
    }
    if cand.present_runs == 0 {
        return Status::OnlyBase;
    }
    if delta == 0.0 {
        return Status::Same;
    }
    let spread = (base.total_max_ns - base.total_min_ns).max(cand.total_max_ns - cand.total_min_ns);
    let within_runs = noise_runs && delta.abs() <= spread;
    let within_control = matches!((control, change.change()), (Some(c), Some(x)) if x.abs() <= c);
    if within_runs || within_control {
        Status::WithinNoise
    } else if !noise_runs && control.is_none() {
        Status::Changed
    } else if delta < 0.0 {
        Status::Faster
    } else {
        Status::Slower
    }
}

/// Compares baseline runs with candidate runs (each profile is one run).
pub fn compare(base: &[Profile], cand: &[Profile], options: &CompareOptions) -> Result<Comparison> {
    let rb = rank_all(base, &options.rank)?;
    let rc = rank_all(cand, &options.rank)?;
    let families: BTreeSet<String> = rb
        .iter()
        .chain(&rc)
        .flat_map(|r| r.rows.iter().map(|x| x.name.clone()))
        .collect();
    let noise_runs = base.len() > 1 && cand.len() > 1;
    let mut raw: Vec<(String, Side, Side)> = families
        .into_iter()
        .map(|f| (f.clone(), side(&rb, &f), side(&rc, &f)))
        .collect();
    let change = |b: &Side, c: &Side| {
        if b.present_runs == 0 {
            Change::unavailable("only in the candidate")
        } else if c.present_runs == 0 {
            Change::unavailable("only in the baseline")
        } else {
            Change::between(b.total_ns, c.total_ns)
        }
    };
    let control_noise = if options.controls.is_empty() {
        None
    } else {
        let v: Vec<f64> = raw
            .iter()
            .filter(|(f, _, _)| options.controls.contains(f))
            .filter_map(|(_, b, c)| change(b, c).change().map(f64::abs))
            .collect();
        v.into_iter().reduce(f64::max)
    };
    raw.sort_by(|a, b| {
        (b.1.total_ns + b.2.total_ns)
            .total_cmp(&(a.1.total_ns + a.2.total_ns))
            .then_with(|| a.0.cmp(&b.0))
    });
    let row = |family: String, b: Side, c: Side| {
        let delta = c.total_ns - b.total_ns;
        let ch = change(&b, &c);
        FamilyDelta {
            control: options.controls.contains(&family),
            status: status(&b, &c, delta, &ch, noise_runs, control_noise),
            change: ch,
            delta_ns: delta,
            family,
            base: b,
            cand: c,
        }
    };
    let top = options.rank.top;
    let rest: Vec<(String, Side, Side)> = if raw.len() > top {
        raw.split_off(top)
    } else {
        Vec::new()
    };
    let other = (!rest.is_empty()).then(|| {
        let sum = |s: fn(&(String, Side, Side)) -> &Side| Side {
            present_runs: rest.iter().map(|r| s(r).present_runs).max().unwrap_or(0),
            calls: rest.iter().map(|r| s(r).calls).sum(),
            total_ns: rest.iter().map(|r| s(r).total_ns).sum(),
            total_min_ns: rest.iter().map(|r| s(r).total_min_ns).sum(),
            total_max_ns: rest.iter().map(|r| s(r).total_max_ns).sum(),
            share: rest.iter().map(|r| s(r).share).sum(),
        };
        row(
            format!(
                "other ({} {})",
                rest.len(),
                kernelab_model::plural(rest.len(), "row", "rows")
            ),
            sum(|r| &r.1),
            sum(|r| &r.2),
        )
    });
    let families: Vec<FamilyDelta> = raw.into_iter().map(|(f, b, c)| row(f, b, c)).collect();
    let figure = |name: &'static str, get: fn(&Ranking) -> Option<f64>| {
        let pick = |rs: &[Ranking]| {
            let mut v: Vec<f64> = rs.iter().filter_map(get).collect();
            (v.len() == rs.len() && !v.is_empty()).then(|| median(&mut v))
        };
        let (baseline, candidate) = (pick(&rb), pick(&rc));
        FigureDelta {
            figure: name.to_string(),
            baseline,
            candidate,
            change: Change::between_opt(baseline, candidate),
        }
    };
    let summary = vec![
        figure("kernel_time_ns", |r| Some(r.summary.kernel_time_ns as f64)),
        figure("busy_ns", |r| r.summary.busy_ns.map(|x| x as f64)),
        figure("wall_ns", |r| r.summary.wall_ns.map(|x| x as f64)),
        figure("gap_ns", |r| r.summary.gap_ns.map(|x| x as f64)),
        figure("kernel_count", |r| Some(r.summary.kernel_count as f64)),
        figure("memcpy_ns", |r| r.summary.memcpy_ns.map(|x| x as f64)),
        figure("memset_ns", |r| r.summary.memset_ns.map(|x| x as f64)),
    ];
    let names = |ps: &[Profile]| -> BTreeSet<String> {
        ps.iter()
            .flat_map(|p| {
                p.dispatches
                    .iter()
                    .map(|d| p.names.name(d.name).to_string())
            })
            .collect()
    };
    let (nb, nc) = (names(base), names(cand));
    let mut notes: Vec<String> = options.rank.filters.describe().into_iter().collect();
    if !noise_runs && options.controls.is_empty() {
        notes.push("one run per side and no --control families: the run-to-run noise is unknown, so changes are not judged; repeat with --base A1 A2 A3 --cand B1 B2 B3 or name unchanged families with --control".into());
    }
    if noise_runs {
        notes.push(format!(
            "{} baseline and {} candidate runs: figures are medians over runs; a delta no larger than the larger of the two sides' ranges (max − min) is within noise",
            base.len(),
            cand.len()
        ));
    }
    for c in &options.controls {
        if !rb
            .iter()
            .chain(&rc)
            .any(|r| r.rows.iter().any(|x| &x.name == c))
        {
            notes.push(format!("--control {c:?}: no such family in either input"));
        }
    }
    Ok(Comparison {
        base_runs: base.len(),
        cand_runs: cand.len(),
        families,
        other,
        summary,
        control_noise,
        only_base_names: nb.difference(&nc).cloned().collect(),
        only_cand_names: nc.difference(&nb).cloned().collect(),
        notes,
        graphs: options.by_graph.then(|| {
            let of = |side: &[Profile]| side.iter().map(crate::graphs).collect::<Vec<_>>();
            crate::compare_graphs(&of(base), &of(cand))
        }),
    })
}

/// Figures of a comparison by family name, for tests and callers.
pub fn by_family(c: &Comparison) -> BTreeMap<&str, &FamilyDelta> {
    c.families.iter().map(|f| (f.family.as_str(), f)).collect()
}
