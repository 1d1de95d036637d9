//! The serve spec (TOML): two servers, the workload, rounds and the analysis design. Every
//! error names the file and the line of the offending key.

use super::error::{Error, Result};
use kernelab_model::Location;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One server: how to start it and how to know it is ready.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSpec {
    /// Program and arguments; `{port}` is replaced by the port.
    pub argv: Vec<String>,
    /// Extra environment variables.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Working directory (relative to the spec's folder); default: the spec's folder.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// A fixed port; absent: a free port is chosen at each start.
    #[serde(default)]
    pub port: Option<u16>,
    /// Base URL of the API; `{port}` is replaced. Default `http://127.0.0.1:{port}`.
    #[serde(default = "default_base_url")]
    pub base_url: String,
    /// Health URL, polled until it answers 200; `{port}` is replaced.
    pub health_url: String,
    /// Seconds to wait for health before the start counts as failed.
    #[serde(default = "default_health_timeout")]
    pub health_timeout_s: f64,
    /// A regex the server's log must match before it counts as ready (besides health).
    #[serde(default)]
    pub ready_log: Option<String>,
    /// Seconds between SIGTERM and SIGKILL when stopping.
    #[serde(default = "default_grace")]
    pub stop_grace_s: f64,
    /// Value of the request's `model` field; absent: not sent.
    #[serde(default)]
    pub model: Option<String>,
}

fn default_base_url() -> String {
    "http://127.0.0.1:{port}".into()
}
fn default_health_timeout() -> f64 {
    120.0
}
fn default_grace() -> f64 {
    10.0
}

/// How prompts are sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptKind {
    /// A list of token ids (OpenAI `/v1/completions` accepts them).
    #[default]
    TokenIds,
    /// Text: the token ids decoded by the server's detokenize endpoint, or without one the ids
    /// written as words.
    Text,
}

/// Arrival process of a request rate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Exponential gaps (seeded).
    #[default]
    Poisson,
    /// Equal gaps.
    Constant,
}

/// One case: exact input and output lengths, run at each concurrency.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseSpec {
    /// Exact prompt tokens.
    pub input_tokens: usize,
    /// Exact completion tokens.
    pub output_tokens: usize,
    /// Concurrency levels (in-flight requests).
    pub concurrency: Vec<usize>,
}

/// What is sent, and how much.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// Path of the completion endpoint.
    #[serde(default = "default_endpoint")]
    pub endpoint: String,
    /// Stream the response (SSE); false: TTFT and ITL are unavailable.
    #[serde(default = "yes")]
    pub stream: bool,
    /// Prompt form.
    #[serde(default)]
    pub prompt: PromptKind,
    /// Path of a detokenize endpoint (`{"tokens": [...]}` → `{"text": ...}`) for text prompts.
    #[serde(default)]
    pub detokenize: Option<String>,
    /// Path of a tokenize endpoint (`{"input": text}` → `{"tokens": [...]}`) that checks each
    /// text prompt has exactly the case's input tokens.
    #[serde(default)]
    pub tokenize: Option<String>,
    /// Seed of the prompt token ids.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Token ids are drawn from `[vocab[0], vocab[1])`.
    #[serde(default = "default_vocab")]
    pub vocab: [u32; 2],
    /// Measured requests per case and concurrency, per round.
    #[serde(default = "default_requests")]
    pub requests: usize,
    /// Warm-up requests per case and concurrency before measuring (not recorded).
    #[serde(default = "default_warmup")]
    pub warmup: usize,
    /// Send `ignore_eos: true`.
    #[serde(default = "yes")]
    pub ignore_eos: bool,
    /// Send `min_tokens` equal to the output length.
    #[serde(default)]
    pub min_tokens: bool,
    /// Seconds before a request counts as failed.
    #[serde(default = "default_request_timeout")]
    pub request_timeout_s: f64,
    /// Extra JSON fields merged into every request body.
    #[serde(default)]
    pub extra: BTreeMap<String, toml::Value>,
    /// Path of a cache-flush endpoint (POST) called before each case and concurrency (e.g.
    /// SGLang's `/flush_cache`); absent: caches are cleared only by the fresh start of each round.
    #[serde(default)]
    pub flush: Option<String>,
    /// Requests per second; absent: fixed concurrency (each worker sends when its last request
    /// ends). With a rate, each concurrency level is the cap on requests in flight.
    #[serde(default)]
    pub rate: Option<f64>,
    /// Arrival process at `rate`: `"poisson"` (seeded exponential gaps) or `"constant"`.
    #[serde(default)]
    pub arrivals: Arrivals,
    /// The cases.
    #[serde(rename = "case")]
    pub cases: Vec<CaseSpec>,
}

fn default_endpoint() -> String {
    "/v1/completions".into()
}
fn yes() -> bool {
    true
}
fn default_seed() -> u64 {
    1
}
fn default_vocab() -> [u32; 2] {
    [100, 1000]
}
fn default_requests() -> usize {
    8
}
fn default_warmup() -> usize {
    1
}
fn default_request_timeout() -> f64 {
    300.0
}

/// Order of the servers across rounds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RoundOrder {
    /// AB, BA, AB, BA, … (each round of two reversed by the next).
    #[default]
    Abba,
    /// AB every round.
    Ab,
}

/// Rounds: each round starts both servers fresh, one after the other.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rounds {
    /// Number of rounds (each gives one pair per case and metric).
    #[serde(default = "default_rounds")]
    pub count: usize,
    /// Order.
    #[serde(default)]
    pub order: RoundOrder,
    /// Stop the run at the first failed round (else go on and record it).
    #[serde(default)]
    pub stop_on_failure: bool,
}

fn default_rounds() -> usize {
    4
}

impl Default for Rounds {
    fn default() -> Self {
        Rounds {
            count: default_rounds(),
            order: RoundOrder::default(),
            stop_on_failure: false,
        }
    }
}

/// The analysis: the practical threshold and confidence of the verdicts, and the SLOs of
/// goodput.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnalysisSpec {
    /// Smallest change that matters, as a fraction (0.02 = 2%).
    #[serde(default = "default_threshold")]
    pub threshold: f64,
    /// Two-sided error rate of the intervals.
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// SLOs of goodput (requests per second meeting every SLO given); none: no goodput.
    #[serde(default)]
    pub slo: Slo,
}

/// Service-level objectives, in milliseconds; a request meets them when each given one holds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Slo {
    /// TTFT at most this.
    pub ttft_ms: Option<f64>,
    /// TPOT at most this.
    pub tpot_ms: Option<f64>,
    /// E2E at most this.
    pub e2e_ms: Option<f64>,
}

impl Slo {
    /// Whether any SLO is set.
    pub fn any(&self) -> bool {
        self.ttft_ms.is_some() || self.tpot_ms.is_some() || self.e2e_ms.is_some()
    }
}

fn default_threshold() -> f64 {
    0.02
}
fn default_alpha() -> f64 {
    0.05
}

impl Default for AnalysisSpec {
    fn default() -> Self {
        AnalysisSpec {
            threshold: default_threshold(),
            alpha: default_alpha(),
            slo: Slo::default(),
        }
    }
}

/// A whole serve spec.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// The baseline server.
    pub baseline: ServerSpec,
    /// The candidate server.
    pub candidate: ServerSpec,
    /// The workload.
    pub workload: Workload,
    /// Rounds.
    #[serde(default)]
    pub rounds: Rounds,
    /// Analysis.
    #[serde(default)]
    pub analysis: AnalysisSpec,
}

/// A finite number above zero.
fn positive(x: f64) -> bool {
    x.is_finite() && x > 0.0
}

/// 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> u64 {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u64
        + 1
}

/// The line of `key` inside the `index`-th `[table]` or `[[table]]` header, else of the header,
/// else `None`.
fn locate(text: &str, table: &str, index: usize, key: Option<&str>) -> Option<u64> {
    let mut seen = 0;
    let mut inside = false;
    let mut header_line = None;
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if l.starts_with('[') {
            let name = l
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim();
            if inside {
                break;
            }
            if name == table {
                if seen == index {
                    inside = true;
                    header_line = Some(i as u64 + 1);
                }
                seen += 1;
            }
            continue;
        }
        if inside {
            if let Some(k) = key {
                let lhs = l.split('=').next().unwrap_or("").trim();
                if lhs == k {
                    return Some(i as u64 + 1);
                }
            }
        }
    }
    header_line
}

impl Spec {
    /// Reads and validates a spec file.
    pub fn read(path: &Path) -> Result<Spec> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::ReadSpec {
            path: path.to_path_buf(),
            source,
        })?;
        Spec::parse(&text, path)
    }

    /// Parses and validates spec text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Spec> {
        let spec: Spec = toml::from_str(text).map_err(|e| {
            let mut location = Location::default().with_path(path);
            location.line = e.span().map(|s| line_of(text, s.start));
            Error::Spec {
                location,
                message: e.message().trim().to_string(),
            }
        })?;
        spec.validate(text, path)?;
        Ok(spec)
    }

    fn validate(&self, text: &str, path: &Path) -> Result<()> {
        let bad = |table: &str, index: usize, key: &str, message: String| {
            let mut location =
                Location::default()
                    .with_path(path)
                    .with_field(if table.contains("case") {
                        format!("{table}[{index}].{key}")
                    } else {
                        format!("{table}.{key}")
                    });
            location.line = locate(text, table, index, Some(key));
            Err(Error::Spec { location, message })
        };
        for (name, s) in [("baseline", &self.baseline), ("candidate", &self.candidate)] {
            if s.argv.is_empty() || s.argv[0].is_empty() {
                return bad(
                    name,
                    0,
                    "argv",
                    "expected a program and its arguments".into(),
                );
            }
            if !(s.health_url.starts_with("http://")) {
                return bad(
                    name,
                    0,
                    "health_url",
                    format!("{:?}: expected an http:// URL", s.health_url),
                );
            }
            if !s.base_url.starts_with("http://") {
                return bad(
                    name,
                    0,
                    "base_url",
                    format!("{:?}: expected an http:// URL", s.base_url),
                );
            }
            let uses_port = s.argv.iter().any(|a| a.contains("{port}"));
            if s.port.is_none() && !uses_port {
                return bad(
                    name,
                    0,
                    "argv",
                    "no port is set and no argument contains {port}: the server cannot be told its free port".into(),
                );
            }
            if !positive(s.health_timeout_s) {
                return bad(
                    name,
                    0,
                    "health_timeout_s",
                    "expected a positive number of seconds".into(),
                );
            }
            if !(positive(s.stop_grace_s) || s.stop_grace_s == 0.0) {
                return bad(
                    name,
                    0,
                    "stop_grace_s",
                    "expected zero or more seconds".into(),
                );
            }
            if let Some(r) = &s.ready_log {
                if let Err(e) = regex::Regex::new(r) {
                    return bad(name, 0, "ready_log", format!("not a regex: {e}"));
                }
            }
        }
        let w = &self.workload;
        if w.cases.is_empty() {
            return bad(
                "workload",
                0,
                "case",
                "expected at least one [[workload.case]]".into(),
            );
        }
        for (i, c) in w.cases.iter().enumerate() {
            if c.input_tokens == 0 {
                return bad(
                    "workload.case",
                    i,
                    "input_tokens",
                    "expected at least 1 token".into(),
                );
            }
            if c.output_tokens == 0 {
                return bad(
                    "workload.case",
                    i,
                    "output_tokens",
                    "expected at least 1 token".into(),
                );
            }
            if c.concurrency.is_empty() || c.concurrency.contains(&0) {
                return bad(
                    "workload.case",
                    i,
                    "concurrency",
                    "expected a list of concurrency levels of at least 1".into(),
                );
            }
        }
        if w.requests == 0 {
            return bad(
                "workload",
                0,
                "requests",
                "expected at least 1 request".into(),
            );
        }
        if w.vocab[0] >= w.vocab[1] {
            return bad(
                "workload",
                0,
                "vocab",
                "expected [low, high) with low < high".into(),
            );
        }
        if w.rate.is_some_and(|r| !positive(r)) {
            return bad(
                "workload",
                0,
                "rate",
                "expected requests per second above 0".into(),
            );
        }
        if !w.endpoint.starts_with('/') {
            return bad(
                "workload",
                0,
                "endpoint",
                "expected a path starting with /".into(),
            );
        }
        if !positive(w.request_timeout_s) {
            return bad(
                "workload",
                0,
                "request_timeout_s",
                "expected a positive number".into(),
            );
        }
        if self.rounds.count < 2 {
            return bad(
                "rounds",
                0,
                "count",
                "expected at least 2 rounds (one pair is no comparison)".into(),
            );
        }
        let a = &self.analysis;
        if !(a.alpha > 0.0 && a.alpha < 0.5) {
            return bad(
                "analysis",
                0,
                "alpha",
                "expected a value in (0, 0.5)".into(),
            );
        }
        if !(a.threshold >= 0.0 && a.threshold < 1.0) {
            return bad(
                "analysis",
                0,
                "threshold",
                "expected a fraction in [0, 1)".into(),
            );
        }
        Ok(())
    }

    /// Every (case index, concurrency) pair in run order.
    pub fn points(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (i, c) in self.workload.cases.iter().enumerate() {
            for &k in &c.concurrency {
                out.push((i, k));
            }
        }
        out
    }
}
