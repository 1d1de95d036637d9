//! Fuzz target `bundle_record`: a bundle of one record, read and rendered as `kernelab report` does.
//! The body is `kernelab_fuzz::bundle_record`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::bundle_record(data));
