//! Fuzzes the npy reader through kernelab_tensor::from_bytes: any input must give tensors or an
//! error, never a panic, an abort or an allocation sized by the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if !(data.starts_with(b"\x93NUMPY")) {
        return;
    }
    let spec = kernelab_tensor::ReadSpec {
        max_decompressed: Some(64 << 20),
        ..kernelab_tensor::ReadSpec::default()
    };
    let path = std::path::Path::new("fuzz.npy");
    if let Ok(f) = kernelab_tensor::from_bytes(path, data.to_vec(), &spec) {
        let _ = f.check_comparable();
        for t in &f.tensors {
            let _ = kernelab_tensor::finite(t);
            let _ = kernelab_tensor::content_hash(t);
        }
    }
});
