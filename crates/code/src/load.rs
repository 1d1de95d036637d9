//! Loading any supported input: detection by content, container extraction, disassembly.

use crate::classes::Isa;
use crate::codeobj::{demangle, CodeObject, KernelInfo, ObjectKind};
use crate::disasm::{self, Functions};
use crate::error::{Error, Result};
use crate::{cubin, fatbin, hsaco, offload_bundle};
use kernelab_model::Location;
use object::read::elf::{ElfFile64, FileHeader};
use object::LittleEndian as LE;
use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::Path;

/// What to do besides reading resources.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Run the vendor disassembler when it is installed, to count instruction classes.
    pub disassemble: bool,
    /// Most bytes the compressed entries of one file may inflate to (default
    /// [`kernelab_model::DEFAULT_MAX_DECOMPRESSED`], 4 GiB).
    pub max_decompressed: Option<u64>,
}

impl LoadOptions {
    /// The decompression cap in effect.
    pub fn max_decompressed(&self) -> u64 {
        self.max_decompressed
            .unwrap_or(kernelab_model::DEFAULT_MAX_DECOMPRESSED)
    }
}

/// Largest code-object file read (its bytes are held in memory).
pub const MAX_FILE_BYTES: u64 = 4 << 30;

fn machine(data: &[u8]) -> Option<u16> {
    let f = ElfFile64::<LE>::parse(data).ok()?;
    Some(f.elf_header().e_machine(LE))
}

/// Loads one file: a cubin, HSACO, fatbin, offload bundle, host binary with embedded device
/// code, or a disassembly text dump. Containers give one code object per device entry.
/// A FIFO, directory or device is refused before it is opened.
pub fn load_file(path: &Path, options: &LoadOptions) -> Result<Vec<CodeObject>> {
    load_bytes(&path.display().to_string(), &read_file(path)?, options)
}

/// The bytes of a regular file of at most [`MAX_FILE_BYTES`].
fn read_file(path: &Path) -> Result<Vec<u8>> {
    let file = kernelab_model::open_regular(path).map_err(|e| Error::io(path, e))?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    if len > MAX_FILE_BYTES {
        return Err(Error::Malformed {
            location: Location::default().with_path(path),
            expected: format!("a code object of at most {MAX_FILE_BYTES} bytes, not {len}"),
        });
    }
    let mut data = Vec::new();
    data.try_reserve_exact(len as usize).map_err(|_| {
        Error::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::OutOfMemory,
                format!("cannot allocate {len} bytes"),
            ),
        )
    })?;
    std::io::Read::read_to_end(&mut file.take(MAX_FILE_BYTES), &mut data)
        .map_err(|e| Error::io(path, e))?;
    Ok(data)
}

/// Loads bytes (see [`load_file`]); `label` names the input in results.
pub fn load_bytes(label: &str, data: &[u8], options: &LoadOptions) -> Result<Vec<CodeObject>> {
    load(label, data, options).map_err(|e| e.with_path(label))
}

fn load(label: &str, data: &[u8], options: &LoadOptions) -> Result<Vec<CodeObject>> {
    if data.is_empty() {
        return Err(unknown("the file is empty"));
    }
    match machine(data) {
        Some(cubin::EM_CUDA) => {
            return Ok(vec![with_disassembly(cubin::read(label, data)?, options)?])
        }
        Some(hsaco::EM_AMDGPU) => {
            return Ok(vec![with_disassembly(hsaco::read(label, data)?, options)?])
        }
        _ => {}
    }
    if data.starts_with(crate::aks2::MAGIC) {
        let mut out = Vec::new();
        for e in crate::aks2::entries(data, options.max_decompressed())? {
            if machine(&e.data) != Some(hsaco::EM_AMDGPU) {
                return Err(crate::error::malformed(
                    0,
                    format!("an AMDGPU HSACO as archive entry {:?}", e.name),
                ));
            }
            let mut o = hsaco::read(&format!("{label}#{}", e.name), &e.data)?;
            o.facts.insert(
                "container".into(),
                format!(
                    "aks2 entry {} ({} threads per block, {} B shared memory)",
                    e.name, e.threads, e.shared_memory
                ),
            );
            out.push(with_disassembly(o, options)?);
        }
        return Ok(out);
    }
    if let Some(fb) = fatbin::fatbin_bytes(data) {
        let mut out = Vec::new();
        for (i, e) in fatbin::entries_capped(&fb, options.max_decompressed())?
            .into_iter()
            .enumerate()
        {
            if e.kind == fatbin::EntryKind::Elf {
                let mut o = cubin::read(&format!("{label}#{i}"), &e.data)?;
                // The entry header's number has no suffix; the cubin's own target has it.
                let target = o.arch.clone().unwrap_or_else(|| format!("sm_{}", e.arch));
                o.facts.insert(
                    "container".into(),
                    format!(
                        "fatbin entry {i} ({target}){}",
                        if e.compressed { ", compressed" } else { "" }
                    ),
                );
                out.push(with_disassembly(o, options)?);
            }
        }
        return Ok(out);
    }
    if let Some(b) = offload_bundle::bundle_bytes(data) {
        let mut out = Vec::new();
        let bundles = offload_bundle::split(&b);
        let several = bundles.len() > 1;
        // The decompression limit counts every bundle of the file together.
        let mut budget = options.max_decompressed();
        for (i, bundle) in bundles.into_iter().enumerate() {
            let entries = offload_bundle::entries_capped(bundle, budget).map_err(|e| {
                if several {
                    e.with_path(format!("{label}#bundle{i}"))
                } else {
                    e
                }
            })?;
            for e in entries {
                budget = budget.saturating_sub(e.data.len() as u64);
                if machine(&e.data) == Some(hsaco::EM_AMDGPU) {
                    let (name, container) = if several {
                        (
                            format!("{label}#bundle{i}:{}", e.id),
                            format!("offload bundle {i} entry {}", e.id),
                        )
                    } else {
                        (
                            format!("{label}#{}", e.id),
                            format!("offload bundle entry {}", e.id),
                        )
                    };
                    let mut o = hsaco::read(&name, &e.data)?;
                    o.facts.insert("container".into(), container);
                    out.push(with_disassembly(o, options)?);
                }
            }
        }
        return Ok(out);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        if let Some(o) = from_text(label, text) {
            return Ok(vec![o]);
        }
    }
    Err(unknown(
        "expected a cubin, HSACO, fatbin, offload bundle, host object with .nv_fatbin or .hip_fatbin, Windows image with .hip_fat, AOTriton .aks2 archive, or SASS / llvm-objdump / compiler assembly text",
    ))
}

fn unknown(detail: &str) -> Error {
    Error::Unknown {
        location: Location::default(),
        detail: detail.to_string(),
    }
}

/// A code object built from a disassembly text dump.
fn from_text(label: &str, text: &str) -> Option<CodeObject> {
    let (isa, functions, tool) = if text.contains("Function : ") || text.contains(".headerflags") {
        (
            Isa::Sass,
            disasm::parse_sass(text),
            "cuobjdump/nvdisasm text",
        )
    } else if text.contains("file format elf64-amdgpu") {
        (
            Isa::Amdgcn,
            disasm::parse_objdump(text, None),
            "llvm-objdump text",
        )
    } else if text.contains(".amdgcn_target") || text.contains(".amdhsa_kernel") {
        (
            Isa::Amdgcn,
            disasm::parse_compiler_asm(text),
            "compiler assembly",
        )
    } else {
        return None;
    };
    if functions.is_empty() {
        return None;
    }
    let arch = text.lines().find_map(|l| {
        let l = l.trim();
        l.strip_prefix("arch = ").map(str::to_string).or_else(|| {
            l.strip_prefix(".amdgcn_target")
                .map(|t| t.trim().trim_matches('"'))
                .and_then(crate::target_id::processor)
        })
    });
    let mut facts = BTreeMap::new();
    facts.insert("disassembly".into(), tool.to_string());
    // Compiler assembly carries the kernels' metadata as YAML: the resources a built code object
    // would have.
    let metadata = if tool == "compiler assembly" {
        disasm::asm_metadata(text)
    } else {
        std::collections::HashMap::new()
    };
    let mut o = CodeObject {
        label: label.to_string(),
        kind: ObjectKind::Disassembly,
        arch,
        facts,
        kernels: Vec::new(),
        bytes: None,
    };
    for (name, f) in functions {
        let mut k = KernelInfo {
            symbol: name.clone(),
            demangled: demangle(&name),
            ..KernelInfo::default()
        };
        if let Some(meta) = metadata.get(&name) {
            k.resources = crate::hsaco::metadata_resources(|key| meta.get(key).copied());
        }
        k.classes = Some(f.classes(isa));
        k.instructions = Some(f.instructions);
        k.mnemonics = Some(f.mnemonics);
        o.kernels.push(k);
    }
    Some(o)
}

/// Attaches per-function counts to the kernels of `o` (by symbol, or demangled name).
pub(crate) fn attach(o: &mut CodeObject, functions: &Functions, isa: Isa) {
    for k in &mut o.kernels {
        let found = functions
            .iter()
            .find(|(n, _)| n == &k.symbol || Some(n.as_str()) == k.demangled.as_deref())
            .or_else(|| {
                functions.iter().find(|(n, _)| {
                    demangle(n).as_deref() == k.demangled.as_deref() && k.demangled.is_some()
                })
            });
        if let Some((_, f)) = found {
            k.classes = Some(f.classes(isa));
            k.instructions = Some(f.instructions);
            k.mnemonics = Some(f.mnemonics.clone());
        }
    }
}

fn with_disassembly(mut o: CodeObject, options: &LoadOptions) -> Result<CodeObject> {
    if !options.disassemble {
        return Ok(o);
    }
    let (Some(arch), Some(bytes)) = (o.arch.clone(), o.bytes.as_ref()) else {
        return Ok(o);
    };
    // Tools read files: write the (possibly extracted) object to a temporary file.
    // A private folder removed when `dir` is dropped, on every path out of this function.
    let dir = tempfile::Builder::new()
        .prefix("kernelab-code-")
        .tempdir()
        .map_err(|source| Error::TempFile {
            path: std::env::temp_dir(),
            source,
        })?;
    let tmp = dir.path().join("object.bin");
    std::fs::write(&tmp, bytes).map_err(|source| Error::TempFile {
        path: tmp.clone(),
        source,
    })?;
    let result = disasm::disassemble(&tmp, &arch);
    drop(dir);
    let result = match result {
        // Resources do not need a disassembler: say why there is no disassembly, go on.
        Err(Error::Tool { message, .. }) => {
            o.facts
                .insert("disassembler".into(), format!("unavailable: {message}"));
            return Ok(o);
        }
        other => other?,
    };
    match result {
        Some(d) => {
            let isa = if arch.starts_with("gfx") {
                Isa::Amdgcn
            } else {
                Isa::Sass
            };
            let functions = if isa == Isa::Amdgcn {
                disasm::parse_objdump(&d.text, Some(&hsaco::function_ranges(bytes)))
            } else {
                disasm::parse_sass(&d.text)
            };
            attach(&mut o, &functions, isa);
            o.facts.insert("disassembler".into(), d.tool);
        }
        None => {
            o.facts.insert(
                "disassembler".into(),
                if arch.starts_with("gfx") {
                    format!("none: install llvm-objdump from LLVM {} to count instruction classes", if arch == "gfx950" { "22" } else { "19 or 22" })
                } else {
                    "none: cuobjdump/nvdisasm not installed; give a `cuobjdump -sass` text dump to count instruction classes".into()
                },
            );
        }
    }
    Ok(o)
}
