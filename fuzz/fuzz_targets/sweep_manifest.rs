//! Fuzz target `sweep_manifest`: see `kernelab_fuzz::sweep_manifest`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::sweep_manifest(data));
