//! A run's points as the analysis groups them: the key of one point (round, slot, case,
//! concurrency), its requests, what its point record adds; and the samples file's slots (A, B)
//! as the document's sides (baseline, candidate).

use super::server_metrics::PointMetrics;
use super::workload::RequestOutcome;
use crate::record::Slot;
use kernelab_model::serve::Side;
use std::collections::BTreeMap;

/// One point: (round, slot, case index, concurrency).
pub type Key = (usize, Slot, usize, usize);

/// The requests of each point, in the order the samples file gives them.
pub type Requests<'a> = BTreeMap<Key, Vec<&'a RequestOutcome>>;

/// The requests of each complete point by request index (a request seen twice, in a resumed
/// point, keeps the last).
pub type MeasuredRequests<'a> = BTreeMap<Key, BTreeMap<usize, &'a RequestOutcome>>;

/// What a point record adds beyond its requests.
#[derive(Default)]
pub struct PointExtras {
    /// `warmup = "steady"`: whether its warm-up was steady before its cap.
    pub steady: Option<bool>,
    /// The server's own metrics over the point.
    pub server_metrics: Option<PointMetrics>,
    /// The GPUs' energy over the point, millijoules.
    pub energy_mj: Option<u64>,
}

/// The document's side of a samples-file slot.
pub fn side(slot: Slot) -> Side {
    match slot {
        Slot::A => Side::Baseline,
        Slot::B => Side::Candidate,
    }
}

/// The name of a slot: `baseline` or `candidate`.
pub fn slot_name(slot: Slot) -> &'static str {
    side(slot).name()
}
