//! Fuzz target `spec_toml`: kernel specs (TOML) parsed and checked, their sizes evaluated.
//! The body is `kernelab_fuzz::spec_toml`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::spec_toml(data));
