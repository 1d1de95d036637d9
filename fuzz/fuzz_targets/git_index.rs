//! Fuzz target `git_index`: the git index reader of provenance.
//! The body is `kernelab_fuzz::git_index`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::git_index(data));
