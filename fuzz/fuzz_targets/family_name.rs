//! Fuzz target `family_name`: kernel-name normalisation and family keys on arbitrary UTF-8.
//! The body is `kernelab_fuzz::family_name`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::family_name(data));
