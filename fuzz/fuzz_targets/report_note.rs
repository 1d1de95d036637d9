//! Fuzz target `report_note`: a note audited by `kernelab report check` against a one-record
//! bundle. The body is `kernelab_fuzz::report_note`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::report_note(data));
