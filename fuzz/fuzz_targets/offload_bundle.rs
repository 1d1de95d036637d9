//! Fuzzes clang offload bundles, compressed CCOB bundles included.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = kernelab_code::offload_bundle::entries_capped(data, 64 << 20);
    if let Some(b) = kernelab_code::offload_bundle::bundle_bytes(data) {
        let _ = kernelab_code::offload_bundle::entries_capped(&b, 64 << 20);
    }
});
