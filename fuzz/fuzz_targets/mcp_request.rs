//! Fuzz target `mcp_request`: see `kernelab_fuzz::mcp_request`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::mcp_request(data));
