//! Fuzz target `aks2`: AOTriton .aks2 kernel archives (xz-compressed directory and HSACOs).
//! The body is `kernelab_fuzz::aks2`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::aks2(data));
