//! Identical-code detection on real code objects (issue 43, item 3): a cubin and an HSACO from
//! tests/fixtures/code (tests/fixtures/PROVENANCE.md) against themselves, against copies whose
//! note or comment bytes, build ids or kernel names were rewritten (identical), against copies
//! with one instruction's bytes flipped (differs, at that offset), and against other kernels.
#![allow(clippy::expect_used)]

use kernelab_code::{
    all_identical, load_bytes, same_code, sameness_line, CodeObject, LoadOptions, Sameness,
};
use object::read::elf::{ElfFile64, SectionHeader};
use object::{LittleEndian as LE, Object};
use std::path::Path;

const CUBIN: &str = "copy_variants_sm90.cubin";
const HSACO: &str = "hsaco_gfx1100_cov5_rocprofiler-sdk_smallkernel.co";

fn bytes(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/code")
            .join(name),
    )
    .expect("fixture")
}

fn load(label: &str, data: &[u8]) -> Vec<CodeObject> {
    load_bytes(label, data, &LoadOptions::default()).expect("a code object")
}

/// The file range `[start, end)` of the section `name`, read from the ELF section table.
fn section_range(data: &[u8], name: &str) -> (usize, usize) {
    let file = ElfFile64::<LE>::parse(data).expect("ELF");
    let s = file.section_by_name(name).expect("the section");
    let h = s.elf_section_header();
    let start = h.sh_offset(LE) as usize;
    (start, start + h.sh_size(LE) as usize)
}

/// `data` with every byte of `[start, end)` inverted.
fn flipped(data: &[u8], start: usize, end: usize) -> Vec<u8> {
    let mut out = data.to_vec();
    for b in &mut out[start..end] {
        *b = !*b;
    }
    out
}

/// `data` with every occurrence of `from` replaced by `to` (same length): a rename everywhere
/// the name is written (string tables, section names, metadata).
fn renamed(data: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let mut out = data.to_vec();
    let mut count = 0;
    let mut i = 0;
    while i + from.len() <= out.len() {
        if &out[i..i + from.len()] == from {
            out[i..i + from.len()].copy_from_slice(to);
            count += 1;
            i += from.len();
        } else {
            i += 1;
        }
    }
    assert!(count > 0, "the name is in the file");
    out
}

fn compare(base: &[u8], cand: &[u8]) -> (Vec<kernelab_code::KernelSameness>, String) {
    let found = same_code(&load("base", base), &load("cand", cand));
    let line = sameness_line(&found);
    (found, line)
}

#[test]
fn an_object_against_itself_is_identical() {
    for name in [CUBIN, HSACO] {
        let data = bytes(name);
        let (found, line) = compare(&data, &data);
        assert!(all_identical(&found), "{name}: {found:?}");
        assert!(
            line.starts_with("identical machine code: any difference is noise"),
            "{line}"
        );
    }
    let (found, _) = compare(&bytes(CUBIN), &bytes(CUBIN));
    assert_eq!(found.len(), 3, "three kernels: {found:?}");
}

#[test]
fn rewritten_notes_build_ids_and_comments_leave_the_code_identical() {
    let cubin = bytes(CUBIN);
    // The toolkit note (tool names and versions) and the CUDA info note, every byte inverted
    // after their 12-byte note headers.
    let (s, e) = section_range(&cubin, ".note.nv.tkinfo");
    let mut changed = flipped(&cubin, s + 12, e);
    let (s, e) = section_range(&changed, ".note.nv.cuinfo");
    changed = flipped(&changed, s + 12, e);
    assert_ne!(changed, cubin);
    let (found, line) = compare(&cubin, &changed);
    assert!(all_identical(&found), "{line}");

    // An HSACO's `.comment` (the compiler's version string).
    let hsaco = bytes(HSACO);
    let (s, e) = section_range(&hsaco, ".comment");
    let changed = flipped(&hsaco, s, e - 1);
    let (found, line) = compare(&hsaco, &changed);
    assert!(all_identical(&found), "{line}");
}

#[test]
fn a_kernel_renamed_is_identical_code() {
    let cubin = bytes(CUBIN);
    let changed = renamed(&cubin, b"copy_vec4", b"copy_v4ec");
    let (found, line) = compare(&cubin, &changed);
    assert!(all_identical(&found), "{line}");
    let k = found
        .iter()
        .find(|k| k.symbol == "copy_vec4")
        .expect("the kernel");
    assert_eq!(k.cand_symbol.as_deref(), Some("copy_v4ec"));

    let hsaco = bytes(HSACO);
    let changed = renamed(
        &hsaco,
        b"_Z20reproducible_runtimel",
        b"_Z20reproducibl3_runtimel",
    );
    let (found, line) = compare(&hsaco, &changed);
    assert!(all_identical(&found), "{line}");
    assert_eq!(
        found[0].cand_symbol.as_deref(),
        Some("_Z20reproducibl3_runtimel")
    );
}

#[test]
fn one_instruction_changed_differs_at_its_offset() {
    // A cubin: the second 16-byte SASS instruction of `copy_vec4`.
    let cubin = bytes(CUBIN);
    let (s, _) = section_range(&cubin, ".text.copy_vec4");
    let changed = flipped(&cubin, s + 0x10, s + 0x20);
    let (found, line) = compare(&cubin, &changed);
    assert!(!all_identical(&found));
    let k = found
        .iter()
        .find(|k| k.symbol == "copy_vec4")
        .expect("the kernel");
    assert!(
        matches!(
            k.sameness,
            Sameness::Differs {
                offset: Some(0x10),
                ..
            }
        ),
        "{k:?}"
    );
    // The other two kernels are still identical.
    let same = found
        .iter()
        .filter(|k| matches!(k.sameness, Sameness::Identical { .. }))
        .count();
    assert_eq!(same, 2, "{found:?}");
    assert!(
        line.starts_with("machine code differs: copy_vec4: code differs at byte 0x10"),
        "{line}"
    );

    // An HSACO: the kernel's first 4-byte instruction word at byte 8 of its code.
    let hsaco = bytes(HSACO);
    let (s, _) = section_range(&hsaco, ".text");
    let changed = flipped(&hsaco, s + 8, s + 12);
    let (found, line) = compare(&hsaco, &changed);
    assert!(
        matches!(
            found[0].sameness,
            Sameness::Differs {
                offset: Some(8),
                ..
            }
        ),
        "{line}"
    );
}

#[test]
fn code_outside_the_kernels_is_compared_too() {
    // The smallkernel HSACO's .text is 0x200 bytes, its kernel the first 80: a byte after the
    // kernel (padding or other functions) differs with every kernel identical.
    let hsaco = bytes(HSACO);
    let (s, _) = section_range(&hsaco, ".text");
    let changed = flipped(&hsaco, s + 0x100, s + 0x101);
    let (found, line) = compare(&hsaco, &changed);
    assert!(!all_identical(&found), "{line}");
    assert_eq!(
        found.last().map(|k| k.symbol.as_str()),
        Some(kernelab_code::OTHER_CODE)
    );
    assert!(line.contains("at byte 0x100"), "{line}");
}

#[test]
fn really_different_kernels_differ() {
    // One Triton kernel at two pipeline depths: same name, other code.
    let (found, line) = compare(
        &bytes("recompute_w_u_fwd_kernel_w4s3.cubin"),
        &bytes("recompute_w_u_fwd_kernel_w4s4.cubin"),
    );
    assert!(!all_identical(&found));
    assert!(
        line.starts_with("machine code differs: recompute_w_u_fwd_kernel"),
        "{line}"
    );
    // Other kernel sets: each kernel on one side only is a difference.
    let (found, line) = compare(&bytes(CUBIN), &bytes("arch_sm_90.cubin"));
    assert!(!all_identical(&found), "{line}");
    // Two AMD targets of one aiter kernel: the same code bytes (checked below), which are other
    // instructions on another target.
    let (gfx942, gfx950) = (
        bytes("hsaco_gfx942_aiter_bf16gemm_32x64_splitk.co"),
        bytes("hsaco_gfx950_aiter_bf16gemm_32x64_splitk.co"),
    );
    let text = |d: &[u8]| {
        let (s, e) = section_range(d, ".text");
        d[s..e].to_vec()
    };
    assert_eq!(text(&gfx942), text(&gfx950));
    let (found, line) = compare(&gfx942, &gfx950);
    assert!(!all_identical(&found));
    assert!(line.contains("another target (gfx942 → gfx950)"), "{line}");
}
