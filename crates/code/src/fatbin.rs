//! NVIDIA fatbinary containers (`.fatbin` files and the `.nv_fatbin` section of host objects,
//! executables and shared libraries): list entries and extract cubins and PTX, compressed
//! entries included (LZ4 block or ZSTD). See `docs/formats.md` (code objects).

use crate::error::{malformed, too_large, Result};
use object::{Object, ObjectSection};

/// Magic of a fatbin container.
pub const FATBIN_MAGIC: u32 = 0xBA55_ED50;
const FLAG_COMPRESSED: u64 = 0x2000;

/// What an entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// PTX text.
    Ptx,
    /// A cubin (ELF).
    Elf,
}

/// One extracted entry.
#[derive(Clone, Debug)]
pub struct Entry {
    /// PTX or ELF.
    pub kind: EntryKind,
    /// SM number (`90`, `100`).
    pub arch: u32,
    /// Whether it was stored compressed.
    pub compressed: bool,
    /// The payload, decompressed.
    pub data: Vec<u8>,
}

fn u16_at(d: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_le_bytes(d.get(o..o + 2)?.try_into().ok()?))
}
fn u32_at(d: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(o..o + 4)?.try_into().ok()?))
}
fn u64_at(d: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(d.get(o..o + 8)?.try_into().ok()?))
}

/// The fatbin bytes of a file: its `.nv_fatbin` section when it is an ELF host binary, or the
/// whole file when it starts with the container magic.
pub fn fatbin_bytes(data: &[u8]) -> Option<Vec<u8>> {
    if u32_at(data, 0) == Some(FATBIN_MAGIC) {
        return Some(data.to_vec());
    }
    let file = object::File::parse(data).ok()?;
    let section = file.section_by_name(".nv_fatbin")?;
    section.data().ok().map(<[u8]>::to_vec)
}

/// LZ4 never expands data more than 255 times (plus a little for a short block).
const LZ4_MAX_RATIO: usize = 255;

/// Decompresses entry `index` (`at`: its offset) into at most `budget` bytes; `limit` is the
/// cap named in the error.
fn decompress(
    payload: &[u8],
    size: u64,
    (index, at): (usize, usize),
    budget: u64,
    limit: u64,
) -> Result<Vec<u8>> {
    if payload.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]) {
        let decoder = ruzstd::decoding::StreamingDecoder::new(payload)
            .map_err(|e| malformed(at as u64, format!("a ZSTD-compressed fatbin entry ({e})")))?;
        return kernelab_model::read_capped(decoder, budget).map_err(|e| match e {
            kernelab_model::CappedReadError::TooLarge { .. } => too_large(index.to_string(), limit),
            other => malformed(
                at as u64,
                format!("a complete ZSTD-compressed fatbin entry ({other})"),
            ),
        });
    }
    if size > budget {
        return Err(too_large(index.to_string(), limit));
    }
    let possible = payload
        .len()
        .saturating_mul(LZ4_MAX_RATIO)
        .saturating_add(64);
    let size = usize::try_from(size)
        .ok()
        .filter(|&s| s <= possible)
        .ok_or_else(|| {
            malformed(
                at as u64,
                format!(
                    "an LZ4 entry of {} bytes that can decompress to {size} bytes",
                    payload.len()
                ),
            )
        })?;
    lz4_flex::block::decompress(payload, size)
        .map_err(|e| malformed(at as u64, format!("an LZ4-compressed fatbin entry ({e})")))
}

/// Lists every entry of every container in `fatbin` (containers may be concatenated; padding
/// between them is skipped); compressed entries inflate to at most 4 GiB in all.
pub fn entries(fatbin: &[u8]) -> Result<Vec<Entry>> {
    entries_capped(fatbin, kernelab_model::DEFAULT_MAX_DECOMPRESSED)
}

/// [`entries`], the compressed entries inflating to at most `limit` bytes in all: past it,
/// [`crate::Error::TooLarge`] names the entry.
pub fn entries_capped(fatbin: &[u8], limit: u64) -> Result<Vec<Entry>> {
    let mut budget = limit;
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos.saturating_add(16) <= fatbin.len() {
        if u32_at(fatbin, pos) != Some(FATBIN_MAGIC) {
            pos += 8; // containers are 8-byte aligned
            continue;
        }
        let header_size = usize::from(u16_at(fatbin, pos + 6).unwrap_or(16));
        let size = u64_at(fatbin, pos + 8)
            .ok_or_else(|| malformed(pos as u64, "a fatbin container header"))?;
        let start = pos + header_size;
        let end = usize::try_from(size)
            .ok()
            .and_then(|s| start.checked_add(s))
            .filter(|&e| e <= fatbin.len())
            .ok_or_else(|| {
                malformed(
                    pos as u64,
                    format!("a fatbin container of {size} bytes inside the file"),
                )
            })?;
        let mut e = start;
        while e.saturating_add(64) <= end {
            let kind = u16_at(fatbin, e).unwrap_or(0);
            let eh = u32_at(fatbin, e + 4).unwrap_or(64) as usize;
            let esize = u64_at(fatbin, e + 8).unwrap_or(0);
            let csize = u32_at(fatbin, e + 16).unwrap_or(0) as usize;
            let arch = u32_at(fatbin, e + 28).unwrap_or(0);
            let flags = u64_at(fatbin, e + 40).unwrap_or(0);
            let dsize = u64_at(fatbin, e + 56).unwrap_or(0);
            let pstart = e.saturating_add(eh);
            let (pstart, pend) = usize::try_from(esize)
                .ok()
                .and_then(|s| Some((pstart, pstart.checked_add(s)?)))
                .filter(|&(_, p)| p <= end)
                .ok_or_else(|| {
                    malformed(
                        e as u64,
                        format!("a fatbin entry of {esize} bytes inside its container"),
                    )
                })?;
            let payload = fatbin.get(pstart..pend).unwrap_or_default();
            let compressed =
                flags & FLAG_COMPRESSED != 0 || payload.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]);
            let data = if compressed {
                let stored = if csize == 0 {
                    payload
                } else {
                    payload.get(..csize).unwrap_or(payload)
                };
                let d = decompress(stored, dsize, (out.len(), pstart), budget, limit)?;
                budget -= d.len() as u64;
                d
            } else {
                payload.to_vec()
            };
            let kind = if data.starts_with(b"\x7fELF") || kind == 2 || kind == 0x10 {
                EntryKind::Elf
            } else {
                EntryKind::Ptx
            };
            out.push(Entry {
                kind,
                arch,
                compressed,
                data,
            });
            if eh == 0 {
                break;
            }
            e = pend;
        }
        pos = end.max(pos + 8);
    }
    Ok(out)
}
