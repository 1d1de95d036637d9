//! Fuzz target `rocprof_csv`: every rocprof CSV layout (detected from the header, as for a file).
//! The body is `kernelab_fuzz::rocprof_csv`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::rocprof_csv(data));
