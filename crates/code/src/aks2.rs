//! AOTriton kernel storage v2 (`.aks2`): the HSACOs of one AOTriton kernel, as AOTriton's own
//! reader (`v2src/packed_kernel.cc`, ROCm/aotriton, MIT) lays them out. A 16-byte plain header
//! (`AKS2`, the uncompressed size, the number of kernels N, the directory size, each a
//! little-endian `u32`), then one xz stream holding the directory (N entries of five `u32`:
//! shared memory, threads per block, offset from the end of the directory, image size, name
//! length with its NUL; then the name) and the images.

use crate::error::{malformed, too_large, Error, Result};
use kernelab_model::Location;
use std::io::Write;

/// The first four bytes of an archive.
pub const MAGIC: &[u8; 4] = b"AKS2";

/// Most bytes an archive's content may take per byte of its xz stream: 200 (xz packs an
/// HSACO's code and tables by 3 to 20 times; a stream of zeros by thousands, the mark of a
/// decompression bomb). Checked on the size the header declares, before inflating, so a
/// small file cannot keep the reader inflating gigabytes; contents up to
/// [`RATIO_FREE_BYTES`] are not held to it.
pub const MAX_RATIO: u64 = 200;

/// Content any archive may declare whatever its compressed size (see [`MAX_RATIO`]).
pub const RATIO_FREE_BYTES: u64 = 16 << 20;

/// One kernel image of an archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aks2Entry {
    /// Its name in the directory (AOTriton's kernel stem).
    pub name: String,
    /// Shared memory (LDS) bytes the launch asks for.
    pub shared_memory: u32,
    /// Threads per block.
    pub threads: u32,
    /// The image (an HSACO).
    pub data: Vec<u8>,
}

fn u32_at(d: &[u8], at: usize, what: &str, base: u64) -> Result<u32> {
    d.get(at..at.saturating_add(4))
        .and_then(|b| b.try_into().ok())
        .map(u32::from_le_bytes)
        .ok_or_else(|| malformed(base + at as u64, format!("a 4-byte {what}")))
}

/// A writer that refuses to grow past `limit` bytes.
struct Capped {
    out: Vec<u8>,
    limit: usize,
    over: bool,
}

impl Write for Capped {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if self.out.len().saturating_add(b.len()) > self.limit {
            self.over = true;
            return Err(std::io::Error::other("over the limit"));
        }
        // Memory that cannot be had is an error, never an abort.
        self.out.try_reserve(b.len()).map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::OutOfMemory,
                format!("cannot allocate {} bytes", self.out.len() + b.len()),
            )
        })?;
        self.out.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The bytes the xz stream `xz` (at byte 16 of the file) inflates to, summed from the
/// headers of its LZMA2 chunks without inflating any, stopping with an error once past
/// `most`. The decoder keeps everything it inflates between dictionary resets in memory, so
/// the stream is bounded before it runs: each chunk decodes to exactly the size its header
/// gives.
fn xz_unpacked_size(xz: &[u8], most: u64) -> Result<u64> {
    let at = |i: usize| 16 + i as u64;
    let bad =
        |i: usize, what: &str| malformed(16, format!("an xz stream ({what} at byte {})", at(i)));
    let byte = |i: usize| xz.get(i).copied();
    let be16 = |i: usize| Some(u64::from(u16::from_be_bytes([byte(i)?, byte(i + 1)?])));
    if !xz.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        return Err(bad(0, "its magic"));
    }
    // The check after each block: none, or 4, 8, 16, 32 or 64 bytes by the check type.
    let check = match byte(7).map(|f| f & 0x0f) {
        Some(0) => 0,
        Some(t) => 4usize << ((t - 1) / 3),
        None => return Err(bad(7, "its flags")),
    };
    let mut total = 0u64;
    let mut pos = 12;
    loop {
        let start = pos;
        match byte(pos) {
            // The index: no more blocks.
            Some(0) => return Ok(total),
            Some(b) => pos += (usize::from(b) + 1) * 4,
            None => return Err(bad(pos, "a block or the index")),
        }
        loop {
            let control = byte(pos).ok_or_else(|| bad(pos, "an LZMA2 chunk"))?;
            let (unpacked, skip) = match control {
                0 => {
                    pos += 1;
                    break;
                }
                1 | 2 => {
                    let n = be16(pos + 1).ok_or_else(|| bad(pos, "an LZMA2 chunk"))? + 1;
                    (n, 3 + n as usize)
                }
                0x80.. => {
                    let lo = be16(pos + 1).ok_or_else(|| bad(pos, "an LZMA2 chunk"))?;
                    let packed = be16(pos + 3).ok_or_else(|| bad(pos, "an LZMA2 chunk"))? + 1;
                    let props = usize::from((control >> 5) & 3 >= 2);
                    (
                        (u64::from(control & 0x1f) << 16 | lo) + 1,
                        5 + props + packed as usize,
                    )
                }
                _ => return Err(bad(pos, "an LZMA2 chunk's control byte")),
            };
            total += unpacked;
            if total > most {
                return Err(malformed(
                    4,
                    format!(
                        "content of the declared {most} bytes, not more (the LZMA2 chunks up to byte {} inflate to {total})",
                        at(pos)
                    ),
                ));
            }
            pos += skip;
        }
        // The block is padded to four bytes, then its check.
        pos = start + (pos - start).div_ceil(4) * 4 + check;
    }
}

/// Every kernel image of an archive, inflating at most `limit` bytes (the size the header
/// declares is checked first). Offsets in errors are of the file for the header and of the
/// decompressed content (`content byte N`) for the directory.
pub fn entries(data: &[u8], limit: u64) -> Result<Vec<Aks2Entry>> {
    if !data.starts_with(MAGIC) {
        return Err(malformed(0, "the magic AKS2"));
    }
    let size = u32_at(data, 4, "uncompressed size", 0)?;
    let n = u32_at(data, 8, "number of kernels", 0)?;
    let dir_size = u32_at(data, 12, "directory size", 0)?;
    if u64::from(size) > limit {
        return Err(too_large("aks2", limit));
    }
    let mut input = data.get(16..).unwrap_or_default();
    let most = (input.len() as u64)
        .saturating_mul(MAX_RATIO)
        .max(RATIO_FREE_BYTES);
    if u64::from(size) > most {
        return Err(malformed(
            4,
            format!(
                "an uncompressed size of at most {MAX_RATIO} times the {} bytes of the xz stream (MAX_RATIO; a decompression bomb?), not {size}",
                input.len()
            ),
        ));
    }
    xz_unpacked_size(input, u64::from(size))?;
    let mut w = Capped {
        out: Vec::new(),
        limit: size as usize,
        over: false,
    };
    if let Err(e) = lzma_rs::xz_decompress(&mut input, &mut w) {
        return Err(if w.over {
            malformed(4, format!("content of the declared {size} bytes, not more"))
        } else {
            malformed(16, format!("an xz stream ({e})"))
        });
    }
    let content = w.out;
    if content.len() != size as usize {
        return Err(malformed(
            4,
            format!(
                "content of the declared {size} bytes, not {}",
                content.len()
            ),
        ));
    }
    let bad = |at: usize, what: String| Error::Malformed {
        location: Location::default().with_field(format!("content byte {at}")),
        expected: what,
    };
    // Every directory entry takes at least 21 bytes (five u32 and a NUL).
    if u64::from(n) > content.len() as u64 / 21 {
        return Err(malformed(
            8,
            format!("a number of kernels that fits {size} bytes, not {n}"),
        ));
    }
    let mut pos = 0usize;
    let mut dir = Vec::new();
    for _ in 0..n {
        let field = |k: usize, what: &str| -> Result<u32> {
            content
                .get(pos + 4 * k..pos + 4 * k + 4)
                .and_then(|b| b.try_into().ok())
                .map(u32::from_le_bytes)
                .ok_or_else(|| bad(pos + 4 * k, format!("a 4-byte {what}")))
        };
        let shared = field(0, "shared memory size")?;
        let threads = field(1, "thread count")?;
        let offset = field(2, "image offset")?;
        let len = field(3, "image size")?;
        let name_len = field(4, "name length")? as usize;
        let start = pos + 20;
        let raw = content
            .get(start..start.saturating_add(name_len))
            .ok_or_else(|| bad(start, format!("a name of {name_len} bytes")))?;
        let raw = raw.strip_suffix(b"\0").unwrap_or(raw);
        let raw = &raw[..memchr::memchr(0, raw).unwrap_or(raw.len())];
        let name = std::str::from_utf8(raw)
            .map_err(|_| bad(start, "a UTF-8 kernel name".into()))?
            .to_string();
        dir.push((name, shared, threads, offset, len, pos));
        pos = start + name_len;
    }
    if pos != dir_size as usize {
        return Err(malformed(
            12,
            format!("a directory size of {pos} bytes (what its {n} entries take), not {dir_size}"),
        ));
    }
    let images = content.get(pos..).unwrap_or_default();
    let mut out = Vec::with_capacity(dir.len());
    // Each entry's image is copied out: together they may take at most the bytes after the
    // directory, so that many entries naming one image cannot multiply it.
    let mut copied = 0u64;
    for (i, (name, shared_memory, threads, offset, len, at)) in dir.into_iter().enumerate() {
        let (o, l) = (offset as usize, len as usize);
        copied += u64::from(len);
        if copied > images.len() as u64 {
            return Err(bad(
                at + 12,
                format!(
                    "entry {i} ({name:?}): images that together fit the {} bytes after the directory (entries naming one image more than once?), not {copied} bytes so far",
                    images.len()
                ),
            ));
        }
        let data = images
            .get(o..o.saturating_add(l))
            .ok_or_else(|| {
                bad(
                    at + 8,
                    format!(
                        "an image ({l} bytes at {o}) inside the {} bytes after the directory",
                        images.len()
                    ),
                )
            })?
            .to_vec();
        out.push(Aks2Entry {
            name,
            shared_memory,
            threads,
            data,
        });
    }
    Ok(out)
}
