//! Fuzz target `kineto_parallel`: the Kineto reader on every core against the one-thread
//! reader (the same profile or the same error). The body is `kernelab_fuzz::kineto_parallel`,
//! shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::kineto_parallel(data));
