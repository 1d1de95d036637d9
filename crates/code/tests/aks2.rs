//! AOTriton `.aks2` archives (issue 26). No public archive could be fetched (they ship inside
//! ROCm PyTorch wheels), so the fixture was written by `tests/fixtures/code/make_aks2.py` with
//! Python's `lzma`, following the layout AOTriton's reader parses (ROCm/aotriton
//! `v2src/packed_kernel.cc`): the ground truth is the two permissive HSACOs put in, byte for
//! byte, and the directory figures given to the script.

use kernelab_code::aks2::{entries, MAGIC};
use kernelab_code::{load_file, LoadOptions};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/code")
        .join(name)
}

const ARCHIVE: &str = "aotriton_layout_gfx1100_gfx942.aks2";

#[test]
fn every_hsaco_of_an_aks2_archive_is_listed_and_read() {
    let data = std::fs::read(fixture(ARCHIVE)).expect("archive");
    assert!(data.starts_with(MAGIC));
    let e = entries(&data, 1 << 30).expect("entries");
    let names: Vec<_> = e.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "smallkernel-Gpu-gfx1100",
            "bf16gemm_32x64_splitk-Gpu-gfx942"
        ]
    );
    assert_eq!((e[0].threads, e[0].shared_memory), (64, 0));
    assert_eq!((e[1].threads, e[1].shared_memory), (256, 16384));
    for (x, file) in e.iter().zip([
        "hsaco_gfx1100_cov5_rocprofiler-sdk_smallkernel.co",
        "hsaco_gfx942_aiter_bf16gemm_32x64_splitk.co",
    ]) {
        assert_eq!(
            x.data,
            std::fs::read(fixture(file)).expect("hsaco"),
            "{file}"
        );
    }
    let objs = load_file(&fixture(ARCHIVE), &LoadOptions::default()).expect("load");
    let arches: Vec<_> = objs.iter().filter_map(|o| o.arch.clone()).collect();
    assert_eq!(arches, ["gfx1100", "gfx942"]);
    assert!(objs[1].facts["container"].contains("256 threads per block"));
    assert!(objs.iter().all(|o| !o.kernels.is_empty()));
}

#[test]
fn damaged_archives_are_errors_with_their_offset_never_panics() {
    let data = std::fs::read(fixture(ARCHIVE)).expect("archive");
    let err = |d: &[u8], limit: u64| entries(d, limit).expect_err("damaged").to_string();
    // Truncated in the xz stream.
    let e = err(&data[..data.len() / 2], 1 << 30);
    assert!(e.contains("byte 16") && e.contains("xz stream"), "{e}");
    // The header says more kernels than the content can hold.
    let mut d = data.clone();
    d[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = err(&d, 1 << 30);
    assert!(
        e.contains("byte 8") && e.contains("number of kernels"),
        "{e}"
    );
    // A directory size that disagrees with the entries.
    let mut d = data.clone();
    d[12..16].copy_from_slice(&7u32.to_le_bytes());
    let e = err(&d, 1 << 30);
    assert!(e.contains("byte 12") && e.contains("directory size"), "{e}");
    // A declared size over the decompression limit is refused before inflating.
    let e = err(&data, 1000);
    assert!(e.contains("exceeds the limit of 1000 bytes"), "{e}");
    // A declared size smaller than the stream: the inflated content stops at it.
    let mut d = data.clone();
    d[4..8].copy_from_slice(&100u32.to_le_bytes());
    let e = err(&d, 1 << 30);
    assert!(
        e.contains("byte 4") && e.contains("declared 100 bytes"),
        "{e}"
    );
    // Only the header.
    let e = err(&data[..10], 1 << 30);
    assert!(
        e.contains("byte 8") && e.contains("number of kernels"),
        "{e}"
    );
}
