//! Disassembly: parse the text of `cuobjdump -sass`, `nvdisasm`, `llvm-objdump -d` and compiler
//! `.s` output into per-function instruction counts, and run those tools when installed.

mod amdgcn;
mod run;
mod sass;

pub use amdgcn::{asm_metadata, parse_compiler_asm, parse_objdump};
pub use run::{disassemble, Disassembly};
pub use sass::parse_sass;

use crate::classes::{classify, Isa};
use std::collections::BTreeMap;

/// Instruction counts of one function.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionCounts {
    /// Instructions counted (padding excluded).
    pub instructions: u64,
    /// Count per mnemonic as written (with modifiers for SASS, e.g. `LDG.E.128`).
    pub mnemonics: BTreeMap<String, u64>,
}

impl FunctionCounts {
    /// Counts one instruction.
    pub fn add(&mut self, mnemonic: &str) {
        self.instructions += 1;
        *self.mnemonics.entry(mnemonic.to_string()).or_insert(0) += 1;
    }

    /// Counts per class.
    pub fn classes(&self, isa: Isa) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for (m, n) in &self.mnemonics {
            *out.entry(classify(isa, m).to_string()).or_insert(0) += n;
        }
        out
    }
}

/// Per-function counts of one disassembly, in function order.
pub type Functions = Vec<(String, FunctionCounts)>;
