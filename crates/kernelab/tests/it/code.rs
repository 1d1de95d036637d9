//! `kernelab code`: resources must agree with the vendor tools' own output on the same files
//! (cuobjdump `--dump-resource-usage`, llvm-readelf `--notes`), instruction classes with the
//! disassembly, and diffs must show exactly the change that was made.

use super::{fixture, json_of, kernelab, shared};
use regex::Regex;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

mod real;

pub(crate) fn code(name: &str) -> PathBuf {
    fixture(&format!("code/{name}"))
}

pub(crate) fn show(files: &[&Path], extra: &[&str]) -> Value {
    let mut args: Vec<String> = vec!["show".into()];
    args.extend(files.iter().map(|p| p.display().to_string()));
    args.extend(extra.iter().map(|s| s.to_string()));
    json_of("code", &args)
}

pub(crate) fn kernels(doc: &Value) -> Vec<Value> {
    doc["objects"]
        .as_array()
        .expect("objects")
        .iter()
        .flat_map(|o| o["kernels"].as_array().cloned().unwrap_or_default())
        .collect()
}

/// `Function NAME:` → (REG, STACK, SHARED, LOCAL, CONSTANT[0]) from cuobjdump's resource dump.
fn cuobjdump_resources(text: &str) -> Vec<(String, [u64; 5])> {
    let re = Regex::new(r"Function ([^:]+):\s*\n\s*REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+) CONSTANT\[0\]:(\d+)").expect("re");
    re.captures_iter(text)
        .map(|c| {
            let n = |i: usize| c[i].parse::<u64>().expect("number");
            (c[1].to_string(), [n(2), n(3), n(4), n(5), n(6)])
        })
        .collect()
}

pub(crate) fn assert_agrees(doc: &Value, resusage: &Path) {
    let text = std::fs::read_to_string(resusage).expect("resource usage text");
    let want = cuobjdump_resources(&text);
    assert!(!want.is_empty());
    let ks = kernels(doc);
    for (name, [reg, stack, shared, local, c0]) in want {
        let k = ks
            .iter()
            .find(|k| k["symbol"] == name.as_str())
            .unwrap_or_else(|| panic!("{name} missing"));
        let r = &k["resources"];
        let got = [
            &r["registers"],
            &r["stack_bytes"],
            &r["shared_bytes"],
            &r["local_bytes"],
            &r["const0_bytes"],
        ]
        .map(|v| v.as_u64().expect("number"));
        assert_eq!(
            got,
            [reg, stack, shared, local, c0],
            "{name}: REG STACK SHARED LOCAL CONSTANT[0]"
        );
    }
}

#[test]
fn triton_cubins_agree_with_cuobjdump() {
    for cfg in ["w4s3", "w4s4", "w8s2"] {
        let cubin = code(&format!("recompute_w_u_fwd_kernel_{cfg}.cubin"));
        let doc = show(&[&cubin], &["--no-disassemble"]);
        assert_eq!(doc["objects"][0]["arch"], "sm_90a");
        assert_agrees(
            &doc,
            &code(&format!("recompute_w_u_fwd_kernel_{cfg}.res.txt")),
        );
    }
}

#[test]
fn nvcc_cubin_and_fatbin_executable_agree_with_cuobjdump() {
    let resusage = code("resusage_copy_variants_exe.txt");
    let cubin = show(&[&code("copy_variants_sm90.cubin")], &["--no-disassemble"]);
    assert_eq!(cubin["objects"][0]["arch"], "sm_90");
    assert_eq!(cubin["objects"][0]["facts"]["elf_abi_version"], "8");
    assert_agrees(&cubin, &resusage);
    let exe = show(&[&code("copy_variants_fatbin_exe")], &["--no-disassemble"]);
    assert_eq!(
        exe["objects"].as_array().expect("objects").len(),
        2,
        "two fatbin containers"
    );
    assert_agrees(&exe, &resusage);
    // The same kernels in both: identical machine code.
    let hash = |d: &Value, n: &str| {
        kernels(d)
            .into_iter()
            .find(|k| k["symbol"] == n)
            .map(|k| k["code_sha256"].clone())
    };
    assert_eq!(hash(&cubin, "copy_vec4"), hash(&exe, "copy_vec4"));
    assert_eq!(
        kernels(&cubin)
            .iter()
            .find(|k| k["symbol"] == "smem_transpose")
            .expect("k")["resources"]["barriers"],
        1
    );
}

#[test]
fn vec4_copy_has_128_bit_loads_where_scalar_has_32_bit() {
    let doc = show(&[&code("sass_copy_variants_exe.txt")], &[]);
    let ks = kernels(&doc);
    let m = |n: &str| ks.iter().find(|k| k["symbol"] == n).expect("kernel")["mnemonics"].clone();
    let (vec4, scalar) = (m("copy_vec4"), m("copy_scalar"));
    assert_eq!(vec4["LDG.E.128.CONSTANT"], 5);
    assert!(vec4["LDG.E.CONSTANT"].is_null());
    assert_eq!(scalar["LDG.E.CONSTANT"], 5);
    assert!(scalar["LDG.E.128.CONSTANT"].is_null());
    // diff of the two kernels' text: the global-load count is the same, the widths differ.
    let dir = tempfile::tempdir().expect("tmp");
    let text = std::fs::read_to_string(code("sass_copy_variants_exe.txt")).expect("read");
    let one = |name: &str| -> PathBuf {
        let start = text.find(&format!("Function : {name}")).expect("function");
        let end = text[start + 10..]
            .find("Function : ")
            .map(|e| e + start + 10)
            .unwrap_or(text.len());
        let p = dir.path().join(format!("{name}.sass"));
        std::fs::write(&p, format!("\tcode for sm_90\n\t\t{}", &text[start..end])).expect("write");
        p
    };
    let d = json_of(
        "code",
        &[
            "diff".to_string(),
            one("copy_scalar").display().to_string(),
            one("copy_vec4").display().to_string(),
        ],
    );
    let mnem = d["kernels"][0]["mnemonics"].as_array().expect("mnemonics");
    let row = |n: &str| mnem.iter().find(|r| r["item"] == n).cloned().expect("row");
    assert_eq!(
        (
            row("LDG.E.CONSTANT")["base"].as_u64(),
            row("LDG.E.CONSTANT")["cand"].as_u64()
        ),
        (Some(5), Some(0))
    );
    assert_eq!(
        (
            row("LDG.E.128.CONSTANT")["base"].as_u64(),
            row("LDG.E.128.CONSTANT")["cand"].as_u64()
        ),
        (Some(0), Some(5))
    );
}

#[test]
fn sm75_cubin_resources() {
    let doc = show(
        &[&code("cuassembler-cudatest.sm_75.cubin")],
        &["--no-disassemble"],
    );
    assert_eq!(doc["objects"][0]["arch"], "sm_75");
    let ks = kernels(&doc);
    assert_eq!(ks.len(), 7);
    // docs/formats/nvidia.md §5.2, read off this file: one kernel with 4,112 B static shared and a barrier,
    // one with a 72-byte frame (a stack frame, not local memory), _Z7argtestPiS_S_ with 24
    // registers.
    assert!(ks
        .iter()
        .any(|k| k["resources"]["shared_bytes"] == 4112 && k["resources"]["barriers"] == 1));
    assert!(ks
        .iter()
        .any(|k| k["resources"]["frame_bytes"] == 72 && k["resources"]["local_bytes"] == 0));
    let argtest = ks
        .iter()
        .find(|k| k["symbol"] == "_Z7argtestPiS_S_")
        .expect("argtest");
    assert_eq!(argtest["resources"]["registers"], 24);
    assert_eq!(argtest["demangled"], "argtest(int*, int*, int*)");
}

#[test]
fn sm75_sass_text_dump() {
    let doc = show(
        &[&code("cuassembler-mandelbrot.sm_75.cuobjdump-sass.txt")],
        &[],
    );
    let ks = kernels(&doc);
    assert_eq!(ks.len(), 6);
    // Independent count: instruction lines are `/*ADDR*/` followed by an opcode.
    let text = std::fs::read_to_string(code("cuassembler-mandelbrot.sm_75.cuobjdump-sass.txt"))
        .expect("read");
    let re = Regex::new(r"(?m)^\s*/\*[0-9a-f]{4}\*/\s+\S").expect("re");
    let total: u64 = ks
        .iter()
        .map(|k| k["instructions"].as_u64().expect("n"))
        .sum();
    assert_eq!(total, re.find_iter(&text).count() as u64);
}

/// `.vgpr_count`, `.sgpr_count`, `.agpr_count` per kernel from `llvm-readelf-19 --notes`.
fn readelf_counts(path: &Path) -> Option<Vec<(String, u64)>> {
    let out = Command::new("llvm-readelf-19")
        .arg("--notes")
        .arg(path)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let re = Regex::new(r"\.(vgpr_count|sgpr_count|agpr_count):\s+(\d+)").expect("re");
    Some(
        re.captures_iter(&text)
            .map(|c| (c[1].to_string(), c[2].parse().expect("n")))
            .collect(),
    )
}

#[test]
fn hsaco_metadata_agrees_with_llvm_readelf() {
    let mut files = vec![
        code("hsaco_gfx1100_cov5_rocprofiler-sdk_smallkernel.co"),
        code("hsaco_gfx942_aiter_bf16gemm_32x64_splitk.co"),
    ];
    files.extend(shared("amd/hsaco_gfx942_ck_tile_batched_gemm_rocm7.0.1.co"));
    for f in files {
        let doc = show(&[&f], &["--no-disassemble"]);
        let Some(want) = readelf_counts(&f) else {
            kernelab_testkit::skip(
                "llvm-19",
                "llvm-readelf-19 is not installed (.ci/run installs llvm-19)",
            );
            return;
        };
        let mut got = Vec::new();
        for k in kernels(&doc) {
            for (key, field) in [
                ("registers", "vgpr_count"),
                ("sgprs", "sgpr_count"),
                ("agprs", "agpr_count"),
            ] {
                if let Some(v) = k["resources"][key].as_u64() {
                    got.push((field.to_string(), v));
                }
            }
        }
        let mut want = want;
        want.sort();
        got.sort();
        assert_eq!(got, want, "{}", f.display());
    }
    let doc = show(
        &[&code("hsaco_gfx942_aiter_bf16gemm_32x64_splitk.co")],
        &["--no-disassemble"],
    );
    let k = &kernels(&doc)[0];
    assert_eq!(doc["objects"][0]["arch"], "gfx942");
    assert_eq!(k["resources"]["shared_bytes"], 65_536);
    assert_eq!(k["descriptor"]["group_segment_fixed_size"], 65_536);
}

pub(crate) fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn amd_instruction_classes_from_llvm_objdump() {
    if !have("llvm-objdump-19") {
        kernelab_testkit::skip(
            "llvm-19",
            "llvm-objdump-19 is not installed (.ci/run installs llvm-19)",
        );
        return;
    }
    // Counts from docs/formats/amd.md §3.2 for this kernel: 96 v_mfma_f32_16x16x16_bf16, 52 ds_read_b128,
    // 60 buffer_load_dword.
    let doc = show(&[&code("hsaco_gfx942_aiter_bf16gemm_32x64_splitk.co")], &[]);
    let k = &kernels(&doc)[0];
    assert_eq!(k["mnemonics"]["v_mfma_f32_16x16x16_bf16"], 96);
    assert_eq!(k["mnemonics"]["ds_read_b128"], 52);
    assert_eq!(k["mnemonics"]["buffer_load_dword"], 60);
    assert_eq!(k["classes"]["matrix_mfma"], 96);
    assert!(doc["objects"][0]["facts"]["disassembler"]
        .as_str()
        .expect("tool")
        .contains("LLVM version 19"));
    if let Some(ck) = shared("amd/hsaco_gfx942_ck_tile_batched_gemm_rocm7.0.1.co") {
        let doc = show(&[&ck], &[]);
        let sum = |class: &str| {
            kernels(&doc)
                .iter()
                .map(|k| k["classes"][class].as_u64().unwrap_or(0))
                .sum::<u64>()
        };
        // docs/formats/amd.md §3.2: 1,280 matrix_mfma, 1,024 acc_move, 672 LDS store, 384 LDS load, 346 wait.
        assert_eq!(
            [
                sum("matrix_mfma"),
                sum("acc_move"),
                sum("lds_store"),
                sum("lds_load"),
                sum("wait")
            ],
            [1280, 1024, 672, 384, 346]
        );
    }
    // gfx950 needs LLVM 22: without it the classes are unavailable, and the output says why.
    let doc = show(&[&code("hsaco_gfx950_aiter_bf16gemm_32x64_splitk.co")], &[]);
    if !have("llvm-objdump-22") {
        assert!(kernels(&doc)[0]["classes"].is_null());
        assert!(doc["objects"][0]["facts"]["disassembler"]
            .as_str()
            .expect("note")
            .contains("LLVM 22"));
    }
}

#[test]
fn offload_bundle_in_a_host_object() {
    let Some(obj) = shared("amd/hostobj_x86_64_hip_fatbin_offload_bundle_gfx942.o") else {
        return;
    };
    let doc = show(&[&obj], &["--no-disassemble"]);
    let o = &doc["objects"][0];
    assert_eq!(o["arch"], "gfx942");
    assert!(o["label"]
        .as_str()
        .expect("label")
        .ends_with("#hipv4-amdgcn-amd-amdhsa--gfx942"));
    assert_eq!(kernels(&doc).len(), 2);
}

#[test]
fn compiler_assembly_text() {
    let doc = show(&[&code("asm_gfx1100_cov5_llc_amdgpujl_ker1.s")], &[]);
    let ks = kernels(&doc);
    assert!(!ks.is_empty());
    assert_eq!(doc["objects"][0]["arch"], "gfx1100");
    let text = std::fs::read_to_string(code("asm_gfx1100_cov5_llc_amdgpujl_ker1.s")).expect("read");
    // Independent count: TAB + lower-case mnemonic lines inside the function, minus s_code_end.
    let body = &text[text
        .find(&format!("{}:", ks[0]["symbol"].as_str().expect("sym")))
        .expect("label")..text.find(".Lfunc_end0:").expect("end")];
    let re = Regex::new(r"(?m)^\t[a-z][a-z0-9_]*").expect("re");
    let n = re
        .find_iter(body)
        .filter(|m| m.as_str() != "\ts_code_end")
        .count() as u64;
    assert_eq!(ks[0]["instructions"].as_u64(), Some(n));
}

/// Assembles and links a gfx1151 raw-assembly kernel with LLVM 19, as kernel engineers do.
pub(crate) fn build_gfx1151(dir: &Path, variant: &str) -> Option<PathBuf> {
    if !have("llvm-mc-19") || !have("ld.lld-19") {
        kernelab_testkit::skip(
            "llvm-19",
            "llvm-mc-19 / ld.lld-19 are not installed (.ci/run installs llvm-19 and lld-19)",
        );
        return None;
    }
    let src = super::root().join(format!("tests/asm/gfx1151_lds_{variant}.s"));
    let obj = dir.join(format!("{variant}.o"));
    let co = dir.join(format!("{variant}.co"));
    let ok = Command::new("llvm-mc-19")
        .args([
            "-triple=amdgcn-amd-amdhsa",
            "-mcpu=gfx1151",
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

#[test]
fn gfx1151_asm_kernel_diff_shows_exactly_the_change() {
    let dir = tempfile::tempdir().expect("tmp");
    let (Some(base), Some(cand)) = (
        build_gfx1151(dir.path(), "baseline"),
        build_gfx1151(dir.path(), "candidate"),
    ) else {
        return;
    };
    let d = json_of(
        "code",
        &[
            "diff".to_string(),
            base.display().to_string(),
            cand.display().to_string(),
        ],
    );
    let k = &d["kernels"][0];
    assert_eq!(k["code_changed"], true);
    // Four ds_load_b32 became one ds_load_b128; nothing else changed.
    let changed: Vec<(String, u64, u64)> = k["classes"]
        .as_array()
        .expect("classes")
        .iter()
        .filter(|r| r["base"] != r["cand"])
        .map(|r| {
            (
                r["item"].as_str().expect("item").to_string(),
                r["base"].as_u64().expect("b"),
                r["cand"].as_u64().expect("c"),
            )
        })
        .collect();
    assert_eq!(
        changed,
        vec![
            ("lds_load".to_string(), 4, 1),
            ("instructions (total)".to_string(), 9, 6)
        ]
    );
    let m: Vec<&str> = k["mnemonics"]
        .as_array()
        .expect("m")
        .iter()
        .map(|r| r["item"].as_str().expect("i"))
        .collect();
    assert_eq!(m, vec!["ds_load_b128", "ds_load_b32"]);
    let regs = k["resources"]
        .as_array()
        .expect("r")
        .iter()
        .find(|r| r["item"] == "registers (VGPR/regs)")
        .cloned()
        .expect("regs");
    assert_eq!(regs["base"], regs["cand"]);
    let show = show(&[&base], &["--no-disassemble"]);
    assert_eq!(show["objects"][0]["arch"], "gfx1151");
}

#[test]
fn build_matrix_counts_changed_objects() {
    let dir = tempfile::tempdir().expect("tmp");
    let (b, c) = (dir.path().join("base"), dir.path().join("cand"));
    std::fs::create_dir_all(b.join("sub")).expect("mkdir");
    std::fs::create_dir_all(c.join("sub")).expect("mkdir");
    std::fs::copy(
        code("recompute_w_u_fwd_kernel_w4s3.cubin"),
        b.join("recompute.cubin"),
    )
    .expect("copy");
    std::fs::copy(
        code("recompute_w_u_fwd_kernel_w8s2.cubin"),
        c.join("recompute.cubin"),
    )
    .expect("copy");
    std::fs::copy(code("copy_variants_sm90.cubin"), b.join("sub/copy.cubin")).expect("copy");
    std::fs::copy(code("copy_variants_sm90.cubin"), c.join("sub/copy.cubin")).expect("copy");
    std::fs::write(b.join("notes.txt"), "not a code object").expect("write");
    let m = json_of(
        "code",
        &[
            "matrix".to_string(),
            b.display().to_string(),
            c.display().to_string(),
        ],
    );
    assert_eq!(
        (m["changed"].as_u64(), m["total"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(m["distinct_symbols"], 4);
    let changed: Vec<&Value> = m["pairs"]
        .as_array()
        .expect("pairs")
        .iter()
        .filter(|p| p["changed"] == true)
        .collect();
    assert_eq!(changed[0]["key"], "recompute.cubin");
    // w4s3 → w8s2 (cuobjdump: REG 116 → see .res.txt) is reported among the resource changes.
    let out = kernelab()
        .args(["code", "matrix", "--format", "md"])
        .arg(&b)
        .arg(&c)
        .output()
        .expect("runs");
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains("1 of 2 code objects changed"), "{md}");
    assert!(md.contains("no spills"), "{md}");
}

#[test]
fn bad_code_objects_exit_2() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().join("junk.bin");
    std::fs::write(&p, b"\x7fELF this is not really an ELF file").expect("write");
    let out = kernelab()
        .args(["code", "show"])
        .arg(&p)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("junk.bin") && !err.contains("panicked"),
        "{err}"
    );
    std::fs::write(&p, b"").expect("write");
    kernelab().args(["code", "show"]).arg(&p).assert().code(2);
}

/// `code diff` says after its tables whether the machine code is the same (issue 43): the
/// same cubin on both sides is identical, two Triton pipeline depths differ.
#[test]
fn code_diff_says_whether_the_machine_code_is_identical() {
    let cubin = code("recompute_w_u_fwd_kernel_w4s3.cubin");
    let out = kernelab()
        .args(["code", "diff"])
        .arg(&cubin)
        .arg(&cubin)
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("kernelab: identical machine code: any difference is noise"),
        "{err}"
    );
    let out = kernelab()
        .args(["code", "diff"])
        .arg(&cubin)
        .arg(code("recompute_w_u_fwd_kernel_w4s4.cubin"))
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "kernelab: machine code differs: recompute_w_u_fwd_kernel: code differs at byte"
        ),
        "{err}"
    );
}
