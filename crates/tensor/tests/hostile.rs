//! Hostile and impossible tensor files: every declared size is checked before it is used, and
//! nothing panics, aborts or allocates by a size the file declares.
// Tests, not the library: they may print what they skip and stop at the first failure.
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

use kernelab_tensor::{from_bytes, open, DType, Error, ReadSpec};
use std::io::Write;
use std::path::Path;

fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    let mut h = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    out.extend_from_slice(h.as_bytes());
    out.extend_from_slice(data);
    out
}

fn read(name: &str, bytes: Vec<u8>) -> Result<kernelab_tensor::TensorFile, Error> {
    from_bytes(Path::new(name), bytes, &ReadSpec::default())
}

fn err(name: &str, bytes: Vec<u8>) -> String {
    read(name, bytes).expect_err("refused").to_string()
}

#[test]
fn truncated_npy_data_is_an_error() {
    let e = err("t.npy", npy("<f4", "(4,)", &[0; 8]));
    assert_eq!(
        e,
        "t.npy: byte 128: the file is truncated: the header promises 16 bytes of data here, 8 are present"
    );
}

#[test]
fn a_huge_npy_header_length_is_refused_before_use() {
    let mut d = b"\x93NUMPY\x02\x00".to_vec();
    d.extend_from_slice(&u32::MAX.to_le_bytes());
    d.extend_from_slice(b"{'descr'");
    let e = err("h.npy", d);
    assert_eq!(
        e,
        "h.npy: byte 8: expected an npy header of at most 1048576 bytes, not 4294967295"
    );
    let mut d = b"\x93NUMPY\x01\x00".to_vec();
    d.extend_from_slice(&1000u16.to_le_bytes());
    let e = err("h.npy", d);
    assert!(
        e.contains("the header promises 1000 bytes of data here, 0 are present"),
        "{e}"
    );
}

#[test]
fn an_npy_shape_whose_element_count_overflows_is_an_error() {
    let e = err("o.npy", npy("<f4", "(4294967296, 4294967296, 16)", &[]));
    assert!(
        e.starts_with("o.npy: byte 128: expected a shape whose byte count fits in 64 bits"),
        "{e}"
    );
    let e = err("o.npy", npy("<f4", "(18446744073709551616,)", &[]));
    assert!(e.contains("expected an integer shape"), "{e}");
}

#[test]
fn a_non_ascii_dtype_is_an_error_not_a_panic() {
    let e = err("u.npy", npy("é4", "(1,)", &[0; 4]));
    assert_eq!(
        e,
        "u.npy: byte 0: expected a numeric dtype: an unknown dtype (é4), not supported"
    );
    let e = err("u.npy", npy("<\u{1F600}", "(1,)", &[0; 4]));
    assert!(
        e.contains("expected a numeric dtype: an unknown dtype"),
        "{e}"
    );
}

#[test]
fn raw_shapes_that_overflow_are_errors() {
    let spec = ReadSpec {
        dtype: Some(DType::F64),
        shape: Some(vec![usize::MAX, 2]),
        ..ReadSpec::default()
    };
    let e = from_bytes(Path::new("r.bin"), vec![1, 2, 3], &spec).expect_err("overflow");
    assert!(
        e.to_string()
            .contains("a shape whose byte count fits in 64 bits"),
        "{e}"
    );
}

#[test]
fn a_safetensors_header_length_past_the_end_is_truncation() {
    let mut d = 1_000u64.to_le_bytes().to_vec();
    d.extend_from_slice(b"{\"a\":{}}");
    assert_eq!(
        err("s.safetensors", d),
        "s.safetensors: byte 8: the file is truncated: the header promises 1000 bytes of data here, 8 are present"
    );
    let mut d = u64::MAX.to_le_bytes().to_vec();
    d.extend_from_slice(b"{}");
    assert!(err("s.safetensors", d).contains("a safetensors header of at most 100000000 bytes"));
}

#[test]
fn files_with_nothing_to_compare_are_not_comparable() {
    let mut d = 2u64.to_le_bytes().to_vec();
    d.extend_from_slice(b"{}");
    let f = read("e.safetensors", d).expect("reads");
    assert_eq!(
        f.check_comparable().expect_err("empty").to_string(),
        "e.safetensors: nothing to compare: the safetensors file holds no tensors"
    );
    let f = read("z.npy", npy("<f4", "(0, 3)", &[])).expect("reads");
    assert_eq!(
        f.check_comparable().expect_err("no elements").to_string(),
        "z.npy: nothing to compare: every tensor has zero elements"
    );
}

fn zip(members: &[(&str, &[u8], bool)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, data, deflate) in members {
        let method = if *deflate {
            zip::CompressionMethod::Deflated
        } else {
            zip::CompressionMethod::Stored
        };
        let o = zip::write::SimpleFileOptions::default().compression_method(method);
        w.start_file(*name, o).expect("member");
        w.write_all(data).expect("write");
    }
    w.finish().expect("finish").into_inner()
}

#[test]
fn a_zip_bomb_stops_at_the_limit_and_names_the_member() {
    let big = npy("<f4", "(4000000,)", &vec![0u8; 16_000_000]);
    let d = zip(&[("x.npy", &big, true)]);
    assert!(d.len() < 100_000, "{}", d.len());
    let spec = ReadSpec {
        max_decompressed: Some(1_000_000),
        ..ReadSpec::default()
    };
    let e = from_bytes(Path::new("bomb.npz"), d.clone(), &spec).expect_err("capped");
    assert_eq!(
        e.to_string(),
        "bomb.npz#x.npy: decompressed size exceeds the limit of 1000000 bytes (--max-decompressed)"
    );
    assert!(matches!(
        e,
        Error::TooLarge {
            limit: 1_000_000,
            ..
        }
    ));
    // Within the default limit it reads.
    let f = read("bomb.npz", d).expect("reads");
    assert_eq!(f.tensors.len(), 1);
    assert_eq!(f.tensors[0].shape, vec![4_000_000]);
}

#[test]
fn a_declared_uncompressed_size_past_the_limit_is_refused_before_inflating() {
    let small = npy("<f4", "(4,)", &[0u8; 16]);
    let mut d = zip(&[("y.npy", &small, true)]);
    // Patch the uncompressed size (local header byte 22, central directory byte 24).
    let cd = d
        .windows(4)
        .rposition(|w| w == b"PK\x01\x02")
        .expect("central directory");
    d[22..26].copy_from_slice(&u32::MAX.to_le_bytes());
    d[cd + 24..cd + 28].copy_from_slice(&u32::MAX.to_le_bytes());
    let spec = ReadSpec {
        max_decompressed: Some(1 << 20),
        ..ReadSpec::default()
    };
    let e = from_bytes(Path::new("d.npz"), d, &spec).expect_err("declared too large");
    assert_eq!(
        e.to_string(),
        "d.npz#y.npy: decompressed size exceeds the limit of 1048576 bytes (--max-decompressed)"
    );
}

#[test]
fn a_member_count_larger_than_the_file_is_refused() {
    let small = npy("<f4", "(1,)", &[0u8; 4]);
    let mut d = zip(&[("a.npy", &small, false)]);
    let eocd = d
        .windows(4)
        .rposition(|w| w == b"PK\x05\x06")
        .expect("eocd");
    d[eocd + 8..eocd + 12].copy_from_slice(&[0xfe, 0xff, 0xfe, 0xff]);
    let e = err("c.npz", d);
    assert!(
        e.contains("expected an npz member count that fits the file"),
        "{e}"
    );
}

#[test]
fn stored_members_pointing_past_the_end_are_errors() {
    let small = npy("<f4", "(1,)", &[0u8; 4]);
    let mut d = zip(&[("a.npy", &small, false)]);
    let cd = d.windows(4).rposition(|w| w == b"PK\x01\x02").expect("cd");
    // Compressed size past the end of the file.
    d[cd + 20..cd + 24].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
    d[18..22].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
    let r = read("p.npz", d);
    assert!(r.is_err(), "{r:?}");
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let dir = tempfile::tempdir().expect("tmp");
    let fifo = dir.path().join("f.npy");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        kernelab_testkit::skip("mkfifo", "mkfifo is not available");
        return;
    }
    let e = open(&fifo, &ReadSpec::default()).expect_err("a FIFO");
    assert_eq!(
        e.to_string(),
        format!("{}: not a regular file", fifo.display())
    );
    let e = open(dir.path(), &ReadSpec::default()).expect_err("a directory");
    assert!(matches!(e, Error::NotRegular { .. }));
}
