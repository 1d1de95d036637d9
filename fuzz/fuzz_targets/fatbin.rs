//! Fuzz target `fatbin`: fatbin containers (LZ4 and ZSTD entries) and loading their cubins.
//! The body is `kernelab_fuzz::fatbin`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::fatbin(data));
