//! AMD HSACO code objects: the `NT_AMDGPU_METADATA` msgpack note (code object v3+), the target
//! from `e_flags`, each kernel's 64-byte descriptor, and its code bytes. See
//! `docs/formats.md` (code objects).

use crate::codeobj::{demangle, sha256_hex, CodeObject, CodeResources, KernelInfo, ObjectKind};
use crate::error::{malformed, Error, Result};
use kernelab_model::Location;
use object::read::elf::{ElfFile64, FileHeader, NoteIterator, SectionHeader};
use object::{LittleEndian as LE, Object, ObjectSection, ObjectSymbol};
use serde_json::Value;
use std::collections::BTreeMap;

/// `e_machine` of AMDGPU ELF files.
pub const EM_AMDGPU: u16 = 224;
const NT_AMDGPU_METADATA: u32 = 32;
/// `NT_AMD_HSA_CODE_OBJECT_VERSION` (owner `AMD`): major and minor version, code objects v1–v2.
const NT_AMD_HSA_CODE_OBJECT_VERSION: u32 = 1;

/// The gfx target of an `EF_AMDGPU_MACH` value (LLVM's `EF_AMDGPU_MACH_AMDGCN_*`; checked
/// against llvm-readelf-19, which knows all but gfx950, gfx1153 and gfx9-4-generic).
pub fn mach_name(mach: u32) -> Option<&'static str> {
    Some(match mach {
        0x20 => "gfx600",
        0x21 => "gfx601",
        0x22 => "gfx700",
        0x23 => "gfx701",
        0x24 => "gfx702",
        0x25 => "gfx703",
        0x26 => "gfx704",
        0x28 => "gfx801",
        0x29 => "gfx802",
        0x2a => "gfx803",
        0x2b => "gfx810",
        0x2c => "gfx900",
        0x2d => "gfx902",
        0x2e => "gfx904",
        0x2f => "gfx906",
        0x30 => "gfx908",
        0x31 => "gfx909",
        0x32 => "gfx90c",
        0x33 => "gfx1010",
        0x34 => "gfx1011",
        0x35 => "gfx1012",
        0x36 => "gfx1030",
        0x37 => "gfx1031",
        0x38 => "gfx1032",
        0x39 => "gfx1033",
        0x3a => "gfx602",
        0x3b => "gfx705",
        0x3c => "gfx805",
        0x3d => "gfx1035",
        0x3e => "gfx1034",
        0x3f => "gfx90a",
        0x40 => "gfx940",
        0x41 => "gfx1100",
        0x42 => "gfx1013",
        0x43 => "gfx1150",
        0x44 => "gfx1103",
        0x45 => "gfx1036",
        0x46 => "gfx1101",
        0x47 => "gfx1102",
        0x48 => "gfx1200",
        0x4a => "gfx1151",
        0x4b => "gfx941",
        0x4c => "gfx942",
        0x4e => "gfx1201",
        0x4f => "gfx950",
        0x51 => "gfx9-generic",
        0x52 => "gfx10-1-generic",
        0x53 => "gfx10-3-generic",
        0x54 => "gfx11-generic",
        0x55 => "gfx1152",
        0x58 => "gfx1153",
        0x59 => "gfx12-generic",
        0x5f => "gfx9-4-generic",
        _ => return None,
    })
}

fn u(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

/// Reads the kernel descriptor fields kernelab reports (docs/formats/amd.md §2.4).
fn descriptor(kd: &[u8]) -> BTreeMap<String, u64> {
    let u32_at = |o: usize| {
        kd.get(o..o + 4)
            .map(|b| u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
            .unwrap_or(0)
    };
    let mut m = BTreeMap::new();
    m.insert("group_segment_fixed_size".into(), u32_at(0));
    m.insert("private_segment_fixed_size".into(), u32_at(4));
    m.insert("kernarg_size".into(), u32_at(8));
    m.insert("compute_pgm_rsrc3".into(), u32_at(44));
    m.insert("compute_pgm_rsrc1".into(), u32_at(48));
    m.insert("compute_pgm_rsrc2".into(), u32_at(52));
    m
}

/// Reads an HSACO; errors name it by `label`.
pub fn read(label: &str, data: &[u8]) -> Result<CodeObject> {
    read_elf(label, data).map_err(|e| e.with_path(label))
}

fn read_elf(label: &str, data: &[u8]) -> Result<CodeObject> {
    let file = ElfFile64::<LE>::parse(data)?;
    let header = file.elf_header();
    let e_flags = header.e_flags(LE);
    let abi = header.e_ident().abi_version;
    let mut facts = BTreeMap::new();
    facts.insert("e_flags".into(), format!("{e_flags:#x}"));
    // ELFABIVERSION_AMDGPU_HSA_V3 = 1 → code object v3, … V6 = 4; 0 is v2 or v1, told apart by
    // the `AMD` version note (read before anything else: v1 notes are not v3+ notes).
    let version = match (abi, legacy_version(&file, data)) {
        (0, Some((major, minor))) => {
            if major < 2 {
                return Err(Error::Unsupported {
                    location: Location::default(),
                    detail: format!(
                        "AMD code object v{major}.{minor} (NT_AMD_HSA_CODE_OBJECT_VERSION note) is not supported; kernelab reads code objects v2 to v6"
                    ),
                });
            }
            major
        }
        _ => u32::from(abi) + 2,
    };
    facts.insert("code_object_version".into(), version.to_string());
    let mut arch = mach_name(e_flags & 0xff).map(str::to_string);
    let mut metadata: Option<Value> = None;
    for s in file.elf_section_table().iter() {
        if let Some(mut notes) = s
            .notes(LE, data)
            .map_err(|e| malformed(s.sh_offset(LE), format!("ELF notes ({e})")))?
        {
            while let Some(note) = next_note(&mut notes, s.sh_offset(LE))? {
                if note.n_type(LE) == NT_AMDGPU_METADATA && note.name() == b"AMDGPU" {
                    let v: Value = rmp_serde::from_slice(note.desc()).map_err(|e| {
                        malformed(s.sh_offset(LE), format!("msgpack AMDGPU metadata ({e})"))
                    })?;
                    metadata = Some(v);
                }
            }
        }
    }
    let mut kernels = Vec::new();
    let meta_kernels: Vec<Value> = metadata
        .as_ref()
        .and_then(|m| m.get("amdhsa.kernels"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(t) = metadata
        .as_ref()
        .and_then(|m| m.get("amdhsa.target"))
        .and_then(Value::as_str)
    {
        facts.insert("target".into(), t.to_string());
        // The metadata's target ID names the processor even where `e_flags` has no name for it;
        // one that does not parse leaves the `e_flags` name and says so.
        match crate::target_id::parse(t) {
            Ok(id) => arch = Some(id.processor),
            Err(e) => {
                facts.insert("target_error".into(), e.to_string());
            }
        }
    }
    let ranges = function_ranges(data);
    // First symbol of each name (as a linear search would find it).
    let mut symbols = std::collections::HashMap::new();
    for s in file.symbols() {
        if let Ok(name) = s.name() {
            symbols.entry(name).or_insert(s);
        }
    }
    let sym_bytes = |name: &str| -> Option<&[u8]> {
        let s = symbols.get(name)?;
        let sec = file.section_by_index(s.section_index()?).ok()?;
        let d = sec.data().ok()?;
        let (start, end) = match ranges.get(name) {
            Some(&(a, b)) => (a, b),
            None => (s.address(), s.address().checked_add(s.size())?),
        };
        let start = usize::try_from(start.checked_sub(sec.address())?).ok()?;
        let end = usize::try_from(end.checked_sub(sec.address())?).ok()?;
        d.get(start..end)
    };
    for k in &meta_kernels {
        let name = k
            .get(".name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let symbol = k
            .get(".symbol")
            .and_then(Value::as_str)
            .unwrap_or(&name)
            .to_string();
        let function = symbol.strip_suffix(".kd").unwrap_or(&symbol).to_string();
        let mut info = KernelInfo {
            symbol: function.clone(),
            demangled: demangle(&function),
            ..KernelInfo::default()
        };
        info.resources = metadata_resources(|key| u(k, key));
        if let Some(kd) = sym_bytes(&symbol) {
            info.descriptor = Some(descriptor(kd));
        }
        if let Some(code) = sym_bytes(&function) {
            info.code_size = Some(code.len() as u64);
            info.code_sha256 = Some(sha256_hex(code));
        }
        kernels.push(info);
    }
    if metadata.is_none() {
        facts.insert(
            "metadata".into(),
            "no NT_AMDGPU_METADATA note (code object v2?)".into(),
        );
    }
    Ok(CodeObject {
        label: label.to_string(),
        kind: ObjectKind::Hsaco,
        arch,
        facts,
        kernels,
        bytes: Some(data.to_vec()),
    })
}

/// Resources from one `amdhsa.kernels` entry of the AMDGPU metadata (`get` reads an integer key
/// such as `.vgpr_count`): the same keys in the msgpack note of a code object and in the YAML
/// `.amdgpu_metadata` block of a compiler `.s` file.
pub(crate) fn metadata_resources(get: impl Fn(&str) -> Option<u64>) -> CodeResources {
    let to32 = |key: &str| get(key).and_then(|x| u32::try_from(x).ok());
    CodeResources {
        registers: to32(".vgpr_count"),
        agprs: to32(".agpr_count"),
        sgprs: to32(".sgpr_count"),
        vgpr_spills: to32(".vgpr_spill_count"),
        sgpr_spills: to32(".sgpr_spill_count"),
        shared_bytes: get(".group_segment_fixed_size"),
        local_bytes: get(".private_segment_fixed_size"),
        kernarg_bytes: get(".kernarg_segment_size"),
        max_threads: to32(".max_flat_workgroup_size"),
        wavefront_size: to32(".wavefront_size"),
        ..CodeResources::default()
    }
}

/// The (major, minor) of the `AMD` `NT_AMD_HSA_CODE_OBJECT_VERSION` note of a code object v1
/// or v2, read leniently (4-byte padding whatever the section's alignment says).
fn legacy_version(file: &ElfFile64<LE>, data: &[u8]) -> Option<(u32, u32)> {
    let u32_at = |d: &[u8], o: usize| -> Option<u32> {
        Some(u32::from_le_bytes(
            d.get(o..o.checked_add(4)?)?.try_into().ok()?,
        ))
    };
    let pad = |n: usize| n.checked_add(3).map(|x| x & !3);
    for s in file.elf_section_table().iter() {
        if s.sh_type(LE) != object::elf::SHT_NOTE {
            continue;
        }
        let Ok(d) = s.data(LE, data) else { continue };
        let mut at = 0usize;
        while let (Some(namesz), Some(descsz), Some(kind)) =
            (u32_at(d, at), u32_at(d, at + 4), u32_at(d, at + 8))
        {
            let name_at = at + 12;
            let desc_at = name_at.checked_add(pad(namesz as usize)?)?;
            let name = d.get(name_at..name_at.checked_add(namesz as usize)?)?;
            if name == b"AMD\0" && kind == NT_AMD_HSA_CODE_OBJECT_VERSION && descsz >= 8 {
                return Some((u32_at(d, desc_at)?, u32_at(d, desc_at + 4)?));
            }
            at = desc_at.checked_add(pad(descsz as usize)?)?;
        }
    }
    None
}

fn next_note<'d>(
    notes: &mut NoteIterator<'d, object::elf::FileHeader64<LE>>,
    offset: u64,
) -> Result<Option<object::read::elf::Note<'d, object::elf::FileHeader64<LE>>>> {
    notes
        .next()
        .map_err(|e| malformed(offset, format!("an ELF note ({e})")))
}

/// Address ranges `[start, end)` of the function symbols of an AMDGPU ELF. A symbol without a
/// size (hand-written assembly often has none) extends to the next function symbol of its
/// section, or the section's end.
pub fn function_ranges(data: &[u8]) -> std::collections::HashMap<String, (u64, u64)> {
    let mut out = std::collections::HashMap::new();
    let Ok(file) = ElfFile64::<LE>::parse(data) else {
        return out;
    };
    let mut funcs: Vec<(u64, u64, String, usize)> = file
        .symbols()
        .filter(|s| s.kind() == object::SymbolKind::Text)
        .filter_map(|s| {
            Some((
                s.address(),
                s.size(),
                s.name().ok()?.to_string(),
                s.section_index()?.0,
            ))
        })
        .collect();
    // By section, then address: the next function of a section is a later entry of its run.
    funcs.sort_by(|a, b| (a.3, a.0, a.1, &a.2).cmp(&(b.3, b.0, b.1, &b.2)));
    // For each entry, the address of the next entry of its section with a larger address
    // (one backward pass, so that many symbols at one address stay linear).
    let mut next_addr: Vec<Option<u64>> = vec![None; funcs.len()];
    let mut later: Option<(usize, u64, Option<u64>)> = None; // (section, address, its next)
    for (i, f) in funcs.iter().enumerate().rev() {
        let next = match later {
            Some((sec, addr, next)) if sec == f.3 => {
                if addr > f.0 {
                    Some(addr)
                } else {
                    next
                }
            }
            _ => None,
        };
        if let Some(slot) = next_addr.get_mut(i) {
            *slot = next;
        }
        later = Some((f.3, f.0, next));
    }
    for ((addr, size, name, sec), next) in funcs.iter().zip(next_addr) {
        let end = if *size > 0 {
            addr.saturating_add(*size)
        } else {
            let sec_end = file
                .section_by_index(object::SectionIndex(*sec))
                .map(|s| s.address().saturating_add(s.size()))
                .unwrap_or(*addr);
            next.unwrap_or(sec_end)
        };
        out.insert(name.clone(), (*addr, end));
    }
    out
}
