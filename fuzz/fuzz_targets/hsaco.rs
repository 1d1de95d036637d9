//! Fuzzes the HSACO reader (ELF, msgpack metadata note): never a panic, abort or hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = kernelab_code::hsaco::read("fuzz.co", data);
    let _ = kernelab_code::hsaco::function_ranges(data);
});
