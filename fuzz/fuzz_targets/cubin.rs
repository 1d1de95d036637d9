//! Fuzzes the cubin reader: any input must give a code object or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = kernelab_code::cubin::read("fuzz.cubin", data);
    let _ = kernelab_code::cubin::parse_nv_info(data, 0);
});
