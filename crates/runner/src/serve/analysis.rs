//! From the samples file to the result: per round and server one figure per metric (mean,
//! median, p90, p99 over the round's requests), paired by round and analysed with
//! `kernelab_stats`; the output-identity gate; failures and the client guard.

use super::client::Measured;
use super::samples::ServeRecord;
use super::slot::{side, slot_name};
use super::spec::{Slo, Spec};
use crate::record::Slot;
use kernelab_model::seconds_to_ns;
use kernelab_model::serve::{
    FailureCause, Identity, RoundFigures, ServeMetric, ServeResult, ServeStart, Side, StartFailure,
};
use kernelab_stats::{analyze, Change, Design, Direction, Order, Pair, StopRule};
use std::collections::{BTreeMap, BTreeSet};

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

fn summaries(name: &str, mut v: Vec<f64>, out: &mut Vec<(String, Option<f64>)>) {
    v.sort_by(f64::total_cmp);
    let mean = (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    out.push((format!("{name}_mean_s"), mean));
    out.push((format!("{name}_p50_s"), quantile(&v, 0.5)));
    out.push((format!("{name}_p90_s"), quantile(&v, 0.9)));
    out.push((format!("{name}_p99_s"), quantile(&v, 0.99)));
}

/// Whether a request meets every SLO given (an SLO on an unavailable figure is not met).
pub fn meets(m: &Measured, slo: &Slo) -> bool {
    let ok = |limit_ms: Option<f64>, v: Option<f64>| {
        limit_ms.is_none_or(|l| v.is_some_and(|v| v * 1e3 <= l))
    };
    ok(slo.ttft_ms, m.ttft_s) && ok(slo.tpot_ms, m.tpot_s()) && ok(slo.e2e_ms, Some(m.e2e_s))
}

/// The metrics of one point (one round, one server) from its measured requests; goodput when
/// an SLO is given.
pub fn point_metrics(requests: &[&Measured], wall_s: f64, slo: &Slo) -> Vec<(String, Option<f64>)> {
    let mut out = Vec::new();
    let collect = |f: &dyn Fn(&Measured) -> Option<f64>| -> Vec<f64> {
        requests.iter().filter_map(|m| f(m)).collect()
    };
    summaries("ttft", collect(&|m| m.ttft_s), &mut out);
    let tt2t = collect(&|m| m.tt2t_s);
    out.push((
        "tt2t_mean_s".into(),
        (!tt2t.is_empty()).then(|| tt2t.iter().sum::<f64>() / tt2t.len() as f64),
    ));
    summaries("tpot", collect(&|m| m.tpot_s()), &mut out);
    let itl: Vec<f64> = requests
        .iter()
        .flat_map(|m| m.itl_s.iter().copied())
        .collect();
    summaries("itl", itl, &mut out);
    summaries("e2e", collect(&|m| Some(m.e2e_s)), &mut out);
    let tokens: u64 = requests.iter().filter_map(|m| m.tokens()).sum();
    out.push((
        "throughput_tok_s".into(),
        (wall_s > 0.0 && tokens > 0).then(|| tokens as f64 / wall_s),
    ));
    if slo.any() {
        let good = requests.iter().filter(|m| meets(m, slo)).count();
        out.push((
            "goodput_req_s".into(),
            (wall_s > 0.0 && !requests.is_empty()).then(|| good as f64 / wall_s),
        ));
    }
    out
}

fn median(v: Vec<f64>) -> Option<f64> {
    kernelab_stats::rank::median(&v)
}

type Key = (usize, Slot, usize, usize);

/// Analyses the records of a run of `spec` whose round 0 had order `start`.
pub fn analyse(spec: &Spec, start: Order, records: &[ServeRecord]) -> ServeResult {
    let mut complete: BTreeMap<Key, (f64, f64)> = BTreeMap::new();
    let mut send_lag: f64 = 0.0;
    let mut telemetry_note: Option<String> = None;
    let mut requests: BTreeMap<Key, Vec<&super::workload::RequestOutcome>> = BTreeMap::new();
    let mut warmups: BTreeMap<Key, Vec<&super::workload::RequestOutcome>> = BTreeMap::new();
    let mut extras: BTreeMap<Key, PointExtras> = BTreeMap::new();
    let mut energy_note: Option<String> = None;
    let mut starts: Vec<ServeStart> = Vec::new();
    let mut looks = Vec::new();
    let mut stopped_by: Option<String> = None;
    for r in records {
        match r {
            ServeRecord::Point {
                round,
                slot,
                case,
                concurrency,
                wall_s,
                guard,
                steady,
                server_metrics,
                energy_mj,
                energy_unavailable,
            } => {
                let key = (*round, *slot, *case, *concurrency);
                complete.insert(key, (*wall_s, guard.excess_lag_p99_s()));
                send_lag = send_lag.max(guard.send_lag_max_s);
                extras.insert(
                    key,
                    PointExtras {
                        steady: *steady,
                        server_metrics: server_metrics.clone(),
                        energy_mj: *energy_mj,
                    },
                );
                if let Some(why) = energy_unavailable {
                    energy_note.get_or_insert_with(|| why.clone());
                }
            }
            ServeRecord::Request {
                round,
                slot,
                case,
                concurrency,
                outcome,
            } => {
                let into = if outcome.warmup {
                    &mut warmups
                } else {
                    &mut requests
                };
                into.entry((*round, *slot, *case, *concurrency))
                    .or_default()
                    .push(outcome);
            }
            ServeRecord::Start {
                round,
                slot,
                health_s,
                error,
                log,
            } => starts.push(ServeStart {
                round: *round,
                server: side(*slot),
                health_ns: health_s.map(seconds_to_ns),
                ending: None,
                failure: error.clone().map(|message| StartFailure {
                    cause: FailureCause::Start,
                    message,
                }),
                log: log.clone(),
                peak_gpu_memory_bytes: None,
                peak_server_memory_bytes: None,
                sm_mhz: None,
            }),
            ServeRecord::Stop {
                round,
                slot,
                ending,
                failure,
                telemetry,
                ..
            } => {
                if let Some(s) = starts
                    .iter_mut()
                    .rev()
                    .find(|s| s.round == *round && s.server == side(*slot))
                {
                    s.ending = Some(*ending);
                    if let Some(message) = failure {
                        // A server that ended on its own failed by exiting; one that kernelab
                        // stopped failed the workload.
                        let cause = match ending {
                            kernelab_model::serve::Ending::Exited => FailureCause::Exited,
                            _ => FailureCause::Workload,
                        };
                        s.failure = Some(StartFailure {
                            cause,
                            message: message.clone(),
                        });
                    }
                    if let Some(why) = telemetry.as_ref().and_then(|t| t.unavailable.clone()) {
                        telemetry_note.get_or_insert(why);
                    }
                    if let Some(t) = telemetry {
                        s.peak_gpu_memory_bytes = t.peak_gpu_memory_bytes;
                        s.peak_server_memory_bytes = t.peak_server_memory_bytes;
                        s.sm_mhz = t
                            .sm_mhz_min
                            .zip(t.sm_mhz_max)
                            .map(|(min, max)| kernelab_model::serve::MhzRange { min, max });
                    }
                }
            }
            ServeRecord::Look { look, stop } => {
                looks.push(look.clone());
                if stop.is_some() {
                    stopped_by.clone_from(stop);
                }
            }
            ServeRecord::Header { .. } => {}
        }
    }
    // Requests of complete points only; a request seen twice (a resumed point) keeps the last.
    let mut measured: BTreeMap<Key, BTreeMap<usize, &super::workload::RequestOutcome>> =
        BTreeMap::new();
    for (k, v) in &requests {
        if complete.contains_key(k) {
            let m = measured.entry(*k).or_default();
            for o in v {
                m.insert(o.index, o);
            }
        }
    }
    let (mut n_requests, mut n_failed, mut examples) = (0, 0, Vec::new());
    let mut notes = Vec::new();
    let mut bad_points: BTreeSet<Key> = BTreeSet::new();
    for (k, m) in &measured {
        for o in m.values() {
            n_requests += 1;
            if let Some(e) = &o.error {
                n_failed += 1;
                bad_points.insert(*k);
                if examples.len() < 5 {
                    examples.push(format!(
                        "round {} {} case {} concurrency {} request {}: {e}",
                        k.0,
                        slot_name(k.1),
                        k.2,
                        k.3,
                        o.index
                    ));
                }
            }
        }
    }
    // A point of a server that started is a failure when it gave no successful request (it
    // never completed, or every request failed).
    let started: BTreeSet<(usize, Slot)> = records
        .iter()
        .filter_map(|r| match r {
            ServeRecord::Start {
                round,
                slot,
                error: None,
                ..
            } => Some((*round, *slot)),
            _ => None,
        })
        .collect();
    let mut failed_points = 0;
    for &(round, slot) in &started {
        for (c, k) in spec.points() {
            let ok = measured.get(&(round, slot, c, k)).is_some_and(|m| {
                m.values()
                    .any(|o| o.measured.is_some() && o.error.is_none())
            });
            if !ok {
                failed_points += 1;
                if examples.len() < 5 {
                    examples.push(format!(
                        "round {round} {} case {c} concurrency {k}: no successful request",
                        slot_name(slot)
                    ));
                }
            }
        }
    }
    if failed_points > 0 {
        notes.push(format!(
            "{failed_points} point(s) gave no successful request: the run fails"
        ));
    }
    let mut identity = Identity::default();
    for (&(round, slot, c, k), m) in &measured {
        if slot != Slot::A {
            continue;
        }
        if let Some(other) = measured.get(&(round, Slot::B, c, k)) {
            for (i, o) in m {
                let (Some(a), Some(b)) =
                    (&o.measured, other.get(i).and_then(|x| x.measured.as_ref()))
                else {
                    continue;
                };
                identity.compared += 1;
                // Token ids where both sides returned them, else the text.
                let same = match (&a.output_ids_sha256, &b.output_ids_sha256) {
                    (Some(x), Some(y)) => {
                        identity.by_token_ids += 1;
                        x == y
                    }
                    _ => a.output_sha256 == b.output_sha256,
                };
                if same {
                    identity.identical += 1;
                }
            }
        }
    }
    let with_energy = extras.values().any(|e| e.energy_mj.is_some());
    // Per point and round, each metric's figure.
    let mut figures: BTreeMap<Key, Vec<(String, Option<f64>)>> = BTreeMap::new();
    for (k, m) in &measured {
        if bad_points.contains(k) {
            continue;
        }
        let ms: Vec<&Measured> = m.values().filter_map(|o| o.measured.as_ref()).collect();
        let wall = complete.get(k).map_or(0.0, |c| c.0);
        let mut f = point_metrics(&ms, wall, &spec.analysis.slo);
        if with_energy {
            // The GPUs' energy over the point (measured requests and their gaps) per output
            // token of the measured requests.
            let tokens: u64 = ms.iter().filter_map(|m| m.tokens()).sum();
            let j = extras
                .get(k)
                .and_then(|e| e.energy_mj)
                .filter(|_| tokens > 0)
                .map(|mj| mj as f64 / 1e3 / tokens as f64);
            f.push((ENERGY_METRIC.to_string(), j));
        }
        figures.insert(*k, f);
    }
    let mut metrics = Vec::new();
    for (c, k) in spec.points() {
        let case = &spec.workload.cases[c];
        let mut names: Vec<String> = point_metrics(&[], 0.0, &spec.analysis.slo)
            .into_iter()
            .map(|p| p.0)
            .collect();
        if with_energy {
            names.push(ENERGY_METRIC.into());
        }
        for name in names {
            let get = |round: usize, slot: Slot| -> Option<f64> {
                figures
                    .get(&(round, slot, c, k))?
                    .iter()
                    .find(|(n, _)| *n == name)?
                    .1
            };
            let direction = if name.starts_with("throughput") || name.starts_with("goodput") {
                Direction::HigherIsBetter
            } else {
                Direction::LowerIsBetter
            };
            let mut rounds = Vec::new();
            let (mut a_all, mut b_all) = (Vec::new(), Vec::new());
            let mut pairs = Vec::new();
            for round in 0..spec.max_rounds() {
                let (a, b) = (get(round, Slot::A), get(round, Slot::B));
                a_all.extend(a);
                b_all.extend(b);
                if let (Some(a), Some(b)) = (a, b) {
                    rounds.push(RoundFigures {
                        round,
                        baseline: a,
                        candidate: b,
                    });
                    pairs.push(Pair {
                        order: spec.round_order(round, start),
                        a,
                        b,
                    });
                }
            }
            let primary = spec.analysis.primary.contains(&name);
            let design = if primary {
                primary_design(spec, direction)
            } else {
                Design {
                    alpha: spec.analysis.alpha,
                    threshold: spec.analysis.threshold,
                    min_pairs: 2,
                    max_pairs: pairs.len().max(2),
                    stop: StopRule::Fixed,
                    direction,
                }
            };
            let usable = pairs.len() >= 2 && pairs.iter().all(kernelab_stats::usable);
            let (baseline, candidate) = (median(a_all), median(b_all));
            metrics.push(ServeMetric {
                case: c,
                input_tokens: case.input_tokens,
                output_tokens: case.output_tokens,
                concurrency: k,
                metric: name.clone(),
                direction,
                baseline,
                candidate,
                medians: Change::between_opt(baseline, candidate),
                rounds,
                analysis: usable.then(|| analyze(&pairs, &design)),
                primary,
            });
        }
    }
    // Many metrics are tested at once: say how many calls chance alone would make (the
    // secondary ones when primary metrics were named).
    let planned = !spec.analysis.primary.is_empty();
    let tested = metrics
        .iter()
        .filter(|m| m.analysis.is_some() && !m.primary)
        .count();
    if tested > 1 {
        let called = metrics
            .iter()
            .filter(|m| !m.primary)
            .filter_map(|m| m.analysis.as_ref())
            .filter(|a| a.verdict.is_call())
            .count();
        notes.push(format!(
            "{}{tested} metric comparisons at alpha = {}: about {:.1} would be called FASTER or \
             SLOWER by chance alone if nothing changed ({called} called); judge a change by the \
             metrics chosen before the run, and by the A/A control",
            if planned { "secondary metrics: " } else { "" },
            spec.analysis.alpha,
            tested as f64 * spec.analysis.alpha
        ));
    }
    if !spec.workload.stream {
        notes
            .push("non-streaming: TTFT, time to second token, ITL and TPOT are unavailable".into());
    }
    if let Some(why) = telemetry_note {
        notes.push(format!("GPU memory and clocks unavailable: {why}"));
    }
    if let (true, Some(why)) = (with_energy, &energy_note) {
        notes.push(format!("energy unavailable for some points: {why}"));
    }
    // Warm-ups of complete points only, and of a point's last attempt (a resumed point sends
    // its warm-up again, from the first warm-up prompt).
    let first_warm = |case: usize| {
        spec.workload
            .cases
            .get(case)
            .map_or(spec.workload.requests, |c| c.requests(&spec.workload))
    };
    let warmups: Requests<'_> = warmups
        .into_iter()
        .filter(|(k, _)| complete.contains_key(k))
        .map(|(k, v)| {
            let first = first_warm(k.2);
            let last = v.iter().rposition(|o| o.index == first).unwrap_or(0);
            (k, v[last..].to_vec())
        })
        .collect();
    let warmup = warmup_curves(spec, &warmups, &measured, &extras);
    let cache = cache_states(spec, &measured);
    for c in cache.iter().filter(|c| c.differ) {
        notes.push(format!(
            "case {} at concurrency {}: cached prompt tokens differ (baseline {}, candidate {}): \
             a prefix cache favoured one side, so its TTFT is not comparable",
            c.case,
            c.concurrency,
            c.baseline_cached_tokens.unwrap_or(0),
            c.candidate_cached_tokens.unwrap_or(0)
        ));
    }
    for w in warmup.iter().filter(|w| w.not_steady > 0) {
        notes.push(format!(
            "case {} at concurrency {}: {} of {} {} starts were not steady after {} warm-up requests",
            w.case,
            w.concurrency,
            w.not_steady,
            w.requests.len(),
            side_name(w.server),
            spec.workload.steady.max
        ));
    }
    let untimed: Vec<u64> = measured
        .values()
        .flat_map(|m| m.values())
        .filter_map(|o| o.measured.as_ref().map(|m| m.untimed_reads))
        .collect();
    let with_untimed = untimed.iter().filter(|&&n| n > 0).count();
    if with_untimed > 0 {
        notes.push(format!(
            "{with_untimed} of {} measured requests had reads the kernel gave no receive time \
             for ({} reads): those were timed when the client read them, so their TTFT and ITL \
             include the client's own queueing",
            untimed.len(),
            untimed.iter().sum::<u64>()
        ));
    }
    let server_metrics = server_metric_summaries(spec, &extras);
    let failed_rounds = starts.iter().filter(|s| s.failure.is_some()).count();
    if failed_rounds > 0 {
        notes.push(format!(
            "{failed_rounds} server round(s) failed; their logs are listed with the starts"
        ));
    }
    let lag = complete.values().map(|c| c.1).fold(0.0, f64::max);
    let median_itl = metrics
        .iter()
        .filter(|m| m.metric == "itl_p50_s")
        .filter_map(|m| m.baseline)
        .fold(f64::INFINITY, f64::min);
    let client_bound =
        lag > 0.005 || (median_itl.is_finite() && lag > 0.25 * median_itl) || send_lag > 0.01;
    if send_lag > 0.01 {
        notes.push(format!(
            "a request left up to {:.1} ms after its scheduled arrival (request-rate load)",
            send_lag * 1e3
        ));
    }
    if client_bound {
        notes.push(format!(
            "the client's event loop lagged up to {:.2} ms (p99): it may have been the bottleneck",
            lag * 1e3
        ));
    }
    let slo_search = slo_search(spec, &metrics);
    ServeResult {
        metrics,
        starts,
        identity,
        requests: n_requests,
        request_failures: n_failed,
        failure_examples: examples,
        failed_points,
        client_lag_p99_ns: seconds_to_ns(lag),
        client_bound,
        notes,
        plan: planned.then(|| kernelab_model::serve::ServePlan {
            count: spec.rounds.count,
            max: spec.max_rounds(),
            planned_looks: spec.planned_looks(),
            primary: spec.analysis.primary.clone(),
            resolution: spec.analysis.resolution,
            looks,
            stopped_by,
        }),
        warmup,
        cache,
        server_metrics,
        aa_identity: None,
        placement: (!spec.placement.is_apart()).then(|| spec.placement.describe()),
        slo_search,
    }
}

/// The SLO search over the rates of a sweep: cases grouped by lengths and concurrency cap,
/// each rate's goodput (median over rounds) against `attain` of the rate, and the highest rate
/// each side sustains with every lower one sustained too. Empty without an SLO or rates.
pub fn slo_search(
    spec: &Spec,
    metrics: &[kernelab_model::serve::ServeMetric],
) -> Vec<kernelab_model::serve::SloSearch> {
    use kernelab_model::serve::{SloRate, SloSearch};
    if !spec.analysis.slo.any() {
        return Vec::new();
    }
    let attain = spec.analysis.slo.attain_or_default();
    let mut groups: BTreeMap<(usize, usize, usize), Vec<SloRate>> = BTreeMap::new();
    for m in metrics.iter().filter(|m| m.metric == "goodput_req_s") {
        let Some(rate) = spec.rate_of(m.case) else {
            continue;
        };
        let sustains = |g: Option<f64>| g.is_some_and(|g| g >= attain * rate);
        groups
            .entry((m.input_tokens, m.output_tokens, m.concurrency))
            .or_default()
            .push(SloRate {
                case: m.case,
                rate_per_s: rate,
                baseline_goodput_per_s: m.baseline,
                candidate_goodput_per_s: m.candidate,
                baseline_sustains: sustains(m.baseline),
                candidate_sustains: sustains(m.candidate),
            });
    }
    groups
        .into_iter()
        .filter(|(_, r)| r.len() > 1)
        .map(|((input_tokens, output_tokens, concurrency), mut rates)| {
            rates.sort_by(|a, b| a.rate_per_s.total_cmp(&b.rate_per_s));
            let highest = |ok: &dyn Fn(&SloRate) -> bool| {
                rates
                    .iter()
                    .take_while(|r| ok(r))
                    .last()
                    .map(|r| r.rate_per_s)
            };
            let base = highest(&|r| r.baseline_sustains);
            let cand = highest(&|r| r.candidate_sustains);
            SloSearch {
                input_tokens,
                output_tokens,
                concurrency,
                attain,
                baseline_max_rate_per_s: base,
                candidate_max_rate_per_s: cand,
                ratio: match (base, cand) {
                    (Some(b), Some(c)) if b > 0.0 => Some(c / b),
                    _ => None,
                },
                rates,
            }
        })
        .collect()
}

/// The identity of an A/A control run (its samples' `records`) to show beside a run of
/// `spec`: the two must send the same workload (same prompts, lengths and requests), else
/// their identity rates say nothing about each other.
pub fn aa_identity(
    spec: &Spec,
    samples: &std::path::Path,
    records: &[ServeRecord],
) -> std::result::Result<kernelab_model::serve::AaIdentity, String> {
    let Some(ServeRecord::Header {
        spec: aa, start, ..
    }) = records.first()
    else {
        return Err(format!("{}: no header record", samples.display()));
    };
    let (a, b) = (&aa.workload, &spec.workload);
    let same_prompts = a.prompt == b.prompt
        && a.seed == b.seed
        && a.vocab == b.vocab
        && a.requests == b.requests
        && a.cases == b.cases
        && a.endpoint == b.endpoint;
    if !same_prompts {
        return Err(format!(
            "{}: the A/A control sent another workload than this run (prompts, seed, vocabulary, lengths, requests or endpoint differ): their output identity cannot be read side by side",
            samples.display()
        ));
    }
    if aa.placement != spec.placement {
        return Err(format!(
            "{}: the A/A control ran with placement \"{}\", this run with \"{}\": an A/A is a control only for its own placement",
            samples.display(),
            aa.placement.describe(),
            spec.placement.describe()
        ));
    }
    let result = analyse(aa, *start, records);
    let id = result.identity;
    let with_interval = || result.metrics.iter().filter_map(|m| m.analysis.as_ref());
    let tested = with_interval().count();
    let called = with_interval().filter(|a| a.verdict.is_call()).count();
    if id.compared == 0 {
        return Err(format!(
            "{}: the A/A control compared no outputs (no round with both servers measured): it is no control",
            samples.display()
        ));
    }
    Ok(kernelab_model::serve::AaIdentity {
        samples: samples.display().to_string(),
        identical: id.identical,
        compared: id.compared,
        called: Some(called),
        tested: Some(tested),
    })
}

/// The name of the energy metric (present when a point measured the GPUs' energy).
pub const ENERGY_METRIC: &str = "energy_per_token_j";

/// What a point record adds beyond its requests.
#[derive(Default)]
struct PointExtras {
    steady: Option<bool>,
    server_metrics: Option<super::server_metrics::PointMetrics>,
    energy_mj: Option<u64>,
}

fn side_name(s: Side) -> &'static str {
    match s {
        Side::Baseline => "baseline",
        Side::Candidate => "candidate",
    }
}

type Requests<'a> = BTreeMap<Key, Vec<&'a super::workload::RequestOutcome>>;
type MeasuredRequests<'a> = BTreeMap<Key, BTreeMap<usize, &'a super::workload::RequestOutcome>>;

/// The warm-up of every point and side over its starts, from the flagged warm-up requests.
fn warmup_curves(
    spec: &Spec,
    warmups: &Requests<'_>,
    measured: &MeasuredRequests<'_>,
    extras: &BTreeMap<Key, PointExtras>,
) -> Vec<kernelab_model::serve::WarmupCurve> {
    let first = |m: &Measured| m.ttft_s.unwrap_or(m.e2e_s);
    let mut out = Vec::new();
    for (c, k) in spec.points() {
        for slot in [Slot::A, Slot::B] {
            let starts: Vec<(&Key, &Vec<&super::workload::RequestOutcome>)> = warmups
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
fn cache_states(
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
fn server_metric_summaries(
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
            let points: Vec<&super::server_metrics::PointMetrics> = extras
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

/// The design of a primary metric: planned looks at `[rounds] count`, doubling, and `max`,
/// α spread over the looks (Bonferroni), stopping at a decisive verdict or the resolution.
pub fn primary_design(spec: &Spec, direction: Direction) -> Design {
    Design {
        alpha: spec.analysis.alpha,
        threshold: spec.analysis.threshold,
        min_pairs: spec.rounds.count,
        max_pairs: spec.max_rounds(),
        stop: StopRule::Auto {
            resolution: spec.analysis.resolution.unwrap_or(0.0),
        },
        direction,
    }
}

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
            let v = if name.starts_with("ttft") {
                m.ttft_s
            } else if name.starts_with("tpot") {
                m.tpot_s()
            } else if name.starts_with("e2e") {
                Some(m.e2e_s)
            } else {
                None
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
        .filter_map(median)
        .fold(None, |acc: Option<f64>, x| {
            Some(acc.map_or(x, |a| a.max(x)))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
