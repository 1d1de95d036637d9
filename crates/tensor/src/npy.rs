//! `.npy` headers and `.npz` (zip) members, every declared size checked before it is used.

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::{Backing, ReadSpec, Skipped, Tensor};
use std::path::Path;

/// Longest npy header read (NumPy itself refuses headers past 10,000 bytes by default).
pub(crate) const MAX_NPY_HEADER: usize = 1 << 20;
/// Most members an npz archive may list.
const MAX_NPZ_MEMBERS: u64 = 1 << 20;
/// Smallest central-directory record of a zip member.
const ZIP_CD_RECORD: u64 = 46;

/// A parsed npy header: dtype descr, fortran order, shape, offset of the data.
struct Header {
    descr: String,
    fortran: bool,
    shape: Vec<usize>,
    data_at: usize,
}

fn le(d: &[u8], at: usize, n: usize) -> Option<u64> {
    let b = d.get(at..at.checked_add(n)?)?;
    Some(b.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x)))
}

/// Parses an npy header at the start of `d`.
fn header(d: &[u8], path: &Path, base: u64) -> Result<Header> {
    if !d.starts_with(b"\x93NUMPY") || d.len() < 10 {
        return Err(Error::format(path, base, "the npy magic \\x93NUMPY"));
    }
    let major = d.get(6).copied().unwrap_or(0);
    let (len, start) = match major {
        1 => (le(d, 8, 2), 10usize),
        2 | 3 => (le(d, 8, 4), 12),
        v => {
            return Err(Error::format(
                path,
                base + 6,
                format!("npy format version 1 to 3, not {v}"),
            ))
        }
    };
    let len = len.ok_or_else(|| Error::format(path, base + 8, "a complete npy header length"))?;
    let len = usize::try_from(len)
        .ok()
        .filter(|&l| l <= MAX_NPY_HEADER)
        .ok_or_else(|| {
            Error::format(
                path,
                base + 8,
                format!("an npy header of at most {MAX_NPY_HEADER} bytes, not {len}"),
            )
        })?;
    let at = base + start as u64;
    let header = d
        .get(start..start + len)
        .ok_or_else(|| Error::truncated(path, at, len, d.len().saturating_sub(start)))?;
    let h = String::from_utf8_lossy(header);
    let field = |key: &str| -> Option<&str> {
        let quoted = format!("'{key}'");
        let rest = h.get(h.find(&quoted)? + quoted.len()..)?;
        Some(rest.trim_start().strip_prefix(':')?.trim_start())
    };
    let descr = field("descr")
        .and_then(|r| {
            if r.starts_with('[') {
                // A structured dtype: a list of (name, type) fields.
                let end = r.find("],").or_else(|| r.rfind(']'))?;
                Some(r[..=end].to_string())
            } else {
                r.strip_prefix('\'')?.split('\'').next().map(str::to_string)
            }
        })
        .ok_or_else(|| Error::format(path, at, "an npy header with 'descr'"))?;
    let fortran = field("fortran_order").is_some_and(|r| r.starts_with("True"));
    let shape_text =
        field("shape").ok_or_else(|| Error::format(path, at, "an npy header with 'shape'"))?;
    let inner = shape_text
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .unwrap_or("");
    let shape = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        // Python 2 wrote long integers with an `L` suffix: `(2L,)`.
        .map(|s| s.strip_suffix('L').unwrap_or(s).parse::<usize>())
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| Error::format(path, at, format!("an integer shape, not {inner:?}")))?;
    Ok(Header {
        descr,
        fortran,
        shape,
        data_at: start + len,
    })
}

/// Bytes of `shape` elements of `dtype`, or an error when the count overflows.
pub(crate) fn byte_len(shape: &[usize], dtype: DType, path: &Path, at: u64) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .and_then(|n| n.checked_mul(dtype.size()))
        .ok_or_else(|| {
            Error::format(
                path,
                at,
                format!("a shape whose byte count fits in 64 bits, not {shape:?} of {dtype:?}"),
            )
        })
}

/// What an npy array holds, when kernelab does not compare it: structured records, byte or
/// Unicode strings, Python objects, long doubles, complex numbers, dates, big-endian data.
pub(crate) fn unsupported(descr: &str) -> String {
    let code = descr.trim_start_matches(['<', '>', '|', '=']);
    let kind = match code.chars().next() {
        _ if descr.starts_with('[') => "structured dtype",
        Some('S' | 'a') => "byte strings",
        Some('U') => "Unicode strings",
        Some('O') => "Python objects",
        Some('c') => "complex numbers",
        Some('M' | 'm') => "dates or time spans",
        Some('V') => "raw void data",
        Some('f') if descr.starts_with('>') => "big-endian floats",
        Some('f') => "long doubles",
        _ if descr.starts_with('>') => "big-endian data",
        _ => "an unknown dtype",
    };
    let shown: String = descr.chars().take(60).collect();
    format!("{kind} ({shown}), not supported")
}

/// An npy array: a tensor kernelab compares, or a member it leaves out and why.
pub(crate) enum Array {
    /// A numeric tensor.
    Tensor(Tensor),
    /// An array of a dtype kernelab does not compare.
    Unsupported(Skipped),
}

/// An npy tensor over bytes `[lo, hi)` of `backing` (`base`: their offset in the file, for
/// messages); a lone npy file of a dtype kernelab does not compare is an error.
pub(crate) fn tensor(
    name: String,
    backing: &Backing,
    region: (usize, usize),
    path: &Path,
    base: u64,
    spec: &ReadSpec,
) -> Result<Tensor> {
    match array(name, backing, region, path, base, spec)? {
        Array::Tensor(t) => Ok(t),
        Array::Unsupported(s) => Err(Error::format(
            path,
            base,
            format!("a numeric dtype: {}", s.why),
        )),
    }
}

/// An npy array over bytes `[lo, hi)` of `backing`: Fortran-ordered data is copied into C order.
pub(crate) fn array(
    name: String,
    backing: &Backing,
    (lo, hi): (usize, usize),
    path: &Path,
    base: u64,
    spec: &ReadSpec,
) -> Result<Array> {
    let d = backing.as_slice().get(lo..hi).unwrap_or_default();
    let h = header(d, path, base)?;
    let Some(mut dtype) = DType::from_numpy(&h.descr) else {
        return Ok(Array::Unsupported(Skipped {
            why: unsupported(&h.descr),
            name,
        }));
    };
    if let Some(user) = spec.dtype {
        if user.size() == dtype.size() && dtype == DType::U16 {
            dtype = user; // bf16 stored as uint16 / V2
        }
    }
    let at = base + h.data_at as u64;
    let len = byte_len(&h.shape, dtype, path, at)?;
    let available = d.len().saturating_sub(h.data_at);
    if available < len {
        return Err(Error::truncated(path, at, len, available));
    }
    let start = lo + h.data_at;
    if h.fortran && h.shape.len() > 1 {
        // A Fortran-order array is copied into C order on the heap: bounded, and refused with
        // what to do beyond the bound rather than an allocation the machine may not have.
        if len as u64 > MAX_FORTRAN_COPY_BYTES {
            return Err(Error::format(
                path,
                at,
                format!(
                    "a Fortran-order array of at most {MAX_FORTRAN_COPY_BYTES} bytes (this one has {len}; it would be copied into C order: save it with np.ascontiguousarray)"
                ),
            ));
        }
        let src = backing
            .as_slice()
            .get(start..start + len)
            .unwrap_or_default();
        let c = fortran_to_c(src, &h.shape, dtype.size()).map_err(|_| Error::Alloc {
            location: kernelab_model::Location::byte(at).with_path(path),
            bytes: len,
            what: "a C-order copy of a Fortran-order array".into(),
        })?;
        return Ok(Array::Tensor(Tensor::over(
            name,
            dtype,
            h.shape,
            Backing::heap(c),
            0,
            len,
        )));
    }
    Ok(Array::Tensor(Tensor::over(
        name,
        dtype,
        h.shape,
        backing.clone(),
        start,
        len,
    )))
}

/// Largest Fortran-order npy array read (it is copied into C order): 256 MiB.
pub(crate) const MAX_FORTRAN_COPY_BYTES: u64 = 256 << 20;

/// Column-major (Fortran) element bytes rearranged into row-major (C) order; the copy's memory
/// is asked for once, and its refusal is an error, not an abort.
fn fortran_to_c(
    src: &[u8],
    shape: &[usize],
    size: usize,
) -> std::result::Result<Vec<u8>, std::collections::TryReserveError> {
    let mut out = Vec::new();
    out.try_reserve_exact(src.len())?;
    // Fortran strides in elements: the first index varies fastest.
    let mut strides = Vec::with_capacity(shape.len());
    let mut s = 1usize;
    for &d in shape {
        strides.push(s);
        s = s.saturating_mul(d);
    }
    let mut idx = vec![0usize; shape.len()];
    let n: usize = shape.iter().product();
    for _ in 0..n {
        let e: usize = idx.iter().zip(&strides).map(|(i, s)| i * s).sum();
        out.extend_from_slice(src.get(e * size..(e + 1) * size).unwrap_or_default());
        // Next C-order index: the last index varies fastest.
        for k in (0..shape.len()).rev() {
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    Ok(out)
}

/// Checks the member count the end-of-central-directory record declares against the file
/// size (every member needs a 46-byte record) before the zip reader sizes anything by it.
fn check_member_count(d: &[u8], path: &Path) -> Result<()> {
    let tail = d.len().saturating_sub(22 + 65_535);
    let Some(eocd) = memrfind(d.get(tail..).unwrap_or_default(), b"PK\x05\x06").map(|i| tail + i)
    else {
        return Err(Error::format(
            path,
            0,
            "a valid npz (zip) archive (no end of central directory)",
        ));
    };
    let mut count = le(d, eocd + 10, 2).unwrap_or(0);
    if count == 0xffff && eocd >= 20 && d.get(eocd - 20..eocd - 16) == Some(b"PK\x06\x07") {
        let z64 = le(d, eocd - 12, 8).and_then(|o| usize::try_from(o).ok());
        count = z64
            .and_then(|o| le(d, o.checked_add(32)?, 8))
            .unwrap_or(u64::MAX);
    }
    if count > MAX_NPZ_MEMBERS || count.saturating_mul(ZIP_CD_RECORD) > d.len() as u64 {
        return Err(Error::format(
            path,
            eocd as u64,
            format!(
                "an npz member count that fits the file (at most {MAX_NPZ_MEMBERS}), not {count}"
            ),
        ));
    }
    Ok(())
}

fn memrfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

/// The tensors of an npz archive: stored members are read in place, deflated ones inflated
/// into memory, at most `limit` bytes over all members.
pub(crate) fn npz(
    backing: &Backing,
    path: &Path,
    spec: &ReadSpec,
) -> Result<(Vec<Tensor>, Vec<Skipped>)> {
    let d = backing.as_slice();
    check_member_count(d, path)?;
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(d))
        .map_err(|e| Error::format(path, 0, format!("a valid npz (zip) archive ({e})")))?;
    let mut budget = spec.max_decompressed();
    let mut tensors = Vec::new();
    let mut skipped = Vec::new();
    let mut keep = |a: Array| match a {
        Array::Tensor(t) => tensors.push(t),
        Array::Unsupported(s) => skipped.push(s),
    };
    for i in 0..zip.len() {
        let mut entry = zip
            .by_index(i)
            .map_err(|e| Error::format(path, 0, format!("zip member {i} ({e})")))?;
        let name = entry.name().trim_end_matches(".npy").to_string();
        let start = entry.data_start();
        let region = usize::try_from(start)
            .ok()
            .and_then(|s| {
                Some((
                    s,
                    s.checked_add(usize::try_from(entry.compressed_size()).ok()?)?,
                ))
            })
            .filter(|&(_, e)| e <= d.len())
            .ok_or_else(|| {
                Error::format(
                    path,
                    start,
                    format!(
                        "member {name}: {} bytes of data inside the file",
                        entry.compressed_size()
                    ),
                )
            })?;
        if entry.compression() == zip::CompressionMethod::Stored {
            keep(array(name, backing, region, path, start, spec)?);
            continue;
        }
        let label = format!("{}#{}", path.display(), entry.name());
        let too_large = |limit| Error::TooLarge {
            location: kernelab_model::Location::default().with_path(&label),
            limit,
        };
        if entry.size() > budget {
            return Err(too_large(spec.max_decompressed()));
        }
        let buf = kernelab_model::read_capped(&mut entry, budget).map_err(|e| match e {
            kernelab_model::CappedReadError::TooLarge { .. } => too_large(spec.max_decompressed()),
            kernelab_model::CappedReadError::Alloc { bytes } => Error::Alloc {
                location: kernelab_model::Location::default().with_path(&label),
                bytes,
                what: format!("member {name} inflated"),
            },
            other => Error::format(
                path,
                start,
                format!("member {name}: complete deflate data ({other})"),
            ),
        })?;
        budget -= buf.len() as u64;
        let owned = Backing::heap(buf);
        let all = (0, owned.as_slice().len());
        keep(array(name, &owned, all, path, start, spec)?);
    }
    Ok((tensors, skipped))
}

#[cfg(test)]
mod fortran_tests {
    use super::*;

    /// A sparse npy file of `shape` (f32) in Fortran order.
    fn sparse_npy(dir: &Path, shape: &str, data_len: u64) -> std::path::PathBuf {
        let dict = format!("{{'descr': '<f4', 'fortran_order': True, 'shape': {shape}, }}");
        let mut header = dict.into_bytes();
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(b' ');
        }
        header.push(b'\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(&header);
        let p = dir.join("f.npy");
        std::fs::write(&p, &bytes).expect("write");
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .expect("open");
        f.set_len(bytes.len() as u64 + data_len).expect("sparse");
        p
    }

    #[test]
    fn a_huge_fortran_array_is_refused_not_copied() {
        let dir = tempfile::tempdir().expect("tmp");
        // 1.2 GiB of f32 in Fortran order (sparse: no disk used).
        let p = sparse_npy(dir.path(), "(20000, 16106)", 20_000 * 16_106 * 4);
        let t = std::time::Instant::now();
        let e = match crate::open(&p, &crate::ReadSpec::default()) {
            Ok(f) => {
                let shapes: Vec<_> = f.tensors.iter().map(|t| t.shape.clone()).collect();
                panic!("read: {shapes:?}")
            }
            Err(e) => e,
        };
        assert!(
            e.to_string()
                .contains("a Fortran-order array of at most 268435456 bytes"),
            "{e}"
        );
        assert!(t.elapsed() < std::time::Duration::from_secs(2));
        // A small one is still read, in C order.
        let p = sparse_npy(dir.path(), "(2, 3)", 24);
        let f = crate::open(&p, &crate::ReadSpec::default()).expect("small");
        assert_eq!(f.tensors.len(), 1);
    }
}
