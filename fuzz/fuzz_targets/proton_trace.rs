//! Fuzz target `proton_trace`: Triton Proton's Chrome trace (`data="trace"`).
//! The body is `kernelab_fuzz::proton_trace`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::proton_trace(data));
