//! Fuzz target `cubin`: the cubin reader and its `.nv.info` parser.
//! The body is `kernelab_fuzz::cubin`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::cubin(data));
