//! One point's figures (one round, one server): each metric of the table
//! ([`kernelab_model::serve::metric`]) from the point's measured requests and wall time.

use super::client::Measured;
use super::spec::Slo;
use kernelab_model::serve::metric::{reported, Base, MetricDef, Statistic, METRICS};

/// Quantile `q` (0..=1) of sorted values, by linear interpolation.
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    let f = pos - lo as f64;
    Some(sorted[lo] * (1.0 - f) + sorted[hi] * f)
}

/// Whether a request meets every SLO given (an SLO on an unavailable figure is not met).
pub fn meets(m: &Measured, slo: &Slo) -> bool {
    let ok = |limit_ms: Option<f64>, v: Option<f64>| {
        limit_ms.is_none_or(|l| v.is_some_and(|v| v * 1e3 <= l))
    };
    ok(slo.ttft_ms, m.ttft_s) && ok(slo.tpot_ms, m.tpot_s()) && ok(slo.e2e_ms, Some(m.e2e_s))
}

/// A request's one figure of a latency base (TTFT, time to second token, TPOT, E2E); `None`
/// when unavailable or for a base that is not one figure per request (ITL, the totals).
pub fn request_latency(m: &Measured, base: Base) -> Option<f64> {
    match base {
        Base::Ttft => m.ttft_s,
        Base::Tt2t => m.tt2t_s,
        Base::Tpot => m.tpot_s(),
        Base::E2e => Some(m.e2e_s),
        Base::Itl | Base::Throughput | Base::Goodput | Base::Energy => None,
    }
}

/// The latencies of a base over the point's requests (every gap of every request for ITL),
/// sorted when some metric takes a quantile of them.
fn latencies(requests: &[&Measured], base: Base) -> Vec<f64> {
    let mut v: Vec<f64> = match base {
        Base::Itl => requests
            .iter()
            .flat_map(|m| m.itl_s.iter().copied())
            .collect(),
        _ => requests
            .iter()
            .filter_map(|m| request_latency(m, base))
            .collect(),
    };
    if METRICS
        .iter()
        .any(|d| d.base == base && d.statistic != Statistic::Mean)
    {
        v.sort_by(f64::total_cmp);
    }
    v
}

/// One latency metric's figure from its base's values.
fn summary(v: &[f64], statistic: Statistic) -> Option<f64> {
    match statistic {
        Statistic::Mean => (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64),
        Statistic::P50 => quantile(v, 0.5),
        Statistic::P90 => quantile(v, 0.9),
        Statistic::P99 => quantile(v, 0.99),
        Statistic::Total => None,
    }
}

/// The metrics of one point (one round, one server) from its measured requests, in the
/// table's order; goodput when an SLO is given. (Energy per token is the analysis's: it needs
/// the point's energy.)
pub fn point_metrics(
    requests: &[&Measured],
    wall_s: f64,
    slo: &Slo,
) -> Vec<(&'static str, Option<f64>)> {
    let mut values: Vec<(Base, Vec<f64>)> = Vec::new();
    let mut out = Vec::new();
    for def in reported(slo.any(), false) {
        out.push((def.name, figure(def, requests, wall_s, slo, &mut values)));
    }
    out
}

/// One metric's figure; `values` keeps each latency base's values once computed.
fn figure(
    def: &MetricDef,
    requests: &[&Measured],
    wall_s: f64,
    slo: &Slo,
    values: &mut Vec<(Base, Vec<f64>)>,
) -> Option<f64> {
    match def.base {
        Base::Throughput => {
            let tokens: u64 = requests.iter().filter_map(|m| m.tokens()).sum();
            (wall_s > 0.0 && tokens > 0).then(|| tokens as f64 / wall_s)
        }
        Base::Goodput => {
            let good = requests.iter().filter(|m| meets(m, slo)).count();
            (wall_s > 0.0 && !requests.is_empty()).then(|| good as f64 / wall_s)
        }
        Base::Energy => None,
        base => {
            let i = match values.iter().position(|(b, _)| *b == base) {
                Some(i) => i,
                None => {
                    values.push((base, latencies(requests, base)));
                    values.len() - 1
                }
            };
            summary(&values[i].1, def.statistic)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernelab_model::serve::metric::{metric, ENERGY_PER_TOKEN};

    #[test]
    fn quantiles_and_point_metrics() {
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.5), Some(2.5));
        assert_eq!(quantile(&[], 0.5), None);
        let a = Measured {
            ttft_s: Some(0.1),
            tt2t_s: Some(0.12),
            itl_s: vec![0.02, 0.02],
            e2e_s: 0.14,
            completion_tokens: Some(3),
            ..Default::default()
        };
        let slo = Slo {
            ttft_ms: Some(150.0),
            ..Default::default()
        };
        let m = point_metrics(&[&a, &a], 2.0, &slo);
        let get = |n: &str| m.iter().find(|x| x.0 == n).and_then(|x| x.1);
        assert_eq!(get("ttft_mean_s"), Some(0.1));
        assert!((get("tpot_mean_s").expect("tpot") - 0.02).abs() < 1e-12);
        assert_eq!(get("throughput_tok_s"), Some(3.0));
        assert_eq!(get("goodput_req_s"), Some(1.0));
        let strict = Slo {
            ttft_ms: Some(50.0),
            ..Default::default()
        };
        assert!(!meets(&a, &strict));
        let nostream = Measured {
            e2e_s: 1.0,
            completion_tokens: Some(3),
            ..Default::default()
        };
        let m = point_metrics(&[&nostream], 1.0, &Slo::default());
        let get = |n: &str| m.iter().find(|x| x.0 == n).and_then(|x| x.1);
        assert_eq!(get("ttft_mean_s"), None);
        assert_eq!(get("tpot_p99_s"), None);
        assert_eq!(get("e2e_mean_s"), Some(1.0));
    }

    /// Every metric a point or the analysis can emit is in the table, and every metric of the
    /// table is emitted by one of them: a point with an SLO, and the energy per token.
    #[test]
    fn every_emitted_metric_is_in_the_table_and_back() {
        let slo = Slo {
            ttft_ms: Some(1.0),
            ..Default::default()
        };
        let mut emitted: Vec<&str> = point_metrics(&[], 0.0, &slo)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        for n in &emitted {
            assert!(metric(n).is_some(), "{n} is not in the metric table");
        }
        emitted.push(ENERGY_PER_TOKEN);
        let table: Vec<&str> = METRICS.iter().map(|m| m.name).collect();
        assert_eq!(emitted, table);
        // Without an SLO there is no goodput; without streaming the streamed ones are empty.
        let plain = point_metrics(&[], 0.0, &Slo::default());
        assert!(plain
            .iter()
            .all(|(n, _)| !metric(n).is_some_and(|m| m.needs_slo)));
        let nostream = Measured {
            e2e_s: 1.0,
            completion_tokens: Some(3),
            ..Default::default()
        };
        for (n, v) in point_metrics(&[&nostream], 1.0, &slo) {
            let def = metric(n).expect("in the table");
            assert_eq!(v.is_none(), def.needs_stream, "{n}");
        }
    }
}
