//! Fuzz target `kineto`: the Kineto (PyTorch profiler) JSON scanner.
//! The body is `kernelab_fuzz::kineto`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::kineto(data));
