//! Windows images carrying a HIP offload bundle (issue 26): a PE section name holds at most 8
//! bytes, so the section is `.hip_fat`, not `.hip_fatbin`. The fixture DLL was linked for this
//! project (tests/fixtures/PROVENANCE.md) around a bundle of two permissive HSACOs; the test
//! checks it against those HSACOs read on their own and against llvm-readobj's section list.

use kernelab_code::{load_file, LoadOptions};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/code")
        .join(name)
}

fn names(o: &kernelab_code::CodeObject) -> Vec<String> {
    o.kernels.iter().map(|k| k.symbol.clone()).collect()
}

#[test]
fn a_dll_with_a_hip_fat_section_lists_every_hsaco_inside() {
    let dll = fixture("hip_fat_gfx1100_gfx942.dll");
    match std::process::Command::new("llvm-readobj-19")
        .arg("--sections")
        .arg(&dll)
        .output()
    {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                text.contains("Name: .hip_fat (2E 68 69 70 5F 66 61 74)"),
                "{text}"
            );
            assert!(text.contains("Format: COFF-x86-64"), "{text}");
        }
        _ => kernelab_testkit::skip(
            "llvm-19",
            "the llvm-readobj cross-check: llvm-readobj-19 is not installed (.ci/run installs llvm-19)",
        ),
    }
    let objs = load_file(&dll, &LoadOptions::default()).expect("a PE image with .hip_fat");
    let arches: Vec<_> = objs.iter().map(|o| o.arch.clone()).collect();
    assert_eq!(
        arches,
        [Some("gfx1100".to_string()), Some("gfx942".to_string())]
    );
    for (o, alone) in objs.iter().zip([
        "hsaco_gfx1100_cov5_rocprofiler-sdk_smallkernel.co",
        "hsaco_gfx942_aiter_bf16gemm_32x64_splitk.co",
    ]) {
        let direct = load_file(&fixture(alone), &LoadOptions::default()).expect("hsaco");
        assert_eq!(names(o), names(&direct[0]), "{alone}");
        assert!(!o.kernels.is_empty());
        assert!(o.facts["container"].starts_with("offload bundle entry hipv4-amdgcn"));
    }
}

#[test]
fn a_pe_image_without_device_code_is_refused_naming_what_was_expected() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = std::fs::read(fixture("hip_fat_gfx1100_gfx942.dll")).expect("dll");
    // The section renamed to `.rdata`: a plain DLL.
    let at = data
        .windows(8)
        .position(|w| w == b".hip_fat")
        .expect("the section header");
    let mut plain = data.clone();
    plain[at..at + 8].copy_from_slice(b".rdata\0\0");
    let p = dir.path().join("plain.dll");
    std::fs::write(&p, &plain).expect("write");
    let e = load_file(&p, &LoadOptions::default())
        .expect_err("no device code")
        .to_string();
    assert!(e.contains("plain.dll"), "{e}");
    assert!(e.contains(".hip_fat"), "{e}");
}
