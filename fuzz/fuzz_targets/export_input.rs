//! Fuzz target `export_input`: see `kernelab_fuzz::export_input`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::export_input(data));
