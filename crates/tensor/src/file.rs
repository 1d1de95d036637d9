//! Tensor files: `.npy`, `.npz` (stored members are memory-mapped in place; deflated members
//! are inflated into memory), safetensors, and raw binary with a dtype and shape given. Large
//! files are memory-mapped, never read whole.

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::npy;
use crate::tensor::{Backing, ReadSpec, SharedBytes, Tensor, TensorFile};
use memmap2::Mmap;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

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

/// Reads a tensor file whose bytes another owner lends (format from its content), in place:
/// nothing is copied but what [`open`] copies (a Fortran-order array, a deflated npz member).
pub fn from_shared(path: &Path, bytes: SharedBytes, spec: &ReadSpec) -> Result<TensorFile> {
    if (*bytes).as_ref().is_empty() {
        return Err(Error::format(path, 0, "a tensor file, not an empty file"));
    }
    parse(path, Backing::Shared(bytes), spec)
}

/// An array held in memory, as a NumPy array holds it, read in place: C-order elements of the
/// NumPy type string `descr` (`<f4`, `|V2`, ...) and `shape` in `bytes`. `named` is the element
/// type the array's dtype names where `descr` is opaque (`ml_dtypes`' bfloat16 is `V2`, its
/// float8 types `f1`). The result is what [`open`] gives for the array saved by `np.save` under `path`
/// (format `npy`, one tensor named by `path`'s stem), without the file.
pub fn from_array(
    path: &Path,
    descr: &str,
    named: Option<DType>,
    shape: Vec<usize>,
    bytes: SharedBytes,
    spec: &ReadSpec,
) -> Result<TensorFile> {
    // The item size the type string declares (`V2`, `f1`: what ml_dtypes' types show).
    let size = descr
        .trim_start_matches(['<', '>', '|', '='])
        .get(1..)
        .and_then(|n| n.parse::<usize>().ok());
    let Some(mut dtype) = named
        .filter(|d| size == Some(d.size()))
        .or_else(|| DType::from_numpy(descr))
    else {
        return Err(Error::format(
            path,
            0,
            format!("a numeric dtype: {}", npy::unsupported(descr)),
        ));
    };
    if let Some(user) = spec.dtype {
        if user.size() == dtype.size() && (dtype == DType::U16 || named == Some(dtype)) {
            dtype = user; // bf16 stored as uint16, or a type the caller names
        }
    }
    let len = npy::byte_len(&shape, dtype, path, 0)?;
    let have = (*bytes).as_ref().len();
    if have != len {
        return Err(Error::format(
            path,
            0,
            format!("{len} bytes for {dtype:?} {shape:?}, found {have} bytes"),
        ));
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(TensorFile {
        path: path.to_path_buf(),
        format: "npy",
        tensors: vec![Tensor::over(
            stem,
            dtype,
            shape,
            Backing::Shared(bytes),
            0,
            len,
        )],
        skipped: Vec::new(),
    })
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

#[cfg(test)]
mod in_memory_tests {
    use super::*;

    /// An npy file's bytes: a version-1 header for `descr` and `shape`, then `data`.
    fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
        let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        let mut header = dict.into_bytes();
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(b' ');
        }
        header.push(b'\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(&header);
        bytes.extend_from_slice(data);
        bytes
    }

    fn shared(bytes: Vec<u8>) -> SharedBytes {
        Arc::new(bytes)
    }

    #[test]
    fn an_array_in_memory_reads_as_its_npy_file() {
        let data: Vec<u8> = [1.0f32, f32::NAN, 3.0, f32::INFINITY, 5.0, 6.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let spec = ReadSpec::default();
        let label = Path::new("<a>.npy");
        let file = from_bytes(label, npy("<f4", "(2, 3)", &data), &spec).expect("npy");
        let arr =
            from_array(label, "<f4", None, vec![2, 3], shared(data.clone()), &spec).expect("array");
        let lent = from_shared(label, shared(npy("<f4", "(2, 3)", &data)), &spec).expect("lent");
        for f in [&arr, &lent] {
            assert_eq!((f.format, f.path.as_path()), ("npy", label));
            let (t, u) = (&f.tensors[0], &file.tensors[0]);
            assert_eq!(
                (&t.name, t.dtype, &t.shape, t.bytes()),
                (&u.name, u.dtype, &u.shape, u.bytes())
            );
        }
        assert_eq!(arr.tensors[0].name, "<a>");
        assert_eq!(crate::finite(&arr.tensors[0]).first, Some(vec![0, 1]));
    }

    #[test]
    fn named_types_sizes_and_unsupported_dtypes() {
        let spec = ReadSpec::default();
        let p = Path::new("<t>.npy");
        let nan_bf16 = 0x7fc0u16.to_le_bytes().to_vec();
        // ml_dtypes' bfloat16 is `V2`: bf16 by name, uint16 without it.
        let f = from_array(
            p,
            "<V2",
            Some(DType::BF16),
            vec![1],
            shared(nan_bf16.clone()),
            &spec,
        );
        assert_eq!(f.expect("bf16").tensors[0].dtype, DType::BF16);
        let f = from_array(p, "<V2", None, vec![1], shared(nan_bf16.clone()), &spec);
        assert_eq!(f.expect("u16").tensors[0].dtype, DType::U16);
        // A name whose size disagrees with the type string is not taken.
        let f = from_array(
            p,
            "<V2",
            Some(DType::F8E5M2),
            vec![1],
            shared(nan_bf16),
            &spec,
        );
        assert_eq!(f.expect("u16").tensors[0].dtype, DType::U16);
        let f = from_array(
            p,
            "<f1",
            Some(DType::F8E5M2),
            vec![2],
            shared(vec![0x7c, 1]),
            &spec,
        );
        assert_eq!(f.expect("f8").tensors[0].dtype, DType::F8E5M2);
        let e = from_array(p, "<c8", None, vec![1], shared(vec![0; 8]), &spec).expect_err("c8");
        assert_eq!(
            e.to_string(),
            "<t>.npy: byte 0: expected a numeric dtype: complex numbers (<c8), not supported"
        );
        let e = from_array(p, "<f4", None, vec![3], shared(vec![0; 8]), &spec).expect_err("len");
        assert_eq!(
            e.to_string(),
            "<t>.npy: byte 0: expected 12 bytes for F32 [3], found 8 bytes"
        );
        let e = from_array(p, "<f4", None, vec![usize::MAX, 2], shared(vec![]), &spec);
        assert!(e
            .expect_err("overflow")
            .to_string()
            .contains("fits in 64 bits"));
        let e = from_shared(Path::new("<t>"), shared(Vec::new()), &spec).expect_err("empty");
        assert_eq!(
            e.to_string(),
            "<t>: byte 0: expected a tensor file, not an empty file"
        );
    }
}
