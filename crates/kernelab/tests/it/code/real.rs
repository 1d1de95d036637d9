//! Code objects as real tools write them (issue 15): arch-specific cubins, stack frames apart
//! from local memory, several offload bundles in one `.hip_fatbin`, targets the installed LLVM
//! does not know, and code object v1. Each is checked against the tools' own reading.

use super::{assert_agrees, build_gfx1151, code, have, kernels, show};
use crate::kernelab;
use regex::Regex;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The target cuobjdump names in `code for sm_XX` of a recorded `cuobjdump -sass` header.
fn cuobjdump_target(head: &str) -> String {
    let text = std::fs::read_to_string(code(head)).expect("recorded cuobjdump header");
    let re = Regex::new(r"code for (sm_\w+)").expect("re");
    re.captures(&text).expect("a `code for` line")[1].to_string()
}

#[test]
fn arch_specific_cubins_are_named_as_cuobjdump_names_them() {
    // nvcc 13.0 (ELF ABI v8) writes the same e_flags for sm_100, sm_100a and sm_100f.
    for t in ["90", "90a", "100", "100a", "100f", "120a"] {
        let doc = show(
            &[&code(&format!("arch_sm_{t}.cubin"))],
            &["--no-disassemble"],
        );
        let o = &doc["objects"][0];
        assert_eq!(o["facts"]["elf_abi_version"], "8", "sm_{t}");
        assert_eq!(
            o["arch"].as_str(),
            Some(cuobjdump_target(&format!("arch_sm_{t}.head.txt")).as_str()),
            "sm_{t}"
        );
    }
    // ABI v7 (Triton's ptxas): the 'a' is an e_flags bit.
    for cfg in ["w4s3", "w4s4", "w8s2"] {
        let text =
            std::fs::read_to_string(code(&format!("recompute_w_u_fwd_kernel_{cfg}.sass.txt")))
                .expect("sass");
        assert!(text.contains("code for sm_90a"));
        let doc = show(
            &[&code(&format!("recompute_w_u_fwd_kernel_{cfg}.cubin"))],
            &["--no-disassemble"],
        );
        assert_eq!(doc["objects"][0]["arch"], "sm_90a");
    }
    // Inside a host object's fatbin: cuobjdump -lelf names the entries.
    let lelf = std::fs::read_to_string(code("arch_fatbin_o.lelf.txt")).expect("lelf");
    let want: Vec<String> = Regex::new(r"\.(sm_\w+)\.cubin")
        .expect("re")
        .captures_iter(&lelf)
        .map(|c| c[1].to_string())
        .collect();
    assert_eq!(want, ["sm_90a", "sm_100a"]);
    let doc = show(&[&code("arch_fatbin.o")], &["--no-disassemble"]);
    let got: Vec<&str> = doc["objects"]
        .as_array()
        .expect("objects")
        .iter()
        .map(|o| o["arch"].as_str().expect("arch"))
        .collect();
    assert_eq!(got, want);
}

/// `Function NAME` → the ptxas `-v` "N bytes stack frame" figure.
fn ptxas_frames(name: &str) -> Vec<(String, u64)> {
    let text = std::fs::read_to_string(code(name)).expect("ptxas -v output");
    Regex::new(r"Function properties for (\w+)\n\s*(\d+) bytes stack frame")
        .expect("re")
        .captures_iter(&text)
        .map(|c| (c[1].to_string(), c[2].parse().expect("number")))
        .collect()
}

#[test]
fn stack_frames_are_not_local_memory() {
    // Every cubin with a recorded cuobjdump resource dump agrees on REG, STACK, SHARED, LOCAL
    // and CONSTANT[0]; stack8 has an 8-byte frame and no local memory (STACK:8 LOCAL:0).
    let dir = super::super::fixture("code");
    let mut checked = 0;
    for e in std::fs::read_dir(&dir).expect("fixtures") {
        let p = e.expect("entry").path();
        let name = p
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        let Some(stem) = name.strip_suffix(".res.txt") else {
            continue;
        };
        let doc = show(&[&code(&format!("{stem}.cubin"))], &["--no-disassemble"]);
        assert_agrees(&doc, &p);
        checked += 1;
        let ptxas = format!("{stem}.ptxas.txt");
        if !code(&ptxas).exists() {
            continue;
        }
        let ks = kernels(&doc);
        for (f, frame) in ptxas_frames(&ptxas) {
            if let Some(k) = ks.iter().find(|k| k["symbol"] == f.as_str()) {
                assert_eq!(k["resources"]["frame_bytes"], frame, "{stem} {f}");
            }
        }
        let k = ks.iter().find(|k| k["symbol"] == "stack8").expect("stack8");
        let r = &k["resources"];
        assert_eq!(
            (&r["frame_bytes"], &r["stack_bytes"], &r["local_bytes"]),
            (&8.into(), &8.into(), &0.into()),
            "{stem}"
        );
    }
    assert_eq!(checked, 9, "3 Triton cubins and 6 nvcc cubins");
}

/// Assembles `src` for `mcpu` with llvm-mc-19 and links it with ld.lld-19 into `dir/name.co`.
fn assemble(dir: &Path, name: &str, src: &str, mcpu: &str) -> Option<PathBuf> {
    if !have("llvm-mc-19") || !have("ld.lld-19") || !have("llvm-readelf-19") {
        kernelab_testkit::skip(
            "llvm-19",
            "LLVM 19 tools are not installed (.ci/run installs llvm-19 and lld-19)",
        );
        return None;
    }
    let (s, o, co) = (
        dir.join(format!("{name}.s")),
        dir.join(format!("{name}.o")),
        dir.join(format!("{name}.co")),
    );
    std::fs::write(&s, src).expect("write");
    let ok = Command::new("llvm-mc-19")
        .args([
            "-triple=amdgcn-amd-amdhsa",
            &format!("-mcpu={mcpu}"),
            "-filetype=obj",
        ])
        .arg(&s)
        .arg("-o")
        .arg(&o)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "llvm-mc-19 failed on {name}");
    let ok = Command::new("ld.lld-19")
        .arg("-shared")
        .arg(&o)
        .arg("-o")
        .arg(&co)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "ld.lld-19 failed on {name}");
    Some(co)
}

/// Rewrites `path` with `f` applied to its bytes.
fn patch(path: &Path, f: impl FnOnce(&mut Vec<u8>)) {
    let mut d = std::fs::read(path).expect("read");
    f(&mut d);
    std::fs::write(path, d).expect("write");
}

/// Sets the `EF_AMDGPU_MACH` byte of an ELF64's e_flags (offset 48).
fn set_mach(d: &mut [u8], mach: u8) {
    d[48] = mach;
}

fn readelf(args: &[&str], path: &Path) -> String {
    let out = Command::new("llvm-readelf-19")
        .args(args)
        .arg(path)
        .output()
        .expect("llvm-readelf-19 runs");
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// A kernel with no metadata note: the target comes from e_flags alone.
const BARE_KERNEL: &str = "  .text\n  .globl k\n  .p2align 8\n  .type k,@function\nk:\n  s_endpgm\n.Lk_end:\n  .size k, .Lk_end-k\n";

#[test]
fn amd_targets_from_e_flags_agree_with_llvm_readelf() {
    let dir = tempfile::tempdir().expect("tmp");
    let Some(co) = assemble(dir.path(), "bare", BARE_KERNEL, "gfx900") else {
        return;
    };
    let bytes = std::fs::read(&co).expect("read");
    let mut files = Vec::new();
    for mach in 0x20u8..=0x5f {
        let p = dir.path().join(format!("m{mach:02x}.co"));
        let mut d = bytes.clone();
        set_mach(&mut d, mach);
        std::fs::write(&p, d).expect("write");
        files.push(p);
    }
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let doc = show(&paths, &["--no-disassemble"]);
    let objects = doc["objects"].as_array().expect("objects");
    assert_eq!(objects.len(), files.len());
    let re = Regex::new(r"Flags:\s+0x[0-9A-Fa-f]+, (gfx[0-9a-z-]+)").expect("re");
    let mut compared = 0;
    for (p, o) in files.iter().zip(objects) {
        let Some(want) = re.captures(&readelf(&["-h"], p)).map(|c| c[1].to_string()) else {
            continue; // a value LLVM 19 does not name
        };
        assert_eq!(o["arch"].as_str(), Some(want.as_str()), "{}", p.display());
        compared += 1;
    }
    assert!(compared >= 50, "llvm-readelf-19 names {compared} targets");
}

#[test]
fn a_target_llvm_does_not_know_still_has_its_resources() {
    let dir = tempfile::tempdir().expect("tmp");
    let Some(known) = build_gfx1151(dir.path(), "baseline") else {
        return;
    };
    // gfx1153 (EF_AMDGPU_MACH 0x58, LLVM 20+): the same kernel with the target patched, in
    // e_flags and in the metadata's target string.
    let unknown = dir.path().join("gfx1153.co");
    std::fs::copy(&known, &unknown).expect("copy");
    patch(&unknown, |d| {
        set_mach(d, 0x58);
        let mut i = 0;
        while let Some(at) = d[i..].windows(7).position(|w| w == b"gfx1151") {
            d[i + at + 6] = b'3';
            i += at + 7;
        }
    });
    // LLVM 19 does not name it, and its objdump refuses it.
    assert!(!readelf(&["-h"], &unknown).contains("gfx"));
    let out = Command::new("llvm-objdump-19")
        .args(["-d", "--mcpu=gfx1153"])
        .arg(&unknown)
        .output()
        .expect("llvm-objdump-19 runs");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a recognized processor"));
    // kernelab goes on: both objects, resources alike, no disassembly for the second.
    let doc = show(&[&known, &unknown], &[]);
    let o = doc["objects"].as_array().expect("objects");
    assert_eq!(o[1]["arch"], "gfx1153");
    let why = o[1]["facts"]["disassembler"]
        .as_str()
        .expect("disassembler fact");
    assert!(
        why.starts_with("unavailable: ") && why.contains("gfx1153") && !why.contains("/tmp"),
        "{why}"
    );
    let (k0, k1) = (&o[0]["kernels"][0], &o[1]["kernels"][0]);
    assert_eq!(k0["resources"], k1["resources"]);
    assert_eq!(k0["code_sha256"], k1["code_sha256"]);
    assert!(k1["instructions"].is_null());
    if have("llvm-objdump-19") {
        assert_eq!(k0["instructions"], 9);
    }
}

/// A code object v1: an `AMD` NT_AMD_HSA_CODE_OBJECT_VERSION note saying 1.0, EI_ABIVERSION 0.
fn v1_object(dir: &Path, name: &str, note_align: &str) -> Option<PathBuf> {
    let src = format!(
        "{BARE_KERNEL}  .section .note,\"a\",@note\n{note_align}  .long 4\n  .long 8\n  .long 1\n  .asciz \"AMD\"\n  .long 1\n  .long 0\n"
    );
    let co = assemble(dir, name, &src, "gfx803")?;
    patch(&co, |d| d[8] = 0);
    Some(co)
}

#[test]
fn code_object_v1_is_named_as_not_supported() {
    let dir = tempfile::tempdir().expect("tmp");
    let Some(v1) = v1_object(dir.path(), "v1", "") else {
        return;
    };
    let notes = readelf(&["-h", "--notes"], &v1);
    assert!(
        notes.contains("ABI Version:                       0"),
        "{notes}"
    );
    assert!(notes.contains("[Major: 1, Minor: 0]"), "{notes}");
    // The same with a note section aligned to 16, which ELF note readers refuse.
    let odd = v1_object(dir.path(), "v1_align16", "  .p2align 4\n").expect("built");
    for p in [&v1, &odd] {
        let out = kernelab()
            .args(["code", "show"])
            .arg(p)
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("code object v1.0") && err.contains("not supported"),
            "{err}"
        );
        assert!(
            !err.contains("note (") && !err.contains("panicked"),
            "{err}"
        );
    }
}

/// Assembly of `n` empty kernels `{prefix}1..n` for `target`, with their descriptors and
/// metadata, as a compiler writes them.
fn kernels_asm(target: &str, prefix: &str, n: usize) -> String {
    let gfx9 = target.starts_with("gfx9");
    let mut s = format!("  .amdgcn_target \"amdgcn-amd-amdhsa--{target}\"\n  .text\n");
    for i in 1..=n {
        let k = format!("{prefix}{i}");
        s += &format!("  .globl {k}\n  .p2align 8\n  .type {k},@function\n{k}:\n  s_endpgm\n.L{k}_end:\n  .size {k}, .L{k}_end-{k}\n");
    }
    s += "  .rodata\n";
    for i in 1..=n {
        let extra = if gfx9 {
            ".amdhsa_accum_offset 4"
        } else {
            ".amdhsa_wavefront_size32 1"
        };
        s += &format!("  .p2align 6\n  .amdhsa_kernel {prefix}{i}\n    .amdhsa_next_free_vgpr 4\n    .amdhsa_next_free_sgpr 8\n    {extra}\n  .end_amdhsa_kernel\n");
    }
    s += &format!("  .amdgpu_metadata\n---\namdhsa.version: [ 1, 2 ]\namdhsa.target: amdgcn-amd-amdhsa--{target}\namdhsa.kernels:\n");
    for i in 1..=n {
        s += &format!("  - .name: {prefix}{i}\n    .symbol: {prefix}{i}.kd\n    .kernarg_segment_size: 0\n    .kernarg_segment_align: 8\n    .group_segment_fixed_size: 0\n    .private_segment_fixed_size: 0\n    .wavefront_size: {}\n    .sgpr_count: 8\n    .vgpr_count: 4\n    .max_flat_workgroup_size: 256\n", if gfx9 { 64 } else { 32 });
    }
    s + "...\n  .end_amdgpu_metadata\n"
}

const BUNDLER: &str = "clang-offload-bundler-19";
const TARGETS: [&str; 2] = ["gfx942", "gfx1151"];

fn bundler(args: &[String]) {
    let out = Command::new(BUNDLER)
        .args(args)
        .output()
        .expect("bundler runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Kernel symbols (`NAME.kd`, once each) of a code object, as llvm-readelf-19 lists them.
fn readelf_kernels(path: &Path) -> Vec<String> {
    let mut names: Vec<String> = readelf(&["--symbols"], path)
        .split_whitespace()
        .filter_map(|w| w.strip_suffix(".kd").map(str::to_string))
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn every_offload_bundle_of_a_hip_fatbin_section_is_read() {
    if !have(BUNDLER) || !have("llvm-objcopy-19") {
        kernelab_testkit::skip(
            "llvm-19",
            format!("{BUNDLER} / llvm-objcopy-19 are not installed (.ci/run installs clang-19 and llvm-19)"),
        );
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    // Two bundles, 3 and 2 kernels per target: the first compressed (CCOB), the second plain.
    let mut sections = Vec::new();
    for (b, (prefix, n, compress)) in [("first", 3, true), ("second", 2, false)]
        .into_iter()
        .enumerate()
    {
        let mut inputs = vec!["-input=/dev/null".to_string()];
        for t in TARGETS {
            let Some(co) = assemble(d, &format!("{prefix}_{t}"), &kernels_asm(t, prefix, n), t)
            else {
                return;
            };
            inputs.push(format!("-input={}", co.display()));
        }
        let bundle = d.join(format!("b{b}.bundle"));
        let mut args = vec![
            "-type=o".to_string(),
            "-targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx942,hipv4-amdgcn-amd-amdhsa--gfx1151".to_string(),
            format!("-output={}", bundle.display()),
        ];
        args.extend(inputs);
        if compress {
            args.push("-compress".into());
        }
        bundler(&args);
        let bytes = std::fs::read(&bundle).expect("bundle");
        assert_eq!(bytes.starts_with(b"CCOB"), compress);
        sections.extend(bytes);
        sections.extend([0u8; 12]); // padding between bundles
    }
    let section = d.join("hip_fatbin.bin");
    std::fs::write(&section, &sections).expect("write");
    let host = assemble_host(d);
    let fat = d.join("host_fat.o");
    let ok = Command::new("llvm-objcopy-19")
        .arg(format!("--add-section=.hip_fatbin={}", section.display()))
        .arg(&host)
        .arg(&fat)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "llvm-objcopy-19 failed");
    // Independent reading: unbundle each bundle per target, list its kernels with llvm-readelf.
    let mut want = Vec::new();
    for b in 0..2 {
        for t in TARGETS {
            let out = d.join(format!("x{b}_{t}.co"));
            bundler(&[
                "-type=o".into(),
                format!("-targets=hipv4-amdgcn-amd-amdhsa--{t}"),
                format!("-input={}", d.join(format!("b{b}.bundle")).display()),
                format!("-output={}", out.display()),
                "-unbundle".into(),
            ]);
            want.push((t.to_string(), readelf_kernels(&out)));
        }
    }
    let counts: Vec<usize> = want.iter().map(|(_, k)| k.len()).collect();
    assert_eq!(counts, [3, 3, 2, 2]);
    let doc = show(&[&fat], &["--no-disassemble"]);
    let got: Vec<(String, Vec<String>)> = doc["objects"]
        .as_array()
        .expect("objects")
        .iter()
        .map(|o| {
            let mut ks: Vec<String> = o["kernels"]
                .as_array()
                .expect("kernels")
                .iter()
                .map(|k| k["symbol"].as_str().expect("symbol").to_string())
                .collect();
            ks.sort();
            (o["arch"].as_str().expect("arch").to_string(), ks)
        })
        .collect();
    assert_eq!(got, want);
    assert!(doc["objects"][2]["label"]
        .as_str()
        .expect("label")
        .ends_with("#bundle1:hipv4-amdgcn-amd-amdhsa--gfx942"));
}

/// A host object with nothing in it, for llvm-objcopy to add a `.hip_fatbin` section to.
fn assemble_host(dir: &Path) -> PathBuf {
    let (s, o) = (dir.join("host.s"), dir.join("host.o"));
    std::fs::write(&s, "  .text\n").expect("write");
    let ok = Command::new("llvm-mc-19")
        .args(["-triple=x86_64-unknown-linux-gnu", "-filetype=obj"])
        .arg(&s)
        .arg("-o")
        .arg(&o)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "llvm-mc-19 failed on the host object");
    o
}
