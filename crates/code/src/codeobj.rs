//! What a code object says about its kernels.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Which kind of code object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ObjectKind {
    /// NVIDIA cubin (ELF, EM_CUDA).
    Cubin,
    /// AMD HSACO (ELF, EM_AMDGPU).
    Hsaco,
    /// A disassembly text dump (no binary).
    Disassembly,
}

/// Per-kernel resources; `None` where the object does not say.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CodeResources {
    /// Registers per thread (NVIDIA) or VGPRs (AMD, compiler count from metadata).
    pub registers: Option<u32>,
    /// AMD accumulation VGPRs.
    pub agprs: Option<u32>,
    /// AMD scalar registers.
    pub sgprs: Option<u32>,
    /// AMD VGPR spill count.
    pub vgpr_spills: Option<u32>,
    /// AMD SGPR spill count.
    pub sgpr_spills: Option<u32>,
    /// Named barriers (NVIDIA).
    pub barriers: Option<u32>,
    /// Static shared memory / LDS (AMD group segment) in bytes.
    pub shared_bytes: Option<u64>,
    /// Per-thread local memory outside the stack (NVIDIA, cuobjdump's LOCAL) or private
    /// segment / scratch (AMD), bytes.
    pub local_bytes: Option<u64>,
    /// The kernel's own stack frame (NVIDIA `EIATTR_FRAME_SIZE`, ptxas "stack frame"), bytes.
    pub frame_bytes: Option<u64>,
    /// Stack size with callees (NVIDIA, cuobjdump's STACK), bytes.
    pub stack_bytes: Option<u64>,
    /// Constant bank 0 (kernel parameters) size (NVIDIA), bytes.
    pub const0_bytes: Option<u64>,
    /// Kernel argument segment size (AMD), bytes.
    pub kernarg_bytes: Option<u64>,
    /// Maximum threads per block / flat work-group size.
    pub max_threads: Option<u32>,
    /// Wavefront size (AMD).
    pub wavefront_size: Option<u32>,
}

/// One kernel (entry function) in a code object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KernelInfo {
    /// Symbol name as in the object.
    pub symbol: String,
    /// Demangled name, when the symbol is mangled.
    pub demangled: Option<String>,
    /// Resources.
    pub resources: CodeResources,
    /// Size of the kernel's machine code in bytes.
    pub code_size: Option<u64>,
    /// SHA-256 of the kernel's machine code (hex), to tell changed builds apart.
    pub code_sha256: Option<String>,
    /// Instruction counts per class (from disassembly), when available.
    pub classes: Option<BTreeMap<String, u64>>,
    /// Instruction counts per mnemonic (from disassembly), when available.
    pub mnemonics: Option<BTreeMap<String, u64>>,
    /// Instructions counted (from disassembly).
    pub instructions: Option<u64>,
    /// Raw AMD kernel descriptor fields, when read.
    pub descriptor: Option<BTreeMap<String, u64>>,
    /// The kernel's parameter sizes in bytes, in order, when the object records them (a
    /// cubin's `EIATTR_KPARAM_INFO`): what a launch must pass. Not part of the documents.
    #[serde(skip)]
    #[schemars(skip)]
    pub param_sizes: Option<Vec<u32>>,
}

/// One code object (a file, or one entry extracted from a container).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CodeObject {
    /// Where it came from: the path, plus `#entry` for extracted entries.
    pub label: String,
    /// Cubin, HSACO or disassembly text.
    pub kind: ObjectKind,
    /// Target: `sm_90a`, `gfx942`, `gfx1151`, ...
    pub arch: Option<String>,
    /// Facts: ELF ABI, code-object version, toolkit, disassembler used.
    pub facts: BTreeMap<String, String>,
    /// Kernels in symbol order.
    pub kernels: Vec<KernelInfo>,
    /// The object's bytes (for disassembly), not serialized.
    #[serde(skip)]
    pub bytes: Option<Vec<u8>>,
}

/// Demangles a C++ symbol, or `None` when it is not mangled.
pub fn demangle(symbol: &str) -> Option<String> {
    kernelab_model::demangle_symbol(symbol)
}

pub use kernelab_model::sha256_hex;
