//! Fuzz target `offload_bundle`: clang offload bundles, compressed CCOB bundles included.
//! The body is `kernelab_fuzz::offload_bundle`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::offload_bundle(data));
