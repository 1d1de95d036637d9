//! Fuzz target `http_response`: see `kernelab_fuzz::http_response`, shared with the
//! dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::http_response(data));
