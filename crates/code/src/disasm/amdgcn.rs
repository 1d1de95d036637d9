//! AMDGCN text: `llvm-objdump -d` output (functions `ADDR <name>:`, indented instructions, the
//! address after the last `//`) and compiler `.s` files (`name:` after `.type
//! name,@function`, up to `.Lfunc_end`; resources from the YAML `.amdgpu_metadata` block).
//! Indentation may be tabs (what compilers write) or spaces (hand-written kernels): both read.

use super::{FunctionCounts, Functions};
use std::collections::HashMap;

/// The mnemonic of an instruction line: indented by tabs or spaces (any mix), not a directive
/// (`.`), comment (`;`, `//`, `#`) or label.
fn mnemonic(line: &str) -> Option<&str> {
    if !line.starts_with([' ', '\t']) {
        return None;
    }
    let body = line.trim_start();
    if body.starts_with(['.', ';', '/', '#']) {
        return None;
    }
    let end = body.find(|c: char| c.is_whitespace()).unwrap_or(body.len());
    let m = &body[..end];
    let ok = !m.is_empty()
        && m.bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'.');
    (ok && m.as_bytes()[0].is_ascii_lowercase()).then_some(m)
}

fn address(line: &str) -> Option<u64> {
    let (_, tail) = line.rsplit_once("//")?;
    let hex = tail.trim_start().split(':').next()?;
    u64::from_str_radix(hex.trim(), 16).ok()
}

/// Removes trailing padding: `s_code_end` and the `s_nop`s after the last `s_endpgm`.
fn trim_padding(seq: &mut Vec<String>) {
    if let Some(last_end) = seq.iter().rposition(|m| m.starts_with("s_endpgm")) {
        if seq[last_end + 1..]
            .iter()
            .all(|m| m == "s_nop" || m == "s_code_end")
        {
            seq.truncate(last_end + 1);
        }
    }
    seq.retain(|m| m != "s_code_end");
}

/// Parses `llvm-objdump -d` text. With `ranges` (function symbol → `[start, end)` addresses
/// from the ELF), every instruction is counted for the function whose range holds its address,
/// so labels inside a function and padding after it do not split or inflate it; without,
/// functions run from one header to the next and trailing padding is trimmed.
pub fn parse_objdump(text: &str, ranges: Option<&HashMap<String, (u64, u64)>>) -> Functions {
    if let Some(r) = ranges {
        return by_address(text, r);
    }
    let mut out: Functions = Vec::new();
    let mut current: Option<(String, Vec<String>)> = None;
    let flush = |cur: &mut Option<(String, Vec<String>)>, out: &mut Functions| {
        if let Some((name, mut seq)) = cur.take() {
            trim_padding(&mut seq);
            let mut f = FunctionCounts::default();
            for m in &seq {
                f.add(m);
            }
            out.push((name, f));
        }
    };
    for line in text.lines() {
        if !line.starts_with(['\t', ' ']) && line.ends_with(">:") {
            if let Some((_, name)) = line.trim_end_matches(">:").split_once(" <") {
                flush(&mut current, &mut out);
                current = Some((name.to_string(), Vec::new()));
                continue;
            }
        }
        let Some(m) = mnemonic(line) else { continue };
        let Some((_, seq)) = current.as_mut() else {
            continue;
        };
        seq.push(m.to_string());
    }
    flush(&mut current, &mut out);
    out
}

fn by_address(text: &str, ranges: &HashMap<String, (u64, u64)>) -> Functions {
    let mut sorted: Vec<(u64, u64, &str)> = ranges
        .iter()
        .map(|(n, &(a, b))| (a, b, n.as_str()))
        .collect();
    sorted.sort();
    let mut counts: Vec<FunctionCounts> = vec![FunctionCounts::default(); sorted.len()];
    for line in text.lines() {
        let (Some(m), Some(addr)) = (mnemonic(line), address(line)) else {
            continue;
        };
        let i = sorted.partition_point(|r| r.0 <= addr);
        if i == 0 {
            continue;
        }
        let (start, end, _) = sorted[i - 1];
        if addr >= start && addr < end && m != "s_code_end" {
            counts[i - 1].add(m);
        }
    }
    sorted
        .into_iter()
        .zip(counts)
        .filter(|(_, c)| c.instructions > 0)
        .map(|((_, _, n), c)| (n.to_string(), c))
        .collect()
}

/// Parses compiler assembly (`hipcc -S`, `--save-temps`).
pub fn parse_compiler_asm(text: &str) -> Functions {
    let mut functions: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.trim().strip_prefix(".type") {
            if let Some((name, kind)) = rest.trim().split_once(',') {
                if kind.trim() == "@function" {
                    functions.push(name.trim().to_string());
                }
            }
        }
    }
    let mut out: Functions = Vec::new();
    let mut in_fn = false;
    for line in text.lines() {
        // Labels may be indented like the rest (tabs or spaces).
        let code = line.split(';').next().unwrap_or("").trim();
        if let Some(label) = code.strip_suffix(':') {
            if functions.iter().any(|f| f == label) {
                out.push((label.to_string(), FunctionCounts::default()));
                in_fn = true;
                continue;
            }
            if label.starts_with(".Lfunc_end") {
                in_fn = false;
            }
            continue;
        }
        if !in_fn {
            continue;
        }
        if let (Some(m), Some((_, f))) = (mnemonic(line), out.last_mut()) {
            if m != "s_code_end" {
                f.add(m);
            }
        }
    }
    out
}

/// Integer keys of each `amdhsa.kernels` entry of the YAML `.amdgpu_metadata` block of a
/// compiler `.s` file, by the entry's `.name` and `.symbol`. Only the entry's own keys are read
/// (the indentation of its first key); nested `.args` are skipped.
pub fn asm_metadata(text: &str) -> HashMap<String, HashMap<String, u64>> {
    let mut out: HashMap<String, HashMap<String, u64>> = HashMap::new();
    let mut in_meta = false;
    let mut in_kernels = false;
    // Indentation of the entries' keys, and the entry being read.
    let mut key_indent: Option<usize> = None;
    let mut current: Option<HashMap<String, String>> = None;
    let mut finish = |cur: &mut Option<HashMap<String, String>>| {
        if let Some(entry) = cur.take() {
            let ints: HashMap<String, u64> = entry
                .iter()
                .filter_map(|(k, v)| v.parse::<u64>().ok().map(|n| (k.clone(), n)))
                .collect();
            for key in [".name", ".symbol"] {
                if let Some(n) = entry.get(key) {
                    out.insert(n.trim_end_matches(".kd").to_string(), ints.clone());
                }
            }
        }
    };
    for line in text.lines() {
        let t = line.trim();
        if t == ".amdgpu_metadata" {
            in_meta = true;
            continue;
        }
        if t == ".end_amdgpu_metadata" {
            finish(&mut current);
            in_meta = false;
            in_kernels = false;
            continue;
        }
        if !in_meta {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if indent == 0 && !t.starts_with('-') {
            finish(&mut current);
            in_kernels = t == "amdhsa.kernels:";
            key_indent = None;
            continue;
        }
        if !in_kernels {
            continue;
        }
        let (indent, t) = match t.strip_prefix("- ") {
            Some(rest) if key_indent.is_none_or(|k| indent + 2 == k) => {
                finish(&mut current);
                current = Some(HashMap::new());
                key_indent = Some(indent + 2);
                (indent + 2, rest.trim())
            }
            _ => (indent, t),
        };
        if Some(indent) != key_indent {
            continue;
        }
        if let (Some(entry), Some((k, v))) = (current.as_mut(), t.split_once(':')) {
            let v = v.trim().trim_matches(['\'', '"']);
            if k.starts_with('.') && !v.is_empty() {
                entry.insert(k.to_string(), v.to_string());
            }
        }
    }
    finish(&mut current);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "\nx.co:\tfile format elf64-amdgpu\n\nDisassembly of section .text:\n\n0000000000001600 <k>:\n\ts_load_b64 s[0:1], s[0:1], null                            // 000000001600: F4040000 F8000000\n\ts_delay_alu instid0(SALU_CYCLE_1)// 00000000162C: BF8704A9\n\ts_endpgm                                                   // 00000000164C: BFB00000\n\ts_code_end                                                 // 000000001650: BF9F0000\n\t\t...\n";

    #[test]
    fn objdump_functions_without_padding() {
        let f = parse_objdump(DUMP, None);
        assert_eq!(f[0].0, "k");
        assert_eq!(f[0].1.instructions, 3);
        let mut r = HashMap::new();
        r.insert("k".to_string(), (0x1600u64, 0x1630u64));
        let f = parse_objdump(DUMP, Some(&r));
        assert_eq!(f[0].1.instructions, 2, "stops at the symbol end");
    }

    #[test]
    fn compiler_asm() {
        let s = "\t.type\tk,@function\nk:\n\ts_load_dword s0, s[0:1], 0x0\n.LBB0_1:\n\tv_add_f32_e32 v0, v1, v2 ; comment\n\ts_endpgm\n.Lfunc_end0:\n\t.size k, .Lfunc_end0-k\n";
        let f = parse_compiler_asm(s);
        assert_eq!(f[0].1.instructions, 3);
        // The same file indented with spaces, and with a mix, reads the same (issue 26 item 4).
        for indent in ["  ", "    ", " \t"] {
            let spaced = s.replace('\t', indent);
            let g = parse_compiler_asm(&spaced);
            assert_eq!(g, f, "indent {indent:?}");
        }
    }

    #[test]
    fn asm_metadata_reads_each_kernel_and_skips_args() {
        let s = "  .amdgpu_metadata\n---\namdhsa.version: [ 1, 2 ]\namdhsa.kernels:\n  - .name: k1\n    .symbol: k1.kd\n    .vgpr_count: 6\n    .args:\n      - .size: 8\n        .offset: 0\n        .name: a\n    .sgpr_count: 8\n  - .args: []\n    .name: k2\n    .vgpr_count: 40\n...\n  .end_amdgpu_metadata\n";
        let m = asm_metadata(s);
        assert_eq!(m["k1"][".vgpr_count"], 6);
        assert_eq!(m["k1"][".sgpr_count"], 8);
        assert!(
            !m["k1"].contains_key(".size"),
            "an arg's key is not the kernel's"
        );
        assert_eq!(m["k2"][".vgpr_count"], 40);
        assert!(!m.contains_key("a"));
    }
}
