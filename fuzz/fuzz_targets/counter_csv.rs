//! Fuzz target `counter_csv`: see `kernelab_fuzz::counter_csv`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::counter_csv(data));
