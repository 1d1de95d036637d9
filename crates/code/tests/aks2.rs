//! AOTriton `.aks2` archives (issue 26). No public archive could be fetched (they ship inside
//! ROCm PyTorch wheels), so the fixture was written by `tests/fixtures/code/make_aks2.py` with
//! Python's `lzma`, following the layout AOTriton's reader parses (ROCm/aotriton
//! `v2src/packed_kernel.cc`): the ground truth is the two permissive HSACOs put in, byte for
//! byte, and the directory figures given to the script.
// Tests, not the library: they may print what they skip and stop at the first failure.
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

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

/// An archive written by AOTriton's own packer (`python/aks2.py` of ROCm/aotriton @ 30ae967)
/// from ten HSACOs Triton 3.9.0 compiled for five processors
/// (`tests/fixtures/code/make_triton39_hsacos.py`); its expected listing was written by the
/// independent reader `aks2_list.py` (Python's `lzma` and `struct`, no kernelab code).
const PACKED: &str = "aotriton_packer_triton39_five_archs.aks2";

/// (name, threads, shared bytes, image bytes, processor from e_flags, note target) per entry of
/// the independent listing.
fn listed() -> Vec<(String, u32, u32, usize, String, String)> {
    let text = std::fs::read_to_string(fixture(&format!("{PACKED}.list.txt"))).expect("listing");
    let lines: Vec<&str> = text.lines().collect();
    let field = |line: &str, key: &str| -> String {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("{key} in {line}"))
            .to_string()
    };
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(name) = l.trim().strip_prefix('[').and_then(|r| r.split_once("] ")) else {
            continue;
        };
        let (sizes, elf) = (lines[i + 1], lines[i + 2]);
        out.push((
            name.1.to_string(),
            field(sizes, "block_threads").parse().expect("threads"),
            field(sizes, "shared").parse().expect("shared"),
            field(sizes, "size").parse().expect("size"),
            field(elf, "mach"),
            field(elf, "note"),
        ));
    }
    out
}

#[test]
fn an_archive_of_aotritons_own_packer_reads_as_its_independent_listing() {
    let want = listed();
    assert_eq!(want.len(), 10);
    let data = std::fs::read(fixture(PACKED)).expect("archive");
    let e = entries(&data, 1 << 30).expect("entries");
    let got: Vec<_> = e
        .iter()
        .map(|x| (x.name.clone(), x.threads, x.shared_memory, x.data.len()))
        .collect();
    let expected: Vec<_> = want.iter().map(|w| (w.0.clone(), w.1, w.2, w.3)).collect();
    assert_eq!(got, expected);
    let objs = load_file(&fixture(PACKED), &LoadOptions::default()).expect("load");
    assert_eq!(objs.len(), 10);
    for (o, w) in objs.iter().zip(&want) {
        // Triton 3.9's LLVM writes the subarch-bearing triple (`amdgpu9.42-…-gfx942`): the
        // processor is read from it, agreeing with the ELF header's e_flags.
        assert_eq!(o.arch.as_deref(), Some(w.4.as_str()), "{}", w.0);
        assert_eq!(o.facts.get("target"), Some(&w.5), "{}", w.0);
        assert!(!o.facts.contains_key("target_error"), "{:?}", o.facts);
        assert!(o.facts["container"].contains(&format!("{} threads per block", w.1)));
        assert_eq!(o.kernels.len(), 1, "{}", w.0);
        let kernel = w.0.split('-').next().expect("kernel name");
        assert_eq!(o.kernels[0].symbol, kernel);
    }
}
