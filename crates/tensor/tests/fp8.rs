//! The fp8 encoders and decoders against ml_dtypes over every f16 and bf16 bit pattern, every
//! fp8 code and float64 inputs at and near the ties: `tests/oracle/fp8_cases.py` wrote the
//! expected bytes to `tests/expected/fp8_encodings.bin` (layout in its docstring).
//!
//! NaN: ml_dtypes writes one NaN per sign (`0x7f`/`0xff` for e4m3fn, `0x7e`/`0xfe` for e5m2),
//! and so do the encoders, so NaN bytes are compared exactly like the rest.

use kernelab_tensor::{decode_e4m3fn, decode_e5m2, encode_e4m3fn, encode_e5m2};
use std::path::PathBuf;

const PATTERNS: usize = 1 << 16;

fn expected() -> Vec<u8> {
    let p =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/expected/fp8_encodings.bin");
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn f64_at(b: &[u8], i: usize) -> f64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[i * 8..i * 8 + 8]);
    f64::from_le_bytes(a)
}

/// Encodes every input and lists the first mismatches against the expected bytes.
fn compare(
    what: &str,
    inputs: &[f64],
    want: &[u8],
    encode: fn(f64) -> u8,
    show: &dyn Fn(usize) -> String,
) {
    assert_eq!(inputs.len(), want.len(), "{what}: expected file layout");
    let bad: Vec<String> = inputs
        .iter()
        .zip(want)
        .enumerate()
        .filter(|(_, (&v, &w))| encode(v) != w)
        .map(|(i, (&v, &w))| {
            format!(
                "{} = {v:e}: got {:#04x}, ml_dtypes {w:#04x}",
                show(i),
                encode(v)
            )
        })
        .collect();
    assert!(
        bad.is_empty(),
        "{what}: {} of {} differ; first: {:#?}",
        bad.len(),
        inputs.len(),
        &bad[..bad.len().min(10)]
    );
}

#[test]
fn every_f16_and_bf16_pattern_encodes_as_ml_dtypes_does() {
    let e = expected();
    let f16: Vec<f64> = (0..=u16::MAX)
        .map(|b| half::f16::from_bits(b).to_f64())
        .collect();
    let bf16: Vec<f64> = (0..=u16::MAX)
        .map(|b| half::bf16::from_bits(b).to_f64())
        .collect();
    let hex = |i: usize| format!("{i:#06x}");
    let at = |k: usize| &e[k * PATTERNS..(k + 1) * PATTERNS];
    compare("f16 -> e4m3fn", &f16, at(0), encode_e4m3fn, &|i| {
        format!("f16 {}", hex(i))
    });
    compare("f16 -> e5m2", &f16, at(1), encode_e5m2, &|i| {
        format!("f16 {}", hex(i))
    });
    compare("bf16 -> e4m3fn", &bf16, at(2), encode_e4m3fn, &|i| {
        format!("bf16 {}", hex(i))
    });
    compare("bf16 -> e5m2", &bf16, at(3), encode_e5m2, &|i| {
        format!("bf16 {}", hex(i))
    });
    // The patterns reach every code: all finite values, zeros of both signs, NaN and (e5m2)
    // infinity of both signs; only e5m2's other NaN encodings never come out.
    for k in 0..4 {
        let mut seen = [false; 256];
        for &b in at(k) {
            seen[usize::from(b)] = true;
        }
        let missing: Vec<usize> = (0..256).filter(|&c| !seen[c]).collect();
        let want: &[usize] = if k % 2 == 0 {
            &[]
        } else {
            &[0x7d, 0x7f, 0xfd, 0xff]
        };
        assert_eq!(missing, want, "array {k}: codes never produced");
    }
}

#[test]
fn every_fp8_code_decodes_as_ml_dtypes_does() {
    let e = expected();
    let base = 4 * PATTERNS;
    for (what, off, decode) in [
        ("e4m3fn", base, decode_e4m3fn as fn(u8) -> f64),
        ("e5m2", base + 256 * 8, decode_e5m2),
    ] {
        let mut nans = 0;
        for code in 0..=u8::MAX {
            let want = f64_at(&e[off..], usize::from(code));
            let got = decode(code);
            if want.is_nan() {
                nans += 1;
                assert!(got.is_nan(), "{what} {code:#04x}: got {got}, ml_dtypes NaN");
            } else {
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "{what} {code:#04x}: got {got}, ml_dtypes {want}"
                );
            }
        }
        assert_eq!(
            nans,
            if what == "e4m3fn" { 2 } else { 6 },
            "{what}: NaN codes"
        );
    }
}

#[test]
fn float64_inputs_encode_as_ml_dtypes_does() {
    let e = expected();
    let mut at = 4 * PATTERNS + 2 * 256 * 8;
    let mut n = [0u8; 4];
    n.copy_from_slice(&e[at..at + 4]);
    let n = u32::from_le_bytes(n) as usize;
    at += 4;
    assert!(n > 1000, "{n} float64 cases");
    let inputs: Vec<f64> = (0..n).map(|i| f64_at(&e[at..], i)).collect();
    at += 8 * n;
    assert_eq!(e.len(), at + 2 * n, "file length");
    let show = |i: usize| format!("case {i}");
    compare(
        "f64 -> e4m3fn",
        &inputs,
        &e[at..at + n],
        encode_e4m3fn,
        &show,
    );
    compare("f64 -> e5m2", &inputs, &e[at + n..], encode_e5m2, &show);
}
