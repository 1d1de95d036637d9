//! Limits on what an input may make kernelab allocate: decompression is capped and read in
//! chunks, and memory that cannot be had is an error, never an abort.

use std::io::Read;

/// Default cap on the bytes the compressed entries of one input may decompress to: 4 GiB
/// (`--max-decompressed` changes it).
pub const DEFAULT_MAX_DECOMPRESSED: u64 = 4 << 30;

/// Why [`read_capped`] stopped.
#[derive(Debug, thiserror::Error)]
pub enum CappedReadError {
    /// The stream holds more than the limit.
    #[error("decompressed size exceeds the limit of {limit} bytes (--max-decompressed)")]
    TooLarge {
        /// The limit.
        limit: u64,
    },
    /// Memory for the data could not be had.
    #[error("cannot allocate {bytes} bytes")]
    Alloc {
        /// Bytes asked for.
        bytes: usize,
    },
    /// The stream failed (corrupt compressed data, I/O).
    #[error("{0}")]
    Read(#[source] std::io::Error),
}

/// Reads `r` to its end into memory, stopping with [`CappedReadError::TooLarge`] as soon as
/// more than `limit` bytes come out (a decompression bomb is not followed to its end). Memory
/// grows with the data read, never with a size the input declares.
pub fn read_capped(r: impl Read, limit: u64) -> Result<Vec<u8>, CappedReadError> {
    let mut r = r.take(limit.saturating_add(1));
    let mut out: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = match r.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(CappedReadError::Read(e)),
        };
        let got = chunk.get(..n).unwrap_or_default();
        if out.len() as u64 + n as u64 > limit {
            return Err(CappedReadError::TooLarge { limit });
        }
        if out.capacity() - out.len() < n {
            let more = out.len().max(n);
            out.try_reserve(more).map_err(|_| CappedReadError::Alloc {
                bytes: out.len().saturating_add(more),
            })?;
        }
        out.extend_from_slice(got);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_up_to_the_limit_and_stops_past_it() {
        let data = vec![7u8; 200_000];
        assert_eq!(read_capped(&data[..], 200_000).expect("fits"), data);
        let e = read_capped(&data[..], 199_999).expect_err("too large");
        assert_eq!(
            e.to_string(),
            "decompressed size exceeds the limit of 199999 bytes (--max-decompressed)"
        );
        // An endless stream stops at the limit.
        let e = read_capped(std::io::repeat(0), 1 << 20).expect_err("endless");
        assert!(matches!(e, CappedReadError::TooLarge { limit } if limit == 1 << 20));
    }
}
