//! Fuzz target `safetensors`: the safetensors reader (inputs whose header starts at byte 8).
//! The body is `kernelab_fuzz::safetensors`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::safetensors(data));
