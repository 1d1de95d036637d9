//! Fuzz target `samples_jsonl`: a kernelab samples file (JSONL records), read from a file.
//! The body is `kernelab_fuzz::samples_jsonl`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::samples_jsonl(data));
