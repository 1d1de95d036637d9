//! From the samples file to the result: per round and server one figure per metric of the
//! table ([`super::figures`]), paired by round and analysed with `kernelab_stats`; the
//! output-identity gate; failures, the client guard and the notes.

use super::client::Measured;
use super::figures::point_metrics;
use super::point::{side, slot_name, Key, MeasuredRequests, PointExtras, Requests};
use super::samples::ServeRecord;
use super::spec::Spec;
use super::state::{cache_states, server_metric_summaries, warmup_curves};
use super::telemetry::Telemetry;
use crate::record::Slot;
use kernelab_model::seconds_to_ns;
use kernelab_model::serve::metric::{reported, ENERGY_PER_TOKEN, GOODPUT, ITL_P50};
use kernelab_model::serve::{
    Ending, FailureCause, Identity, MhzRange, RoundFigures, ServeLook, ServeMetric, ServePlan,
    ServeResult, ServeStart, StartFailure,
};
use kernelab_stats::{analyze, Change, Design, Direction, Order, Pair, StopRule};
use std::collections::{BTreeMap, BTreeSet};

fn median(v: Vec<f64>) -> Option<f64> {
    kernelab_stats::rank::median(&v)
}

/// The records of a run, grouped by point, as the samples file gives them.
#[derive(Default)]
struct Collected<'a> {
    /// Complete points: their wall time and the client's excess event-loop lag (p99).
    complete: BTreeMap<Key, (f64, f64)>,
    /// The largest lag of a request behind its scheduled arrival.
    send_lag: f64,
    /// Why GPU telemetry was unavailable (the first reason).
    telemetry_note: Option<String>,
    /// Why energy was unavailable (the first reason).
    energy_note: Option<String>,
    /// Measured requests per point.
    requests: Requests<'a>,
    /// Warm-up requests per point.
    warmups: Requests<'a>,
    /// What each point record adds.
    extras: BTreeMap<Key, PointExtras>,
    /// Every server start, its stop filled in.
    starts: Vec<ServeStart>,
    /// The planned looks taken.
    looks: Vec<ServeLook>,
    /// Why the run stopped.
    stopped_by: Option<String>,
}

impl<'a> Collected<'a> {
    /// Groups `records`.
    fn read(records: &'a [ServeRecord]) -> Self {
        let mut c = Collected::default();
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
                    c.complete.insert(key, (*wall_s, guard.excess_lag_p99_s()));
                    c.send_lag = c.send_lag.max(guard.send_lag_max_s);
                    c.extras.insert(
                        key,
                        PointExtras {
                            steady: *steady,
                            server_metrics: server_metrics.clone(),
                            energy_mj: *energy_mj,
                        },
                    );
                    if let Some(why) = energy_unavailable {
                        c.energy_note.get_or_insert_with(|| why.clone());
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
                        &mut c.warmups
                    } else {
                        &mut c.requests
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
                } => c.starts.push(ServeStart {
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
                } => c.stop(*round, *slot, *ending, failure, telemetry.as_ref()),
                ServeRecord::Look { look, stop } => {
                    c.looks.push(look.clone());
                    if stop.is_some() {
                        c.stopped_by.clone_from(stop);
                    }
                }
                ServeRecord::Header(_) => {}
            }
        }
        c
    }

    /// A server's stop: its ending, failure and telemetry on its latest start.
    fn stop(
        &mut self,
        round: usize,
        slot: Slot,
        ending: Ending,
        failure: &Option<String>,
        telemetry: Option<&Telemetry>,
    ) {
        let Some(s) = self
            .starts
            .iter_mut()
            .rev()
            .find(|s| s.round == round && s.server == side(slot))
        else {
            return;
        };
        s.ending = Some(ending);
        if let Some(message) = failure {
            // A server that ended on its own failed by exiting; one that kernelab stopped
            // failed the workload.
            let cause = match ending {
                Ending::Exited => FailureCause::Exited,
                _ => FailureCause::Workload,
            };
            s.failure = Some(StartFailure {
                cause,
                message: message.clone(),
            });
        }
        if let Some(why) = telemetry.and_then(|t| t.unavailable.clone()) {
            self.telemetry_note.get_or_insert(why);
        }
        if let Some(t) = telemetry {
            s.peak_gpu_memory_bytes = t.peak_gpu_memory_bytes;
            s.peak_server_memory_bytes = t.peak_server_memory_bytes;
            s.sm_mhz = t
                .sm_mhz_min
                .zip(t.sm_mhz_max)
                .map(|(min, max)| MhzRange { min, max });
        }
    }

    /// Requests of complete points only; a request seen twice (a resumed point) keeps the last.
    fn measured(&self) -> MeasuredRequests<'a> {
        let mut measured: MeasuredRequests<'a> = BTreeMap::new();
        for (k, v) in &self.requests {
            if self.complete.contains_key(k) {
                let m = measured.entry(*k).or_default();
                for o in v {
                    m.insert(o.index, o);
                }
            }
        }
        measured
    }

    /// Warm-ups of complete points only, and of a point's last attempt (a resumed point sends
    /// its warm-up again, from the first warm-up prompt).
    fn last_warmups(&self, spec: &Spec) -> Requests<'a> {
        let first_warm = |case: usize| {
            spec.workload
                .cases
                .get(case)
                .map_or(spec.workload.requests, |c| c.requests(&spec.workload))
        };
        self.warmups
            .iter()
            .filter(|(k, _)| self.complete.contains_key(k))
            .map(|(k, v)| {
                let first = first_warm(k.2);
                let last = v.iter().rposition(|o| o.index == first).unwrap_or(0);
                (*k, v[last..].to_vec())
            })
            .collect()
    }
}

/// Failed requests and points: the counts, the first examples, the points left out.
struct Failures {
    /// Requests measured.
    requests: usize,
    /// Of those, failed.
    failed: usize,
    /// The first few reasons.
    examples: Vec<String>,
    /// Points with a failed request (their figures are left out).
    bad_points: BTreeSet<Key>,
    /// Points of a server that started but gave no successful request.
    failed_points: usize,
}

impl Failures {
    /// The failures of the measured requests, and the points of a started server (a start
    /// record without an error) that gave no successful request.
    fn of(spec: &Spec, records: &[ServeRecord], measured: &MeasuredRequests<'_>) -> Failures {
        let mut f = Failures {
            requests: 0,
            failed: 0,
            examples: Vec::new(),
            bad_points: BTreeSet::new(),
            failed_points: 0,
        };
        for (k, m) in measured {
            for o in m.values() {
                f.requests += 1;
                if let Some(e) = &o.error {
                    f.failed += 1;
                    f.bad_points.insert(*k);
                    if f.examples.len() < 5 {
                        f.examples.push(format!(
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
        for &(round, slot) in &started {
            for (c, k) in spec.points() {
                let ok = measured.get(&(round, slot, c, k)).is_some_and(|m| {
                    m.values()
                        .any(|o| o.measured.is_some() && o.error.is_none())
                });
                if !ok {
                    f.failed_points += 1;
                    if f.examples.len() < 5 {
                        f.examples.push(format!(
                            "round {round} {} case {c} concurrency {k}: no successful request",
                            slot_name(slot)
                        ));
                    }
                }
            }
        }
        f
    }
}

/// The output-identity gate: baseline versus candidate outputs of the same request index,
/// point and round (by token ids where both sides returned them, else by text).
fn identity(measured: &MeasuredRequests<'_>) -> Identity {
    let mut identity = Identity::default();
    for (&(round, slot, c, k), m) in measured {
        if slot != Slot::A {
            continue;
        }
        let Some(other) = measured.get(&(round, Slot::B, c, k)) else {
            continue;
        };
        for (i, o) in m {
            let (Some(a), Some(b)) = (&o.measured, other.get(i).and_then(|x| x.measured.as_ref()))
            else {
                continue;
            };
            identity.compared += 1;
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
    identity
}

/// Each metric's figure per point and round (points with a failed request left out); with
/// energy, the GPUs' energy over the point (measured requests and their gaps) per output
/// token of the measured requests.
fn point_figures(
    spec: &Spec,
    run: &Collected<'_>,
    measured: &MeasuredRequests<'_>,
    bad_points: &BTreeSet<Key>,
    with_energy: bool,
) -> BTreeMap<Key, Vec<(&'static str, Option<f64>)>> {
    let mut figures = BTreeMap::new();
    for (k, m) in measured {
        if bad_points.contains(k) {
            continue;
        }
        let ms: Vec<&Measured> = m.values().filter_map(|o| o.measured.as_ref()).collect();
        let wall = run.complete.get(k).map_or(0.0, |c| c.0);
        let mut f = point_metrics(&ms, wall, &spec.analysis.slo);
        if with_energy {
            let tokens: u64 = ms.iter().filter_map(|m| m.tokens()).sum();
            let j = run
                .extras
                .get(k)
                .and_then(|e| e.energy_mj)
                .filter(|_| tokens > 0)
                .map(|mj| mj as f64 / 1e3 / tokens as f64);
            f.push((ENERGY_PER_TOKEN, j));
        }
        figures.insert(*k, f);
    }
    figures
}

/// Every metric of every point, paired by round: the medians, the rounds, and the paired
/// analysis in the metric's direction (a primary metric with the planned looks' design).
fn compare(
    spec: &Spec,
    start: Order,
    figures: &BTreeMap<Key, Vec<(&'static str, Option<f64>)>>,
    with_energy: bool,
) -> Vec<ServeMetric> {
    let mut metrics = Vec::new();
    for (c, k) in spec.points() {
        let case = &spec.workload.cases[c];
        for def in reported(spec.analysis.slo.any(), with_energy) {
            let name = def.name;
            let get = |round: usize, slot: Slot| -> Option<f64> {
                figures
                    .get(&(round, slot, c, k))?
                    .iter()
                    .find(|(n, _)| *n == name)?
                    .1
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
            let primary = spec.analysis.primary.iter().any(|p| p == name);
            let design = if primary {
                primary_design(spec, def.direction)
            } else {
                Design {
                    alpha: spec.analysis.alpha,
                    threshold: spec.analysis.threshold,
                    min_pairs: 2,
                    max_pairs: pairs.len().max(2),
                    stop: StopRule::Fixed,
                    direction: def.direction,
                }
            };
            let usable = pairs.len() >= 2 && pairs.iter().all(kernelab_stats::usable);
            let (baseline, candidate) = (median(a_all), median(b_all));
            metrics.push(ServeMetric {
                case: c,
                input_tokens: case.input_tokens,
                output_tokens: case.output_tokens,
                concurrency: k,
                metric: name.to_string(),
                direction: def.direction,
                baseline,
                candidate,
                medians: Change::between_opt(baseline, candidate),
                rounds,
                analysis: usable.then(|| analyze(&pairs, &design)),
                primary,
            });
        }
    }
    metrics
}

/// Many metrics are tested at once: how many calls chance alone would make (the secondary
/// ones when primary metrics were named); `None` for one test or none.
fn chance_note(spec: &Spec, metrics: &[ServeMetric]) -> Option<String> {
    let planned = !spec.analysis.primary.is_empty();
    let tested = metrics
        .iter()
        .filter(|m| m.analysis.is_some() && !m.primary)
        .count();
    if tested <= 1 {
        return None;
    }
    let called = metrics
        .iter()
        .filter(|m| !m.primary)
        .filter_map(|m| m.analysis.as_ref())
        .filter(|a| a.verdict.is_call())
        .count();
    Some(format!(
        "{}{tested} metric comparisons at alpha = {}: about {:.1} would be called FASTER or \
         SLOWER by chance alone if nothing changed ({called} called); judge a change by the \
         metrics chosen before the run, and by the A/A control",
        if planned { "secondary metrics: " } else { "" },
        spec.analysis.alpha,
        tested as f64 * spec.analysis.alpha
    ))
}

/// Requests with reads the kernel gave no receive time for: timed when the client read them.
fn untimed_note(measured: &MeasuredRequests<'_>) -> Option<String> {
    let untimed: Vec<u64> = measured
        .values()
        .flat_map(|m| m.values())
        .filter_map(|o| o.measured.as_ref().map(|m| m.untimed_reads))
        .collect();
    let with_untimed = untimed.iter().filter(|&&n| n > 0).count();
    (with_untimed > 0).then(|| {
        format!(
            "{with_untimed} of {} measured requests had reads the kernel gave no receive time \
             for ({} reads): those were timed when the client read them, so their TTFT and ITL \
             include the client's own queueing",
            untimed.len(),
            untimed.iter().sum::<u64>()
        )
    })
}

/// The client guard: the largest excess event-loop lag (p99) over the complete points, and
/// whether the client may have been the bottleneck (its lag large against the median ITL, or
/// a request sent late); its notes go to `notes`.
fn client_guard(
    run: &Collected<'_>,
    metrics: &[ServeMetric],
    notes: &mut Vec<String>,
) -> (f64, bool) {
    let lag = run.complete.values().map(|c| c.1).fold(0.0, f64::max);
    let send_lag = run.send_lag;
    let median_itl = metrics
        .iter()
        .filter(|m| m.metric == ITL_P50)
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
    (lag, client_bound)
}

/// Analyses the records of a run of `spec` whose round 0 had order `start`.
pub fn analyse(spec: &Spec, start: Order, records: &[ServeRecord]) -> ServeResult {
    let run = Collected::read(records);
    let measured = run.measured();
    let failures = Failures::of(spec, records, &measured);
    let mut notes = Vec::new();
    if failures.failed_points > 0 {
        notes.push(format!(
            "{} point(s) gave no successful request: the run fails",
            failures.failed_points
        ));
    }
    let identity = identity(&measured);
    let with_energy = run.extras.values().any(|e| e.energy_mj.is_some());
    let figures = point_figures(spec, &run, &measured, &failures.bad_points, with_energy);
    let metrics = compare(spec, start, &figures, with_energy);
    notes.extend(chance_note(spec, &metrics));
    if !spec.workload.stream {
        notes
            .push("non-streaming: TTFT, time to second token, ITL and TPOT are unavailable".into());
    }
    if let Some(why) = &run.telemetry_note {
        notes.push(format!("GPU memory and clocks unavailable: {why}"));
    }
    if let (true, Some(why)) = (with_energy, &run.energy_note) {
        notes.push(format!("energy unavailable for some points: {why}"));
    }
    let warmup = warmup_curves(spec, &run.last_warmups(spec), &measured, &run.extras);
    let cache = cache_states(spec, &measured);
    notes.extend(state_notes(spec, &warmup, &cache));
    notes.extend(untimed_note(&measured));
    let server_metrics = server_metric_summaries(spec, &run.extras);
    let failed_rounds = run.starts.iter().filter(|s| s.failure.is_some()).count();
    if failed_rounds > 0 {
        notes.push(format!(
            "{failed_rounds} server round(s) failed; their logs are listed with the starts"
        ));
    }
    let (lag, client_bound) = client_guard(&run, &metrics, &mut notes);
    let slo_search = slo_search(spec, &metrics);
    let planned = !spec.analysis.primary.is_empty();
    ServeResult {
        metrics,
        starts: run.starts,
        identity,
        requests: failures.requests,
        request_failures: failures.failed,
        failure_examples: failures.examples,
        failed_points: failures.failed_points,
        client_lag_p99_ns: seconds_to_ns(lag),
        client_bound,
        notes,
        plan: planned.then(|| ServePlan {
            count: spec.rounds.count,
            max: spec.max_rounds(),
            planned_looks: spec.planned_looks(),
            primary: spec.analysis.primary.clone(),
            resolution: spec.analysis.resolution,
            looks: run.looks,
            stopped_by: run.stopped_by,
        }),
        warmup,
        cache,
        server_metrics,
        aa_identity: None,
        placement: (!spec.placement.is_apart()).then(|| spec.placement.describe()),
        slo_search,
    }
}

/// The notes of the server state: a prefix cache that favoured one side, starts whose warm-up
/// was not steady before its cap.
fn state_notes(
    spec: &Spec,
    warmup: &[kernelab_model::serve::WarmupCurve],
    cache: &[kernelab_model::serve::CacheState],
) -> Vec<String> {
    let mut notes = Vec::new();
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
            w.server.name(),
            spec.workload.steady.max
        ));
    }
    notes
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
    for m in metrics.iter().filter(|m| m.metric == GOODPUT) {
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
    let Some(ServeRecord::Header(crate::run::Header {
        plan: super::samples::ServePlan {
            spec: aa, start, ..
        },
        ..
    })) = records.first()
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
