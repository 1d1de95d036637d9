//! Fuzz target `gate_config`: the gate's configuration.
//! The body is `kernelab_fuzz::gate_config`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::gate_config(data));
