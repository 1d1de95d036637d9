//! Fuzz target `proton`: the Triton Proton hatchet JSON reader.
//! The body is `kernelab_fuzz::proton`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::proton(data));
