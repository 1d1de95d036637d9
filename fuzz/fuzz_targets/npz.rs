//! Fuzz target `npz`: the npz reader (inputs starting with a zip local header).
//! The body is `kernelab_fuzz::npz`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::npz(data));
