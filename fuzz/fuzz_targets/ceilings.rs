//! Fuzz target `ceilings`: see `kernelab_fuzz::ceilings`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::ceilings(data));
