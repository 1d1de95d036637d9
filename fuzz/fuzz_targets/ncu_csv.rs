//! Fuzz target `ncu_csv`: the Nsight Compute CSV reader, with and without durations required.
//! The body is `kernelab_fuzz::ncu_csv`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::ncu_csv(data));
