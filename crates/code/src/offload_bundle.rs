//! Clang offload bundles (`__CLANG_OFFLOAD_BUNDLE__`, and compressed `CCOB` bundles) inside
//! host objects (`.hip_fatbin`) or as files: list entries and extract the device code objects.
//! See `docs/formats.md` (code objects).

use crate::error::{malformed, too_large, Result};
use object::{Object, ObjectSection};

const MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";

/// One bundle entry.
#[derive(Clone, Debug)]
pub struct BundleEntry {
    /// Entry id, e.g. `hipv4-amdgcn-amd-amdhsa--gfx942`.
    pub id: String,
    /// Payload bytes.
    pub data: Vec<u8>,
}

/// The bundle bytes of a file: the `.hip_fatbin` section of a host ELF or COFF object, the
/// `.hip_fat` section of a PE image (Windows DLL or EXE: PE section names are at most 8
/// bytes), or the file itself. The section may hold several bundles one after another: see
/// [`split`].
pub fn bundle_bytes(data: &[u8]) -> Option<Vec<u8>> {
    if data.starts_with(MAGIC) || data.starts_with(b"CCOB") {
        return Some(data.to_vec());
    }
    let file = object::File::parse(data).ok()?;
    let s = file
        .section_by_name(".hip_fatbin")
        .or_else(|| file.section_by_name(".hip_fat"))?;
    let d = s.data().ok()?;
    let at = next_bundle(d, 0)?;
    Some(d[at..].to_vec())
}

/// Where the next bundle (plain or `CCOB`) starts, at or after `from`.
fn next_bundle(d: &[u8], from: usize) -> Option<usize> {
    let rest = d.get(from..)?;
    let plain = memchr::memmem::find(rest, MAGIC);
    let ccob = memchr::memmem::find(rest, b"CCOB");
    let at = match (plain, ccob) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b)?,
    };
    Some(from + at)
}

/// The length of the bundle at the start of `d`, when its header says (a plain bundle: the end
/// of its furthest entry; `CCOB` v2 and v3: the total size field), or `None` (`CCOB` v1).
fn bundle_len(d: &[u8]) -> Option<usize> {
    if d.starts_with(b"CCOB") {
        let version = u16::from_le_bytes([*d.get(4)?, *d.get(5)?]);
        let total = match version {
            2 => d.get(8..12).map(le)?,
            3 => d.get(8..16).map(le)?,
            _ => return None,
        };
        return usize::try_from(total).ok().filter(|&n| n > 0);
    }
    let n = u64_at(d, 24).ok()?;
    let mut pos = 32usize;
    let mut end = 32usize;
    for _ in 0..n.min((d.len() / 24) as u64) {
        let offset = usize::try_from(u64_at(d, pos).ok()?).ok()?;
        let size = usize::try_from(u64_at(d, pos + 8).ok()?).ok()?;
        let id_len = usize::try_from(u64_at(d, pos + 16).ok()?).ok()?;
        end = end.max(offset.checked_add(size)?);
        pos = pos.checked_add(24)?.checked_add(id_len)?;
        end = end.max(pos);
    }
    Some(end)
}

/// Every position where a bundle (plain or `CCOB`) may start, in order: one pass over the
/// bytes per magic, so that splitting never searches the rest of the file per candidate.
fn candidates(d: &[u8]) -> Vec<usize> {
    let mut at: Vec<usize> = memchr::memmem::find_iter(d, MAGIC).collect();
    at.extend(memchr::memmem::find_iter(d, b"CCOB"));
    at.sort_unstable();
    at
}

/// Splits bundle bytes (see [`bundle_bytes`]) into the bundles they hold, one after another
/// with any padding between them skipped. A bundle whose length its header does not give
/// (`CCOB` v1) runs to the next bundle magic. Linear in the bytes: every candidate magic is
/// found in one pass first.
pub fn split(bytes: &[u8]) -> Vec<&[u8]> {
    let starts = candidates(bytes);
    let next = |from: usize| starts.get(starts.partition_point(|&p| p < from)).copied();
    let mut out = Vec::new();
    let mut at = next(0);
    while let Some(start) = at {
        let rest = &bytes[start..];
        let following = match bundle_len(rest) {
            Some(n) if n <= rest.len() => next(start + n),
            Some(_) => None,
            None => next(start + 4),
        };
        let end = following.unwrap_or(bytes.len());
        out.push(&bytes[start..end]);
        at = following;
    }
    out
}

fn u64_at(d: &[u8], o: usize) -> Result<u64> {
    d.get(o..o.saturating_add(8))
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .ok_or_else(|| malformed(o as u64, "an 8-byte field of the offload bundle"))
}

/// Decompresses a `CCOB` bundle (versions 1 to 3, zlib or zstd) into a plain bundle of at most
/// `limit` bytes: the size the header declares is checked first, then the stream is capped.
fn decompress(d: &[u8], limit: u64) -> Result<Vec<u8>> {
    let version = u16::from_le_bytes([
        d.get(4).copied().unwrap_or(0),
        d.get(5).copied().unwrap_or(0),
    ]);
    // Header: magic, version, method, then (v1, v2: 32-bit; v3: 64-bit) total file size (v2+),
    // uncompressed size, and a hash.
    let (header, declared) = match version {
        1 => (4 + 2 + 2 + 4 + 8, d.get(8..12).map(le)),
        2 => (4 + 2 + 2 + 4 + 4 + 8, d.get(12..16).map(le)),
        3 => (4 + 2 + 2 + 8 + 8 + 8, d.get(16..24).map(le)),
        v => return Err(malformed(4, format!("a CCOB version 1 to 3, not {v}"))),
    };
    if declared.is_some_and(|n| n > limit) {
        return Err(too_large("ccob", limit));
    }
    let body = d
        .get(header..)
        .ok_or_else(|| malformed(0, "a complete CCOB header"))?;
    let capped = |r: std::result::Result<Vec<u8>, kernelab_model::CappedReadError>, what: &str| {
        r.map_err(|e| match e {
            kernelab_model::CappedReadError::TooLarge { .. } => too_large("ccob", limit),
            other => malformed(header as u64, format!("complete {what} data ({other})")),
        })
    };
    if body.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]) {
        let decoder = ruzstd::decoding::StreamingDecoder::new(body)
            .map_err(|e| malformed(header as u64, format!("zstd data ({e})")))?;
        capped(kernelab_model::read_capped(decoder, limit), "zstd")
    } else {
        let decoder = flate2::read::ZlibDecoder::new(body);
        capped(kernelab_model::read_capped(decoder, limit), "zlib")
    }
}

fn le(b: &[u8]) -> u64 {
    b.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x))
}

/// Lists the entries of a bundle (decompressing `CCOB` first, to at most 4 GiB).
pub fn entries(bundle: &[u8]) -> Result<Vec<BundleEntry>> {
    entries_capped(bundle, kernelab_model::DEFAULT_MAX_DECOMPRESSED)
}

/// [`entries`], a `CCOB` bundle inflating to at most `limit` bytes: past it,
/// [`crate::Error::TooLarge`] names the entry `ccob`. Entries must lie inside the bundle and
/// together be no larger than it.
pub fn entries_capped(bundle: &[u8], limit: u64) -> Result<Vec<BundleEntry>> {
    let owned;
    let d = if bundle.starts_with(b"CCOB") {
        owned = decompress(bundle, limit)?;
        owned.as_slice()
    } else {
        bundle
    };
    if !d.starts_with(MAGIC) {
        return Err(malformed(0, "the magic __CLANG_OFFLOAD_BUNDLE__"));
    }
    let n = u64_at(d, 24)?;
    // Every entry has a 24-byte record after the 32-byte header.
    if n > (d.len().saturating_sub(32) / 24) as u64 {
        return Err(malformed(
            24,
            format!("an entry count that fits the bundle, not {n}"),
        ));
    }
    let mut pos = 32usize;
    let mut out = Vec::new();
    let mut total = 0usize;
    for _ in 0..n {
        let offset = u64_at(d, pos)?;
        let size = u64_at(d, pos + 8)?;
        let id_len = u64_at(d, pos + 16)?;
        let id_start = pos + 24;
        let id = usize::try_from(id_len)
            .ok()
            .and_then(|l| d.get(id_start..id_start.checked_add(l)?))
            .ok_or_else(|| malformed(pos as u64, "a bundle entry id"))?;
        let data = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(size).ok())
            .and_then(|(o, s)| d.get(o..o.checked_add(s)?))
            .ok_or_else(|| {
                malformed(
                    offset,
                    format!("a bundle entry of {size} bytes inside the bundle"),
                )
            })?;
        total = total.saturating_add(data.len());
        if total > d.len() {
            return Err(malformed(
                pos as u64,
                "entries that together fit the bundle (they overlap)",
            ));
        }
        out.push(BundleEntry {
            id: String::from_utf8_lossy(id).into_owned(),
            data: data.to_vec(),
        });
        pos = id_start + id.len();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_candidate_magics_split_in_linear_time() {
        // 2 MiB of "CCOB" v1 candidates (no length in their header) and no plain magic: each
        // candidate used to search the rest of the file for the plain magic.
        let data = b"CCOB\x01\x00\x00\x00".repeat(256 * 1024);
        let t = std::time::Instant::now();
        let parts = split(&data);
        assert_eq!(parts.len(), 256 * 1024);
        assert!(
            t.elapsed() < std::time::Duration::from_secs(2),
            "{:?}",
            t.elapsed()
        );
    }
}
