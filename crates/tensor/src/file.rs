//! Tensor files: `.npy`, `.npz` (stored members are memory-mapped in place; deflated members
//! are inflated into memory), safetensors, and raw binary with a dtype and shape given. Large
//! files are memory-mapped, never read whole.

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::npy;
use memmap2::Mmap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The memory a tensor's bytes live in: a read-only map of the file, or a buffer.
#[derive(Clone, Debug)]
pub(crate) enum Backing {
    Map(Arc<Mmap>),
    Heap(Arc<Vec<u8>>),
}

impl Backing {
    pub(crate) fn heap(bytes: Vec<u8>) -> Backing {
        Backing::Heap(Arc::new(bytes))
    }
    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            Backing::Map(m) => m,
            Backing::Heap(v) => v,
        }
    }
}

/// Where a tensor's bytes are: `len` bytes from `offset` of the backing (checked when made).
#[derive(Clone, Debug)]
struct Data {
    backing: Backing,
    offset: usize,
    len: usize,
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
        let len = bytes.len();
        Tensor::over(name.into(), dtype, shape, Backing::heap(bytes), 0, len)
    }
    /// A tensor over `len` bytes from `offset` of `backing`; the caller checked the range.
    pub(crate) fn over(
        name: String,
        dtype: DType,
        shape: Vec<usize>,
        backing: Backing,
        offset: usize,
        len: usize,
    ) -> Tensor {
        Tensor {
            name,
            dtype,
            shape,
            data: Data {
                backing,
                offset,
                len,
            },
        }
    }
    /// The raw little-endian bytes.
    pub fn bytes(&self) -> &[u8] {
        let d = &self.data;
        d.backing
            .as_slice()
            .get(d.offset..d.offset.saturating_add(d.len))
            .unwrap_or_default()
    }
    /// Tells the kernel that bytes `[start, end)` of this tensor are done with, so that a
    /// comparison of tensors larger than memory keeps a bounded resident set.
    pub fn release(&self, start: usize, end: usize) {
        if let Backing::Map(map) = &self.data.backing {
            let offset = self.data.offset;
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
    /// Members left out (an npz member of a dtype kernelab does not compare), with the reason.
    pub skipped: Vec<Skipped>,
}

/// An array of a file that no gate looks at, and why.
#[derive(
    Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Skipped {
    /// Member name.
    pub name: String,
    /// Why: its dtype, "not supported".
    pub why: String,
}

impl TensorFile {
    /// A hint when the file holds uint16 data read without a `--dtype`: bf16 is often stored
    /// as uint16 (numpy has no bf16), and compared as integers it gives nonsense errors.
    pub fn uint16_hint(&self) -> Option<String> {
        let names: Vec<&str> = self
            .tensors
            .iter()
            .filter(|t| t.dtype == DType::U16)
            .map(|t| t.name.as_str())
            .collect();
        (!names.is_empty()).then(|| {
            format!(
                "{}: {} uint16 ({}); if this is bf16 stored as uint16, give --dtype bf16 (compared as integers now)",
                self.path.display(),
                if names.len() == 1 { "tensor is" } else { "tensors are" },
                names.join(", ")
            )
        })
    }

    /// An error unless the file has something for a gate to look at: at least one tensor, and
    /// at least one element over all its tensors.
    pub fn check_comparable(&self) -> Result<()> {
        let location = || kernelab_model::Location::default().with_path(&self.path);
        if self.tensors.is_empty() {
            return Err(Error::Nothing {
                location: location(),
                detail: format!("the {} file holds no tensors", self.format),
            });
        }
        if self.tensors.iter().all(|t| t.bytes().is_empty()) {
            return Err(Error::Nothing {
                location: location(),
                detail: "every tensor has zero elements".into(),
            });
        }
        Ok(())
    }
}

/// How to read files without a header, and how to reinterpret 2-byte integer storage.
#[derive(Clone, Debug, Default)]
pub struct ReadSpec {
    /// Element type of raw files, or the type that `uint16`/`V2` npy data really holds (bf16).
    pub dtype: Option<DType>,
    /// Shape of raw files.
    pub shape: Option<Vec<usize>>,
    /// Most bytes the compressed members of one file may inflate to (default
    /// [`kernelab_model::DEFAULT_MAX_DECOMPRESSED`], 4 GiB).
    pub max_decompressed: Option<u64>,
}

impl ReadSpec {
    /// The decompression cap in effect.
    pub fn max_decompressed(&self) -> u64 {
        self.max_decompressed
            .unwrap_or(kernelab_model::DEFAULT_MAX_DECOMPRESSED)
    }
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

/// Reads a tensor file (format from its content). A FIFO, directory or device is refused
/// before it is opened.
pub fn open(path: &Path, spec: &ReadSpec) -> Result<TensorFile> {
    let file = kernelab_model::open_regular(path).map_err(|e| Error::io(path, e))?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    if len == 0 {
        return Err(Error::format(path, 0, "a tensor file, not an empty file"));
    }
    parse(path, Backing::Map(map(&file, path)?), spec)
}

/// Reads a tensor file held in memory (format from its content); `path` names it in results
/// and errors.
pub fn from_bytes(path: &Path, bytes: Vec<u8>, spec: &ReadSpec) -> Result<TensorFile> {
    if bytes.is_empty() {
        return Err(Error::format(path, 0, "a tensor file, not an empty file"));
    }
    parse(path, Backing::heap(bytes), spec)
}

fn parse(path: &Path, backing: Backing, spec: &ReadSpec) -> Result<TensorFile> {
    let d = backing.as_slice();
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut skipped = Vec::new();
    let (format, tensors) = if d.starts_with(b"\x93NUMPY") {
        let all = (0, d.len());
        (
            "npy",
            vec![npy::tensor(stem, &backing, all, path, 0, spec)?],
        )
    } else if d.starts_with(b"PK\x03\x04") {
        let (tensors, s) = npy::npz(&backing, path, spec)?;
        skipped = s;
        ("npz", tensors)
    } else if d.get(8) == Some(&b'{') {
        ("safetensors", safetensors(&backing, path)?)
    } else {
        ("raw", vec![raw(stem, &backing, path, spec)?])
    };
    Ok(TensorFile {
        path: path.to_path_buf(),
        format,
        tensors,
        skipped,
    })
}

/// Largest safetensors JSON header read (the safetensors crate's own limit).
const MAX_SAFETENSORS_HEADER: u64 = 100_000_000;

fn safetensors(backing: &Backing, path: &Path) -> Result<Vec<Tensor>> {
    let d = backing.as_slice();
    let n = d
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .unwrap_or(0);
    if n > MAX_SAFETENSORS_HEADER {
        return Err(Error::format(
            path,
            0,
            format!("a safetensors header of at most {MAX_SAFETENSORS_HEADER} bytes, not {n}"),
        ));
    }
    let have = d.len().saturating_sub(8);
    if n > have as u64 {
        return Err(Error::truncated(path, 8, n as usize, have));
    }
    let st = safetensors::SafeTensors::deserialize(d)
        .map_err(|e| Error::format(path, 0, format!("a valid safetensors file ({e})")))?;
    let base = d.as_ptr() as usize;
    let mut views: Vec<(String, safetensors::tensor::TensorView<'_>)> = st.tensors();
    // File order: by data offset.
    views.sort_by_key(|(_, v)| v.data().as_ptr() as usize);
    let mut tensors = Vec::with_capacity(views.len());
    for (name, v) in views {
        let dtype = DType::from_safetensors(v.dtype()).ok_or_else(|| {
            Error::format(
                path,
                8,
                format!("{name}: a supported dtype, not {}", v.dtype()),
            )
        })?;
        let offset = (v.data().as_ptr() as usize).saturating_sub(base);
        let len = v.data().len();
        let shape = v.shape().to_vec();
        tensors.push(Tensor::over(
            name,
            dtype,
            shape,
            backing.clone(),
            offset,
            len,
        ));
    }
    Ok(tensors)
}

fn raw(stem: String, backing: &Backing, path: &Path, spec: &ReadSpec) -> Result<Tensor> {
    let (Some(dtype), Some(shape)) = (spec.dtype, spec.shape.clone()) else {
        return Err(Error::format(
            path,
            0,
            "an npy, npz or safetensors file; for raw binary give --dtype and --shape",
        ));
    };
    let len = npy::byte_len(&shape, dtype, path, 0)?;
    let have = backing.as_slice().len();
    if have != len {
        return Err(Error::format(
            path,
            0,
            format!("{len} bytes for {dtype:?} {shape:?}, found {have} bytes"),
        ));
    }
    Ok(Tensor::over(stem, dtype, shape, backing.clone(), 0, len))
}
