//! SHA-256 digests as lowercase hex: the one helper behind code-object hashes, tensor content
//! hashes and the input hashes of bundle records.

use sha2::{Digest, Sha256};
use std::io::Read;

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lowercase hex SHA-256 of everything `reader` yields, and how many bytes that was.
pub fn sha256_reader(mut reader: impl Read) -> std::io::Result<(String, u64)> {
    let mut h = Sha256::new();
    let n = std::io::copy(&mut reader, &mut h)?;
    Ok((hex(&h.finalize()), n))
}

/// Lowercase hex of bytes.
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        // `printf abc | sha256sum`
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(sha256_hex(b"abc"), abc);
        assert_eq!(
            sha256_reader(&b"abc"[..]).expect("reads"),
            (abc.to_string(), 3)
        );
    }
}
