//! Fuzz target `npy`: the npy reader (inputs starting with the npy magic).
//! The body is `kernelab_fuzz::npy`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::npy(data));
