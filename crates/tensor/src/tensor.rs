//! A tensor and the file that holds it: its bytes (where they live and how they are shared),
//! its dtype and shape, and how files without a header are read.

use crate::dtype::DType;
use crate::error::{Error, Result};
use memmap2::Mmap;
use std::path::PathBuf;
use std::sync::Arc;

/// Memory another owner holds and lends read-only for as long as this handle lives (a Python
/// `bytes` object or NumPy array, read in place by the Python module).
pub type SharedBytes = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// The memory a tensor's bytes live in: a read-only map of the file, a buffer, or memory lent
/// by another owner.
#[derive(Clone)]
pub(crate) enum Backing {
    Map(Arc<Mmap>),
    Heap(Arc<Vec<u8>>),
    Shared(SharedBytes),
}

impl std::fmt::Debug for Backing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self {
            Backing::Map(_) => "Map",
            Backing::Heap(_) => "Heap",
            Backing::Shared(_) => "Shared",
        };
        write!(f, "{kind}({} bytes)", self.as_slice().len())
    }
}

impl Backing {
    pub(crate) fn heap(bytes: Vec<u8>) -> Backing {
        Backing::Heap(Arc::new(bytes))
    }
    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            Backing::Map(m) => m,
            Backing::Heap(v) => v,
            Backing::Shared(s) => (**s).as_ref(),
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
