//! Fuzz target `serve_samples`: see `kernelab_fuzz::serve_samples`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::serve_samples(data));
