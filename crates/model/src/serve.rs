//! What `kernelab serve` finds: plain result types shared by the runner, the CLI and the
//! renderers.

use kernelab_stats::{Analysis, Change, Direction};
use serde::{Deserialize, Serialize};

pub mod metric;

/// One metric of one case at one concurrency, baseline versus candidate, paired by round.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServeMetric {
    /// Case index (0-based, spec order).
    pub case: usize,
    /// Exact prompt tokens of the case.
    pub input_tokens: usize,
    /// Exact completion tokens of the case.
    pub output_tokens: usize,
    /// Requests in flight.
    pub concurrency: usize,
    /// Metric name (`ttft_mean_s`, `tpot_p99_s`, `throughput_tok_s`, …).
    pub metric: String,
    /// Whether lower or higher is better.
    pub direction: Direction,
    /// Median over rounds of the baseline's per-round figure; `None`: unavailable.
    pub baseline: Option<f64>,
    /// Median over rounds of the candidate's per-round figure.
    pub candidate: Option<f64>,
    /// The change between the two medians shown (`candidate` / `baseline`), not the paired
    /// estimate (that is `analysis`).
    pub medians: Change,
    /// Per round (in round order) the baseline and candidate figures, rounds where both exist.
    pub rounds: Vec<RoundFigures>,
    /// The paired analysis (ratio candidate / baseline with its interval and verdict); `None`
    /// when fewer than two rounds have both figures.
    pub analysis: Option<Analysis>,
    /// Whether the spec named this metric in `[analysis] primary` (its analysis is the planned
    /// looks' design; the others are secondary, at 1 − α over all rounds).
    #[serde(default)]
    pub primary: bool,
}

/// The planned looks of a run over rounds and where it stopped.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServePlan {
    /// Rounds of the first look (`[rounds] count`).
    pub count: usize,
    /// Most rounds (`[rounds] max`).
    pub max: usize,
    /// The planned looks, in rounds.
    pub planned_looks: Vec<usize>,
    /// The primary metrics.
    pub primary: Vec<String>,
    /// Target half-width of a primary metric's interval (fraction), if any.
    pub resolution: Option<f64>,
    /// The looks taken.
    pub looks: Vec<ServeLook>,
    /// Why the run stopped; `None` while it is open (interrupted before a stop).
    pub stopped_by: Option<String>,
}

/// One look of a run over rounds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServeLook {
    /// Rounds complete at the look.
    pub rounds: usize,
    /// Primary metric × point pairs decided (a verdict other than INCONCLUSIVE, or the
    /// resolution reached).
    pub decided: usize,
    /// Primary metric × point pairs judged.
    pub primary: usize,
    /// Largest spread between starts over the primary metrics: the robust SD of a round's
    /// log ratio.
    pub spread_between_starts: Option<f64>,
    /// Largest spread within rounds: the robust SD of the per-request log values of a primary
    /// metric's base figure within one server start, median over starts.
    pub spread_within_rounds: Option<f64>,
    /// Rounds predicted to reach the asked resolution (largest over the primary metrics).
    pub rounds_for_resolution: Option<usize>,
    /// Wall time per round so far, nanoseconds.
    pub round_wall_ns: Option<u64>,
}

/// One round's figures of a metric.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RoundFigures {
    /// Round index.
    pub round: usize,
    /// The baseline's figure.
    pub baseline: f64,
    /// The candidate's figure.
    pub candidate: f64,
}

/// How a server ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// It had exited on its own before kernelab stopped it.
    Exited,
    /// It stopped within the grace period after SIGTERM.
    Terminated,
    /// It needed SIGKILL.
    Killed,
}

impl Ending {
    /// The word as JSON writes it.
    pub fn name(self) -> &'static str {
        match self {
            Ending::Exited => "exited",
            Ending::Terminated => "terminated",
            Ending::Killed => "killed",
        }
    }
}

/// Which of the two builds a figure or a server belongs to.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The build before the change.
    Baseline,
    /// The build with the change.
    Candidate,
}

impl Side {
    /// The word as JSON writes it.
    pub fn name(self) -> &'static str {
        match self {
            Side::Baseline => "baseline",
            Side::Candidate => "candidate",
        }
    }
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What went wrong with a server in a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FailureCause {
    /// It did not start or never became healthy.
    Start,
    /// It exited on its own while the round ran.
    Exited,
    /// The round's workload could not run against it (prompts, cache flush, a failed point).
    Workload,
}

impl FailureCause {
    /// The word as JSON writes it.
    pub fn name(self) -> &'static str {
        match self {
            FailureCause::Start => "start",
            FailureCause::Exited => "exited",
            FailureCause::Workload => "workload",
        }
    }
}

/// Why a round failed for one server: the cause, and the message with the details (its log's
/// tail, the error).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StartFailure {
    /// The cause.
    pub cause: FailureCause,
    /// The details.
    pub message: String,
}

/// The lowest and highest SM clock seen, MHz.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MhzRange {
    /// Lowest.
    pub min: u32,
    /// Highest.
    pub max: u32,
}

/// A server start of one round.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServeStart {
    /// Round index.
    pub round: usize,
    /// Which server.
    pub server: Side,
    /// Nanoseconds from spawn to healthy; `None` when it never became healthy.
    pub health_ns: Option<u64>,
    /// How it ended (`terminated`, `killed`, `exited`).
    pub ending: Option<Ending>,
    /// Why the round failed for this server, if it did.
    pub failure: Option<StartFailure>,
    /// Its log file.
    pub log: String,
    /// Peak GPU memory in use while it ran (device-wide); `None`: unavailable.
    #[serde(default)]
    pub peak_gpu_memory_bytes: Option<u64>,
    /// Peak GPU memory of the server's own processes; `None`: unavailable.
    #[serde(default)]
    pub peak_server_memory_bytes: Option<u64>,
    /// SM clock range while it ran, MHz; `None`: unavailable.
    #[serde(default)]
    pub sm_mhz: Option<MhzRange>,
}

/// The output-identity gate: baseline versus candidate outputs of the same prompt and round.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Identity {
    /// Requests whose outputs hash equal.
    pub identical: usize,
    /// Requests compared (both sides measured).
    pub compared: usize,
    /// Of those, compared by returned token ids (the rest by text).
    #[serde(default)]
    pub by_token_ids: usize,
}

/// The whole result of a serve run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServeResult {
    /// Every case × concurrency × metric.
    pub metrics: Vec<ServeMetric>,
    /// Every server start.
    pub starts: Vec<ServeStart>,
    /// The output-identity gate.
    pub identity: Identity,
    /// Requests measured (both servers, all rounds).
    pub requests: usize,
    /// Failed requests, with the first few reasons.
    pub request_failures: usize,
    /// The first failure reasons (case, concurrency, reason).
    pub failure_examples: Vec<String>,
    /// Points (round, server, case, concurrency) of a server that started but gave no
    /// successful request there: never completed, or every request failed. Any fails the run.
    #[serde(default)]
    pub failed_points: usize,
    /// Largest 99th-percentile event-loop lag of the client over all points, above the idle
    /// loop's own (the timer's granularity), nanoseconds.
    pub client_lag_p99_ns: u64,
    /// Whether the client may have been the bottleneck (its lag is large against the ITL).
    pub client_bound: bool,
    /// Notes (unavailable figures, failed rounds).
    pub notes: Vec<String>,
    /// The planned looks over rounds, when the spec names primary metrics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<ServePlan>,
    /// `warmup = "steady"`: each point's warm-up per side (empty for a fixed warm-up).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warmup: Vec<WarmupCurve>,
    /// Prefix-cache state per point, where the servers report cached prompt tokens.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cache: Vec<CacheState>,
    /// The servers' own metrics per point and side (`metrics_url`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_metrics: Vec<ServerMetricsSummary>,
    /// The output identity of an A/A control run with the same workload (`--aa-samples`), to
    /// read this run's identity beside: a server that is not deterministic across starts
    /// differs from itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aa_identity: Option<AaIdentity>,
    /// Where the two servers of a round ran, when not one at a time (`[placement]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<String>,
    /// The SLO search over a request-rate sweep (`workload.rates` with `[analysis.slo]`): per
    /// lengths and concurrency cap, the highest rate each side sustains.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slo_search: Vec<SloSearch>,
}

/// The SLO search of one set of lengths and concurrency cap over the rates of a sweep: a side
/// sustains a rate when its goodput there (median over rounds) is at least `attain` of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SloSearch {
    /// Prompt tokens.
    pub input_tokens: usize,
    /// Completion tokens.
    pub output_tokens: usize,
    /// Most requests in flight.
    pub concurrency: usize,
    /// The share of the offered rate goodput must reach.
    pub attain: f64,
    /// Each rate of the sweep, lowest first.
    pub rates: Vec<SloRate>,
    /// The highest rate the baseline sustains with every lower rate sustained too; `None`
    /// when it sustains none.
    pub baseline_max_rate_per_s: Option<f64>,
    /// The same for the candidate.
    pub candidate_max_rate_per_s: Option<f64>,
    /// Candidate ÷ baseline of the highest sustained rates (unavailable unless both exist).
    pub ratio: Option<f64>,
}

/// One rate of an SLO search.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SloRate {
    /// The case (one per rate of the sweep).
    pub case: usize,
    /// Offered requests per second.
    pub rate_per_s: f64,
    /// The baseline's goodput, median over rounds (unavailable without complete rounds).
    pub baseline_goodput_per_s: Option<f64>,
    /// The candidate's goodput, median over rounds.
    pub candidate_goodput_per_s: Option<f64>,
    /// Whether the baseline sustains the rate.
    pub baseline_sustains: bool,
    /// Whether the candidate sustains it.
    pub candidate_sustains: bool,
}

/// The output-identity gate of an A/A control run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AaIdentity {
    /// The A/A's samples file.
    pub samples: String,
    /// Its requests whose outputs hash equal.
    pub identical: usize,
    /// Its requests compared.
    pub compared: usize,
    /// Its metrics called FASTER or SLOWER (an A/A should call about alpha of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub called: Option<usize>,
    /// Its metrics with an interval (what `called` is out of).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tested: Option<usize>,
}

/// One point's warm-up on one side over its server starts (`warmup = "steady"`): how many
/// requests each start needed and the cold-start curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WarmupCurve {
    /// Case index.
    pub case: usize,
    /// Requests in flight.
    pub concurrency: usize,
    /// Which side.
    pub server: Side,
    /// Warm-up requests of each start, in round order.
    pub requests: Vec<usize>,
    /// Starts whose warm-up reached its cap before it was steady.
    pub not_steady: usize,
    /// The curve: for the 1st, 2nd, … warm-up request, the median over starts of its time to
    /// first token (end to end when not streamed), nanoseconds; `None` where no start got one.
    pub first_token_ns: Vec<Option<u64>>,
    /// The same for TPOT, nanoseconds.
    pub tpot_ns: Vec<Option<u64>>,
    /// The first warm-up request's TTFT over the median TTFT of the point's measured requests,
    /// median over starts: how much slower a cold server answers (`None`: unavailable).
    pub cold_over_warm_ttft: Option<f64>,
}

/// The prefix-cache state of one point: the cached prompt tokens
/// (`usage.prompt_tokens_details.cached_tokens`) each side's measured requests reported.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CacheState {
    /// Case index.
    pub case: usize,
    /// Requests in flight.
    pub concurrency: usize,
    /// Cached prompt tokens over the baseline's measured requests (`None`: none reported).
    pub baseline_cached_tokens: Option<u64>,
    /// The same for the candidate.
    pub candidate_cached_tokens: Option<u64>,
    /// Prompt tokens of those requests, per side (baseline, candidate).
    pub prompt_tokens: [u64; 2],
    /// The two sides' cached tokens differ: a cache favoured one side.
    pub differ: bool,
}

/// A server's own metrics over one point, summed over its rounds (`metrics_url`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServerMetricsSummary {
    /// Case index.
    pub case: usize,
    /// Requests in flight.
    pub concurrency: usize,
    /// Which side.
    pub server: Side,
    /// Points scraped before and after.
    pub points: usize,
    /// Points whose scrape failed, with the first reason.
    pub unavailable: usize,
    /// The first reason a scrape failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable_reason: Option<String>,
    /// Prefix-cache hits over queries (`None`: not exported, or no query).
    pub prefix_cache_hit_rate: Option<f64>,
    /// Largest KV-cache usage seen after a point, a fraction.
    pub kv_cache_usage_max: Option<f64>,
    /// Preemptions.
    pub preemptions: Option<f64>,
    /// Speculative decoding: accepted over proposed draft tokens.
    pub spec_acceptance_rate: Option<f64>,
    /// Speculative decoding: tokens per draft, 1 + accepted / drafts (vLLM's mean acceptance
    /// length).
    pub spec_acceptance_length: Option<f64>,
}
