//! Instruction classes per ISA (tables in `docs/formats/amd.md` §3.2 and
//! `docs/formats/nvidia.md` §4.4). First match wins; the tables are data, kept apart from the parsers.

use regex::Regex;
use std::sync::OnceLock;

/// Which instruction set a mnemonic belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    /// AMD GCN/CDNA/RDNA.
    Amdgcn,
    /// NVIDIA SASS.
    Sass,
}

/// AMD classes: (class, pattern on the mnemonic). gfx11 renamed `ds_read`/`ds_write` to
/// `ds_load`/`ds_store`; gfx12 split `s_waitcnt` into `s_wait_*`: both spellings are listed.
const AMD: &[(&str, &str)] = &[
    ("padding", r"^s_code_end$"),
    ("lds_load", r"^ds_(load|read)\w*"),
    ("lds_store", r"^ds_(store|write)\w*"),
    ("lds_permute", r"^ds_(swizzle|bpermute|permute)\w*"),
    ("lds_other", r"^ds_\w+"),
    ("global_load", r"^global_load\w*"),
    ("global_store", r"^global_store\w*"),
    ("global_atomic", r"^global_atomic\w*"),
    ("buffer_load", r"^buffer_load\w*"),
    ("buffer_store", r"^buffer_store\w*"),
    ("buffer_other", r"^buffer_\w+"),
    ("flat", r"^flat_\w+"),
    ("scratch", r"^scratch_\w+"),
    ("image", r"^(image|tbuffer)_\w+"),
    (
        "scalar_memory",
        r"^s_(buffer_)?(load|store|prefetch|dcache|scratch_load)\w*",
    ),
    ("wait", r"^s_wait(cnt)?(_\w+)?$"),
    ("matrix_wmma", r"^v_s?wmmac?_\w+"),
    ("matrix_mfma", r"^v_(mfma|smfmac)_\w+"),
    ("acc_move", r"^v_accvgpr_\w+"),
    ("barrier", r"^s_barrier\w*"),
    (
        "branch",
        r"^s_(cbranch_\w+|branch|setpc_b64|swappc_b64|getpc_b64|call_b64)$",
    ),
    (
        "nop_sched",
        r"^s_(nop|sleep|sleep_var|delay_alu|clause|set_inst_prefetch_distance|sethalt)$",
    ),
    ("end", r"^s_endpgm\w*"),
    ("valu", r"^v_\w+"),
    ("salu", r"^s_\w+"),
];

/// SASS classes by base opcode (text before the first `.`); checked in order, so the TMA and
/// bulk opcodes come before the generic uniform-datapath rule.
const SASS: &[(&str, &[&str])] = &[
    ("global_load", &["LDG", "LD"]),
    ("global_store", &["STG", "ST"]),
    ("global_async_copy", &["LDGSTS", "LDGDEPBAR"]),
    (
        "tma_bulk",
        &[
            "UTMALDG",
            "UTMASTG",
            "UTMAPF",
            "UTMACMDFLUSH",
            "UTMACCTL",
            "UBLKCP",
            "UBLKRED",
            "UBLKPF",
        ],
    ),
    ("shared", &["LDS", "STS", "LDSM", "STSM"]),
    ("local_spill", &["LDL", "STL"]),
    ("constant", &["LDC", "ULDC", "LDCU"]),
    ("atomic", &["ATOMG", "ATOM", "RED", "ATOMS", "REDUX"]),
    ("matrix_mma", &["HMMA", "IMMA", "DMMA", "BMMA"]),
    (
        "matrix_gmma",
        &["HGMMA", "IGMMA", "QGMMA", "BGMMA", "WARPGROUP"],
    ),
    (
        "barrier_sync",
        &[
            "BAR",
            "SYNCS",
            "MEMBAR",
            "FENCE",
            "DEPBAR",
            "WARPSYNC",
            "ERRBAR",
            "NANOSLEEP",
            "ELECT",
        ],
    ),
    ("warp_shuffle", &["SHFL", "VOTE", "VOTEU", "MATCH"]),
    (
        "fp32",
        &[
            "FFMA", "FADD", "FMUL", "FMNMX", "FSETP", "FSEL", "FCHK", "FFMA32I", "FADD32I",
            "FMUL32I", "FSET",
        ],
    ),
    (
        "fp16_packed",
        &["HFMA2", "HADD2", "HMUL2", "HMNMX2", "HSETP2", "HSET2"],
    ),
    ("fp64", &["DFMA", "DADD", "DMUL", "DSETP", "DMNMX"]),
    (
        "integer",
        &[
            "IMAD", "IADD3", "VIADD", "LOP3", "SHF", "LEA", "ISETP", "IMNMX", "IABS", "POPC",
            "FLO", "PRMT", "SEL", "IDP", "IADD", "IMUL", "LOP", "SHL", "SHR", "VIMNMX",
        ],
    ),
    (
        "conversion",
        &["F2F", "F2FP", "I2F", "F2I", "I2FP", "FRND", "I2I"],
    ),
    ("special_function", &["MUFU"]),
    (
        "control",
        &[
            "BRA", "BRX", "JMP", "CALL", "RET", "EXIT", "BSSY", "BSYNC", "KILL", "NOP", "YIELD",
            "BPT", "SSY", "SYNC", "BREAK", "PBK", "JMX",
        ],
    ),
    (
        "move",
        &[
            "MOV", "S2R", "CS2R", "P2R", "R2P", "PLOP3", "S2UR", "R2UR", "MOV32I",
        ],
    ),
    ("texture", &["TEX", "TLD", "TLD4", "SULD", "SUST", "TXQ"]),
];

fn amd_table() -> &'static [(&'static str, Regex)] {
    static T: OnceLock<Vec<(&'static str, Regex)>> = OnceLock::new();
    T.get_or_init(|| {
        AMD.iter()
            .filter_map(|(c, p)| Regex::new(p).ok().map(|r| (*c, r)))
            .collect()
    })
}

/// The class of a mnemonic (`ds_load_b128`; `LDG.E.128`).
pub fn classify(isa: Isa, mnemonic: &str) -> &'static str {
    match isa {
        Isa::Amdgcn => amd_table()
            .iter()
            .find(|(_, r)| r.is_match(mnemonic))
            .map(|(c, _)| *c)
            .unwrap_or("other"),
        Isa::Sass => {
            let base = mnemonic.split('.').next().unwrap_or(mnemonic);
            if let Some((c, _)) = SASS.iter().find(|(_, ops)| ops.contains(&base)) {
                return c;
            }
            if base.starts_with('U') {
                "uniform"
            } else {
                "other"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amd_renames_across_generations() {
        assert_eq!(classify(Isa::Amdgcn, "ds_read_b128"), "lds_load");
        assert_eq!(classify(Isa::Amdgcn, "ds_load_b128"), "lds_load");
        assert_eq!(classify(Isa::Amdgcn, "ds_write_b16"), "lds_store");
        assert_eq!(classify(Isa::Amdgcn, "ds_swizzle_b32"), "lds_permute");
        assert_eq!(classify(Isa::Amdgcn, "s_waitcnt"), "wait");
        assert_eq!(classify(Isa::Amdgcn, "s_wait_loadcnt_dscnt"), "wait");
        assert_eq!(
            classify(Isa::Amdgcn, "v_wmma_f32_16x16x16_f16"),
            "matrix_wmma"
        );
        assert_eq!(
            classify(Isa::Amdgcn, "v_mfma_f32_32x32x8_f16"),
            "matrix_mfma"
        );
        assert_eq!(classify(Isa::Amdgcn, "s_load_b64"), "scalar_memory");
        assert_eq!(classify(Isa::Amdgcn, "s_code_end"), "padding");
        assert_eq!(classify(Isa::Amdgcn, "v_add_f32_e32"), "valu");
    }

    #[test]
    fn sass_opcodes() {
        assert_eq!(classify(Isa::Sass, "LDG.E.128"), "global_load");
        assert_eq!(classify(Isa::Sass, "UTMALDG.4D"), "tma_bulk");
        assert_eq!(classify(Isa::Sass, "UIADD3"), "uniform");
        assert_eq!(
            classify(Isa::Sass, "HGMMA.64x256x8.F32.TF32"),
            "matrix_gmma"
        );
        assert_eq!(classify(Isa::Sass, "STL.64"), "local_spill");
    }
}
