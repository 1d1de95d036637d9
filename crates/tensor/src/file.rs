//! Tensor files: `.npy`, `.npz` (stored members are memory-mapped in place; deflated members
//! are inflated into memory), safetensors, and raw binary with a dtype and shape given. Large
//! files are memory-mapped, never read whole.

use crate::dtype::DType;
use crate::error::{Error, Result};
use memmap2::Mmap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a tensor's bytes are.
#[derive(Clone, Debug)]
enum Data {
    Mapped {
        map: Arc<Mmap>,
        offset: usize,
        len: usize,
    },
    Owned(Arc<Vec<u8>>),
}

/// One tensor.
#[derive(Clone, Debug)]
pub struct Tensor {
    /// Name (safetensors key, npz member without `.npy`, or the file stem).
    pub name: String,
    /// Element type.
    pub dtype: DType,
    /// Shape (C order).
    pub shape: Vec<usize>,
    data: Data,
}

impl Tensor {
    /// A tensor over bytes held in memory (as read back from a device).
    pub fn owned(
        name: impl Into<String>,
        dtype: DType,
        shape: Vec<usize>,
        bytes: Vec<u8>,
    ) -> Tensor {
        Tensor {
            name: name.into(),
            dtype,
            shape,
            data: Data::Owned(Arc::new(bytes)),
        }
    }
    /// The raw little-endian bytes.
    pub fn bytes(&self) -> &[u8] {
        match &self.data {
            Data::Mapped { map, offset, len } => &map[*offset..*offset + *len],
            Data::Owned(v) => v,
        }
    }
    /// Tells the kernel that bytes `[start, end)` of this tensor are done with, so that a
    /// comparison of tensors larger than memory keeps a bounded resident set.
    pub fn release(&self, start: usize, end: usize) {
        if let Data::Mapped { map, offset, .. } = &self.data {
            let page = 4096;
            let lo = (offset + start).div_ceil(page) * page;
            let hi = ((offset + end) / page) * page;
            if hi > lo {
                // SAFETY: the mapping is a read-only view of a file. MADV_DONTNEED drops the
                // pages from this process only; any later access faults them back in from the
                // file, unchanged, so no data is lost and no reference becomes invalid. Only
                // whole pages inside this tensor's chunk are released.
                #[allow(unsafe_code)]
                unsafe {
                    let _ =
                        map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, lo, hi - lo);
                }
            }
        }
    }
    /// Number of elements.
    pub fn elements(&self) -> usize {
        self.bytes().len() / self.dtype.size()
    }
    /// The multi-index of flat index `i`.
    pub fn index_of(&self, mut i: usize) -> Vec<usize> {
        let mut idx = vec![0; self.shape.len()];
        for (d, &n) in self.shape.iter().enumerate().rev() {
            if n > 0 {
                idx[d] = i % n;
                i /= n;
            }
        }
        idx
    }
}

/// A file's tensors.
#[derive(Clone, Debug)]
pub struct TensorFile {
    /// The file.
    pub path: PathBuf,
    /// `npy`, `npz`, `safetensors` or `raw`.
    pub format: &'static str,
    /// Tensors in file order.
    pub tensors: Vec<Tensor>,
}

/// How to read files without a header, and how to reinterpret 2-byte integer storage.
#[derive(Clone, Debug, Default)]
pub struct ReadSpec {
    /// Element type of raw files, or the type that `uint16`/`V2` npy data really holds (bf16).
    pub dtype: Option<DType>,
    /// Shape of raw files.
    pub shape: Option<Vec<usize>>,
}

fn map(file: &File, path: &Path) -> Result<Arc<Mmap>> {
    // SAFETY: the map is read-only and kernelab never writes to its inputs. Another process
    // truncating the file while it is mapped would raise SIGBUS; that is the usual trade-off
    // of mapping input files (ripgrep accepts the same), chosen so that files larger than
    // memory can be compared.
    #[allow(unsafe_code)]
    let m = unsafe { Mmap::map(file) }.map_err(|e| Error::io(path, e))?;
    let _ = m.advise(memmap2::Advice::Sequential);
    Ok(Arc::new(m))
}

/// Parses an npy header at the start of `d`: (dtype descr, fortran order, shape, data offset).
fn npy_header(d: &[u8], path: &Path, base: u64) -> Result<(String, bool, Vec<usize>, usize)> {
    if !d.starts_with(b"\x93NUMPY") || d.len() < 10 {
        return Err(Error::format(path, base, "the npy magic \\x93NUMPY"));
    }
    let major = d[6];
    let (len, start) = if major == 1 {
        (usize::from(u16::from_le_bytes([d[8], d[9]])), 10)
    } else {
        let b = d
            .get(8..12)
            .ok_or_else(|| Error::format(path, base + 8, "a 4-byte npy header length"))?;
        (u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize, 12)
    };
    let header = d.get(start..start + len).ok_or_else(|| {
        Error::format(
            path,
            base + start as u64,
            format!("an npy header of {len} bytes"),
        )
    })?;
    let h = String::from_utf8_lossy(header);
    let field = |key: &str| -> Option<String> {
        let at = h.find(&format!("'{key}'"))? + key.len() + 2;
        let rest = h[at..].trim_start().strip_prefix(':')?.trim_start();
        Some(rest.to_string())
    };
    let descr = field("descr")
        .and_then(|r| {
            r.strip_prefix('\'')
                .and_then(|s| s.split('\'').next())
                .map(str::to_string)
        })
        .ok_or_else(|| Error::format(path, base + start as u64, "an npy header with 'descr'"))?;
    let fortran = field("fortran_order").is_some_and(|r| r.starts_with("True"));
    let shape_text = field("shape")
        .ok_or_else(|| Error::format(path, base + start as u64, "an npy header with 'shape'"))?;
    let inner = shape_text
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .unwrap_or("");
    let shape = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<usize>())
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| {
            Error::format(
                path,
                base + start as u64,
                format!("an integer shape, not {inner:?}"),
            )
        })?;
    Ok((descr, fortran, shape, start + len))
}

fn npy_tensor(
    name: &str,
    d: &[u8],
    path: &Path,
    base: u64,
    spec: &ReadSpec,
) -> Result<(DType, Vec<usize>, usize, usize)> {
    let (descr, fortran, shape, data_at) = npy_header(d, path, base)?;
    if fortran {
        return Err(Error::format(
            path,
            base,
            format!("{name}: C-order data (fortran_order is True; save with np.ascontiguousarray)"),
        ));
    }
    let mut dtype = DType::from_numpy(&descr).ok_or_else(|| {
        Error::format(
            path,
            base,
            format!("{name}: a little-endian numeric dtype, not {descr:?}"),
        )
    })?;
    if let Some(user) = spec.dtype {
        if user.size() == dtype.size() && dtype == DType::U16 {
            dtype = user; // bf16 stored as uint16 / V2
        }
    }
    let count: usize = shape.iter().product();
    let len = count * dtype.size();
    let available = d.len().saturating_sub(data_at);
    if available < len {
        return Err(Error::truncated(
            path,
            base + data_at as u64,
            len,
            available,
        ));
    }
    Ok((dtype, shape, data_at, len))
}

/// Reads a tensor file (format from its content).
pub fn open(path: &Path, spec: &ReadSpec) -> Result<TensorFile> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if meta.is_dir() {
        return Err(Error::format(path, 0, "a file, not a directory"));
    }
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    if meta.len() == 0 {
        return Err(Error::format(path, 0, "a tensor file, not an empty file"));
    }
    let m = map(&file, path)?;
    let d: &[u8] = &m;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut tensors = Vec::new();
    let format = if d.starts_with(b"\x93NUMPY") {
        let (dtype, shape, offset, len) = npy_tensor(&stem, d, path, 0, spec)?;
        tensors.push(Tensor {
            name: stem,
            dtype,
            shape,
            data: Data::Mapped {
                map: m.clone(),
                offset,
                len,
            },
        });
        "npy"
    } else if d.starts_with(b"PK\x03\x04") {
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(d))
            .map_err(|e| Error::format(path, 0, format!("a valid npz (zip) archive ({e})")))?;
        for i in 0..zip.len() {
            let mut entry = zip
                .by_index(i)
                .map_err(|e| Error::format(path, 0, format!("zip member {i} ({e})")))?;
            let name = entry.name().trim_end_matches(".npy").to_string();
            let start = entry.data_start() as usize;
            if entry.compression() == zip::CompressionMethod::Stored {
                let region = &d[start..(start + entry.size() as usize).min(d.len())];
                let (dtype, shape, off, len) = npy_tensor(&name, region, path, start as u64, spec)?;
                tensors.push(Tensor {
                    name,
                    dtype,
                    shape,
                    data: Data::Mapped {
                        map: m.clone(),
                        offset: start + off,
                        len,
                    },
                });
            } else {
                let mut buf = Vec::with_capacity(entry.size() as usize);
                entry.read_to_end(&mut buf).map_err(|e| {
                    Error::format(
                        path,
                        start as u64,
                        format!("member {name}: complete deflate data ({e})"),
                    )
                })?;
                let (dtype, shape, off, len) = npy_tensor(&name, &buf, path, start as u64, spec)?;
                let data = buf[off..off + len].to_vec();
                tensors.push(Tensor {
                    name,
                    dtype,
                    shape,
                    data: Data::Owned(Arc::new(data)),
                });
            }
        }
        "npz"
    } else if d.len() >= 9 && d[8] == b'{' {
        let st = safetensors::SafeTensors::deserialize(d)
            .map_err(|e| Error::format(path, 0, format!("a valid safetensors file ({e:?})")))?;
        let base = d.as_ptr() as usize;
        let mut names: Vec<(String, safetensors::tensor::TensorView<'_>)> = st.tensors();
        // File order: by data offset.
        names.sort_by_key(|(_, v)| v.data().as_ptr() as usize);
        for (name, v) in names {
            let dtype = DType::from_safetensors(v.dtype()).ok_or_else(|| {
                Error::format(
                    path,
                    8,
                    format!("{name}: a supported dtype, not {:?}", v.dtype()),
                )
            })?;
            let offset = v.data().as_ptr() as usize - base;
            tensors.push(Tensor {
                name,
                dtype,
                shape: v.shape().to_vec(),
                data: Data::Mapped {
                    map: m.clone(),
                    offset,
                    len: v.data().len(),
                },
            });
        }
        "safetensors"
    } else {
        let (Some(dtype), Some(shape)) = (spec.dtype, spec.shape.clone()) else {
            return Err(Error::format(
                path,
                0,
                "an npy, npz or safetensors file; for raw binary give --dtype and --shape",
            ));
        };
        let len = shape.iter().product::<usize>() * dtype.size();
        if d.len() != len {
            return Err(Error::format(
                path,
                0,
                format!(
                    "{len} bytes for {dtype:?} {shape:?}, found {} bytes",
                    d.len()
                ),
            ));
        }
        tensors.push(Tensor {
            name: stem,
            dtype,
            shape,
            data: Data::Mapped {
                map: m.clone(),
                offset: 0,
                len,
            },
        });
        "raw"
    };
    Ok(TensorFile {
        path: path.to_path_buf(),
        format,
        tensors,
    })
}
