//! Issue 26 items 2 and 4: AMD target IDs with features switched off (`gfx90a:xnack-`,
//! `gfx942:sramecc+:xnack-`) name the processor, so the disassembler runs; compiler `.s` files
//! read the same whether indented with tabs or spaces. Counts are checked against LLVM 19's
//! own disassembly and an independent count of the source text.

use super::{json_of, root, shared};
use regex::Regex;
use std::path::{Path, PathBuf};
use std::process::Command;

fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().is_ok()
}

/// Assembles and links `tests/asm/NAME.s` for `mcpu` with `mattr` using LLVM 19.
fn build(dir: &Path, name: &str, mcpu: &str, mattr: &str) -> Option<PathBuf> {
    if !have("llvm-mc-19") || !have("ld.lld-19") {
        kernelab_testkit::skip(
            "llvm-19",
            "llvm-mc-19 / ld.lld-19 are not installed (.ci/run installs llvm-19 and lld-19)",
        );
        return None;
    }
    let src = root().join(format!("tests/asm/{name}.s"));
    let (obj, co) = (
        dir.join(format!("{name}.o")),
        dir.join(format!("{name}.co")),
    );
    let ok = Command::new("llvm-mc-19")
        .args([
            "-triple=amdgcn-amd-amdhsa",
            &format!("-mcpu={mcpu}"),
            &format!("-mattr={mattr}"),
            "-filetype=obj",
        ])
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "llvm-mc-19 failed on {}", src.display());
    let ok = Command::new("ld.lld-19")
        .arg("-shared")
        .arg(&obj)
        .arg("-o")
        .arg(&co)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "ld.lld-19 failed");
    Some(co)
}

/// Instruction lines of `llvm-objdump-19 -d` (indented, lower-case mnemonic), `s_code_end` and
/// padding `s_nop`s after the last `s_endpgm` left out: LLVM's count, not kernelab's.
fn objdump_count(co: &Path, mcpu: &str) -> u64 {
    let out = Command::new("llvm-objdump-19")
        .args(["-d", &format!("--mcpu={mcpu}")])
        .arg(co)
        .output()
        .expect("llvm-objdump-19");
    let text = String::from_utf8_lossy(&out.stdout);
    let re = Regex::new(r"^\s+([a-z][a-z0-9_]*)").expect("re");
    let mut ms: Vec<String> = text
        .lines()
        .filter_map(|l| re.captures(l).map(|c| c[1].to_string()))
        .collect();
    if let Some(end) = ms.iter().rposition(|m| m == "s_endpgm") {
        ms.truncate(end + 1);
    }
    ms.iter().filter(|m| *m != "s_code_end").count() as u64
}

/// Instruction lines of a `.s` function body counted by a regular expression over the text:
/// any indentation, a lower-case mnemonic, not a directive or comment.
fn source_count(text: &str, symbol: &str) -> u64 {
    let start = text.find(&format!("\n{symbol}:")).expect("label");
    let end = start + text[start..].find(".Lfunc_end").expect("end");
    let re = Regex::new(r"(?m)^[ \t]+([a-z][a-z0-9_]*)\b").expect("re");
    re.captures_iter(&text[start..end])
        .filter(|c| &c[1] != "s_code_end")
        .count() as u64
}

#[test]
fn issue26_target_ids_with_features_switched_off_name_the_processor() {
    let dir = tempfile::tempdir().expect("tmp");
    for (name, mcpu, mattr, target) in [
        (
            "gfx90a_xnack_off",
            "gfx90a",
            "-xnack",
            "amdgcn-amd-amdhsa--gfx90a:xnack-",
        ),
        (
            "gfx942_sramecc_on_xnack_off",
            "gfx942",
            "+sramecc,-xnack",
            "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
        ),
    ] {
        let Some(co) = build(dir.path(), name, mcpu, mattr) else {
            return;
        };
        let doc = json_of("code", &["show".as_ref(), co.as_os_str()]);
        let o = &doc["objects"][0];
        assert_eq!(o["facts"]["target"], target);
        // Was "" (a split on the last `-`), so no disassembler ran.
        assert_eq!(o["arch"], mcpu);
        let k = &o["kernels"][0];
        assert_eq!(
            k["instructions"].as_u64(),
            Some(objdump_count(&co, mcpu)),
            "{name}"
        );
        assert_eq!(k["instructions"], 9);
        let text =
            std::fs::read_to_string(root().join(format!("tests/asm/{name}.s"))).expect("read");
        assert_eq!(
            k["instructions"].as_u64(),
            Some(source_count(&text, "lds_copy"))
        );
        assert_eq!(k["resources"]["registers"], 6);
        assert_eq!(k["resources"]["shared_bytes"], 64);
    }
}

#[test]
fn issue26_space_indented_asm_reads_like_tabs() {
    // The repository's own hand-written kernels are indented with two spaces.
    let vgpr_re = Regex::new(r"\.vgpr_count: (\d+)").expect("re");
    for name in [
        "gfx1151_lds_baseline",
        "gfx1151_lds_candidate",
        "gfx90a_xnack_off",
        "gfx942_sramecc_on_xnack_off",
    ] {
        let path = root().join(format!("tests/asm/{name}.s"));
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.contains("\n  s_endpgm"), "{name} is space-indented");
        let doc = json_of("code", &["show".as_ref(), path.as_os_str()]);
        let k = &doc["objects"][0]["kernels"][0];
        let n = source_count(&text, "lds_copy");
        assert!(n > 0);
        assert_eq!(k["instructions"].as_u64(), Some(n), "{name}");
        // Resources from the `.amdgpu_metadata` YAML, as written in the file.
        let vgprs: u64 = vgpr_re.captures(&text).expect("vgpr")[1]
            .parse()
            .expect("n");
        assert_eq!(k["resources"]["registers"].as_u64(), Some(vgprs), "{name}");
        // The same file with tabs reads the same.
        let dir = tempfile::tempdir().expect("tmp");
        let tabbed = dir.path().join(format!("{name}.s"));
        // Tabs for the code; the YAML metadata block keeps its spaces (YAML forbids tabs).
        let (code, meta) = text.split_at(text.find(".amdgpu_metadata").expect("metadata"));
        let tabs = code.replace("\n    ", "\n\t\t").replace("\n  ", "\n\t") + meta;
        std::fs::write(&tabbed, tabs).expect("write");
        let t = json_of("code", &["show".as_ref(), tabbed.as_os_str()]);
        assert_eq!(
            t["objects"][0]["kernels"][0]["instructions"],
            k["instructions"]
        );
        assert_eq!(t["objects"][0]["kernels"][0]["resources"], k["resources"]);
        assert_eq!(t["objects"][0]["arch"], doc["objects"][0]["arch"]);
    }
    // And against LLVM: the built gfx1151 kernel disassembles to the same count.
    let dir = tempfile::tempdir().expect("tmp");
    if let Some(co) = build(dir.path(), "gfx1151_lds_baseline", "gfx1151", "") {
        let path = root().join("tests/asm/gfx1151_lds_baseline.s");
        let doc = json_of("code", &["show".as_ref(), path.as_os_str()]);
        assert_eq!(
            doc["objects"][0]["kernels"][0]["instructions"].as_u64(),
            Some(objdump_count(&co, "gfx1151"))
        );
    }
}

#[test]
fn issue26_hipcc_asm_respaced_keeps_counts_and_resources() {
    // hipcc `-S` output (tabs) from ../shared; its `; TotalNumVgprs:` / `; NumAgprs:` comments
    // are the compiler's own register counts, an independent check of the metadata read
    // (gfx942: the VGPR count includes the AGPRs).
    let Some(path) = shared("amd/asm_gfx942_cov6_hipcc_batched_gemm.s") else {
        return;
    };
    let text = std::fs::read_to_string(&path).expect("read");
    let doc = json_of("code", &["show".as_ref(), path.as_os_str()]);
    let ks = doc["objects"][0]["kernels"].as_array().expect("kernels");
    let vgprs: Vec<u64> = Regex::new(r"(?m)^; TotalNumVgprs: (\d+)")
        .expect("re")
        .captures_iter(&text)
        .map(|c| c[1].parse().expect("n"))
        .collect();
    assert_eq!(ks.len(), vgprs.len());
    for (k, v) in ks.iter().zip(&vgprs) {
        let sym = k["symbol"].as_str().expect("sym");
        assert_eq!(
            k["instructions"].as_u64(),
            Some(source_count(&text, sym)),
            "{sym}"
        );
        assert_eq!(k["resources"]["registers"].as_u64(), Some(*v), "{sym}");
    }
    let dir = tempfile::tempdir().expect("tmp");
    let agprs: Vec<u64> = Regex::new(r"(?m)^; NumAgprs: (\d+)")
        .expect("re")
        .captures_iter(&text)
        .map(|c| c[1].parse().expect("n"))
        .collect();
    let got: Vec<u64> = ks
        .iter()
        .filter_map(|k| k["resources"]["agprs"].as_u64())
        .collect();
    assert_eq!(got, agprs);
    let spaced = dir.path().join("spaced.s");
    std::fs::write(&spaced, text.replace('\t', "    ")).expect("write");
    let s = json_of("code", &["show".as_ref(), spaced.as_os_str()]);
    assert_eq!(s["objects"][0]["kernels"], doc["objects"][0]["kernels"]);
}
