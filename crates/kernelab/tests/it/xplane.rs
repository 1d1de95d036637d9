//! XPlane protobuf (`.xplane.pb`, issue 26): a public JAX profile of a 3-D convolution on eight
//! MI300X GPUs (AMD-AGI/TraceLens, MIT; tests/fixtures/PROVENANCE.md). Ground truth from
//! `tests/oracle/xplane_dump.py`, a protobuf wire-format reader written without protoc: 235
//! kernel events on the `Stream #N` lines of the eight `/device:GPU:N` planes, 28,137,077,000 ps
//! in all; GPU 0 has 60 of them, GPUs 1–7 25 each.

use super::{fixture, kernelab};

fn profile(args: &[&str]) -> serde_json::Value {
    let out = kernelab()
        .args(["profile", "--format", "json"])
        .args(args)
        .arg(fixture("xplane_mi300_jax_conv_tw003.xplane.pb"))
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

#[test]
fn xplane_device_planes_give_kernels_with_stats_and_launch_configs() {
    let v = profile(&[]);
    assert_eq!(v["inputs"][0]["format"], "xplane");
    assert_eq!(v["summary"]["kernel_count"], 235);
    assert_eq!(v["summary"]["kernel_time_ns"], 28_137_077);
    let gpu0 = profile(&["--device", "0"]);
    assert_eq!(gpu0["summary"]["kernel_count"], 60);
    let gpu3 = profile(&["--device", "3"]);
    assert_eq!(gpu3["summary"]["kernel_count"], 25);
    // kernel_details of input_transpose_fusion: grid 69840x1x1, block 256x1x1 (AMD, `.kd`
    // symbol names folded into their family).
    let k = v["kernels"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|k| k["name"] == "input_transpose_fusion")
        .expect("input_transpose_fusion");
    assert_eq!(k["grid"], serde_json::json!([69840, 1, 1]));
    assert_eq!(k["block"], serde_json::json!([256, 1, 1]));
    assert_eq!(k["calls"], 40);
}

#[test]
fn a_damaged_xplane_is_exit_2_naming_the_file() {
    let data = std::fs::read(fixture("xplane_mi300_jax_conv_tw003.xplane.pb")).expect("pb");
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("cut.xplane.pb");
    std::fs::write(&p, &data[..data.len() / 3]).expect("write");
    let out = kernelab().arg("profile").arg(&p).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cut.xplane.pb"), "{err}");
    assert!(err.contains("XSpace protobuf"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
