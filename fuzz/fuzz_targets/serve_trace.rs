//! Fuzz target `serve_trace`: see `kernelab_fuzz::serve_trace`, shared with the dispatching
//! `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::serve_trace(data));
