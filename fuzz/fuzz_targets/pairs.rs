//! Fuzz target `pairs`: paired samples for `ab analyze` (samples JSONL, CSV or JSON), read and analysed.
//! The body is `kernelab_fuzz::pairs`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::pairs(data));
