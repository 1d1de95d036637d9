//! Fuzzes fatbin containers (LZ4 and ZSTD entries) and loading their cubins.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = kernelab_code::fatbin::entries_capped(data, 64 << 20);
    let options = kernelab_code::LoadOptions {
        max_decompressed: Some(64 << 20),
        ..kernelab_code::LoadOptions::default()
    };
    let _ = kernelab_code::load_bytes("fuzz.fatbin", data, &options);
});
