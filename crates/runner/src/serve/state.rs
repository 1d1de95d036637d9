//! The server state behind a run's figures, per point and side: the warm-up to steady state,
//! the prefix cache's cached prompt tokens, and the servers' own metrics.

use super::client::Measured;
use super::point::{side, Key, MeasuredRequests, PointExtras, Requests};
use super::server_metrics::PointMetrics;
use super::spec::Spec;
use super::workload::RequestOutcome;
use crate::record::Slot;
use kernelab_model::seconds_to_ns;
use std::collections::BTreeMap;

fn median(v: Vec<f64>) -> Option<f64> {
    kernelab_stats::rank::median(&v)
}

/// The warm-up of every point and side over its starts, from the flagged warm-up requests.
pub fn warmup_curves(
    spec: &Spec,
    warmups: &Requests<'_>,
    measured: &MeasuredRequests<'_>,
    extras: &BTreeMap<Key, PointExtras>,
) -> Vec<kernelab_model::serve::WarmupCurve> {
    let first = |m: &Measured| m.ttft_s.unwrap_or(m.e2e_s);
    let mut out = Vec::new();
    for (c, k) in spec.points() {
        for slot in [Slot::A, Slot::B] {
            let starts: Vec<(&Key, &Vec<&RequestOutcome>)> = warmups
                .iter()
                .filter(|(key, _)| key.1 == slot && key.2 == c && key.3 == k)
                .collect();
            if starts.is_empty() {
                continue;
            }
            let longest = starts.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
            let at = |i: usize, f: &dyn Fn(&Measured) -> Option<f64>| -> Option<u64> {
                let v: Vec<f64> = starts
                    .iter()
                    .filter_map(|(_, w)| w.get(i)?.measured.as_ref().and_then(f))
                    .collect();
                median(v).map(seconds_to_ns)
            };
            let first_token_ns = (0..longest).map(|i| at(i, &|m| Some(first(m)))).collect();
            let tpot_ns = (0..longest).map(|i| at(i, &|m| m.tpot_s())).collect();
            let cold: Vec<f64> = starts
                .iter()
                .filter_map(|(key, w)| {
                    let cold = first(w.first()?.measured.as_ref()?);
                    let warm: Vec<f64> = measured
                        .get(key)?
                        .values()
                        .filter_map(|o| o.measured.as_ref().map(first))
                        .collect();
                    let warm = median(warm)?;
                    (warm > 0.0).then(|| cold / warm)
                })
                .collect();
            out.push(kernelab_model::serve::WarmupCurve {
                case: c,
                concurrency: k,
                server: side(slot),
                requests: starts.iter().map(|(_, w)| w.len()).collect(),
                not_steady: starts
                    .iter()
                    .filter(|(key, _)| extras.get(key).and_then(|e| e.steady) == Some(false))
                    .count(),
                first_token_ns,
                tpot_ns,
                cold_over_warm_ttft: median(cold),
            });
        }
    }
    out
}

/// The cached prompt tokens each side's measured requests reported, per point; empty when no
/// request reported any.
pub fn cache_states(
    spec: &Spec,
    measured: &MeasuredRequests<'_>,
) -> Vec<kernelab_model::serve::CacheState> {
    let mut out = Vec::new();
    for (c, k) in spec.points() {
        let mut cached = [None::<u64>; 2];
        let mut prompt = [0u64; 2];
        for (key, m) in measured.iter().filter(|(key, _)| key.2 == c && key.3 == k) {
            let i = usize::from(key.1 == Slot::B);
            for o in m.values().filter_map(|o| o.measured.as_ref()) {
                prompt[i] += o.prompt_tokens.unwrap_or(0);
                if let Some(t) = o.cached_tokens {
                    cached[i] = Some(cached[i].unwrap_or(0).saturating_add(t));
                }
            }
        }
        if cached.iter().all(Option::is_none) {
            continue;
        }
        // Differ: both sides reported, and their shares of prompt tokens served from the cache
        // differ by more than a percentage point (sides that ran different numbers of rounds
        // compare by share, not by total).
        let share = |i: usize| cached[i].map(|t| t as f64 / prompt[i].max(1) as f64);
        let differ = match (share(0), share(1)) {
            (Some(a), Some(b)) => (a - b).abs() > 0.01,
            _ => false,
        };
        out.push(kernelab_model::serve::CacheState {
            case: c,
            concurrency: k,
            baseline_cached_tokens: cached[0],
            candidate_cached_tokens: cached[1],
            prompt_tokens: prompt,
            differ,
        });
    }
    out
}

/// The servers' own metrics per point and side, summed over rounds.
pub fn server_metric_summaries(
    spec: &Spec,
    extras: &BTreeMap<Key, PointExtras>,
) -> Vec<kernelab_model::serve::ServerMetricsSummary> {
    let sum = |v: &mut Option<f64>, x: Option<f64>| {
        if let Some(x) = x {
            *v = Some(v.unwrap_or(0.0) + x);
        }
    };
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    let mut out = Vec::new();
    for (c, k) in spec.points() {
        for slot in [Slot::A, Slot::B] {
            let points: Vec<&PointMetrics> = extras
                .iter()
                .filter(|(key, _)| key.1 == slot && key.2 == c && key.3 == k)
                .filter_map(|(_, e)| e.server_metrics.as_ref())
                .collect();
            if points.is_empty() {
                continue;
            }
            let (mut hits, mut queries, mut kv, mut pre) = (None, None, None::<f64>, None);
            let (mut drafts, mut draft_tokens, mut accepted) = (None, None, None);
            for p in points.iter().filter(|p| p.unavailable.is_none()) {
                sum(&mut hits, p.prefix_cache_hits);
                sum(&mut queries, p.prefix_cache_queries);
                sum(&mut pre, p.preemptions);
                sum(&mut drafts, p.spec_drafts);
                sum(&mut draft_tokens, p.spec_draft_tokens);
                sum(&mut accepted, p.spec_accepted_tokens);
                if let Some(u) = p.kv_cache_usage {
                    kv = Some(kv.map_or(u, |m| m.max(u)));
                }
            }
            let failed: Vec<&String> = points
                .iter()
                .filter_map(|p| p.unavailable.as_ref())
                .collect();
            out.push(kernelab_model::serve::ServerMetricsSummary {
                case: c,
                concurrency: k,
                server: side(slot),
                points: points.len(),
                unavailable: failed.len(),
                unavailable_reason: failed.first().map(|s| (*s).clone()),
                prefix_cache_hit_rate: ratio(hits, queries),
                kv_cache_usage_max: kv,
                preemptions: pre,
                spec_acceptance_rate: ratio(accepted, draft_tokens),
                spec_acceptance_length: ratio(accepted, drafts).map(|r| 1.0 + r),
            });
        }
    }
    out
}
