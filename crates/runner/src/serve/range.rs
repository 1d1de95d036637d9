//! The documented range of every numeric key of the serve spec (docs/serve-spec.md), checked
//! when a spec is read and again when a samples file's header is resumed.

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
