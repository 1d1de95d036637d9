//! The serve metrics, each once: its name as the document writes it, its unit, which way is
//! better, what it needs (streaming, an SLO, energy), how the tables show it and how the audit
//! reads it. The runner computes, validates and plans from this table; the renderers and the
//! audit draw from it. A metric that is not here is never guessed from its name.

use kernelab_stats::Direction;

/// The unit of a metric's figure, as the document stores it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricUnit {
    /// Seconds (latencies); shown in milliseconds.
    Seconds,
    /// Output tokens per second.
    TokensPerSecond,
    /// Requests per second.
    RequestsPerSecond,
    /// Joules per output token; shown in millijoules.
    JoulesPerToken,
}

/// What the audit matches a metric's figures against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditKind {
    /// A duration: quoted as `ms`, `s`, ….
    Time,
    /// Tokens per second: quoted as `tok/s`.
    TokenRate,
    /// Requests per second: quoted as `req/s`.
    RequestRate,
    /// Energy per token: a plain figure in millijoules, as the tables show it.
    Energy,
}

/// The per-request (or per-point) quantity a metric summarises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base {
    /// Time to first token.
    Ttft,
    /// Time to second token.
    Tt2t,
    /// Time per output token after the first.
    Tpot,
    /// Inter-token latency, every gap of every request.
    Itl,
    /// End-to-end latency.
    E2e,
    /// Output tokens over the point's wall time.
    Throughput,
    /// Requests meeting every SLO over the point's wall time.
    Goodput,
    /// The GPUs' energy over the point per output token.
    Energy,
}

/// How a metric summarises its base over one point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Statistic {
    /// Mean.
    Mean,
    /// Median.
    P50,
    /// 90th percentile.
    P90,
    /// 99th percentile.
    P99,
    /// A total over the point (a rate, an energy per token).
    Total,
}

/// One serve metric.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MetricDef {
    /// The name the document writes (`ttft_mean_s`).
    pub name: &'static str,
    /// The name the tables show, without the unit (`ttft_mean`): the unit is on every value.
    pub label: &'static str,
    /// What it summarises.
    pub base: Base,
    /// How.
    pub statistic: Statistic,
    /// Its unit.
    pub unit: MetricUnit,
    /// Which way is better.
    pub direction: Direction,
    /// Unavailable without streaming (`workload.stream = false`).
    pub needs_stream: bool,
    /// Present only when an SLO is given (`[analysis.slo]`).
    pub needs_slo: bool,
    /// Present only when the GPUs' energy was measured; never a primary metric.
    pub needs_energy: bool,
    /// In the serve view's main table (the rest go to CSV and JSON).
    pub main: bool,
    /// How the audit reads its figures.
    pub audit: AuditKind,
}

/// A latency metric in seconds, lower is better.
const fn latency(
    name: &'static str,
    label: &'static str,
    base: Base,
    statistic: Statistic,
    main: bool,
) -> MetricDef {
    MetricDef {
        name,
        label,
        base,
        statistic,
        unit: MetricUnit::Seconds,
        direction: Direction::LowerIsBetter,
        needs_stream: !matches!(base, Base::E2e),
        needs_slo: false,
        needs_energy: false,
        main,
        audit: AuditKind::Time,
    }
}

/// The four summaries of a latency (mean, p50, p90, p99; mean and p99 in the main table).
macro_rules! latencies {
    ($base:expr, $mean:literal, $p50:literal, $p90:literal, $p99:literal) => {
        [
            latency(concat!($mean, "_s"), $mean, $base, Statistic::Mean, true),
            latency(concat!($p50, "_s"), $p50, $base, Statistic::P50, false),
            latency(concat!($p90, "_s"), $p90, $base, Statistic::P90, false),
            latency(concat!($p99, "_s"), $p99, $base, Statistic::P99, true),
        ]
    };
}

const TTFT: [MetricDef; 4] =
    latencies!(Base::Ttft, "ttft_mean", "ttft_p50", "ttft_p90", "ttft_p99");
const TPOT: [MetricDef; 4] =
    latencies!(Base::Tpot, "tpot_mean", "tpot_p50", "tpot_p90", "tpot_p99");
const ITL: [MetricDef; 4] = latencies!(Base::Itl, "itl_mean", "itl_p50", "itl_p90", "itl_p99");
const E2E: [MetricDef; 4] = latencies!(Base::E2e, "e2e_mean", "e2e_p50", "e2e_p90", "e2e_p99");

/// `goodput_req_s`: requests per second meeting every SLO given.
pub const GOODPUT: &str = "goodput_req_s";
/// `throughput_tok_s`: output tokens per second.
pub const THROUGHPUT: &str = "throughput_tok_s";
/// `energy_per_token_j`: the GPUs' energy per output token.
pub const ENERGY_PER_TOKEN: &str = "energy_per_token_j";
/// `itl_p50_s`: the median inter-token latency (the client guard compares its lag with it).
pub const ITL_P50: &str = "itl_p50_s";

/// Every serve metric, in the order a point's figures are computed and listed.
pub const METRICS: [MetricDef; 20] = [
    TTFT[0],
    TTFT[1],
    TTFT[2],
    TTFT[3],
    latency(
        "tt2t_mean_s",
        "tt2t_mean",
        Base::Tt2t,
        Statistic::Mean,
        true,
    ),
    TPOT[0],
    TPOT[1],
    TPOT[2],
    TPOT[3],
    ITL[0],
    ITL[1],
    ITL[2],
    ITL[3],
    E2E[0],
    E2E[1],
    E2E[2],
    E2E[3],
    MetricDef {
        name: THROUGHPUT,
        label: "throughput",
        base: Base::Throughput,
        statistic: Statistic::Total,
        unit: MetricUnit::TokensPerSecond,
        direction: Direction::HigherIsBetter,
        needs_stream: false,
        needs_slo: false,
        needs_energy: false,
        main: true,
        audit: AuditKind::TokenRate,
    },
    MetricDef {
        name: GOODPUT,
        label: "goodput",
        base: Base::Goodput,
        statistic: Statistic::Total,
        unit: MetricUnit::RequestsPerSecond,
        direction: Direction::HigherIsBetter,
        needs_stream: false,
        needs_slo: true,
        needs_energy: false,
        main: true,
        audit: AuditKind::RequestRate,
    },
    MetricDef {
        name: ENERGY_PER_TOKEN,
        label: "energy_per_token",
        base: Base::Energy,
        statistic: Statistic::Total,
        unit: MetricUnit::JoulesPerToken,
        direction: Direction::LowerIsBetter,
        needs_stream: false,
        needs_slo: false,
        needs_energy: true,
        main: true,
        audit: AuditKind::Energy,
    },
];

/// The metric named `name`, if it is one.
pub fn metric(name: &str) -> Option<&'static MetricDef> {
    METRICS.iter().find(|m| m.name == name)
}

/// The metrics a point reports: every one without SLO or energy needs, goodput with an SLO,
/// energy per token when it was measured; in table order.
pub fn reported(slo: bool, energy: bool) -> impl Iterator<Item = &'static MetricDef> {
    METRICS
        .iter()
        .filter(move |m| (slo || !m.needs_slo) && (energy || !m.needs_energy))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_labels_drop_only_the_unit() {
        for (i, m) in METRICS.iter().enumerate() {
            assert!(
                METRICS[..i].iter().all(|o| o.name != m.name),
                "{} twice",
                m.name
            );
            let unit = match m.unit {
                MetricUnit::Seconds => "_s",
                MetricUnit::TokensPerSecond => "_tok_s",
                MetricUnit::RequestsPerSecond => "_req_s",
                MetricUnit::JoulesPerToken => "_j",
            };
            assert_eq!(format!("{}{unit}", m.label), m.name);
            assert_eq!(metric(m.name), Some(m));
        }
        assert_eq!(metric("ttft_s"), None);
    }

    #[test]
    fn goodput_is_a_rate_of_requests_and_higher_is_better() {
        let g = metric(GOODPUT).expect("goodput");
        assert_eq!(g.unit, MetricUnit::RequestsPerSecond);
        assert_eq!(g.audit, AuditKind::RequestRate);
        assert_eq!(g.direction, Direction::HigherIsBetter);
        assert!(g.needs_slo && !g.needs_stream);
        assert_eq!(reported(false, false).count(), 18);
        assert_eq!(reported(true, true).count(), METRICS.len());
    }
}
