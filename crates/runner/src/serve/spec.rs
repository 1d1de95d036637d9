//! The serve spec (TOML): two servers, the workload, rounds and the analysis design (read
//! and checked in [`super::check`]).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

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

impl Spec {
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

    /// The order of round `k` when round 0 had order `start`.
    pub fn round_order(&self, k: usize, start: kernelab_stats::Order) -> kernelab_stats::Order {
        match self.rounds.order {
            RoundOrder::Abba => kernelab_stats::abba_order(k, start),
            RoundOrder::Ab => start,
        }
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
