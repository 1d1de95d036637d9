//! Fuzz target `rocprofv3_json`: the rocprofv3 `-f json` reader (`rocprofiler-sdk-tool`).
//! The body is `kernelab_fuzz::rocprofv3_json`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::rocprofv3_json(data));
