//! Fuzz target `confined_path`: the confined file layer's path resolution.
//! The body is `kernelab_fuzz::confined_path`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::confined_path(data));
