//! Static evidence from GPU code objects: per-kernel resources from NVIDIA cubins (also inside
//! fatbins and host binaries) and AMD HSACOs (also inside clang offload bundles and AOTriton
//! `.aks2` archives), instruction
//! classes from disassembly (run or given as text), and diffs between builds.
//!
//! ```
//! use kernelab_code::classes::{classify, Isa};
//! assert_eq!(classify(Isa::Amdgcn, "ds_load_b128"), "lds_load");
//! assert_eq!(classify(Isa::Sass, "LDG.E.128"), "global_load");
//! ```
#![deny(missing_docs)]
// Lints for libraries (issue #40, as uv has them): a library returns what it has to say,
// names no `pub` item its users cannot reach, documents every `unsafe` and panics on no `expect`.

pub mod aks2;
mod build;
pub mod classes;
mod codeobj;
pub mod cubin;
mod diff;
pub mod disasm;
mod error;
pub mod fatbin;
pub mod hsaco;
mod load;
pub mod offload_bundle;
mod same_code;
pub mod target_id;
pub mod tool_version;

pub use build::{files_below, load_build};
pub use codeobj::{demangle, sha256_hex, CodeObject, CodeResources, KernelInfo, ObjectKind};
pub use diff::{
    diff, kernel_diff, matrix, Build, ChangeRow, KernelDiff, Matrix, MatrixPair, ObjectDiff,
};
pub use error::{Error, Result};
pub use load::{load_bytes, load_file, LoadOptions, MAX_FILE_BYTES};
pub use same_code::{
    all_identical, first_difference, same_code, sameness_line, KernelSameness, Sameness, OTHER_CODE,
};
