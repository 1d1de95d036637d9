//! The samples file's slots (A, B) as the document's sides (baseline, candidate).

use crate::record::Slot;
use kernelab_model::serve::Side;

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
