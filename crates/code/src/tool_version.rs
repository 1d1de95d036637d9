//! One reader for the `--version` text of the tools kernelab runs or names: CUDA's (`nvcc`,
//! `ptxas`, `cuobjdump`, `nvdisasm`: `Cuda compilation tools, release 13.5, V13.5.37`, a line
//! without the word "version"), LLVM's (`LLVM version 19.1.7`, with a vendor in front for
//! distribution builds: `Debian LLVM version 19.1.7`, `AMD LLVM version 17.0.0git`), clang's
//! (`AMD clang version 17.0.0 (… roc-6.0.0 …)`, `Ubuntu clang version 18.1.3`) and HIP's
//! (`HIP version: 6.0.32830-d62f6a171`).
//!
//! ```
//! use kernelab_code::tool_version::{parse, Family};
//! let v = parse("cuobjdump: NVIDIA (R) CUDA Object Utility\nCuda compilation tools, release 13.5, V13.5.37\n").unwrap();
//! assert_eq!(v.family, Family::Cuda);
//! assert_eq!(v.numbers, vec![13, 5, 37]);
//! ```

use regex::Regex;
use std::sync::OnceLock;

/// Which tool family wrote the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Family {
    /// The CUDA toolkit (`release X.Y, VX.Y.Z`).
    Cuda,
    /// An LLVM tool (`llvm-objdump`, `llvm-mc`, `ld.lld`).
    Llvm,
    /// A clang driver (`clang`, `hipcc`'s clang, `amdclang++`).
    Clang,
    /// The HIP runtime line of `hipcc --version`.
    Hip,
    /// Any other `version X.Y[.Z]` text.
    Other,
}

/// A version read from a tool's `--version` text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolVersion {
    /// The family the text belongs to.
    pub family: Family,
    /// Who built it where the text says (`Debian`, `AMD`, `Ubuntu`, `NVIDIA`), else `None`.
    pub vendor: Option<String>,
    /// Major, minor and (where written) patch numbers: `[13, 5, 37]`, `[19, 1, 7]`.
    pub numbers: Vec<u32>,
    /// The line the version was read from, trimmed (shown to users as the tool's version).
    pub line: String,
}

impl ToolVersion {
    /// The major version (`13` for CUDA 13.5, `19` for LLVM 19.1.7).
    pub fn major(&self) -> u32 {
        self.numbers.first().copied().unwrap_or(0)
    }
}

struct Patterns {
    cuda: Regex,
    cuda_build: Regex,
    llvm: Regex,
    clang: Regex,
    hip: Regex,
    other: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        let re = |s: &str| Regex::new(s).unwrap_or_else(|e| panic!("pattern {s}: {e}"));
        Patterns {
            // `Cuda compilation tools, release 12.3, V12.3.107` (also `V11.4120`, as one real
            // 11.4 line reads: the release gives major.minor then).
            cuda: re(r"(?i)cuda compilation tools,\s*release\s+(\d+)\.(\d+)(?:,\s*V(\d+)\.(\d+)\.(\d+))?"),
            cuda_build: re(r"\bcuda_(\d+)\.(\d+)\.r"),
            llvm: re(r"(?:^|\s)(?:([A-Za-z][\w.+-]*)\s+)?LLVM version\s+(\d+)\.(\d+)(?:\.(\d+))?"),
            clang: re(r"(?:^|\s)(?:([A-Za-z][\w.+-]*)\s+)?clang version\s+(\d+)\.(\d+)(?:\.(\d+))?"),
            hip: re(r"HIP version:?\s*(\d+)\.(\d+)(?:\.(\d+))?"),
            other: re(r"(?i)\bversion:?\s+v?(\d+)\.(\d+)(?:\.(\d+))?"),
        }
    })
}

fn nums(c: &regex::Captures<'_>, from: usize) -> Vec<u32> {
    (from..from + 3)
        .filter_map(|i| c.get(i))
        .filter_map(|m| m.as_str().parse().ok())
        .collect()
}

/// Reads the version in a tool's `--version` text (stdout and stderr together), or `None` when
/// the text holds none. Checked in this order: CUDA, LLVM, clang, HIP, then any
/// `version X.Y`, so `hipcc`'s text gives HIP's clang only when asked by [`parse_all`].
pub fn parse(text: &str) -> Option<ToolVersion> {
    parse_all(text).into_iter().next()
}

/// Every version line in `text`, in the order of [`parse`] (one per family found).
pub fn parse_all(text: &str) -> Vec<ToolVersion> {
    let p = patterns();
    let mut out = Vec::new();
    let line_of = |at: usize| -> String {
        let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        text[start..end].trim().to_string()
    };
    if let Some(c) = p.cuda.captures(text) {
        let whole = c.get(0).map_or(0, |m| m.start());
        let mut release = nums(&c, 1);
        release.truncate(2);
        let full = nums(&c, 3);
        let numbers = if full.len() == 3 && full[..2] == release[..] {
            full
        } else {
            release
        };
        out.push(ToolVersion {
            family: Family::Cuda,
            vendor: Some("NVIDIA".into()),
            numbers,
            line: line_of(whole),
        });
    } else if let Some(c) = p.cuda_build.captures(text) {
        out.push(ToolVersion {
            family: Family::Cuda,
            vendor: Some("NVIDIA".into()),
            numbers: nums(&c, 1),
            line: line_of(c.get(0).map_or(0, |m| m.start())),
        });
    }
    for (re, family) in [(&p.llvm, Family::Llvm), (&p.clang, Family::Clang)] {
        if let Some(c) = re.captures(text) {
            let vendor = c
                .get(1)
                .map(|m| m.as_str().to_string())
                .filter(|v| v != "LLVM");
            out.push(ToolVersion {
                family,
                vendor,
                numbers: nums(&c, 2),
                line: line_of(c.get(2).map_or(0, |m| m.start())),
            });
        }
    }
    if let Some(c) = p.hip.captures(text) {
        out.push(ToolVersion {
            family: Family::Hip,
            vendor: Some("AMD".into()),
            numbers: nums(&c, 1),
            line: line_of(c.get(0).map_or(0, |m| m.start())),
        });
    }
    if out.is_empty() {
        if let Some(c) = p.other.captures(text) {
            out.push(ToolVersion {
                family: Family::Other,
                vendor: None,
                numbers: nums(&c, 1),
                line: line_of(c.get(0).map_or(0, |m| m.start())),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (text, family, vendor, numbers): real `--version` texts; where each came from is
    /// written above it.
    #[test]
    fn real_version_texts_of_cuda_rocm_and_llvm() {
        let cases: &[(&str, Family, Option<&str>, &[u32])] = &[
            // CUDA 13.5 cuobjdump / nvdisasm: the line of issue 26 item 3 (no word "version").
            ("cuobjdump: NVIDIA (R) CUDA Object Utility\nCopyright (c) 2005-2026 NVIDIA Corporation\nCuda compilation tools, release 13.5, V13.5.37\n", Family::Cuda, Some("NVIDIA"), &[13, 5, 37]),
            // nvdisasm 13.0, from a public preflight test (find_string index file 62560390515).
            ("nvdisasm: NVIDIA (R) CUDA disassembler\nCuda compilation tools, release 13.0, V13.0.85\nBuild cuda_13.0.r13.0/compiler.36400806_0\n", Family::Cuda, Some("NVIDIA"), &[13, 0, 85]),
            // nvcc 13.2 (find_string index file 55086191774).
            ("nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2026 NVIDIA Corporation\nBuilt on Thu_Mar_19_11:12:51_PM_PDT_2026\nCuda compilation tools, release 13.2, V13.2.78\nBuild cuda_13.2.r13.2/compiler.37668154_0\n", Family::Cuda, Some("NVIDIA"), &[13, 2, 78]),
            // nvcc 11.8 (find_string index file 36957317590).
            ("nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2022 NVIDIA Corporation\nBuilt on Wed_Sep_21_10:41:10_Pacific_Daylight_Time_2022\nCuda compilation tools, release 11.8, V11.8.89\nBuild cuda_11.8.r11.8/compiler.31833905_0\n", Family::Cuda, Some("NVIDIA"), &[11, 8, 89]),
            // nvcc 11.4 as pasted in a public note, `V11.4120` without its dot (find_string index
            // file 15433161265): the release line still gives 11.4.
            ("nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 11.4, V11.4120\nBuild cuda_11.4.r11.4/compiler.30300941_0\n", Family::Cuda, Some("NVIDIA"), &[11, 4]),
            // ptxas 12.x: the same line under ptxas's banner (CUDA 12.3 nvcc text of the same
            // toolkit; ptxas prints the toolkit line the same way).
            ("ptxas: NVIDIA (R) Ptx optimizing assembler\nCopyright (c) 2005-2023 NVIDIA Corporation\nBuilt on Wed_Nov_22_10:15:09_PST_2023\nCuda compilation tools, release 12.3, V12.3.107\nBuild cuda_12.3.r12.3/compiler.33567101_0\n", Family::Cuda, Some("NVIDIA"), &[12, 3, 107]),
            // Debian's llvm-objdump-19 on this machine (bookworm `llvm-19` 1:19.1.7-3~deb12u1).
            ("Debian LLVM version 19.1.7\n  Optimized build.\n", Family::Llvm, Some("Debian"), &[19, 1, 7]),
            // Debian's llvm-objdump 14 on this machine.
            ("Debian LLVM version 14.0.6\n  Optimized build.\n  Default target: x86_64-pc-linux-gnu\n", Family::Llvm, Some("Debian"), &[14, 0, 6]),
            // Upstream layout, LLVM 18.0.0git (find_string index file 53552899373).
            ("LLVM (http://llvm.org/):\n  LLVM version 18.0.0git\n  Optimized build with assertions.\n  Default target: x86_64-unknown-linux-gnu\n", Family::Llvm, None, &[18, 0, 0]),
            // LLVM 17 and 22, upstream builds: the same layout as above.
            ("LLVM (http://llvm.org/):\n  LLVM version 17.0.6\n  Optimized build.\n", Family::Llvm, None, &[17, 0, 6]),
            ("LLVM (http://llvm.org/):\n  LLVM version 22.1.8\n  Optimized build.\n", Family::Llvm, None, &[22, 1, 8]),
            // ROCm's llvm-objdump: vendor `AMD` in front (LLVM's PACKAGE_VENDOR, as Debian's).
            ("AMD LLVM version 17.0.0git\n  Optimized build.\n", Family::Llvm, Some("AMD"), &[17, 0, 0]),
            // ROCm 6.0 hipcc: https://github.com/ROCm/legacy-rocm-build/issues/3069 (HIP version
            // first, then AMD clang 17).
            ("HIP version: 6.0.32830-d62f6a171\nAMD clang version 17.0.0 (https://github.com/RadeonOpenCompute/llvm-project roc-6.0.0 23483 7208e8d15fbf218deb74483ea8c549c67ca4985e)\nTarget: x86_64-unknown-linux-gnu\nThread model: posix\n", Family::Clang, Some("AMD"), &[17, 0, 0]),
            // ROCm 5.3 clang (an LLVM ident, find_string index file 35053438785).
            ("AMD clang version 15.0.0 (https://github.com/RadeonOpenCompute/llvm-project roc-5.3.0 22362 3cf23f77f8208174a2ee7c616f4be23674d7b081)", Family::Clang, Some("AMD"), &[15, 0, 0]),
            // ROCm 7.0.1 clang: the `.ident` of ../shared/fixtures/amd/asm_gfx942_cov6_hipcc_*.s.
            ("AMD clang version 20.0.0git (https://github.com/RadeonOpenCompute/llvm-project roc-7.0.1 25314 f4087f6b428f0e6f575ebac8a8a724dab123d06e)", Family::Clang, Some("AMD"), &[20, 0, 0]),
            // Ubuntu's clang (find_string index file 60950105126).
            ("Ubuntu clang version 18.1.3 (1ubuntu1)\nTarget: x86_64-pc-linux-gnu\n", Family::Clang, Some("Ubuntu"), &[18, 1, 3]),
        ];
        for (text, family, vendor, numbers) in cases {
            let v = parse(text).unwrap_or_else(|| panic!("no version in {text:?}"));
            assert_eq!(v.family, *family, "{text:?}");
            assert_eq!(v.vendor.as_deref(), *vendor, "{text:?}");
            assert_eq!(v.numbers, *numbers, "{text:?}");
            assert!(!v.line.contains('\n') && !v.line.is_empty());
        }
    }

    #[test]
    fn hipcc_text_has_hip_and_clang_and_cuda_line_is_shown() {
        let all = parse_all("HIP version: 6.0.32830-d62f6a171\nAMD clang version 17.0.0 (x)\n");
        let fam: Vec<Family> = all.iter().map(|v| v.family).collect();
        assert_eq!(fam, [Family::Clang, Family::Hip]);
        assert_eq!(all[1].numbers, [6, 0, 32830]);
        let v = parse("cuobjdump: NVIDIA (R) CUDA Object Utility\nCuda compilation tools, release 13.5, V13.5.37\n").expect("v");
        assert_eq!(v.line, "Cuda compilation tools, release 13.5, V13.5.37");
        assert_eq!(v.major(), 13);
    }

    #[test]
    fn text_without_a_version_is_none() {
        assert_eq!(parse(""), None);
        assert_eq!(parse("usage: cuobjdump [options] <file>\n"), None);
        assert_eq!(parse("release notes"), None);
    }
}
