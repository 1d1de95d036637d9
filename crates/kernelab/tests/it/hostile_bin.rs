//! Hostile and impossible binary inputs (tensor files, code objects), generated here: each run
//! under a 2 GiB address-space ceiling and a 20 s limit must end with exit 2 (or 1) and a
//! message naming the problem, never a panic, an abort or a hang.

use assert_cmd::Command;
use flate2::write::DeflateEncoder;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Runs `kernelab ARGS` under `ulimit -v` 2 GiB and a 20 s limit; returns (exit code, stderr).
fn run(args: &[&str]) -> (i32, String) {
    let bin = assert_cmd::cargo::cargo_bin("kernelab");
    let out = Command::new("sh")
        .args(["-c", "ulimit -v 2097152; exec \"$0\" \"$@\""])
        .arg(bin)
        .envs(kernelab_testkit::isolated_env())
        .args(args)
        .env_remove("COLUMNS")
        .timeout(Duration::from_secs(20))
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.code().unwrap_or(-1), stderr)
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write");
    p.display().to_string()
}

fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    let h = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}\n");
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    out.extend_from_slice(h.as_bytes());
    out.extend_from_slice(data);
    out
}

fn assert_error(args: &[&str], message: &str) {
    let (code, stderr) = run(args);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(message), "expected {message:?} in {stderr}");
}

#[test]
fn npy_shapes_overflowing_u64_are_exit_2() {
    let dir = tempfile::tempdir().expect("tmp");
    let a = write(
        dir.path(),
        "a.npy",
        &npy("<f8", "(4294967296, 4294967296, 2)", &[]),
    );
    assert_error(
        &["check", "bitwise", &a, &a],
        "expected a shape whose byte count fits in 64 bits",
    );
}

#[test]
fn a_huge_npy_header_length_and_truncated_data_are_exit_2() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut d = b"\x93NUMPY\x02\x00".to_vec();
    d.extend_from_slice(&u32::MAX.to_le_bytes());
    let h = write(dir.path(), "h.npy", &d);
    assert_error(
        &["check", "finite", &h],
        "expected an npy header of at most 1048576 bytes, not 4294967295",
    );
    let mut t = npy("<f4", "(1000,)", &[0; 40]);
    t.truncate(t.len() - 1);
    let t = write(dir.path(), "t.npy", &t);
    assert_error(&["check", "finite", &t], "the file is truncated");
}

#[test]
fn a_non_ascii_dtype_is_exit_2() {
    let dir = tempfile::tempdir().expect("tmp");
    let a = write(dir.path(), "u.npy", &npy("é4", "(1,)", &[0; 4]));
    assert_error(
        &["check", "finite", &a],
        "expected a numeric dtype: an unknown dtype (é4), not supported",
    );
}

#[test]
fn a_safetensors_header_length_past_eof_is_exit_2() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut d = 1_000_000u64.to_le_bytes().to_vec();
    d.extend_from_slice(b"{\"a\":{}}");
    let s = write(dir.path(), "s.safetensors", &d);
    assert_error(
        &["check", "finite", &s],
        "s.safetensors: byte 8: the file is truncated: the header promises 1000000 bytes",
    );
}

/// A zip of one deflated member whose headers declare `declared` bytes.
fn zip_deflated(name: &str, data: &[u8], declared: u32) -> Vec<u8> {
    let mut enc = DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(data).expect("deflate");
    let body = enc.finish().expect("deflate");
    let fields = |out: &mut Vec<u8>| {
        out.extend_from_slice(&8u16.to_le_bytes()); // deflate
        out.extend_from_slice(&[0; 4]); // time, date
        out.extend_from_slice(&[0; 4]); // crc (never reached)
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(&declared.to_le_bytes());
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
    };
    let mut z = b"PK\x03\x04\x14\x00\x00\x00".to_vec();
    fields(&mut z);
    z.extend_from_slice(name.as_bytes());
    z.extend_from_slice(&body);
    let cd_at = z.len();
    z.extend_from_slice(b"PK\x01\x02\x14\x00\x14\x00\x00\x00");
    fields(&mut z);
    z.extend_from_slice(&[0; 14]); // comment, disk, attributes, local header offset 0
    z.extend_from_slice(name.as_bytes());
    let cd_len = z.len() - cd_at;
    z.extend_from_slice(b"PK\x05\x06\x00\x00\x00\x00\x01\x00\x01\x00");
    z.extend_from_slice(&(cd_len as u32).to_le_bytes());
    z.extend_from_slice(&(cd_at as u32).to_le_bytes());
    z.extend_from_slice(&0u16.to_le_bytes());
    z
}

#[test]
fn a_zip_bomb_is_not_followed_past_the_limit() {
    let dir = tempfile::tempdir().expect("tmp");
    // 64 MiB of zeros in about 64 KiB, declaring 128 bytes.
    let inner = npy("<f4", "(16777216,)", &vec![0; 64 << 20]);
    let bomb = write(dir.path(), "bomb.npz", &zip_deflated("x.npy", &inner, 128));
    let expected = format!(
        "{bomb}#x.npy: decompressed size exceeds the limit of 1000000 bytes (--max-decompressed)"
    );
    assert_error(
        &[
            "check",
            "bitwise",
            &bomb,
            &bomb,
            "--max-decompressed",
            "1000000",
        ],
        &expected,
    );
    // A declared size past the limit is refused before inflating.
    let small = npy("<f4", "(1,)", &[0; 4]);
    let d = write(
        dir.path(),
        "d.npz",
        &zip_deflated("y.npy", &small, 4_000_000),
    );
    assert_error(
        &["check", "finite", &d, "--max-decompressed", "1000000"],
        "d.npz#y.npy: decompressed size exceeds the limit of 1000000 bytes",
    );
}

fn fifo(dir: &Path, name: &str) -> Option<PathBuf> {
    let p = dir.join(name);
    let made = std::process::Command::new("mkfifo").arg(&p).status();
    if made.is_ok_and(|s| s.success()) {
        Some(p)
    } else {
        kernelab_testkit::skip("mkfifo", "mkfifo is not available");
        None
    }
}

#[test]
fn fifos_and_directories_are_exit_2_without_blocking() {
    let dir = tempfile::tempdir().expect("tmp");
    let Some(f) = fifo(dir.path(), "f.npy") else {
        return;
    };
    let f = f.display().to_string();
    assert_error(
        &["check", "finite", &f],
        &format!("{f}: not a regular file"),
    );
    assert_error(&["code", "show", &f], &format!("{f}: not a regular file"));
    let d = dir.path().display().to_string();
    assert_error(
        &["check", "repeat", &d, &d],
        &format!("{d}: not a regular file"),
    );
    let m = fifo(dir.path(), "m.toml")
        .expect("fifo")
        .display()
        .to_string();
    assert_error(
        &["check", "sweep", &m],
        &format!("{m}: cannot read: not a regular file"),
    );
}

fn safetensors_empty() -> Vec<u8> {
    let mut d = 2u64.to_le_bytes().to_vec();
    d.extend_from_slice(b"{}");
    d
}

#[test]
fn gates_with_nothing_to_compare_are_exit_2() {
    let dir = tempfile::tempdir().expect("tmp");
    let e = write(dir.path(), "e.safetensors", &safetensors_empty());
    for gate in ["bitwise", "close", "oracle"] {
        assert_error(
            &["check", gate, &e, &e],
            &format!("{e}: nothing to compare: the safetensors file holds no tensors"),
        );
    }
    assert_error(&["check", "finite", &e], "holds no tensors");
    assert_error(&["check", "repeat", &e, &e], "holds no tensors");
    let z = write(dir.path(), "z.npy", &npy("<f4", "(0, 8)", &[]));
    assert_error(
        &["check", "bitwise", &z, &z],
        &format!("{z}: nothing to compare: every tensor has zero elements"),
    );
}

#[test]
fn an_empty_sweep_is_exit_2() {
    let dir = tempfile::tempdir().expect("tmp");
    let m = write(dir.path(), "m.toml", b"dtype = \"bf16\"\n");
    assert_error(
        &["check", "sweep", &m],
        &format!("{m}: nothing to run: no [[config]] entries"),
    );
    let m = write(dir.path(), "n.toml", b"config = []\n");
    assert_error(&["check", "sweep", &m], "no [[config]] entries");
}

#[test]
fn fatbin_and_ccob_bombs_are_exit_2_naming_the_entry() {
    let dir = tempfile::tempdir().expect("tmp");
    // A fatbin whose one LZ4 entry declares u64::MAX bytes.
    let mut entry = vec![0u8; 64];
    entry[0..2].copy_from_slice(&2u16.to_le_bytes());
    entry[4..8].copy_from_slice(&64u32.to_le_bytes());
    entry[8..16].copy_from_slice(&4u64.to_le_bytes());
    entry[40..48].copy_from_slice(&0x2000u64.to_le_bytes());
    entry[56..64].copy_from_slice(&u64::MAX.to_le_bytes());
    entry.extend_from_slice(&[0x1f, 0, 0, 0]);
    let mut fb = 0xBA55_ED50u32.to_le_bytes().to_vec();
    fb.extend_from_slice(&[1, 0, 16, 0]);
    fb.extend_from_slice(&(entry.len() as u64).to_le_bytes());
    fb.extend_from_slice(&entry);
    let f = write(dir.path(), "k.fatbin", &fb);
    assert_error(
        &["code", "show", &f],
        &format!(
            "{f}#0: decompressed size exceeds the limit of 4294967296 bytes (--max-decompressed)"
        ),
    );
    // A CCOB v2 bundle whose zlib body inflates to 64 MiB, declaring 16 bytes.
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&vec![0u8; 64 << 20]).expect("zlib");
    let mut c = b"CCOB\x02\x00\x01\x00".to_vec();
    c.extend_from_slice(&0u32.to_le_bytes());
    c.extend_from_slice(&16u32.to_le_bytes());
    c.extend_from_slice(&[0; 8]);
    c.extend_from_slice(&z.finish().expect("zlib"));
    let c = write(dir.path(), "b.hipfb", &c);
    assert_error(
        &["code", "show", &c, "--max-decompressed", "1048576"],
        &format!("{c}#ccob: decompressed size exceeds the limit of 1048576 bytes"),
    );
}
