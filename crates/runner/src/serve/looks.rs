//! The planned looks over rounds: after each look's rounds, how many primary metric × point
//! pairs are decided, the spreads between starts and within rounds, and the rounds predicted
//! for the resolution.

use super::analysis::analyse;
use super::figures::request_latency;
use super::samples::ServeRecord;
use super::spec::Spec;
use crate::record::Slot;
use kernelab_model::serve::metric::{metric, Base};
use kernelab_stats::Order;
use std::collections::BTreeMap;

/// A planned look after `rounds` complete rounds: how many primary metric × point pairs are
/// decided, the spreads, and the rounds predicted for the resolution; `true` when every one is
/// decided (the run may stop).
pub fn look(
    spec: &Spec,
    start: Order,
    records: &[ServeRecord],
    rounds: usize,
) -> (kernelab_model::serve::ServeLook, bool) {
    let result = analyse(spec, start, records);
    let resolution = spec.analysis.resolution.unwrap_or(0.0);
    let (mut decided, mut judged) = (0, 0);
    let (mut between, mut predicted): (Option<f64>, Option<usize>) = (None, None);
    for m in result.metrics.iter().filter(|m| m.primary) {
        judged += 1;
        let Some(a) = &m.analysis else { continue };
        if a.verdict != kernelab_stats::Verdict::Inconclusive
            || a.resolution.is_some_and(|h| h <= resolution)
        {
            decided += 1;
        }
        if let Some(sd) = a.noise_sd {
            between = Some(between.map_or(sd, |b: f64| b.max(sd)));
        }
        // Rounds for the resolution: from the interval's width now (n·(h/r)²), else, before an
        // interval exists, from the spread between starts (the design's one prediction).
        if let (Some(n), true) = (a.pairs_for_resolution, resolution > 0.0) {
            predicted = Some(predicted.map_or(n, |p| p.max(n)));
        }
    }
    let within = within_spread(spec, records);
    let look = kernelab_model::serve::ServeLook {
        rounds,
        decided,
        primary: judged,
        spread_between_starts: between,
        spread_within_rounds: within,
        rounds_for_resolution: predicted,
        round_wall_ns: None,
    };
    (look, judged > 0 && decided == judged)
}

/// The spread within rounds: per server start, the robust SD of the log of each measured
/// request's base figure (TTFT, TPOT or E2E, as the primary metrics name), median over starts;
/// the largest over the primary metrics.
fn within_spread(spec: &Spec, records: &[ServeRecord]) -> Option<f64> {
    let mut per: BTreeMap<(String, usize, Slot, usize, usize), Vec<f64>> = BTreeMap::new();
    for r in records {
        let ServeRecord::Request {
            round,
            slot,
            case,
            concurrency,
            outcome,
        } = r
        else {
            continue;
        };
        let Some(m) = outcome.measured.as_ref().filter(|_| !outcome.warmup) else {
            continue;
        };
        for name in &spec.analysis.primary {
            // The base figure of TTFT, TPOT and E2E metrics; the others have no spread here.
            let v = match metric(name).map(|d| d.base) {
                Some(b @ (Base::Ttft | Base::Tpot | Base::E2e)) => request_latency(m, b),
                _ => None,
            };
            if let Some(v) = v.filter(|v| *v > 0.0 && v.is_finite()) {
                per.entry((name.clone(), *round, *slot, *case, *concurrency))
                    .or_default()
                    .push(v.ln());
            }
        }
    }
    let mut by_metric: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for ((name, ..), v) in per {
        if let Some(sd) = kernelab_stats::rank::robust_sd(&v) {
            by_metric.entry(name).or_default().push(sd);
        }
    }
    by_metric
        .into_values()
        .filter_map(|v| kernelab_stats::rank::median(&v))
        .fold(None, |acc: Option<f64>, x| {
            Some(acc.map_or(x, |a| a.max(x)))
        })
}
