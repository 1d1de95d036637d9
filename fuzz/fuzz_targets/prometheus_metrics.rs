//! Fuzz target `prometheus_metrics`: see `kernelab_fuzz::prometheus_metrics`, shared with the
//! dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::prometheus_metrics(data));
