//! Fuzz target `hsaco`: the HSACO reader (ELF, msgpack metadata note).
//! The body is `kernelab_fuzz::hsaco`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::hsaco(data));
