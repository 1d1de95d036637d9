//! Fuzz target `rocpd`: the rocpd SQLite reader (seeded with rocpd databases).
//! The body is `kernelab_fuzz::rocpd`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::rocpd(data));
