//! The serve spec (TOML): two servers, the workload, rounds and the analysis design. Every
//! error names the file and the line of the offending key.

use super::error::{Error, Result};
use kernelab_model::Location;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Largest serve spec read: 1 MiB.
pub const MAX_SPEC_BYTES: u64 = 1 << 20;

/// One server: how to start it and how to know it is ready.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// URL of the server's Prometheus text metrics (e.g. `http://127.0.0.1:{port}/metrics`),
    /// scraped before and after each point; `{port}` is replaced. Absent: not scraped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_url: Option<String>,
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
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
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
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Exponential gaps (seeded).
    #[default]
    Poisson,
    /// Equal gaps.
    Constant,
}

/// One case: exact input and output lengths, run at each concurrency.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseSpec {
    /// Exact prompt tokens (a trace case: the largest of its requests, filled when read).
    #[serde(default)]
    pub input_tokens: usize,
    /// Exact completion tokens (a trace case: the largest of its requests).
    #[serde(default)]
    pub output_tokens: usize,
    /// Concurrency levels (in-flight requests).
    pub concurrency: Vec<usize>,
    /// Requests per second of this case (over `workload.rate`); one case per rate of a
    /// `workload.rates` sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// A request trace to replay (CSV or JSONL, relative to the spec's folder): each request
    /// at its arrival time with its own prompt and completion lengths (`super::trace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<PathBuf>,
    /// The unit of the trace's numeric times (`"s"`, `"ms"`; default: the layout's own).
    #[serde(default, skip_serializing_if = "is_auto")]
    pub time_unit: super::trace::TimeUnit,
    /// Replay faster (> 1) or slower (< 1) than recorded: arrival times are divided by this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_scale: Option<f64>,
    /// The first requests of the trace only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_limit: Option<usize>,
    /// Tokens per block of the trace's `hash_ids` (default 512, Mooncake's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_tokens: Option<usize>,
    /// The trace's requests, read when the spec is read (kept in the samples file's header,
    /// so a resumed run replays the same requests).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replay: Vec<super::trace::TraceRequest>,
}

/// Tokens per block of a trace's `hash_ids` unless `block_tokens` says: Mooncake's 512.
pub const DEFAULT_BLOCK_TOKENS: usize = 512;

fn is_auto(u: &super::trace::TimeUnit) -> bool {
    *u == super::trace::TimeUnit::Auto
}

impl CaseSpec {
    /// Measured requests of this case per point: its trace's, else the workload's `requests`.
    pub fn requests(&self, w: &Workload) -> usize {
        if self.replay.is_empty() {
            w.requests
        } else {
            self.replay.len()
        }
    }

    /// The prompt and completion lengths of request `i` (a warm-up beyond a trace's end takes
    /// its lengths from the trace's start).
    pub fn lengths(&self, i: usize) -> (usize, usize) {
        match self.replay.len() {
            0 => (self.input_tokens, self.output_tokens),
            n => {
                let r = &self.replay[i % n];
                (r.input_tokens, r.output_tokens)
            }
        }
    }
}

/// What is sent, and how much.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Warm-up before measuring, per case and concurrency: a number of requests (sent, not
    /// recorded), or `"steady"`: one at a time until the last `steady.last` agree (see
    /// [`Steady`]), each kept in the samples flagged `warmup`.
    #[serde(default = "default_warmup")]
    pub warmup: Warmup,
    /// The rule of `warmup = "steady"`.
    #[serde(default)]
    pub steady: Steady,
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
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub extra: BTreeMap<String, toml::Value>,
    /// Path of a cache-flush endpoint (POST) called before each case and concurrency (e.g.
    /// SGLang's `/flush_cache`); absent: caches are cleared only by the fresh start of each round.
    #[serde(default)]
    pub flush: Option<String>,
    /// Requests per second; absent: fixed concurrency (each worker sends when its last request
    /// ends). With a rate, each concurrency level is the cap on requests in flight.
    #[serde(default)]
    pub rate: Option<f64>,
    /// A request-rate sweep: every case is run once per rate, in this order (the spec is read
    /// with each case expanded into one case per rate, whose `rate` is set; the list is then
    /// empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rates: Vec<f64>,
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
fn default_warmup() -> Warmup {
    Warmup::Requests(1)
}

/// How a point warms up its server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Warmup {
    /// This many requests, sent before measuring and not recorded.
    Requests(usize),
    /// Until steady (see [`Steady`]), capped at `steady.max` requests.
    Steady,
}

impl Serialize for Warmup {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Warmup::Requests(n) => s.serialize_u64(*n as u64),
            Warmup::Steady => s.serialize_str("steady"),
        }
    }
}

/// A number of requests or `"steady"`.
impl schemars::JsonSchema for Warmup {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Warmup".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "oneOf": [{"type": "integer", "minimum": 0}, {"const": "steady"}]
        })
    }
}

impl<'de> Deserialize<'de> for Warmup {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Requests(usize),
            Word(String),
        }
        match Raw::deserialize(d)
            .map_err(|_| serde::de::Error::custom("expected a number of requests or \"steady\""))?
        {
            Raw::Requests(n) => Ok(Warmup::Requests(n)),
            Raw::Word(w) if w == "steady" => Ok(Warmup::Steady),
            Raw::Word(w) => Err(serde::de::Error::custom(format!(
                "{w:?}: expected a number of requests or \"steady\""
            ))),
        }
    }
}

/// `warmup = "steady"`: warm-up requests, one at a time, until the last `last` agree within
/// `within` (max − min over their median) on TTFT and on TPOT (E2E when not streaming), at most
/// `max` requests; a point that reaches `max` first is flagged as not steady.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Steady {
    /// How many of the latest requests must agree (at least 2).
    pub last: usize,
    /// Their largest spread, a fraction of their median.
    pub within: f64,
    /// The most warm-up requests.
    pub max: usize,
}

impl Default for Steady {
    fn default() -> Self {
        Steady {
            last: 4,
            within: 0.02,
            max: 32,
        }
    }
}

impl Workload {
    /// The most warm-up requests a point may send.
    pub fn warmup_most(&self) -> usize {
        match self.warmup {
            Warmup::Requests(n) => n,
            Warmup::Steady => self.steady.max,
        }
    }
}
fn default_request_timeout() -> f64 {
    300.0
}

/// Order of the servers across rounds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum RoundOrder {
    /// AB, BA, AB, BA, … (each round of two reversed by the next).
    #[default]
    Abba,
    /// AB every round.
    Ab,
}

/// Rounds: each round starts both servers fresh, one after the other.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rounds {
    /// Number of rounds (each gives one pair per case and metric).
    #[serde(default = "default_rounds")]
    pub count: usize,
    /// Most rounds (planned looks at `count`, 2·`count`, … and `max`); none: `count` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<usize>,
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
            max: None,
            order: RoundOrder::default(),
            stop_on_failure: false,
        }
    }
}

/// The analysis: the practical threshold and confidence of the verdicts, and the SLOs of
/// goodput.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnalysisSpec {
    /// Smallest change that matters, as a fraction (0.02 = 2%).
    #[serde(default = "default_threshold")]
    pub threshold: f64,
    /// Two-sided error rate of the intervals.
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// Metrics chosen before the run (e.g. `tpot_mean_s`): the planned looks stop when each is
    /// decided at every point; the others are secondary.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub primary: Vec<String>,
    /// Stop a primary metric once its interval's half-width is at most this (fraction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<f64>,
    /// SLOs of goodput (requests per second meeting every SLO given); none: no goodput.
    #[serde(default)]
    pub slo: Slo,
}

/// Service-level objectives, in milliseconds; a request meets them when each given one holds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Slo {
    /// TTFT at most this.
    pub ttft_ms: Option<f64>,
    /// TPOT at most this.
    pub tpot_ms: Option<f64>,
    /// E2E at most this.
    pub e2e_ms: Option<f64>,
    /// The SLO search over a rate sweep: a side sustains a rate when its goodput there is at
    /// least this share of the rate (default 0.9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attain: Option<f64>,
}

impl Slo {
    /// The share of the offered rate goodput must reach in the SLO search (default 0.9).
    pub fn attain_or_default(&self) -> f64 {
        self.attain.unwrap_or(0.9)
    }

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
            primary: Vec::new(),
            resolution: None,
            slo: Slo::default(),
        }
    }
}

/// How the two servers of a round share the machine.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum PlacementMode {
    /// One server at a time: each is started, measured and stopped before the other starts.
    #[default]
    Apart,
    /// Both servers are started at the start of a round and stopped at its end: at
    /// concurrency 1 their requests alternate A B B A request by request, at higher
    /// concurrency their points run one after the other while both are resident.
    Together,
}

/// Where the servers of a round run (`[placement]`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    /// `apart` (default) or `together`.
    #[serde(default)]
    pub mode: PlacementMode,
    /// With `together`: two disjoint GPU sets (values of `CUDA_VISIBLE_DEVICES` and
    /// `HIP_VISIBLE_DEVICES`, e.g. `["0", "1"]`), the baseline on the first in even rounds and
    /// on the second in odd ones; absent: both servers on the GPUs their own `env` gives
    /// (co-resident when they are the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<[String; 2]>,
}

impl Placement {
    /// Whether this is the default placement (one server at a time).
    pub fn is_apart(&self) -> bool {
        *self == Placement::default()
    }

    /// The GPU set of `slot` in round `round` (None: the server's own environment).
    pub fn gpus_of(&self, slot: crate::record::Slot, round: usize) -> Option<&str> {
        let sets = self.gpus.as_ref()?;
        let first = matches!(slot, crate::record::Slot::A) == (round % 2 == 0);
        Some(if first { &sets[0] } else { &sets[1] })
    }

    /// A line that names the placement (the document's `placement`).
    pub fn describe(&self) -> String {
        match (&self.mode, &self.gpus) {
            (PlacementMode::Apart, _) => "apart: one server at a time".into(),
            (PlacementMode::Together, None) => {
                "together: both servers resident for the whole round, on the GPUs of their own environment".into()
            }
            (PlacementMode::Together, Some([a, b])) => format!(
                "together: both servers resident for the whole round, on GPU sets {a} and {b}, swapped every round"
            ),
        }
    }
}

/// The environment variables a `[placement] gpus` set is given through.
pub const GPU_SET_VARIABLES: [&str; 2] = ["CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"];

/// A whole serve spec.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Where the servers of a round run.
    #[serde(default, skip_serializing_if = "Placement::is_apart")]
    pub placement: Placement,
}

/// The documented range of every numeric key of the serve spec (docs/serve-spec.md), checked
/// when a spec is read and again when a samples file's header is resumed.
pub mod range {
    /// Most seconds of `health_timeout_s` and `request_timeout_s` (one day).
    pub const MAX_TIMEOUT_S: f64 = 86_400.0;
    /// Most seconds of `stop_grace_s` (one hour).
    pub const MAX_GRACE_S: f64 = 3_600.0;
    /// Fewest requests per second of `rate`.
    pub const MIN_RATE: f64 = 0.001;
    /// Most requests per second of `rate`.
    pub const MAX_RATE: f64 = 1_000_000.0;
    /// Highest concurrency level.
    pub const MAX_CONCURRENCY: usize = 4_096;
    /// Most concurrency levels of one case.
    pub const MAX_LEVELS: usize = 64;
    /// Most cases.
    pub const MAX_CASES: usize = 1_000;
    /// Most prompt or completion tokens of one case (2^20).
    pub const MAX_TOKENS: usize = 1 << 20;
    /// Most prompt tokens held for one point: `input_tokens × (requests + warmup)` (2^24).
    pub const MAX_POINT_TOKENS: usize = 1 << 24;
    /// Most measured requests per point and round.
    pub const MAX_REQUESTS: usize = 1_000_000;
    /// Most warm-up requests per point.
    pub const MAX_WARMUP: usize = 100_000;
    /// Most requests of a whole run: rounds × 2 servers × levels × (requests + warmup).
    pub const MAX_RUN_REQUESTS: u64 = 100_000_000;
    /// Most rounds.
    pub const MAX_ROUNDS: usize = 1_000;
    /// Largest SLO, milliseconds (one day).
    pub const MAX_SLO_MS: f64 = 86_400_000.0;
}

/// The request fields kernelab sets itself, which `extra` may not override.
pub const OWNED_FIELDS: &[&str] = &[
    "prompt",
    "max_tokens",
    "temperature",
    "stream",
    "stream_options",
    "ignore_eos",
    "min_tokens",
    "model",
];

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

/// Why `p` is not a server path: a path must start with one `/` and hold no scheme, userinfo,
/// host, fragment, backslash, space or control character, so that `base_url + p` stays on the
/// server of `base_url`.
pub fn path_problem(p: &str) -> Option<String> {
    if !p.starts_with('/') {
        return Some(format!("{p:?}: expected a path starting with /"));
    }
    if p.starts_with("//") {
        return Some(format!(
            "{p:?}: a path starting with // names a host; expected a path on the server"
        ));
    }
    if let Some(c) = p
        .chars()
        .find(|c| c.is_control() || c.is_whitespace() || matches!(c, '@' | '\\' | '#'))
    {
        return Some(format!(
            "{p:?}: {c:?} is not allowed in a server path (no userinfo, host, fragment, spaces or control characters)"
        ));
    }
    if p.contains("://") {
        return Some(format!("{p:?}: expected a path, not a URL"));
    }
    None
}

/// Why `url` is not a plain `http://host:port/path` URL (no userinfo).
fn url_problem(url: &str) -> Option<String> {
    let Some(rest) = url.strip_prefix("http://") else {
        return Some(format!("{url:?}: expected an http:// URL"));
    };
    let authority = rest.split('/').next().unwrap_or("");
    if authority.is_empty() || authority.contains('@') {
        return Some(format!(
            "{url:?}: expected http://host:port/... with no userinfo"
        ));
    }
    if let Some(c) = url.chars().find(|c| c.is_control() || c.is_whitespace()) {
        return Some(format!("{url:?}: {c:?} is not allowed in a URL"));
    }
    None
}

/// Where a spec problem is reported: the key's line in the spec text, or (a resumed samples
/// file) its header line.
enum Origin<'a> {
    Toml(&'a str),
    Header,
}

impl Spec {
    /// Reads and validates a spec file (a regular file, at most 1 MiB; a FIFO is refused
    /// without blocking).
    pub fn read(path: &Path) -> Result<Spec> {
        let text = kernelab_model::read_regular_text(path, MAX_SPEC_BYTES).map_err(|source| {
            Error::ReadSpec {
                path: path.to_path_buf(),
                source,
            }
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
        spec.validate(Origin::Toml(text), path)?;
        let mut spec = spec.expand_rates();
        spec.read_traces(text, path)?;
        spec.validate(Origin::Toml(text), path)?;
        Ok(spec)
    }

    /// Reads the trace of every trace case (relative to the spec's folder) into its `replay`,
    /// and sets its lengths to the largest of its requests.
    fn read_traces(&mut self, text: &str, path: &Path) -> Result<()> {
        let dir = path.parent().unwrap_or(Path::new("."));
        for (i, c) in self.workload.cases.iter_mut().enumerate() {
            let Some(t) = &c.trace else { continue };
            let file = dir.join(t);
            // A `trace_limit` replays the first requests; without one, a trace of more
            // requests than are ever replayed is refused, never cut short.
            let take = match c.trace_limit {
                Some(n) => super::trace::Take::First(n),
                None => super::trace::Take::All(range::MAX_REQUESTS),
            };
            let rows = super::trace::read(&file, c.time_unit, take).map_err(|e| {
                let mut location = Location::default().with_path(&file);
                location.line = (e.line > 0).then_some(e.line);
                Error::Spec {
                    location,
                    message: format!(
                        "the trace of `workload.case[{i}]` (line {} of {}): {}",
                        locate(text, "workload.case", i, Some("trace")).unwrap_or(0),
                        path.display(),
                        e.message
                    ),
                }
            })?;
            let scale = c.time_scale.unwrap_or(1.0);
            c.replay = rows
                .into_iter()
                .map(|r| super::trace::TraceRequest {
                    at_s: r.at_s / scale,
                    ..r
                })
                .collect();
            let block = c.block_tokens.unwrap_or(DEFAULT_BLOCK_TOKENS);
            if let Some((n, r)) = c
                .replay
                .iter()
                .enumerate()
                .find(|(_, r)| r.hash_ids.len() > r.input_tokens.div_ceil(block))
            {
                return Err(Error::Spec {
                    location: Location::default().with_path(&file),
                    message: format!(
                        "the trace of `workload.case[{i}]`: request {} has {} block ids for {} \
                         prompt tokens: expected at most one per {block} tokens (`block_tokens`)",
                        n + 1,
                        r.hash_ids.len(),
                        r.input_tokens
                    ),
                });
            }
            c.input_tokens = c.replay.iter().map(|r| r.input_tokens).max().unwrap_or(0);
            c.output_tokens = c.replay.iter().map(|r| r.output_tokens).max().unwrap_or(0);
        }
        Ok(())
    }

    /// Each case once per rate of `workload.rates` (in the sweep's order within each case),
    /// the list then emptied: what runs, and what the samples file's header keeps.
    fn expand_rates(mut self) -> Spec {
        let rates = std::mem::take(&mut self.workload.rates);
        if rates.is_empty() {
            return self;
        }
        let cases = std::mem::take(&mut self.workload.cases);
        self.workload.cases = cases
            .into_iter()
            .flat_map(|c| {
                rates.iter().map(move |&r| CaseSpec {
                    rate: Some(r),
                    ..c.clone()
                })
            })
            .collect();
        self
    }

    /// Validates a spec read back from the header of the samples file `path` (line `line`):
    /// the same ranges as a spec file, the key named as `spec.<table>.<key>`.
    pub fn check_resumed(&self, path: &Path, line: u64) -> Result<()> {
        self.validate(Origin::Header, path).map_err(|e| match e {
            Error::Spec {
                mut location,
                message,
            } => {
                location.line = Some(line);
                location.field = location.field.map(|f| format!("spec.{f}"));
                Error::Samples {
                    location,
                    message: format!("header: {message}"),
                }
            }
            other => other,
        })
    }

    fn validate(&self, origin: Origin<'_>, path: &Path) -> Result<()> {
        use range::*;
        let bad = |table: &str, index: usize, key: &str, message: String| {
            let mut location =
                Location::default()
                    .with_path(path)
                    .with_field(if table.contains("case") {
                        format!("{table}[{index}].{key}")
                    } else {
                        format!("{table}.{key}")
                    });
            if let Origin::Toml(text) = origin {
                location.line = locate(text, table, index, Some(key));
            }
            Err(Error::Spec { location, message })
        };
        let within = |x: f64, lo: f64, hi: f64, lo_open: bool| {
            x.is_finite() && x <= hi && (x > lo || (!lo_open && x == lo))
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
            if let Some(m) = url_problem(&s.health_url) {
                return bad(name, 0, "health_url", m);
            }
            if let Some(m) = s.metrics_url.as_deref().and_then(url_problem) {
                return bad(name, 0, "metrics_url", m);
            }
            if let Some(m) = url_problem(&s.base_url) {
                return bad(name, 0, "base_url", m);
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
            if s.port == Some(0) {
                return bad(name, 0, "port", "expected a port in 1..=65535".into());
            }
            if !within(s.health_timeout_s, 0.0, MAX_TIMEOUT_S, true) {
                return bad(
                    name,
                    0,
                    "health_timeout_s",
                    format!(
                        "{}: expected seconds in (0, {MAX_TIMEOUT_S}]",
                        s.health_timeout_s
                    ),
                );
            }
            if !within(s.stop_grace_s, 0.0, MAX_GRACE_S, false) {
                return bad(
                    name,
                    0,
                    "stop_grace_s",
                    format!("{}: expected seconds in [0, {MAX_GRACE_S}]", s.stop_grace_s),
                );
            }
            if let Some(r) = &s.ready_log {
                if let Err(e) = regex::Regex::new(r) {
                    return bad(name, 0, "ready_log", format!("not a regex: {e}"));
                }
            }
        }
        let pl = &self.placement;
        if let Some(sets) = &pl.gpus {
            if pl.mode != PlacementMode::Together {
                return bad(
                    "placement",
                    0,
                    "gpus",
                    "GPU sets per side need mode = \"together\"".into(),
                );
            }
            let ids = |s: &str| -> Option<BTreeSet<String>> {
                let ok = !s.is_empty()
                    && s.split(',').all(|d| {
                        !d.is_empty()
                            && d.chars()
                                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == ':')
                    });
                ok.then(|| s.split(',').map(str::to_string).collect())
            };
            let (Some(a), Some(b)) = (ids(&sets[0]), ids(&sets[1])) else {
                return bad(
                    "placement",
                    0,
                    "gpus",
                    format!(
                        "{sets:?}: expected two device lists such as [\"0\", \"1\"] or [\"0,1\", \"2,3\"] (indices or GPU-… UUIDs, comma-separated)"
                    ),
                );
            };
            if let Some(d) = a.intersection(&b).next() {
                return bad(
                    "placement",
                    0,
                    "gpus",
                    format!("device {d} is in both GPU sets: the sets must be disjoint"),
                );
            }
            for (name, s) in [("baseline", &self.baseline), ("candidate", &self.candidate)] {
                if let Some(v) = GPU_SET_VARIABLES.iter().find(|v| s.env.contains_key(**v)) {
                    return bad(
                        name,
                        0,
                        "env",
                        format!(
                            "{v} is set here and by [placement] gpus: give the GPUs in one place"
                        ),
                    );
                }
            }
        }
        if pl.mode == PlacementMode::Together {
            if let (Some(a), Some(b)) = (self.baseline.port, self.candidate.port) {
                if a == b {
                    return bad(
                        "candidate",
                        0,
                        "port",
                        format!("{b}: both servers run at once with mode = \"together\", so they need different ports"),
                    );
                }
            }
        }
        let w = &self.workload;
        if w.cases.is_empty() || w.cases.len() > MAX_CASES {
            return bad(
                "workload",
                0,
                "case",
                format!("expected 1 to {MAX_CASES} [[workload.case]] tables"),
            );
        }
        if w.requests == 0 || w.requests > MAX_REQUESTS {
            return bad(
                "workload",
                0,
                "requests",
                format!("{}: expected 1 to {MAX_REQUESTS} requests", w.requests),
            );
        }
        if let Warmup::Requests(n) = w.warmup {
            if n > MAX_WARMUP {
                return bad(
                    "workload",
                    0,
                    "warmup",
                    format!("{n}: expected 0 to {MAX_WARMUP} requests"),
                );
            }
        }
        let st = &w.steady;
        if st.max > MAX_WARMUP || st.last < 2 || st.last > st.max {
            return bad(
                "workload.steady",
                0,
                "max",
                format!(
                    "last = {}, max = {}: expected 2 ≤ last ≤ max ≤ {MAX_WARMUP}",
                    st.last, st.max
                ),
            );
        }
        if !within(st.within, 0.0, 1.0, true) {
            return bad(
                "workload.steady",
                0,
                "within",
                format!("{}: expected a fraction in (0, 1]", st.within),
            );
        }
        let mut levels: u64 = 0;
        for (i, c) in w.cases.iter().enumerate() {
            if let Some(s) = c.time_scale {
                if !within(s, 0.0, 1e6, true) {
                    return bad(
                        "workload.case",
                        i,
                        "time_scale",
                        format!("{s}: expected a factor in (0, 1000000]"),
                    );
                }
            }
            if c.trace.is_some() && c.rate.is_some() {
                return bad(
                    "workload.case",
                    i,
                    "rate",
                    "a trace case sends at the trace's times: no rate".into(),
                );
            }
            if c.trace_limit == Some(0) || c.trace_limit.is_some_and(|n| n > MAX_REQUESTS) {
                return bad(
                    "workload.case",
                    i,
                    "trace_limit",
                    format!("expected 1 to {MAX_REQUESTS} requests"),
                );
            }
            if c.block_tokens == Some(0) || c.block_tokens.is_some_and(|n| n > range::MAX_TOKENS) {
                return bad(
                    "workload.case",
                    i,
                    "block_tokens",
                    format!("expected 1 to {} tokens", range::MAX_TOKENS),
                );
            }
            if c.trace.is_some() && c.replay.is_empty() {
                // Read (and its lengths checked) once the spec's ranges hold.
                continue;
            }
            for (key, n) in [
                ("input_tokens", c.input_tokens),
                ("output_tokens", c.output_tokens),
            ] {
                if n == 0 || n > MAX_TOKENS {
                    return bad(
                        "workload.case",
                        i,
                        key,
                        format!("{n}: expected 1 to {MAX_TOKENS} tokens"),
                    );
                }
            }
            let held = if c.replay.is_empty() {
                c.input_tokens
                    .saturating_mul(w.requests.saturating_add(w.warmup_most()))
            } else {
                (0..c.requests(w) + w.warmup_most())
                    .map(|i| c.lengths(i).0)
                    .fold(0usize, usize::saturating_add)
            };
            if held > MAX_POINT_TOKENS {
                return bad(
                    "workload.case",
                    i,
                    "input_tokens",
                    format!(
                        "{held} prompt tokens per point ({} requests with warm-ups); at most {MAX_POINT_TOKENS}",
                        c.requests(w) + w.warmup_most()
                    ),
                );
            }
            if c.concurrency.is_empty()
                || c.concurrency.len() > MAX_LEVELS
                || c.concurrency.iter().any(|&k| k == 0 || k > MAX_CONCURRENCY)
            {
                return bad(
                    "workload.case",
                    i,
                    "concurrency",
                    format!(
                        "expected a list of 1 to {MAX_LEVELS} concurrency levels, each 1 to {MAX_CONCURRENCY}"
                    ),
                );
            }
            levels += c.concurrency.len() as u64;
        }
        if w.vocab[0] >= w.vocab[1] {
            return bad(
                "workload",
                0,
                "vocab",
                "expected [low, high) with low < high".into(),
            );
        }
        if let Some(r) = w.rate {
            if !within(r, MIN_RATE, MAX_RATE, false) {
                return bad(
                    "workload",
                    0,
                    "rate",
                    format!("{r}: expected requests per second in [{MIN_RATE}, {MAX_RATE}]"),
                );
            }
        }
        let rate_bad = |r: f64| !within(r, MIN_RATE, MAX_RATE, false);
        if w.rates.len() > MAX_LEVELS || w.rates.iter().any(|&r| rate_bad(r)) {
            return bad(
                "workload",
                0,
                "rates",
                format!(
                    "expected at most {MAX_LEVELS} rates, each requests per second in [{MIN_RATE}, {MAX_RATE}]"
                ),
            );
        }
        if !w.rates.is_empty() && w.cases.len() * w.rates.len() > MAX_CASES {
            return bad(
                "workload",
                0,
                "rates",
                format!(
                    "{} cases × {} rates: expected at most {MAX_CASES} cases once expanded",
                    w.cases.len(),
                    w.rates.len()
                ),
            );
        }
        for (i, c) in w.cases.iter().enumerate() {
            if let Some(r) = c.rate {
                if rate_bad(r) {
                    return bad(
                        "workload.case",
                        i,
                        "rate",
                        format!("{r}: expected requests per second in [{MIN_RATE}, {MAX_RATE}]"),
                    );
                }
                if !w.rates.is_empty() {
                    return bad(
                        "workload.case",
                        i,
                        "rate",
                        "a case's own rate and a `workload.rates` sweep: give one".into(),
                    );
                }
            }
        }
        if let Some(a) = self.analysis.slo.attain {
            if !within(a, 0.0, 1.0, true) {
                return bad(
                    "analysis.slo",
                    0,
                    "attain",
                    format!("{a}: expected a share of the offered rate in (0, 1]"),
                );
            }
        }
        for (key, p) in [
            ("endpoint", Some(&w.endpoint)),
            ("flush", w.flush.as_ref()),
            ("tokenize", w.tokenize.as_ref()),
            ("detokenize", w.detokenize.as_ref()),
        ] {
            if let Some(m) = p.and_then(|p| path_problem(p)) {
                return bad("workload", 0, key, m);
            }
        }
        let owned: Vec<&str> = OWNED_FIELDS
            .iter()
            .copied()
            .filter(|k| w.extra.contains_key(*k))
            .collect();
        if !owned.is_empty() {
            return bad(
                "workload",
                0,
                "extra",
                format!(
                    "`extra` may not set {}: kernelab sets them from the case and the workload",
                    owned
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
        if !within(w.request_timeout_s, 0.0, MAX_TIMEOUT_S, true) {
            return bad(
                "workload",
                0,
                "request_timeout_s",
                format!(
                    "{}: expected seconds in (0, {MAX_TIMEOUT_S}]",
                    w.request_timeout_s
                ),
            );
        }
        if self.rounds.count < 2 || self.rounds.count > MAX_ROUNDS {
            return bad(
                "rounds",
                0,
                "count",
                format!(
                    "expected at least 2 rounds (one pair is no comparison) and at most {MAX_ROUNDS}; found {}",
                    self.rounds.count
                ),
            );
        }
        if let Some(max) = self.rounds.max {
            if max < self.rounds.count || max > MAX_ROUNDS {
                return bad(
                    "rounds",
                    0,
                    "max",
                    format!(
                        "{max}: expected at least `count` ({}) and at most {MAX_ROUNDS}",
                        self.rounds.count
                    ),
                );
            }
            if max > self.rounds.count && self.analysis.primary.is_empty() {
                return bad(
                    "rounds",
                    0,
                    "max",
                    "more rounds than `count` need `[analysis] primary` metrics to decide when to stop".into(),
                );
            }
        }
        let most_requests = w
            .cases
            .iter()
            .map(|c| c.requests(w))
            .max()
            .unwrap_or(w.requests);
        let total = (self.max_rounds() as u64)
            .saturating_mul(2)
            .saturating_mul(levels)
            .saturating_mul((most_requests + w.warmup_most()) as u64);
        if total > MAX_RUN_REQUESTS {
            return bad(
                "rounds",
                0,
                "count",
                format!("the run would send {total} requests; at most {MAX_RUN_REQUESTS}"),
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
        if let Some(r) = a.resolution {
            if !within(r, 0.0, 0.5, true) {
                return bad(
                    "analysis",
                    0,
                    "resolution",
                    format!("{r}: expected a fraction in (0, 0.5]"),
                );
            }
        }
        if !a.primary.is_empty() && matches!(origin, Origin::Toml(_)) {
            // A look at fewer rounds than an interval needs at the per-look level can never
            // decide: it spends its share of alpha for nothing. (A resumed samples file keeps
            // the plan it was run with, so that its record can still be read.)
            let looks = self.planned_looks().len().max(1);
            let per_look = a.alpha / looks as f64;
            let least = kernelab_stats::rank::min_pairs_for_interval(per_look).unwrap_or(1);
            if self.rounds.count < least {
                return bad(
                    "rounds",
                    0,
                    "count",
                    format!(
                        "{}: the first look can never decide: with {looks} planned looks at alpha {} each look's interval (level {:.4}) needs at least {least} rounds; set count = {least} or more (or a larger alpha)",
                        self.rounds.count,
                        a.alpha,
                        1.0 - per_look
                    ),
                );
            }
        }
        let names: Vec<String> = super::analysis::point_metrics(&[], 0.0, &a.slo)
            .into_iter()
            .map(|m| m.0)
            .collect();
        for m in &a.primary {
            if !names.contains(m) {
                return bad(
                    "analysis",
                    0,
                    "primary",
                    format!("{m:?} is no metric; expected one of {}", names.join(", ")),
                );
            }
            let timed = ["ttft", "tt2t", "itl", "tpot"];
            if !self.workload.stream && timed.iter().any(|t| m.starts_with(t)) {
                return bad(
                    "analysis",
                    0,
                    "primary",
                    format!(
                        "{m:?} is unavailable without streaming (`workload.stream = false`): it could never decide the stop"
                    ),
                );
            }
        }
        for (key, v) in [
            ("ttft_ms", a.slo.ttft_ms),
            ("tpot_ms", a.slo.tpot_ms),
            ("e2e_ms", a.slo.e2e_ms),
        ] {
            if let Some(v) = v {
                if !within(v, 0.0, MAX_SLO_MS, true) {
                    return bad(
                        "analysis.slo",
                        0,
                        key,
                        format!("{v}: expected milliseconds in (0, {MAX_SLO_MS}]"),
                    );
                }
            }
        }
        Ok(())
    }

    /// The most rounds a run may take: `max`, else `count`.
    pub fn max_rounds(&self) -> usize {
        self.rounds
            .max
            .unwrap_or(self.rounds.count)
            .max(self.rounds.count)
    }

    /// The planned looks, in rounds: `count`, doubling, and the maximum (one look at `count`
    /// when no maximum is given).
    pub fn planned_looks(&self) -> Vec<usize> {
        kernelab_stats::planned_looks(self.rounds.count, self.max_rounds())
    }

    /// Whether case `c` sends at scheduled arrivals (a rate or a trace), not from a fixed
    /// number of workers.
    pub fn open_loop(&self, c: usize) -> bool {
        self.rate_of(c).is_some()
            || self
                .workload
                .cases
                .get(c)
                .is_some_and(|c| !c.replay.is_empty())
    }

    /// The request rate of case `c` (its own, else the workload's); none: fixed concurrency.
    pub fn rate_of(&self, c: usize) -> Option<f64> {
        self.workload
            .cases
            .get(c)
            .and_then(|c| c.rate)
            .or(self.workload.rate)
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
