//! Hostile and impossible code objects: declared sizes are checked, decompression is capped
//! and names the entry, and nothing panics or allocates by a size the file declares.
// Tests, not the library: they may print what they skip and stop at the first failure.
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

use kernelab_code::{fatbin, load_bytes, load_file, offload_bundle, Error, LoadOptions};
use std::io::Write;

const MIB: u64 = 1 << 20;

fn capped(limit: u64) -> LoadOptions {
    LoadOptions {
        max_decompressed: Some(limit),
        ..LoadOptions::default()
    }
}

/// A fatbin with one entry: `flags`, declared decompressed size `dsize`, and `payload`.
fn fatbin_with(flags: u64, dsize: u64, payload: &[u8]) -> Vec<u8> {
    let mut entry = vec![0u8; 64];
    entry[0..2].copy_from_slice(&2u16.to_le_bytes());
    entry[4..8].copy_from_slice(&64u32.to_le_bytes());
    entry[8..16].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    entry[28..32].copy_from_slice(&90u32.to_le_bytes());
    entry[40..48].copy_from_slice(&flags.to_le_bytes());
    entry[56..64].copy_from_slice(&dsize.to_le_bytes());
    entry.extend_from_slice(payload);
    let mut out = fatbin::FATBIN_MAGIC.to_le_bytes().to_vec();
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(&(entry.len() as u64).to_le_bytes());
    out.extend_from_slice(&entry);
    out
}

fn err(label: &str, data: &[u8], options: &LoadOptions) -> Error {
    load_bytes(label, data, options).expect_err("refused")
}

#[test]
fn an_lz4_entry_declaring_more_than_the_limit_is_refused_before_allocating() {
    let d = fatbin_with(0x2000, u64::MAX, &[0x1f, 0, 0, 0]);
    let e = err("k.fatbin", &d, &LoadOptions::default());
    assert_eq!(
        e.to_string(),
        "k.fatbin#0: decompressed size exceeds the limit of 4294967296 bytes (--max-decompressed)"
    );
    // Within the limit but impossible for LZ4 (more than 255 times the stored size).
    let e = err(
        "k.fatbin",
        &fatbin_with(0x2000, 1 << 30, &[0x1f, 0]),
        &LoadOptions::default(),
    );
    assert!(
        e.to_string()
            .contains("an LZ4 entry of 2 bytes that can decompress to"),
        "{e}"
    );
}

#[test]
fn a_zstd_bomb_stops_at_the_limit_and_names_the_entry() {
    let zeros = std::io::Read::take(std::io::repeat(0), 8 * MIB);
    let z = ruzstd::encoding::compress_to_vec(zeros, ruzstd::encoding::CompressionLevel::Fastest);
    assert!(z.len() < (MIB as usize), "{}", z.len());
    let d = fatbin_with(0x2000, 0, &z);
    let e = err("bomb.fatbin", &d, &capped(MIB));
    assert_eq!(
        e.to_string(),
        "bomb.fatbin#0: decompressed size exceeds the limit of 1048576 bytes (--max-decompressed)"
    );
}

#[test]
fn container_and_entry_sizes_past_the_end_are_errors() {
    let mut d = fatbin_with(0, 0, b"PTX");
    d[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    let e = fatbin::entries(&d).expect_err("container too large");
    assert!(
        e.to_string()
            .contains("a fatbin container of 18446744073709551615 bytes"),
        "{e}"
    );
    let mut d = fatbin_with(0, 0, b"PTX");
    d[16 + 8..16 + 16].copy_from_slice(&(u64::MAX - 8).to_le_bytes());
    let e = fatbin::entries(&d).expect_err("entry too large");
    assert!(e.to_string().contains("a fatbin entry of"), "{e}");
}

fn bundle(entries: &[(u64, u64, &str)], tail: &[u8]) -> Vec<u8> {
    let mut d = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    d.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for (offset, size, id) in entries {
        d.extend_from_slice(&offset.to_le_bytes());
        d.extend_from_slice(&size.to_le_bytes());
        d.extend_from_slice(&(id.len() as u64).to_le_bytes());
        d.extend_from_slice(id.as_bytes());
    }
    d.extend_from_slice(tail);
    d
}

#[test]
fn offload_bundle_counts_offsets_and_overlaps_are_checked() {
    let mut d = bundle(&[(0, 4, "host-x86_64")], &[0; 16]);
    d[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
    let e = offload_bundle::entries(&d).expect_err("count");
    assert!(
        e.to_string()
            .contains("an entry count that fits the bundle, not 18446744073709551615"),
        "{e}"
    );
    let d = bundle(&[(u64::MAX, 2, "hipv4-amdgcn-amd-amdhsa--gfx942")], &[]);
    let e = offload_bundle::entries(&d).expect_err("offset");
    assert!(
        e.to_string()
            .contains("a bundle entry of 2 bytes inside the bundle"),
        "{e}"
    );
    // Many entries each covering the whole bundle would copy it many times over.
    let whole: Vec<(u64, u64, &str)> = (0..40).map(|_| (0u64, 600u64, "a")).collect();
    let d = bundle(&whole, &[0; 1000]);
    let e = offload_bundle::entries(&d).expect_err("overlap");
    assert!(
        e.to_string()
            .contains("entries that together fit the bundle"),
        "{e}"
    );
}

fn ccob(version: u16, declared: u64, body: &[u8]) -> Vec<u8> {
    let mut d = b"CCOB".to_vec();
    d.extend_from_slice(&version.to_le_bytes());
    d.extend_from_slice(&1u16.to_le_bytes());
    match version {
        2 => {
            d.extend_from_slice(&0u32.to_le_bytes());
            d.extend_from_slice(&(declared as u32).to_le_bytes());
        }
        _ => {
            d.extend_from_slice(&0u64.to_le_bytes());
            d.extend_from_slice(&declared.to_le_bytes());
        }
    }
    d.extend_from_slice(&[0; 8]);
    d.extend_from_slice(body);
    d
}

#[test]
fn a_ccob_bomb_is_refused_by_its_declared_size_or_at_the_limit() {
    let e = err(
        "b.hipfb",
        &ccob(3, 1 << 40, &[0x78, 0x9c]),
        &LoadOptions::default(),
    );
    assert_eq!(
        e.to_string(),
        "b.hipfb#ccob: decompressed size exceeds the limit of 4294967296 bytes (--max-decompressed)"
    );
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&vec![0u8; 32 * MIB as usize]).expect("deflate");
    let body = z.finish().expect("deflate");
    let e = err("b.hipfb", &ccob(2, 16, &body), &capped(MIB));
    assert_eq!(
        e.to_string(),
        "b.hipfb#ccob: decompressed size exceeds the limit of 1048576 bytes (--max-decompressed)"
    );
    assert!(matches!(e, Error::TooLarge { limit, .. } if limit == MIB));
}

#[test]
fn a_fifo_or_directory_is_refused_without_blocking() {
    let dir = tempfile::tempdir().expect("tmp");
    let e = load_file(dir.path(), &LoadOptions::default()).expect_err("a directory");
    assert_eq!(
        e.to_string(),
        format!("{}: not a regular file", dir.path().display())
    );
    let fifo = dir.path().join("k.cubin");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        kernelab_testkit::skip("mkfifo", "mkfifo is not available");
        return;
    }
    let e = load_file(&fifo, &LoadOptions::default()).expect_err("a FIFO");
    assert_eq!(
        e.to_string(),
        format!("{}: not a regular file", fifo.display())
    );
}

/// The inputs the H200 fuzz campaign found (tests/fixtures/fuzz/fatbin): malformed mangled
/// kernel names made the demangler's `to_string` panic; every one now reads or errors.
#[test]
fn fuzz_campaign_fatbin_findings_never_panic() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/fuzz/fatbin");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).expect("findings folder") {
        let path = e.expect("entry").path();
        let data = std::fs::read(&path).expect("read");
        let options = LoadOptions {
            max_decompressed: Some(64 << 20),
            ..LoadOptions::default()
        };
        let _ = fatbin::entries_capped(&data, 64 << 20);
        let outcome = std::panic::catch_unwind(|| load_bytes("finding.fatbin", &data, &options));
        assert!(outcome.is_ok(), "{} panicked", path.display());
        n += 1;
    }
    assert_eq!(n, 5, "the five stored findings");
}

#[test]
fn malformed_mangled_names_demangle_to_none_not_a_panic() {
    // A name the demangler parses but cannot print: its Display returns an error.
    for name in ["_Z1fILi1EEvv", "_ZN1aIXadL_Z1bEEE1cEv", "_Z3fooIiEvT_"] {
        let r = std::panic::catch_unwind(|| kernelab_code::demangle(name));
        assert!(r.is_ok(), "{name}");
    }
    assert_eq!(kernelab_code::demangle("_Z3foov").as_deref(), Some("foo()"));
    assert_eq!(kernelab_code::demangle("plain"), None);
}
