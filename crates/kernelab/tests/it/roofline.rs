//! `kernelab ceilings` and `kernelab roofline`.

use super::{fixture, kernelab};

fn has_cuda() -> bool {
    [
        "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
        "/usr/lib64/libcuda.so.1",
        "/usr/local/nvidia/lib64/libcuda.so.1",
    ]
    .iter()
    .any(|p| std::path::Path::new(p).exists())
}

#[test]
fn ceilings_without_a_gpu_say_so_and_the_datasheet_still_answers() {
    if has_cuda() {
        eprintln!("SKIP: this machine has a CUDA driver; the no-driver error cannot be shown here");
    } else {
        let out = kernelab().arg("ceilings").output().expect("runs");
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("no CUDA driver"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let out = kernelab()
        .args(["ceilings", "--datasheet", "NVIDIA H200", "--format", "json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["kind"], "ceilings");
    let copy = &v["ceilings"][0];
    assert_eq!(copy["kind"], "dram_copy");
    assert_eq!(copy["datasheet"]["value"], 4.8e12);
    assert!(copy["measured"].is_null());
    let out = kernelab()
        .args(["ceilings", "--datasheet", "Voodoo2"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("MI300X"));
    let _ = fixture;
}
