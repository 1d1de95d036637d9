//! NVIDIA cubin: per-kernel resources from section headers and `.nv.info*` records, read with
//! the `object` crate (no CUDA installation needed). See `docs/formats.md` (code objects).

/// Longest kernel symbol name read from a cubin: 64 KiB (a longer one is malformed input).
pub const MAX_SYMBOL_NAME_BYTES: usize = 64 * 1024;

use crate::codeobj::{demangle, sha256_hex, CodeObject, CodeResources, KernelInfo, ObjectKind};
use crate::error::{malformed, Result};
use object::elf;
use object::read::elf::{ElfFile64, FileHeader, SectionHeader, Sym};
use object::{LittleEndian as LE, Object, ObjectSection, ObjectSymbol, SectionIndex};
use std::collections::{BTreeMap, HashMap};

/// `e_machine` of CUDA ELF files.
pub const EM_CUDA: u16 = 190;
/// `st_other` flag of kernel entry symbols.
const STO_CUDA_ENTRY: u8 = 0x10;

const EIATTR_MAX_THREADS: u8 = 0x05;
const EIATTR_FRAME_SIZE: u8 = 0x11;
const EIATTR_MIN_STACK_SIZE: u8 = 0x12;
const EIATTR_REQNTID: u8 = 0x10;
const EIATTR_MAX_STACK_SIZE: u8 = 0x23;
const EIATTR_REGCOUNT: u8 = 0x2f;
const EIATTR_CUDA_API_VERSION: u8 = 0x37;
const EIATTR_NUM_BARRIERS: u8 = 76;
/// One kernel parameter: `u32 index, u16 ordinal, u16 offset, u32 flags` (size in bytes in
/// bits 18 to 31 of the flags).
const EIATTR_KPARAM_INFO: u8 = 0x17;

/// One `.nv.info` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvInfo {
    /// Attribute number (`EIATTR_*`).
    pub attr: u8,
    /// 16-bit value (BVAL/HVAL) or the SVAL payload.
    pub value: NvValue,
}

/// The payload of an `.nv.info` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NvValue {
    /// No payload.
    None,
    /// A 16-bit value.
    Half(u16),
    /// A sized payload.
    Bytes(Vec<u8>),
}

impl NvValue {
    fn u32s(&self) -> Vec<u32> {
        match self {
            NvValue::Bytes(b) => b
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            NvValue::Half(h) => vec![u32::from(*h)],
            NvValue::None => Vec::new(),
        }
    }
}

/// The parameter sizes (bytes, in ordinal order) of a kernel's `EIATTR_KPARAM_INFO` records;
/// `None` when there are none, or when the ordinals do not run 0, 1, 2, … without a gap.
fn param_sizes(records: Option<&[NvInfo]>) -> Option<Vec<u32>> {
    let mut by_ordinal: Vec<(u16, u32)> = records?
        .iter()
        .filter(|r| r.attr == EIATTR_KPARAM_INFO)
        .filter_map(|r| match &r.value {
            NvValue::Bytes(b) if b.len() >= 12 => Some((
                u16::from_le_bytes([b[4], b[5]]),
                u32::from_le_bytes([b[8], b[9], b[10], b[11]]) >> 18,
            )),
            _ => None,
        })
        .collect();
    by_ordinal.sort_unstable();
    let ordered = by_ordinal
        .iter()
        .enumerate()
        .all(|(i, &(ordinal, _))| usize::from(ordinal) == i);
    (ordered && !by_ordinal.is_empty()).then(|| by_ordinal.into_iter().map(|(_, s)| s).collect())
}

/// Parses `.nv.info` records (`u8 format, u8 attribute`, then by format: none, u16, or
/// `u16 size` + payload). `base` is the section's file offset, for error positions.
pub fn parse_nv_info(data: &[u8], base: u64) -> Result<Vec<NvInfo>> {
    let mut out = Vec::new();
    let mut i = 0usize;
    while i + 4 <= data.len() {
        let (fmt, attr) = (data[i], data[i + 1]);
        let half = u16::from_le_bytes([data[i + 2], data[i + 3]]);
        match fmt {
            1 => out.push(NvInfo {
                attr,
                value: NvValue::None,
            }),
            2 | 3 => out.push(NvInfo {
                attr,
                value: NvValue::Half(half),
            }),
            4 => {
                let start = i + 4;
                let end = start + usize::from(half);
                let payload = data.get(start..end).ok_or_else(|| {
                    malformed(
                        base + i as u64,
                        format!("an .nv.info record of {half} bytes inside the section"),
                    )
                })?;
                out.push(NvInfo {
                    attr,
                    value: NvValue::Bytes(payload.to_vec()),
                });
                i = end;
                continue;
            }
            other => {
                return Err(malformed(
                    base + i as u64,
                    format!("an .nv.info record format 1 to 4, not {other}"),
                ))
            }
        }
        i += 4;
    }
    Ok(out)
}

/// `.nv.compat` attribute that is 1 in arch-specific (`sm_90a`, `sm_100a`) cubins of ELF ABI v8
/// and 0 in plain and family (`sm_100f`) ones, as nvcc 13.0 writes them (checked against the
/// target cuobjdump names, `tests/fixtures/code/arch_sm_*`).
const COMPAT_ARCH_SPECIFIC: u8 = 0x09;

/// The SM target from the ELF header: ABI v8 keeps it in bits 8–15, older ABIs in bits 0–7;
/// `a` marks arch-specific (accelerator) targets: bit 11 before ABI v8, bit 3 from it.
pub fn arch(e_flags: u32, abi_version: u8) -> String {
    arch_with(e_flags, abi_version, false)
}

/// [`arch`], `arch_specific` adding the `a` the e_flags do not carry (ABI v8 cubins mark it in
/// `.nv.compat` only).
fn arch_with(e_flags: u32, abi_version: u8, arch_specific: bool) -> String {
    let (sm, accel) = if abi_version >= 8 {
        ((e_flags >> 8) & 0xff, e_flags & 0x8 != 0)
    } else {
        (e_flags & 0xff, e_flags & 0x800 != 0)
    };
    let a = accel || arch_specific;
    format!("sm_{sm}{}", if a { "a" } else { "" })
}

/// Reads a cubin; errors name it by `label`.
pub fn read(label: &str, data: &[u8]) -> Result<CodeObject> {
    read_elf(label, data).map_err(|e| e.with_path(label))
}

fn read_elf(label: &str, data: &[u8]) -> Result<CodeObject> {
    let file = ElfFile64::<LE>::parse(data)?;
    let header = file.elf_header();
    let ident = header.e_ident();
    let e_flags = header.e_flags(LE);
    let abi = ident.abi_version;
    let mut facts = BTreeMap::new();
    facts.insert("elf_osabi".into(), ident.os_abi.to_string());
    facts.insert("elf_abi_version".into(), abi.to_string());
    facts.insert("e_flags".into(), format!("{e_flags:#010x}"));
    facts.insert("e_version".into(), header.e_version(LE).to_string());
    // Global .nv.info: attributes keyed by symbol index.
    let mut by_symbol: HashMap<u32, Vec<(u8, u32)>> = HashMap::new();
    let mut per_kernel_info: HashMap<String, Vec<NvInfo>> = HashMap::new();
    let mut arch_specific = false;
    for s in file.sections() {
        let name = s.name().unwrap_or("");
        let offset = s.elf_section_header().sh_offset(LE);
        if name == ".nv.compat" {
            arch_specific = parse_nv_info(s.data()?, offset)?
                .iter()
                .any(|r| r.attr == COMPAT_ARCH_SPECIFIC && r.value == NvValue::Half(1));
        } else if name == ".nv.info" {
            for rec in parse_nv_info(s.data()?, offset)? {
                let v = rec.value.u32s();
                if v.len() >= 2 {
                    by_symbol.entry(v[0]).or_default().push((rec.attr, v[1]));
                }
            }
        } else if let Some(k) = name.strip_prefix(".nv.info.") {
            per_kernel_info.insert(k.to_string(), parse_nv_info(s.data()?, offset)?);
        }
    }
    let section_by_name: HashMap<String, SectionIndex> = file
        .sections()
        .filter_map(|s| Some((s.name().ok()?.to_string(), s.index())))
        .collect();
    let mut kernels = Vec::new();
    // Each entry name once (the first symbol of a name wins): a hostile file naming one huge
    // string from 100,000 symbols costs one copy and one demangling, not 100,000.
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for sym in file.symbols() {
        let other = sym.elf_symbol().st_other();
        if sym.elf_symbol().st_type() != elf::STT_FUNC || other & STO_CUDA_ENTRY == 0 {
            continue;
        }
        let raw = sym.name()?;
        if raw.len() > MAX_SYMBOL_NAME_BYTES {
            return Err(crate::error::malformed(
                sym.elf_symbol().st_name(LE) as u64,
                format!(
                    "a kernel symbol name of at most {MAX_SYMBOL_NAME_BYTES} bytes, not {}",
                    raw.len()
                ),
            ));
        }
        if !seen.insert(raw) {
            continue;
        }
        let name = raw.to_string();
        let mut r = CodeResources::default();
        let mut k = KernelInfo {
            symbol: name.clone(),
            demangled: demangle(&name),
            ..KernelInfo::default()
        };
        if let Some(&idx) = section_by_name.get(&format!(".text.{name}")) {
            let text = file.section_by_index(idx)?;
            let sh = text.elf_section_header();
            r.registers = Some(sh.sh_info(LE) >> 24);
            r.barriers = Some(((sh.sh_flags(LE) >> 20) & 0x1f) as u32);
            let bytes = text.data()?;
            k.code_size = Some(bytes.len() as u64);
            k.code_sha256 = Some(sha256_hex(bytes));
        }
        if let Some(&idx) = section_by_name.get(&format!(".nv.shared.{name}")) {
            r.shared_bytes = Some(file.section_by_index(idx)?.size());
        } else {
            r.shared_bytes = Some(0);
        }
        // Local memory outside the stack (cuobjdump's LOCAL): the `.nv.local.NAME` section,
        // which ABI-compiled code does not have; locals on the stack are in the frame.
        r.local_bytes = Some(match section_by_name.get(&format!(".nv.local.{name}")) {
            Some(&idx) => file.section_by_index(idx)?.size(),
            None => 0,
        });
        if let Some(&idx) = section_by_name.get(&format!(".nv.constant0.{name}")) {
            r.const0_bytes = Some(file.section_by_index(idx)?.size());
        }
        for &(attr, v) in by_symbol
            .get(&(sym.index().0 as u32))
            .map(Vec::as_slice)
            .unwrap_or(&[])
        {
            match attr {
                EIATTR_REGCOUNT => r.registers = Some(v),
                EIATTR_FRAME_SIZE => r.frame_bytes = Some(u64::from(v)),
                EIATTR_MAX_STACK_SIZE => r.stack_bytes = Some(u64::from(v)),
                EIATTR_MIN_STACK_SIZE => {
                    r.stack_bytes.get_or_insert(u64::from(v));
                }
                _ => {}
            }
        }
        for rec in per_kernel_info.get(&name).map(Vec::as_slice).unwrap_or(&[]) {
            let v = rec.value.u32s();
            match rec.attr {
                EIATTR_MAX_THREADS | EIATTR_REQNTID if v.len() == 3 => {
                    r.max_threads = v.iter().try_fold(1u32, |n, &x| n.checked_mul(x))
                }
                EIATTR_NUM_BARRIERS => r.barriers = v.first().copied(),
                EIATTR_CUDA_API_VERSION => {
                    facts.insert(
                        "cuda_api_version".into(),
                        v.first().map(u32::to_string).unwrap_or_default(),
                    );
                }
                EIATTR_FRAME_SIZE if !v.is_empty() => {
                    r.frame_bytes = v.last().map(|&x| u64::from(x))
                }
                _ => {}
            }
        }
        k.param_sizes = param_sizes(per_kernel_info.get(&name).map(Vec::as_slice));
        r.frame_bytes.get_or_insert(0);
        r.stack_bytes.get_or_insert(0);
        k.resources = r;
        kernels.push(k);
    }
    Ok(CodeObject {
        label: label.to_string(),
        kind: ObjectKind::Cubin,
        arch: Some(arch_with(e_flags, abi, arch_specific)),
        facts,
        kernels,
        bytes: Some(data.to_vec()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal CUDA ELF (EM_CUDA, sm_90) holding one kernel entry symbol named `name`,
    /// written field by field (the `object` crate here reads only).
    fn cuda_elf(name: &str) -> Vec<u8> {
        fn u16le(v: &mut Vec<u8>, x: u16) {
            v.extend_from_slice(&x.to_le_bytes());
        }
        fn u32le(v: &mut Vec<u8>, x: u32) {
            v.extend_from_slice(&x.to_le_bytes());
        }
        fn u64le(v: &mut Vec<u8>, x: u64) {
            v.extend_from_slice(&x.to_le_bytes());
        }
        let shstrtab = b"\0.shstrtab\0.strtab\0.symtab\0.text.k\0".to_vec();
        let mut strtab = vec![0u8];
        strtab.extend_from_slice(name.as_bytes());
        strtab.push(0);
        let mut symtab = vec![0u8; 24];
        u32le(&mut symtab, 1); // st_name
        symtab.push(0x12); // STB_GLOBAL, STT_FUNC
        symtab.push(STO_CUDA_ENTRY);
        u16le(&mut symtab, 4); // .text.k
        u64le(&mut symtab, 0);
        u64le(&mut symtab, 16);
        let text = vec![0u8; 16];
        let mut body = Vec::new();
        let mut offsets = Vec::new();
        for part in [&shstrtab, &strtab, &symtab, &text] {
            while body.len() % 8 != 0 {
                body.push(0);
            }
            offsets.push(64 + body.len() as u64);
            body.extend_from_slice(part);
        }
        while body.len() % 8 != 0 {
            body.push(0);
        }
        let shoff = 64 + body.len() as u64;
        let mut elf = vec![
            0x7f, b'E', b'L', b'F', 2, 1, 1, 0x33, 7, 0, 0, 0, 0, 0, 0, 0,
        ];
        u16le(&mut elf, 2); // e_type
        u16le(&mut elf, EM_CUDA);
        u32le(&mut elf, 1);
        u64le(&mut elf, 0); // e_entry
        u64le(&mut elf, 0); // e_phoff
        u64le(&mut elf, shoff);
        u32le(&mut elf, 0x0600_5a04); // sm_90
        u16le(&mut elf, 64);
        u16le(&mut elf, 56);
        u16le(&mut elf, 0);
        u16le(&mut elf, 64);
        u16le(&mut elf, 5); // sections
        u16le(&mut elf, 1); // .shstrtab
        elf.extend_from_slice(&body);
        // (name, type, offset, size, link, info, entsize)
        let headers: [(u32, u32, u64, u64, u32, u32, u64); 5] = [
            (0, 0, 0, 0, 0, 0, 0),
            (1, 3, offsets[0], shstrtab.len() as u64, 0, 0, 0),
            (11, 3, offsets[1], strtab.len() as u64, 0, 0, 0),
            (19, 2, offsets[2], symtab.len() as u64, 2, 1, 24),
            (27, 1, offsets[3], text.len() as u64, 0, 0, 0),
        ];
        for (name, ty, off, size, link, info, entsize) in headers {
            u32le(&mut elf, name);
            u32le(&mut elf, ty);
            u64le(&mut elf, if ty == 1 { 6 } else { 0 }); // SHF_ALLOC | SHF_EXECINSTR
            u64le(&mut elf, 0);
            u64le(&mut elf, off);
            u64le(&mut elf, size);
            u32le(&mut elf, link);
            u32le(&mut elf, info);
            u64le(&mut elf, 8);
            u64le(&mut elf, entsize);
        }
        elf
    }

    #[test]
    fn a_kernel_name_longer_than_64_kib_is_malformed_input() {
        // The hand-made file is a cubin the reader takes: one kernel, its name whole.
        let ok = read("k.cubin", &cuda_elf("_Z6kernelPf")).expect("a valid cubin");
        assert_eq!(ok.kernels.len(), 1);
        assert_eq!(ok.kernels[0].symbol, "_Z6kernelPf");
        let at_cap = "k".repeat(MAX_SYMBOL_NAME_BYTES);
        assert_eq!(
            read("k.cubin", &cuda_elf(&at_cap))
                .expect("at the cap")
                .kernels[0]
                .symbol
                .len(),
            MAX_SYMBOL_NAME_BYTES
        );
        let e = read("k.cubin", &cuda_elf(&"k".repeat(MAX_SYMBOL_NAME_BYTES + 1)))
            .expect_err("over the cap")
            .to_string();
        assert!(
            e.contains("k.cubin") && e.contains("at most 65536 bytes, not 65537"),
            "{e}"
        );
    }

    #[test]
    fn both_e_flags_layouts() {
        assert_eq!(arch(0x004b054b, 7), "sm_75");
        assert_eq!(arch(0x06005a04, 8), "sm_90");
        assert_eq!(arch(0x005a0d5a, 7), "sm_90a");
        assert_eq!(arch(0x06006402, 8), "sm_100");
    }

    #[test]
    fn nv_info_records() {
        // REGCOUNT sym 0x25 = 24, then an HVAL MAXREG_COUNT 0xff, then NVAL.
        let data = [
            0x04, 0x2f, 0x08, 0x00, 0x25, 0, 0, 0, 0x18, 0, 0, 0, 0x03, 0x1b, 0xff, 0x00, 0x01,
            0x04, 0, 0,
        ];
        let recs = parse_nv_info(&data, 0).expect("parses");
        assert_eq!(
            recs[0],
            NvInfo {
                attr: 0x2f,
                value: NvValue::Bytes(vec![0x25, 0, 0, 0, 0x18, 0, 0, 0])
            }
        );
        assert_eq!(
            recs[1],
            NvInfo {
                attr: 0x1b,
                value: NvValue::Half(0xff)
            }
        );
        assert_eq!(recs[2].value, NvValue::None);
        assert!(parse_nv_info(&[0x04, 0x2f, 0x40, 0x00, 1], 100).is_err());
    }
}
