//! Fuzz target `nsys`: the Nsight Systems SQLite export reader (seeded with nsys exports).
//! The body is `kernelab_fuzz::nsys`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::nsys(data));
