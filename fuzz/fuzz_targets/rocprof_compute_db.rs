//! Fuzz target `rocprof_compute_db`: rocprof-compute analysis databases
//! (`analyze --output-format db`).
//! The body is `kernelab_fuzz::rocprof_compute_db`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::rocprof_compute_db(data));
