//! Fuzz target `controls_ledger`: the controls ledger of `kernel run --controls`.
//! The body is `kernelab_fuzz::controls_ledger`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::controls_ledger(data));
