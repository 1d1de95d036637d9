//! Clang offload bundles (`__CLANG_OFFLOAD_BUNDLE__`, and compressed `CCOB` bundles) inside
//! host objects (`.hip_fatbin`) or as files: list entries and extract the device code objects.
//! See `docs/formats.md` (code objects).

use crate::error::{malformed, Result};
use object::{Object, ObjectSection};
use std::io::Read;

const MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";

/// One bundle entry.
#[derive(Clone, Debug)]
pub struct BundleEntry {
    /// Entry id, e.g. `hipv4-amdgcn-amd-amdhsa--gfx942`.
    pub id: String,
    /// Payload bytes.
    pub data: Vec<u8>,
}

/// The bundle bytes of a file: the `.hip_fatbin` section of a host ELF, or the file itself.
pub fn bundle_bytes(data: &[u8]) -> Option<Vec<u8>> {
    if data.starts_with(MAGIC) || data.starts_with(b"CCOB") {
        return Some(data.to_vec());
    }
    let file = object::File::parse(data).ok()?;
    let s = file.section_by_name(".hip_fatbin")?;
    let d = s.data().ok()?;
    let at = memchr::memmem::find(d, MAGIC).or_else(|| memchr::memmem::find(d, b"CCOB"))?;
    Some(d[at..].to_vec())
}

fn u64_at(d: &[u8], o: usize) -> Result<u64> {
    d.get(o..o + 8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .ok_or_else(|| malformed(o as u64, "an 8-byte field of the offload bundle"))
}

/// Decompresses a `CCOB` bundle (versions 1 to 3, zlib or zstd) into a plain bundle.
fn decompress(d: &[u8]) -> Result<Vec<u8>> {
    let version = u16::from_le_bytes([
        d.get(4).copied().unwrap_or(0),
        d.get(5).copied().unwrap_or(0),
    ]);
    let header = match version {
        1 => 4 + 2 + 2 + 4 + 8,
        2 => 4 + 2 + 2 + 4 + 4 + 8,
        3 => 4 + 2 + 2 + 8 + 8 + 8,
        v => return Err(malformed(4, format!("a CCOB version 1 to 3, not {v}"))),
    };
    let body = d
        .get(header..)
        .ok_or_else(|| malformed(0, "a complete CCOB header"))?;
    let mut out = Vec::new();
    if body.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]) {
        ruzstd::decoding::StreamingDecoder::new(body)
            .map_err(|e| malformed(header as u64, format!("zstd data ({e})")))?
            .read_to_end(&mut out)
            .map_err(|e| malformed(header as u64, format!("complete zstd data ({e})")))?;
    } else {
        flate2::read::ZlibDecoder::new(body)
            .read_to_end(&mut out)
            .map_err(|e| malformed(header as u64, format!("complete zlib data ({e})")))?;
    }
    Ok(out)
}

/// Lists the entries of a bundle (decompressing `CCOB` first).
pub fn entries(bundle: &[u8]) -> Result<Vec<BundleEntry>> {
    let owned;
    let d = if bundle.starts_with(b"CCOB") {
        owned = decompress(bundle)?;
        owned.as_slice()
    } else {
        bundle
    };
    if !d.starts_with(MAGIC) {
        return Err(malformed(0, "the magic __CLANG_OFFLOAD_BUNDLE__"));
    }
    let n = u64_at(d, 24)?;
    let mut pos = 32usize;
    let mut out = Vec::new();
    for _ in 0..n {
        let offset = u64_at(d, pos)? as usize;
        let size = u64_at(d, pos + 8)? as usize;
        let id_len = u64_at(d, pos + 16)? as usize;
        let id = d
            .get(pos + 24..pos + 24 + id_len)
            .ok_or_else(|| malformed(pos as u64, "a bundle entry id"))?;
        let data = d.get(offset..offset + size).ok_or_else(|| {
            malformed(
                offset as u64,
                format!("a bundle entry of {size} bytes inside the bundle"),
            )
        })?;
        out.push(BundleEntry {
            id: String::from_utf8_lossy(id).into_owned(),
            data: data.to_vec(),
        });
        pos += 24 + id_len;
    }
    Ok(out)
}
