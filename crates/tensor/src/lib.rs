//! Tensor files and the correctness gates kernelab runs on kernel outputs: bitwise equality,
//! closeness under tolerances or ULPs, error against a high-precision oracle, finiteness,
//! and determinism over repeats.
//!
//! ```
//! use kernelab_tensor::DType;
//! assert_eq!(DType::parse("bf16"), Some(DType::BF16));
//! assert_eq!(DType::BF16.default_tolerance(), (1.6e-2, 1e-5));
//! ```
#![deny(missing_docs)]
// Lints for libraries (issue #40, as uv has them): a library returns what it has to say,
// names no `pub` item its users cannot reach, documents every `unsafe` and panics on no `expect`.

pub mod compare;
mod dtype;
mod error;
mod fast;
mod file;
mod gates;
mod npy;
mod tensor;
mod tolerance;

pub use compare::{
    bitwise, close, content_hash, finite, show, BitwiseOptions, BitwiseReport, CloseReport,
    FiniteReport, Mismatch, Tolerance, UlpBucket,
};
pub use dtype::{decode_e4m3fn, decode_e5m2, encode_e4m3fn, encode_e5m2, DType};
pub use error::{Error, Result};
pub use file::{from_array, from_bytes, from_shared, open};
pub use gates::{
    bitwise_files, close_files, compare_files, finite_file, non_finite_totals, repeat,
    FileComparison, FileFinite, FileHashes, Oracle, RepeatReport, TensorFinite, TensorHash,
    TensorResult,
};
pub use tensor::{ReadSpec, SharedBytes, Skipped, Tensor, TensorFile};
