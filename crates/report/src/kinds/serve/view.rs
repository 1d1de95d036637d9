//! The `serve` view: per case and concurrency the table reviewers expect ("baseline →
//! candidate (Δ%) | interval | verdict"), each round's figures, the server starts, the
//! output-identity gate; and one CSV row per case, concurrency and metric.

use crate::format::{bytes, decimal, percent, with_unit, Unit, UNAVAILABLE};
use crate::table::{Align, Block, Table};
use kernelab_model::serve::metric::{metric, MetricUnit};
use kernelab_model::serve::{ServeMetric, ServeResult};
use serde::Serialize;

/// A figure in its metric's unit ([`kernelab_model::serve::metric`]): seconds as ms, tokens
/// per second as tok/s, requests per second as req/s, joules per token as mJ; a metric the table
/// does not know as a plain number.
fn figure(name: &str, v: Option<f64>) -> String {
    let Some(x) = v else {
        return UNAVAILABLE.into();
    };
    match metric(name).map(|m| m.unit) {
        Some(MetricUnit::Seconds) => with_unit(x, 3, Unit::SecondsAsMs),
        Some(MetricUnit::TokensPerSecond) => with_unit(x, 1, Unit::TokensPerS),
        Some(MetricUnit::RequestsPerSecond) => with_unit(x, 2, Unit::RequestsPerS),
        Some(MetricUnit::JoulesPerToken) => with_unit(x, 3, Unit::JoulesAsMj),
        None => decimal(x, 3),
    }
}

/// The paired change (Hodges–Lehmann over rounds, candidate / baseline − 1), its interval and
/// the verdict (judged in the metric's direction).
fn verdict(m: &ServeMetric) -> (String, String, String) {
    match &m.analysis {
        Some(a) => (
            a.change
                .change()
                .map(|x| percent(x, true))
                .unwrap_or_else(|| UNAVAILABLE.into()),
            a.change
                .change_interval()
                .map(|i| format!("[{}, {}]", percent(i.low, true), percent(i.high, true)))
                .unwrap_or_else(|| "unavailable (too few rounds)".into()),
            a.verdict.name().to_string(),
        ),
        None => (UNAVAILABLE.into(), UNAVAILABLE.into(), UNAVAILABLE.into()),
    }
}

/// The change between the two medians shown, `+1.20%`, or `unavailable`.
fn medians_change(m: &ServeMetric) -> String {
    m.medians
        .change()
        .map(|x| percent(x, true))
        .unwrap_or_else(|| UNAVAILABLE.into())
}

/// A metric's name as the tables show it, without the unit its JSON name ends in (the unit is
/// on every value: `tpot_mean_s` with `14.094 ms` would read as a contradiction).
pub(crate) fn shown(name: &str) -> &str {
    metric(name).map_or(name, |m| m.label)
}

/// Whether a metric is in the main table (means and p99s, throughput, goodput, energy); the
/// rest go to CSV/JSON.
fn main_metric(name: &str) -> bool {
    metric(name).is_some_and(|m| m.main)
}

/// The sections of a serve result.
pub fn serve_sections(r: &ServeResult) -> Vec<Block> {
    let mut out = Vec::new();
    let mut points: Vec<(usize, usize)> =
        r.metrics.iter().map(|m| (m.case, m.concurrency)).collect();
    points.dedup();
    for (c, k) in points {
        let ms: Vec<&ServeMetric> = r
            .metrics
            .iter()
            .filter(|m| m.case == c && m.concurrency == k)
            .collect();
        let Some(first) = ms.first() else { continue };
        let mut t = Table::new(
            format!(
                "Case {c}: {} input × {} output tokens, concurrency {k}",
                first.input_tokens, first.output_tokens
            ),
            &[
                ("Metric", Align::Left),
                ("Baseline → candidate medians (Δ%)", Align::Right),
                ("Paired change", Align::Right),
                ("Interval", Align::Right),
                ("Verdict", Align::Left),
                ("Rounds", Align::Right),
            ],
        );
        for m in ms.iter().filter(|m| main_metric(&m.metric)) {
            let (delta, interval, verdict) = verdict(m);
            t.push(vec![
                shown(&m.metric).to_string(),
                format!(
                    "{} → {} ({})",
                    figure(&m.metric, m.baseline),
                    figure(&m.metric, m.candidate),
                    medians_change(m)
                ),
                delta,
                interval,
                verdict,
                m.rounds.len().to_string(),
            ]);
        }
        out.push(Block::Table(t));
        if let Some(tp) = ms
            .iter()
            .find(|m| m.metric == "tpot_mean_s" || m.metric == "e2e_mean_s")
        {
            let mut t = Table::new(
                format!("Case {c}, concurrency {k}: {} per round", shown(&tp.metric)),
                &[
                    ("Round", Align::Right),
                    ("Baseline", Align::Right),
                    ("Candidate", Align::Right),
                    ("Δ%", Align::Right),
                ],
            );
            for r in &tp.rounds {
                t.push(vec![
                    r.round.to_string(),
                    figure(&tp.metric, Some(r.baseline)),
                    figure(&tp.metric, Some(r.candidate)),
                    percent(r.candidate / r.baseline - 1.0, true),
                ]);
            }
            out.push(Block::Table(t));
        }
    }
    let mut t = Table::new(
        "Server starts",
        &[
            ("Start", Align::Left),
            ("Health", Align::Right),
            ("Ended", Align::Left),
            ("Peak GPU memory", Align::Right),
            ("Server's own", Align::Right),
            ("SM clock", Align::Right),
            ("Failure", Align::Left),
        ],
    );
    for s in &r.starts {
        t.push(vec![
            start_name(s.round, s.server.name()),
            s.health_ns
                .map(|h| with_unit(h as f64 / 1e9, 2, Unit::Seconds))
                .unwrap_or_else(|| UNAVAILABLE.into()),
            s.ending
                .map_or_else(|| UNAVAILABLE.into(), |e| e.name().to_string()),
            s.peak_gpu_memory_bytes
                .map(bytes)
                .unwrap_or_else(|| UNAVAILABLE.into()),
            s.peak_server_memory_bytes
                .map(bytes)
                .unwrap_or_else(|| UNAVAILABLE.into()),
            s.sm_mhz
                .map(|r| format!("{}–{} MHz", r.min, r.max))
                .unwrap_or_else(|| UNAVAILABLE.into()),
            s.failure
                .as_ref()
                .map(|f| {
                    format!(
                        "{}: {} (log {})",
                        f.cause.name(),
                        f.message.lines().next().unwrap_or(""),
                        s.log
                    )
                })
                .unwrap_or_default(),
        ]);
    }
    out.push(Block::Table(t));
    out.extend(state_blocks(r));
    let mut lines = vec![
        identity_line(r),
        format!(
            "{} requests measured, {} failed; client event-loop lag p99 {:.3} ms above idle{}",
            r.requests,
            r.request_failures,
            r.client_lag_p99_ns as f64 / 1e6,
            if r.client_bound {
                " (the client may have been the bottleneck)"
            } else {
                ""
            }
        ),
    ];
    if let Some(p) = &r.placement {
        lines.push(format!("placement: {p}"));
    }
    lines.extend(r.failure_examples.iter().cloned());
    lines.extend(r.notes.iter().cloned());
    out.push(Block::List {
        title: "Gates and notes".into(),
        lines,
    });
    out
}

/// A server start as its row names it (`round 0 candidate`): the subject of its figures, so
/// that the audit holds a row's numbers against that start's, not another start's.
pub(crate) fn start_name(round: usize, server: &str) -> String {
    format!("round {round} {server}")
}

/// An optional fraction as a percentage, else `unavailable`.
fn opt_percent(x: Option<f64>) -> String {
    x.map(|x| with_unit(x, 1, Unit::Percent))
        .unwrap_or_else(|| UNAVAILABLE.into())
}

/// The server state behind the figures: warm-up to steady state, prefix-cache state, and
/// the servers' own metrics (each only where the run recorded it).
fn state_blocks(r: &ServeResult) -> Vec<Block> {
    let mut out = Vec::new();
    for s in &r.slo_search {
        let rate = |x: Option<f64>| {
            x.map(|x| with_unit(x, 2, Unit::RequestsPerS))
                .unwrap_or_else(|| UNAVAILABLE.into())
        };
        let mut t = Table::new(
            format!(
                "SLO search: {} in × {} out, at most {} in flight (a side sustains a rate when its goodput is at least {} of it)",
                s.input_tokens,
                s.output_tokens,
                s.concurrency,
                with_unit(s.attain, 0, Unit::Percent)
            ),
            &[
                ("Case", Align::Right),
                ("Offered rate", Align::Right),
                ("Baseline goodput", Align::Right),
                ("Candidate goodput", Align::Right),
                ("Baseline sustains", Align::Left),
                ("Candidate sustains", Align::Left),
            ],
        );
        let yes = |b: bool| if b { "yes" } else { "no" }.to_string();
        for x in &s.rates {
            t.push(vec![
                x.case.to_string(),
                rate(Some(x.rate_per_s)),
                rate(x.baseline_goodput_per_s),
                rate(x.candidate_goodput_per_s),
                yes(x.baseline_sustains),
                yes(x.candidate_sustains),
            ]);
        }
        t.push(vec![
            String::new(),
            "highest sustained".into(),
            rate(s.baseline_max_rate_per_s),
            rate(s.candidate_max_rate_per_s),
            String::new(),
            match s.ratio {
                Some(x) => format!("ratio {x:.3}×"),
                None => format!("ratio {UNAVAILABLE}"),
            },
        ]);
        out.push(Block::Table(t));
    }
    if !r.warmup.is_empty() {
        let mut t = Table::new(
            "Warm-up to steady state",
            &[
                ("Case", Align::Right),
                ("Concurrency", Align::Right),
                ("Server", Align::Left),
                ("Starts", Align::Right),
                ("Warm-up requests", Align::Right),
                ("Not steady", Align::Right),
                ("Cold ÷ warm TTFT", Align::Right),
                (
                    "First token, request 1, 2, … (median over starts)",
                    Align::Left,
                ),
            ],
        );
        for w in &r.warmup {
            let (lo, hi) = (
                w.requests.iter().min().copied().unwrap_or(0),
                w.requests.iter().max().copied().unwrap_or(0),
            );
            let curve: Vec<String> = w
                .first_token_ns
                .iter()
                .take(12)
                .map(|v| {
                    v.map(|ns| with_unit(ns as f64 / 1e9, 2, Unit::SecondsAsMs))
                        .unwrap_or_else(|| UNAVAILABLE.into())
                })
                .collect();
            let more = w.first_token_ns.len().saturating_sub(12);
            t.push(vec![
                w.case.to_string(),
                w.concurrency.to_string(),
                w.server.name().to_string(),
                w.requests.len().to_string(),
                if lo == hi {
                    lo.to_string()
                } else {
                    format!("{lo}–{hi}")
                },
                w.not_steady.to_string(),
                w.cold_over_warm_ttft
                    .map(|x| format!("{x:.2}×"))
                    .unwrap_or_else(|| UNAVAILABLE.into()),
                if more > 0 {
                    format!("{}, … ({more} more)", curve.join(", "))
                } else {
                    curve.join(", ")
                },
            ]);
        }
        out.push(Block::Table(t));
    }
    if !r.cache.is_empty() {
        let mut t = Table::new(
            "Prefix cache (cached prompt tokens the servers reported)",
            &[
                ("Case", Align::Right),
                ("Concurrency", Align::Right),
                ("Baseline cached", Align::Right),
                ("Candidate cached", Align::Right),
                ("Prompt tokens", Align::Right),
                ("Same on both sides", Align::Left),
            ],
        );
        let tokens = |v: Option<u64>| {
            v.map(crate::format::thousands)
                .unwrap_or_else(|| UNAVAILABLE.into())
        };
        for c in &r.cache {
            t.push(vec![
                c.case.to_string(),
                c.concurrency.to_string(),
                tokens(c.baseline_cached_tokens),
                tokens(c.candidate_cached_tokens),
                format!(
                    "{} / {}",
                    crate::format::thousands(c.prompt_tokens[0]),
                    crate::format::thousands(c.prompt_tokens[1])
                ),
                if c.differ {
                    "no: not comparable"
                } else {
                    "yes"
                }
                .into(),
            ]);
        }
        out.push(Block::Table(t));
    }
    if !r.server_metrics.is_empty() {
        let mut t = Table::new(
            "Server metrics over the points (Prometheus)",
            &[
                ("Case", Align::Right),
                ("Concurrency", Align::Right),
                ("Server", Align::Left),
                ("Prefix-cache hit rate", Align::Right),
                ("KV-cache usage, max", Align::Right),
                ("Preemptions", Align::Right),
                ("Draft acceptance", Align::Right),
                ("Acceptance length", Align::Right),
                ("Scrapes failed", Align::Left),
            ],
        );
        for m in &r.server_metrics {
            t.push(vec![
                m.case.to_string(),
                m.concurrency.to_string(),
                m.server.name().to_string(),
                opt_percent(m.prefix_cache_hit_rate),
                opt_percent(m.kv_cache_usage_max),
                m.preemptions
                    .map(|p| format!("{p:.0}"))
                    .unwrap_or_else(|| UNAVAILABLE.into()),
                opt_percent(m.spec_acceptance_rate),
                m.spec_acceptance_length
                    .map(|x| format!("{x:.2}"))
                    .unwrap_or_else(|| UNAVAILABLE.into()),
                match &m.unavailable_reason {
                    Some(why) => format!("{} of {}: {why}", m.unavailable, m.points),
                    None => format!("0 of {}", m.points),
                },
            ]);
        }
        out.push(Block::Table(t));
    }
    out
}

/// "N of M requests identical" for the output-identity gate.
pub fn identity_line(r: &ServeResult) -> String {
    format!(
        "output identity: {} of {} requests identical (baseline vs candidate, same prompt and round; {}){}",
        r.identity.identical,
        r.identity.compared,
        match r.identity.by_token_ids {
            0 => "compared by text".to_string(),
            n if n == r.identity.compared => "compared by token ids".to_string(),
            n => format!("{n} compared by token ids, the rest by text"),
        },
        if r.identity.identical == r.identity.compared {
            ""
        } else {
            " — GATE FAILED"
        }
    ) + &match &r.aa_identity {
        Some(aa) => format!(
            "; the A/A control: {} of {} identical ({}{}; {})",
            aa.identical,
            aa.compared,
            if aa.compared > 0 {
                with_unit(aa.identical as f64 / aa.compared as f64, 1, Unit::Percent)
            } else {
                UNAVAILABLE.to_string()
            },
            match (aa.called, aa.tested) {
                (Some(c), Some(t)) => format!("; {c} of {t} metrics called"),
                _ => String::new(),
            },
            aa.samples
        ),
        None => String::new(),
    }
}

/// One CSV row.
#[derive(Serialize, schemars::JsonSchema)]
pub struct ServeCsvRow {
    /// Case index.
    pub case: usize,
    /// Input tokens.
    pub input_tokens: usize,
    /// Output tokens.
    pub output_tokens: usize,
    /// Concurrency.
    pub concurrency: usize,
    /// Metric.
    pub metric: String,
    /// Baseline median over rounds.
    pub baseline: Option<f64>,
    /// Candidate median over rounds.
    pub candidate: Option<f64>,
    /// The paired ratio (Hodges–Lehmann over rounds), candidate / baseline for every metric.
    pub ratio: Option<f64>,
    /// ratio − 1.
    pub change: Option<f64>,
    /// Interval on the ratio, low end.
    pub interval_low: Option<f64>,
    /// Interval on the ratio, high end.
    pub interval_high: Option<f64>,
    /// Verdict.
    pub verdict: Option<String>,
    /// Rounds paired.
    pub rounds: usize,
}

/// The CSV rows of a serve result.
pub fn serve_csv_rows(r: &ServeResult) -> Vec<ServeCsvRow> {
    r.metrics
        .iter()
        .map(|m| ServeCsvRow {
            case: m.case,
            input_tokens: m.input_tokens,
            output_tokens: m.output_tokens,
            concurrency: m.concurrency,
            metric: m.metric.clone(),
            baseline: m.baseline,
            candidate: m.candidate,
            ratio: m.analysis.as_ref().and_then(|a| a.ratio()),
            change: m.analysis.as_ref().and_then(|a| a.change.change()),
            interval_low: m
                .analysis
                .as_ref()
                .and_then(|a| a.interval().map(|i| i.low)),
            interval_high: m
                .analysis
                .as_ref()
                .and_then(|a| a.interval().map(|i| i.high)),
            verdict: m.analysis.as_ref().map(|a| a.verdict.name().to_string()),
            rounds: m.rounds.len(),
        })
        .collect()
}

/// A serve result of one point with goodput (12.5 → 15 req/s over two rounds) and TPOT, for
/// the tests of the view and the audit.
#[cfg(test)]
pub(crate) fn goodput_result() -> ServeResult {
    use kernelab_model::serve::metric::GOODPUT;
    use kernelab_model::serve::{Identity, RoundFigures};
    use kernelab_stats::{Change, Direction};
    let metric = |name: &str, direction, b: f64, c: f64| ServeMetric {
        case: 0,
        input_tokens: 128,
        output_tokens: 32,
        concurrency: 4,
        metric: name.into(),
        direction,
        baseline: Some(b),
        candidate: Some(c),
        medians: Change::between_opt(Some(b), Some(c)),
        rounds: vec![
            RoundFigures {
                round: 0,
                baseline: b,
                candidate: c,
            },
            RoundFigures {
                round: 1,
                baseline: b,
                candidate: c,
            },
        ],
        analysis: None,
        primary: false,
    };
    ServeResult {
        metrics: vec![
            metric("tpot_mean_s", Direction::LowerIsBetter, 0.014, 0.012),
            metric(GOODPUT, Direction::HigherIsBetter, 12.5, 15.0),
        ],
        starts: Vec::new(),
        identity: Identity::default(),
        requests: 0,
        request_failures: 0,
        failure_examples: Vec::new(),
        failed_points: 0,
        client_lag_p99_ns: 0,
        client_bound: false,
        notes: Vec::new(),
        plan: None,
        warmup: Vec::new(),
        cache: Vec::new(),
        server_metrics: Vec::new(),
        aa_identity: None,
        placement: None,
        slo_search: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{csv_rows, render, OutputFormat};

    #[test]
    fn goodput_shows_in_requests_per_second_in_every_format() {
        let r = goodput_result();
        for (format, width) in [
            (OutputFormat::Terminal, Some(200)),
            (OutputFormat::Markdown, None),
        ] {
            let text = render(&serve_sections(&r), format, width);
            let row = text
                .lines()
                .find(|l| l.contains("goodput"))
                .unwrap_or_else(|| panic!("no goodput row in {text}"));
            assert!(row.contains("12.50 req/s → 15.00 req/s"), "{row}");
            assert!(
                !row.contains("ms") && !row.contains("goodput_req_s"),
                "{row}"
            );
            // Latencies stay in milliseconds.
            assert!(text.contains("14.000 ms → 12.000 ms"), "{text}");
        }
        // CSV keeps the metric's JSON name and its figures in requests per second.
        let csv = csv_rows(&serve_csv_rows(&r)).expect("csv");
        let row = csv
            .lines()
            .find(|l| l.contains("goodput_req_s"))
            .expect("goodput row");
        assert!(
            row.contains(",12.5,15.0,") || row.contains(",12.5,15,"),
            "{row}"
        );
    }

    #[test]
    fn a_metric_the_table_does_not_know_is_a_plain_number_under_its_own_name() {
        assert_eq!(figure("made_up_s", Some(0.5)), "0.500");
        assert_eq!(shown("made_up_s"), "made_up_s");
        assert!(!main_metric("made_up_mean_s"));
        assert_eq!(figure("goodput_req_s", Some(12.5)), "12.50 req/s");
        assert_eq!(shown("goodput_req_s"), "goodput");
    }
}
