//! A server's own metrics: its Prometheus text (`metrics_url`), scraped before and after each
//! point, reduced to what bears on a verdict (prefix-cache hits and queries, KV-cache usage,
//! preemptions, speculative-decoding drafts and accepted tokens). The text is read in one pass,
//! linear in its length (a `/metrics` body of 100,000 series is no slower per series than one
//! of ten), keeping only the families chosen, and the differences are taken.

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
    sums: [Option<f64>; FIGURES],
}

/// How many [`Figure`]s there are.
const FIGURES: usize = 7;

impl Scrape {
    fn get(&self, f: Figure) -> Option<f64> {
        self.sums.get(f as usize).copied().flatten()
    }

    fn add(&mut self, f: Figure, v: f64) {
        if let Some(s) = self.sums.get_mut(f as usize) {
            *s = Some(s.unwrap_or(0.0) + v);
        }
    }
}

type Text<'t> = std::borrow::Cow<'t, str>;

/// The type a `# TYPE` line gives a family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Counter,
    Gauge,
    Histogram,
    Summary,
    Untyped,
}

impl Kind {
    fn of(word: &str) -> Option<Kind> {
        Some(match word {
            "counter" => Kind::Counter,
            "gauge" => Kind::Gauge,
            "histogram" => Kind::Histogram,
            "summary" => Kind::Summary,
            "untyped" => Kind::Untyped,
            _ => return None,
        })
    }
}

/// The family being read: its lines must come together.
struct Family<'t> {
    name: Text<'t>,
    kind: Option<Kind>,
    help: bool,
    has_samples: bool,
    /// The figure it gives (none: its samples are checked but not kept).
    figure: Option<Figure>,
    /// Label sets seen (figures only), each with its sample's timestamp.
    series: std::collections::HashMap<Vec<u8>, Option<f64>>,
}

impl<'t> Family<'t> {
    fn new(name: Text<'t>) -> Family<'t> {
        let bare = name.strip_suffix("_total").unwrap_or(&name);
        let figure = FAMILIES
            .iter()
            .find(|(_, names)| names.contains(&bare))
            .map(|(f, _)| *f);
        Family {
            name,
            kind: None,
            help: false,
            has_samples: false,
            figure,
            series: std::collections::HashMap::new(),
        }
    }

    /// Whether a sample named `sample` is of this family: `Some(true)` when it is the
    /// family's value, `Some(false)` when a histogram's or summary's part.
    fn holds(&self, sample: &str) -> Option<bool> {
        let rest = sample.strip_prefix(&*self.name)?;
        match (self.kind.unwrap_or(Kind::Untyped), rest) {
            (_, "") => Some(true),
            (Kind::Counter, "_total") => Some(true),
            (Kind::Histogram, "_bucket" | "_count" | "_sum") => Some(false),
            (Kind::Summary, "_count" | "_sum") => Some(false),
            _ => None,
        }
    }
}

/// Reads Prometheus text (exposition format 0.0.4, as `/metrics` serves it): the figures of
/// [`FAMILIES`] it holds. One pass over the lines, each family's label sets kept in a hash
/// map, so the work is linear in the text (100,000 series parse in milliseconds). Text that is
/// not Prometheus exposition is an error naming the line and what was expected; so are a
/// family whose lines are not together, a series given twice and a counter below zero.
pub fn parse(text: &str) -> Result<Scrape, String> {
    let mut scrape = Scrape::default();
    let mut seen: std::collections::HashSet<Text<'_>> = std::collections::HashSet::new();
    let mut family: Option<Family<'_>> = None;
    for (n, raw) in lines(text) {
        let at = |what: String| format!("line {n}: {what}");
        let line = raw.trim_matches([' ', '\t']);
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            let (word, rest) = split_word(comment.trim_start_matches([' ', '\t']));
            let is_type = match word {
                "TYPE" => true,
                "HELP" => false,
                // Any other comment is ignored.
                _ => continue,
            };
            let mut cur = Cursor::new(rest.trim_start_matches([' ', '\t']));
            let name = cur.name().map_err(at)?;
            let same = family
                .as_ref()
                .is_some_and(|f| f.name == name && !f.has_samples);
            if !same {
                start(&mut family, &mut seen, name).map_err(at)?;
            }
            let Some(f) = family.as_mut() else {
                continue;
            };
            if is_type {
                let word = cur.rest().trim_matches([' ', '\t']);
                let kind = Kind::of(word).ok_or_else(|| {
                    at(format!(
                        "{word:?}: expected a metric type (counter, gauge, histogram, summary or untyped)"
                    ))
                })?;
                if f.kind.replace(kind).is_some() {
                    return Err(at(format!("a second TYPE line for `{}`", f.name)));
                }
            } else if std::mem::replace(&mut f.help, true) {
                return Err(at(format!("a second HELP line for `{}`", f.name)));
            }
            continue;
        }
        let sample = Sample::parse(line).map_err(at)?;
        let is_value = match family.as_ref().and_then(|f| f.holds(&sample.name)) {
            Some(v) => v,
            None => {
                start(&mut family, &mut seen, sample.name.clone()).map_err(at)?;
                true
            }
        };
        let Some(f) = family.as_mut() else {
            continue;
        };
        f.has_samples = true;
        let kind = f.kind.unwrap_or(Kind::Untyped);
        if kind == Kind::Counter && is_value && (sample.value.is_nan() || sample.value < 0.0) {
            return Err(at(format!(
                "`{}`: a counter of {}: expected a count of at least 0",
                sample.name, sample.value
            )));
        }
        let Some(figure) = f.figure.filter(|_| is_value) else {
            continue;
        };
        if matches!(kind, Kind::Histogram | Kind::Summary) {
            continue;
        }
        // The label set as one key (each name and value as written, after its length; sorted
        // by name): one hash per sample.
        let mut key = Vec::with_capacity(
            sample
                .labels
                .iter()
                .map(|(k, v)| k.len() + v.len() + 16)
                .sum(),
        );
        for part in sample.labels.iter().flat_map(|(k, v)| [k, v]) {
            key.extend_from_slice(&part.len().to_le_bytes());
            key.extend_from_slice(part.as_bytes());
        }
        match f.series.entry(key) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(sample.timestamp);
            }
            std::collections::hash_map::Entry::Occupied(e) => {
                // A gauge given again at a later time keeps its first value (as the
                // `openmetrics-parser` crate, which read this text before, did).
                let later = matches!((e.get(), sample.timestamp), (Some(a), Some(b)) if b >= *a);
                if later && kind != Kind::Counter {
                    continue;
                }
                return Err(at(format!(
                    "`{}`: the same series again: expected each label set once",
                    sample.name
                )));
            }
        }
        if sample.value.is_finite() {
            scrape.add(figure, sample.value);
        }
    }
    Ok(scrape)
}

/// Ends the family being read and starts `name`'s, which must not have been read before.
fn start<'t>(
    family: &mut Option<Family<'t>>,
    seen: &mut std::collections::HashSet<Text<'t>>,
    name: Text<'t>,
) -> Result<(), String> {
    if let Some(f) = family.take() {
        seen.insert(f.name);
    }
    if seen.contains(&name) {
        return Err(format!(
            "`{name}` again, after other families: expected each family's lines together"
        ));
    }
    *family = Some(Family::new(name));
    Ok(())
}

/// The lines of `text` with their 1-based numbers; a line ends at `\n`, `\r\n` or `\r`.
fn lines(text: &str) -> impl Iterator<Item = (u64, &str)> {
    let mut rest = text;
    let mut n = 0u64;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        n += 1;
        // A plain loop: as fast as `memchr` on lines this short, and far faster in debug
        // builds.
        let end = rest
            .bytes()
            .position(|b| b == b'\n' || b == b'\r')
            .unwrap_or(rest.len());
        let line = rest.get(..end).unwrap_or_default();
        let skip = match rest.as_bytes().get(end..end + 2) {
            Some(b"\r\n") => 2,
            _ => 1,
        };
        rest = rest.get(end + skip..).unwrap_or_default();
        Some((n, line))
    })
}

/// The first word of `s` (up to a space or tab) and what follows it.
fn split_word(s: &str) -> (&str, &str) {
    let end = s.find([' ', '\t']).unwrap_or(s.len());
    s.split_at(end)
}

/// One sample line: `name{labels} value [timestamp] [# exemplar]`, or
/// `{"name", labels} value …`.
struct Sample<'t> {
    name: Text<'t>,
    /// (name, value), both as written (escapes kept), sorted by name.
    labels: Vec<(&'t str, &'t str)>,
    value: f64,
    timestamp: Option<f64>,
}

impl<'t> Sample<'t> {
    fn parse(line: &'t str) -> Result<Sample<'t>, String> {
        let mut cur = Cursor::new(line);
        let mut name = None;
        let mut spaced = false;
        if cur.peek() != Some(b'{') {
            let bare = cur
                .bare_name(true)
                .ok_or_else(|| format!("{:?}: expected a metric name", cur.word()))?;
            name = Some(Text::Borrowed(bare));
            spaced = cur.skip_ws();
        }
        let mut labels = Vec::new();
        if cur.eat(b'{') {
            spaced = false;
            cur.skip_ws();
            // `{}` and `{,}` hold no label.
            let mut open = !cur.eat(b'}');
            if open && cur.eat(b',') {
                cur.skip_ws();
                if !cur.eat(b'}') {
                    return Err(format!("{:?}: expected a label name", cur.word()));
                }
                open = false;
            }
            while open {
                let quoted = cur.peek() == Some(b'"');
                let key = if quoted {
                    cur.quoted_raw()?
                } else {
                    cur.bare_name(false)
                        .ok_or_else(|| format!("{:?}: expected a label name", cur.word()))?
                };
                cur.skip_ws();
                if cur.eat(b'=') {
                    cur.skip_ws();
                    labels.push((key, cur.quoted_raw()?));
                } else if quoted && name.is_none() && labels.is_empty() {
                    // `{"name", …}`: the metric's quoted name, first in the braces.
                    name = Some(unescape(key));
                } else {
                    return Err(format!("label `{key}`: expected `=` and a quoted value"));
                }
                cur.skip_ws();
                if cur.eat(b'}') {
                    break;
                }
                if !cur.eat(b',') {
                    return Err(format!(
                        "{:?}: expected `,` or `}}` after a label",
                        cur.word()
                    ));
                }
                cur.skip_ws();
                open = !cur.eat(b'}');
            }
        }
        let name = name.ok_or("expected a metric name")?;
        labels.sort_unstable_by(|a, b| a.0.cmp(b.0));
        if let Some(w) = labels.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(format!("`{name}`: label `{}` twice", w[0].0));
        }
        if !(cur.skip_ws() || spaced) {
            return Err(format!("`{name}`: expected a space, then the value"));
        }
        let word = cur.word();
        let value = number(word).ok_or_else(|| format!("`{name}`: {word:?}: expected a number"))?;
        cur.skip_ws();
        let mut timestamp = None;
        if !cur.rest().is_empty() && cur.peek() != Some(b'#') {
            let word = cur.word();
            timestamp = Some(
                number(word)
                    .filter(|t| t.is_finite())
                    .ok_or_else(|| format!("`{name}`: {word:?}: expected a timestamp"))?,
            );
            cur.skip_ws();
        }
        // An exemplar (`# {labels} value`) is not read; anything else is an error.
        if !cur.rest().is_empty() && cur.peek() != Some(b'#') {
            return Err(format!(
                "`{name}`: {:?}: expected the end of the line",
                cur.rest()
            ));
        }
        Ok(Sample {
            name,
            labels,
            value,
            timestamp,
        })
    }
}

/// A sample's value or timestamp: a decimal number, `+Inf`, `-Inf` or `NaN`.
fn number(word: &str) -> Option<f64> {
    let digits = word.trim_start_matches(['+', '-']);
    let ok = digits
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_digit() || b == b'.')
        || ["inf", "infinity", "nan"]
            .iter()
            .any(|w| digits.eq_ignore_ascii_case(w));
    ok.then(|| word.parse::<f64>().ok()).flatten()
}

/// A position in one line.
struct Cursor<'t> {
    s: &'t str,
    at: usize,
}

impl<'t> Cursor<'t> {
    fn new(s: &'t str) -> Cursor<'t> {
        Cursor { s, at: 0 }
    }
    fn rest(&self) -> &'t str {
        self.s.get(self.at..).unwrap_or_default()
    }
    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.at).copied()
    }
    fn eat(&mut self, b: u8) -> bool {
        let hit = self.peek() == Some(b);
        self.at += usize::from(hit);
        hit
    }
    /// Skips spaces and tabs; whether there were any.
    fn skip_ws(&mut self) -> bool {
        let from = self.at;
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.at += 1;
        }
        self.at > from
    }
    /// The next word (up to a space or tab), consumed: a value, or what a message quotes.
    fn word(&mut self) -> &'t str {
        let (w, _) = split_word(self.rest());
        self.at += w.len();
        w
    }
    /// A bare metric name (`[A-Za-z_:][A-Za-z0-9_:]*`; `colon` false: a label name, no `:`).
    fn bare_name(&mut self, colon: bool) -> Option<&'t str> {
        let rest = self.rest();
        let bytes = rest.as_bytes();
        let mut len = 0;
        while let Some(&b) = bytes.get(len) {
            let ok = b.is_ascii_alphabetic()
                || b == b'_'
                || (colon && b == b':')
                || (len > 0 && b.is_ascii_digit());
            if !ok {
                break;
            }
            len += 1;
        }
        let name = rest.get(..len).filter(|n| !n.is_empty())?;
        self.at += len;
        Some(name)
    }
    /// A family name in a `# HELP` or `# TYPE` line: bare or quoted, then a space or the end.
    fn name(&mut self) -> Result<Text<'t>, String> {
        let name = if self.peek() == Some(b'"') {
            self.quoted()?
        } else {
            Text::Borrowed(
                self.bare_name(true)
                    .ok_or_else(|| format!("{:?}: expected a metric name", self.word()))?,
            )
        };
        if !matches!(self.peek(), None | Some(b' ' | b'\t')) {
            return Err(format!("{:?}: expected a metric name", self.rest()));
        }
        Ok(name)
    }
    /// A quoted string as written (escapes kept), the quotes consumed.
    fn quoted_raw(&mut self) -> Result<&'t str, String> {
        if !self.eat(b'"') {
            return Err(format!("{:?}: expected a quoted value", self.word()));
        }
        let from = self.at;
        let bytes = self.s.as_bytes();
        loop {
            match bytes.get(self.at) {
                None => return Err("a quoted value with no closing `\"`".into()),
                Some(b'"') => break,
                Some(b'\\') => self.at += 2,
                Some(_) => self.at += 1,
            }
        }
        let raw = self
            .s
            .get(from..self.at)
            .ok_or("a quoted value cut inside a character")?;
        self.at += 1;
        Ok(raw)
    }
    /// A quoted name, its escapes (`\\`, `\n`, `\"`) resolved.
    fn quoted(&mut self) -> Result<Text<'t>, String> {
        Ok(unescape(self.quoted_raw()?))
    }
}

/// A quoted name as written, its escapes (`\\`, `\n`, `\"`) resolved; a backslash before
/// anything else is kept.
fn unescape(raw: &str) -> Text<'_> {
    if !raw.contains('\\') {
        return Text::Borrowed(raw);
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match (c, chars.clone().next()) {
            ('\\', Some('n')) => out.push('\n'),
            ('\\', Some(e @ ('\\' | '"'))) => out.push(e),
            _ => {
                out.push(c);
                continue;
            }
        }
        chars.next();
    }
    Text::Owned(out)
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

    /// The parser this one replaced (the `openmetrics-parser` crate, quadratic in the series
    /// of a family), kept to check that this one reads what it read, the same.
    fn old_parse(text: &str) -> Result<[Option<f64>; FIGURES], String> {
        use openmetrics_parser::PrometheusValue;
        let mut sums = [None; FIGURES];
        if text.trim().is_empty() {
            return Ok(sums);
        }
        let owned;
        let text = if text.ends_with('\n') {
            text
        } else {
            owned = format!("{text}\n");
            &owned
        };
        let exposition =
            openmetrics_parser::prometheus::parse_prometheus(text).map_err(|e| e.to_string())?;
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
                    let s = &mut sums[*f as usize];
                    *s = Some(s.unwrap_or(0.0) + v);
                }
            }
        }
        Ok(sums)
    }

    /// Small Prometheus texts, valid and not, from a seed: lines drawn from the pieces real
    /// servers write and the ways they go wrong.
    fn generated(seed: u64) -> String {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        const NAMES: &[&str] = &[
            "vllm:num_preemptions_total",
            "vllm:num_preemptions",
            "vllm:kv_cache_usage_perc",
            "sglang:token_usage",
            "vllm:prefix_cache_hits_total",
            "other_metric",
            "\"vllm:num_preemptions_total\"",
        ];
        const SUFFIXES: &[&str] = &[
            "", "", "", "_total", "_bucket", "_sum", "_count", "_created",
        ];
        const TYPES: &[&str] = &[
            "counter",
            "gauge",
            "untyped",
            "histogram",
            "summary",
            "bogus",
        ];
        const LABELS: &[&str] = &[
            "",
            "{engine=\"0\"}",
            "{engine=\"1\"}",
            "{engine=\"0\",model=\"m\"}",
            "{model=\"m\", engine=\"1\",}",
            "{le=\"+Inf\"}",
            "{le=\"0.5\",engine=\"0\"}",
            "{quantile=\"0.5\"}",
            "{a=\"x\\\"y\\n\"}",
            "{,}",
            "{}",
            "{engine=\"0\",engine=\"1\"}",
            "{engine=0}",
        ];
        const VALUES: &[&str] = &[
            "0", "1", "2", "2.5", "1e3", "-1", "NaN", "+Inf", "-Inf", "3.", "1.5e-3", "x",
        ];
        const ENDS: &[&str] = &["\n", "\n", "\n", "\r\n", "\n\n"];
        let mut text = String::new();
        for _ in 0..1 + next(8) {
            let name = NAMES[next(NAMES.len())];
            match next(10) {
                0 | 1 => text.push_str(&format!("# TYPE {name} {}", TYPES[next(TYPES.len())])),
                2 => text.push_str(&format!("# HELP {name} some help \\n text")),
                3 => text.push_str("# a comment"),
                _ => {
                    let full = match name.strip_prefix('"') {
                        Some(_) => name.to_string(),
                        None => format!("{name}{}", SUFFIXES[next(SUFFIXES.len())]),
                    };
                    let labels = LABELS[next(LABELS.len())];
                    let value = VALUES[next(VALUES.len())];
                    let ts = if next(6) == 0 { " 1700000000" } else { "" };
                    if full.starts_with('"') {
                        let inner = labels.trim_start_matches('{');
                        let sep = if inner == "}" { "" } else { ", " };
                        text.push_str(&format!("{{{full}{sep}{inner} {value}{ts}"));
                    } else {
                        text.push_str(&format!("{full}{labels} {value}{ts}"));
                    }
                }
            }
            text.push_str(ENDS[next(ENDS.len())]);
        }
        text
    }

    #[test]
    fn what_the_old_parser_read_this_one_reads_the_same() {
        let mut read = 0;
        for seed in 0..20_000u64 {
            let text = generated(seed);
            let Ok(old) = old_parse(&text) else {
                continue;
            };
            read += 1;
            let new = parse(&text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            assert_eq!(new.sums, old, "{text:?}");
        }
        // Enough of the texts are valid for the comparison to mean something.
        assert!(read > 2_000, "{read} texts read");
        assert_eq!(
            parse(VLLM).expect("vllm").sums,
            old_parse(VLLM).expect("old")
        );
    }

    #[test]
    fn a_hundred_thousand_series_parse_in_linear_time() {
        // 100,000 series of one family (each kept to find a series given twice), 7.8 MB: as
        // large as a scrape may be.
        let mut text = String::from("# TYPE vllm:num_preemptions_total counter\n");
        for i in 0..100_000 {
            text.push_str(&format!(
                "vllm:num_preemptions_total{{engine=\"{i}\",model_name=\"m\"}} 2\n"
            ));
        }
        assert!(text.len() <= MAX_METRICS_BYTES);
        // CPU time of this thread: the test's own work, whatever else runs on the machine.
        let cpu = || {
            let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
            std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
        };
        let (t, c) = (std::time::Instant::now(), cpu());
        let s = parse(&text).expect("parse");
        let (took, busy) = (t.elapsed(), cpu() - c);
        assert_eq!(s.get(Figure::Preemptions), Some(200_000.0));
        // The replaced parser took about 5 s for 10,000 series (debug build) and grew with
        // the square of their number: some 500 s for these. This one takes about 0.3 s of CPU.
        assert!(busy < std::time::Duration::from_secs(1), "{busy:?} of CPU");
        assert!(took < std::time::Duration::from_secs(10), "{took:?}");
    }

    #[test]
    fn errors_name_the_line() {
        for (text, said) in [
            ("# TYPE a counter\na -1\n", "line 2: `a`: a counter of -1"),
            ("a{x=\"1\"} 1\nb 2\na{x=\"2\"} 3\n", "line 3: `a` again"),
            (
                "vllm:num_preemptions{x=\"1\"} 1\nvllm:num_preemptions{x=\"1\"} 2\n",
                "line 2: `vllm:num_preemptions`: the same series again",
            ),
            (
                "# TYPE a countr\n",
                "line 1: \"countr\": expected a metric type",
            ),
            (
                "a 1 2 3\n",
                "line 1: `a`: \"3\": expected the end of the line",
            ),
            ("a{b=\"c} 1\n", "line 1: a quoted value with no closing"),
            ("a 0x10\n", "line 1: `a`: \"0x10\": expected a number"),
        ] {
            let e = parse(text).expect_err(text);
            assert!(e.starts_with(said), "{text:?}: {e}");
        }
    }

    #[test]
    fn the_fuzz_regression_inputs_read_as_the_old_parser_read_them() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/fuzz/prometheus_metrics");
        let text = std::fs::read_to_string(dir.join("many_series.txt")).expect("seed");
        let s = parse(&text).expect("many series");
        assert_eq!(s.sums, old_parse(&text).expect("old"));
        assert_eq!(s.get(Figure::Preemptions), Some(5995.0));
        // Quoted names, `{,}`, CR and CRLF line ends, an exemplar, a histogram: read; then a
        // family whose lines are split is refused, naming the line.
        let text = std::fs::read_to_string(dir.join("edge_cases.txt")).expect("seed");
        let e = parse(&text).expect_err("split family");
        assert!(
            e.starts_with("line 16: `vllm:num_preemptions` again"),
            "{e}"
        );
        let cut = text
            .rsplit_once("vllm:num_preemptions{x=\"2\"}")
            .expect("cut")
            .0;
        let s = parse(cut).expect("edge cases");
        // vLLM's 0.25 (given again later: the first kept) and SGLang's 0.1.
        assert_eq!(s.get(Figure::KvCacheUsage), Some(0.35));
        assert_eq!(s.get(Figure::PrefixCacheHits), Some(3.0));
        assert_eq!(s.get(Figure::Preemptions), Some(1.0));
    }

    #[test]
    fn text_that_is_not_prometheus_is_an_error() {
        assert!(parse("<html>not metrics</html>").is_err());
        assert!(parse("").expect("empty is no family") == Scrape::default());
    }
}
