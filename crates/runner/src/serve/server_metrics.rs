//! A server's own metrics: its Prometheus text (`metrics_url`), scraped before and after each
//! point, reduced to what bears on a verdict (prefix-cache hits and queries, KV-cache usage,
//! preemptions, speculative-decoding drafts and accepted tokens). The text is parsed by the
//! `openmetrics-parser` crate; this module only chooses the families and takes the differences.

use serde::{Deserialize, Serialize};

/// Largest metrics text read: 8 MiB.
pub const MAX_METRICS_BYTES: usize = 8 << 20;

/// The families kernelab reads, by what they mean, with the names servers give them (vLLM v1
/// and v0, SGLang, llama.cpp). Counters are compared before and after a point; gauges are read
/// after it. A `_total` suffix is ignored when matching.
const FAMILIES: &[(Figure, &[&str])] = &[
    (
        Figure::PrefixCacheHits,
        &["vllm:prefix_cache_hits", "vllm:gpu_prefix_cache_hits"],
    ),
    (
        Figure::PrefixCacheQueries,
        &["vllm:prefix_cache_queries", "vllm:gpu_prefix_cache_queries"],
    ),
    (
        Figure::KvCacheUsage,
        &[
            "vllm:kv_cache_usage_perc",
            "vllm:gpu_cache_usage_perc",
            "sglang:token_usage",
            "llamacpp:kv_cache_usage_ratio",
        ],
    ),
    (
        Figure::Preemptions,
        &["vllm:num_preemptions", "sglang:num_preemptions"],
    ),
    (Figure::SpecDrafts, &["vllm:spec_decode_num_drafts"]),
    (
        Figure::SpecDraftTokens,
        &["vllm:spec_decode_num_draft_tokens"],
    ),
    (
        Figure::SpecAcceptedTokens,
        &["vllm:spec_decode_num_accepted_tokens"],
    ),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Figure {
    PrefixCacheHits,
    PrefixCacheQueries,
    KvCacheUsage,
    Preemptions,
    SpecDrafts,
    SpecDraftTokens,
    SpecAcceptedTokens,
}

/// One scrape: each figure's value (summed over label sets), absent when the server has none.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scrape {
    values: Vec<(Figure, f64)>,
}

impl Scrape {
    fn get(&self, f: Figure) -> Option<f64> {
        let mut it = self.values.iter().filter(|(g, _)| *g == f).peekable();
        it.peek()?;
        Some(it.map(|(_, v)| v).sum())
    }
}

/// Reads Prometheus text: the figures of [`FAMILIES`] it holds. Text that is not Prometheus
/// exposition is an error naming what the parser expected.
pub fn parse(text: &str) -> Result<Scrape, String> {
    use openmetrics_parser::PrometheusValue;
    if text.trim().is_empty() {
        return Ok(Scrape::default());
    }
    // The grammar wants a final newline; a server may end without one.
    let owned;
    let text = if text.ends_with('\n') || text.is_empty() {
        text
    } else {
        owned = format!("{text}\n");
        &owned
    };
    let exposition =
        openmetrics_parser::prometheus::parse_prometheus(text).map_err(|e| e.to_string())?;
    let mut values = Vec::new();
    for (name, family) in &exposition.families {
        let name = name.strip_suffix("_total").unwrap_or(name);
        let Some((f, _)) = FAMILIES.iter().find(|(_, names)| names.contains(&name)) else {
            continue;
        };
        for sample in family.iter_samples() {
            let v = match &sample.value {
                PrometheusValue::Counter(c) => c.value.as_f64(),
                PrometheusValue::Gauge(n) | PrometheusValue::Unknown(n) => n.as_f64(),
                _ => continue,
            };
            if v.is_finite() {
                values.push((*f, v));
            }
        }
    }
    Ok(Scrape { values })
}

/// What a server's metrics say about one point: counters as the difference over the point,
/// the KV-cache usage after it (a fraction). `None`: the server does not export the family.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PointMetrics {
    /// Prefix-cache hits (tokens or blocks, as the server counts them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_cache_hits: Option<f64>,
    /// Prefix-cache queries, in the unit of the hits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_cache_queries: Option<f64>,
    /// KV-cache usage after the point, a fraction of the cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache_usage: Option<f64>,
    /// Preemptions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemptions: Option<f64>,
    /// Speculative decoding: drafts proposed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_drafts: Option<f64>,
    /// Speculative decoding: draft tokens proposed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_draft_tokens: Option<f64>,
    /// Speculative decoding: draft tokens accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_accepted_tokens: Option<f64>,
    /// Why the metrics are missing (a scrape failed), if they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

impl PointMetrics {
    /// The figures of a point from the scrapes before and after it.
    pub fn between(before: &Scrape, after: &Scrape) -> PointMetrics {
        // A counter that went down was reset (the server restarted): no difference.
        let delta = |f| match (before.get(f), after.get(f)) {
            (Some(a), Some(b)) if b >= a => Some(b - a),
            (None, Some(b)) => Some(b),
            _ => None,
        };
        PointMetrics {
            prefix_cache_hits: delta(Figure::PrefixCacheHits),
            prefix_cache_queries: delta(Figure::PrefixCacheQueries),
            kv_cache_usage: after.get(Figure::KvCacheUsage),
            preemptions: delta(Figure::Preemptions),
            spec_drafts: delta(Figure::SpecDrafts),
            spec_draft_tokens: delta(Figure::SpecDraftTokens),
            spec_accepted_tokens: delta(Figure::SpecAcceptedTokens),
            unavailable: None,
        }
    }

    /// The metrics of a point whose scrape failed.
    pub fn failed(why: String) -> PointMetrics {
        PointMetrics {
            unavailable: Some(why),
            ..PointMetrics::default()
        }
    }
}

/// GETs `url` and parses it, reading at most [`MAX_METRICS_BYTES`].
pub async fn scrape(client: &reqwest::Client, url: &str) -> Result<Scrape, String> {
    let mut r = client
        .get(url)
        .timeout(std::time::Duration::from_secs(10))
        .send()
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    if !r.status().is_success() {
        return Err(format!("{url}: HTTP {}", r.status()));
    }
    let mut body = Vec::new();
    while let Some(chunk) = r.chunk().await.map_err(|e| format!("{url}: {e}"))? {
        if body.len() + chunk.len() > MAX_METRICS_BYTES {
            return Err(format!("{url}: more than {MAX_METRICS_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    let text = String::from_utf8(body).map_err(|e| format!("{url}: not UTF-8 ({e})"))?;
    parse(&text).map_err(|e| format!("{url}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of vLLM v1's `/metrics` as python's prometheus_client writes it (text format
    /// 0.0.4: a counter's HELP and TYPE carry `_total`, a `_created` gauge beside it, one label
    /// set per model and engine, histograms with buckets, sum and count).
    const VLLM: &str = "\
# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{engine=\"0\",model_name=\"m\"} 4096.0
# HELP vllm:prefix_cache_queries_created Prefix cache queries, in terms of number of queried tokens.
# TYPE vllm:prefix_cache_queries_created gauge
vllm:prefix_cache_queries_created{engine=\"0\",model_name=\"m\"} 1.7e+09
# HELP vllm:prefix_cache_hits_total Prefix cache hits, in terms of number of cached tokens.
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{engine=\"0\",model_name=\"m\"} 1024.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.25
# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{engine=\"0\",model_name=\"m\"} 0.0
# HELP vllm:spec_decode_num_drafts_total Number of spec decoding drafts.
# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{engine=\"0\",model_name=\"m\"} 10.0
# HELP vllm:spec_decode_num_draft_tokens_total Number of draft tokens.
# TYPE vllm:spec_decode_num_draft_tokens_total counter
vllm:spec_decode_num_draft_tokens_total{engine=\"0\",model_name=\"m\"} 30.0
# HELP vllm:spec_decode_num_accepted_tokens_total Number of accepted tokens.
# TYPE vllm:spec_decode_num_accepted_tokens_total counter
vllm:spec_decode_num_accepted_tokens_total{engine=\"0\",model_name=\"m\"} 12.0
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"0.001\",model_name=\"m\"} 0.0
vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"+Inf\",model_name=\"m\"} 3.0
vllm:time_to_first_token_seconds_count{engine=\"0\",model_name=\"m\"} 3.0
vllm:time_to_first_token_seconds_sum{engine=\"0\",model_name=\"m\"} 0.25
";

    #[test]
    fn counters_are_differenced_and_gauges_read_after() {
        let before = parse(VLLM).expect("parse");
        let after = parse(
            &VLLM
                .replace("} 4096.0", "} 8192.0")
                .replace("} 1024.0", "} 3072.0")
                .replace("} 0.25", "} 0.5")
                .replace(
                    "drafts_total{engine=\"0\",model_name=\"m\"} 10.0",
                    "drafts_total{engine=\"0\",model_name=\"m\"} 20.0",
                )
                .replace("} 30.0", "} 60.0")
                .replace("} 12.0", "} 30.0"),
        )
        .expect("parse");
        let m = PointMetrics::between(&before, &after);
        assert_eq!(m.prefix_cache_queries, Some(4096.0));
        assert_eq!(m.prefix_cache_hits, Some(2048.0));
        assert_eq!(m.kv_cache_usage, Some(0.5));
        assert_eq!(m.preemptions, Some(0.0));
        assert_eq!(m.spec_drafts, Some(10.0));
        assert_eq!(m.spec_draft_tokens, Some(30.0));
        assert_eq!(m.spec_accepted_tokens, Some(18.0));
    }

    #[test]
    fn label_sets_are_summed_and_absent_families_stay_absent() {
        let text = "# TYPE vllm:num_preemptions_total counter\n\
vllm:num_preemptions_total{engine=\"0\"} 2\n\
vllm:num_preemptions_total{engine=\"1\"} 3";
        let s = parse(text).expect("parse");
        let m = PointMetrics::between(&Scrape::default(), &s);
        assert_eq!(m.preemptions, Some(5.0));
        assert_eq!(m.prefix_cache_hits, None);
        // A counter that fell (a reset) gives no difference.
        let m = PointMetrics::between(&s, &Scrape::default());
        assert_eq!(m.preemptions, None);
    }

    #[test]
    fn text_that_is_not_prometheus_is_an_error() {
        assert!(parse("<html>not metrics</html>").is_err());
        assert!(parse("").expect("empty is no family").values.is_empty());
    }
}
