//! Code objects as real tools write them (issue 15): arch-specific cubins, stack frames apart
//! from local memory, several offload bundles in one `.hip_fatbin`, targets the installed LLVM
//! does not know, and code object v1. Each is checked against the tools' own reading.

use super::{assert_agrees, code, kernels, show};
use regex::Regex;

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
