//! Whether two builds carry the same machine code once what does not execute is set aside:
//! build ids, note, comment and debug sections, symbol names and string tables. What is
//! compared is each kernel's executable bytes (a cubin's `.text.<kernel>` section, an HSACO's
//! kernel function inside `.text`), its launch resources (registers, shared memory, the AMD
//! kernel descriptor) and target, and every executable section together (device functions the kernels
//! call). See `docs/formats.md` (code objects).

use crate::codeobj::{CodeObject, KernelInfo, ObjectKind};
use object::read::elf::{ElfFile64, SectionHeader};
use object::{LittleEndian as LE, Object, ObjectSection};

/// What the comparison of one kernel (or of the other executable code) found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sameness {
    /// The same executable bytes and launch resources.
    Identical {
        /// Executable bytes compared.
        bytes: u64,
    },
    /// The machine code or the launch resources differ.
    Differs {
        /// First differing byte of the kernel's code (from its start), when the bytes differ.
        offset: Option<u64>,
        /// What differs, in words.
        detail: String,
    },
    /// Not decidable (a disassembly text has no bytes, a kernel has no code in the object).
    Unknown {
        /// Why.
        reason: String,
    },
}

/// One kernel's comparison (or `(other executable code)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSameness {
    /// The baseline's symbol.
    pub symbol: String,
    /// The candidate's symbol when it is another name (a rename).
    pub cand_symbol: Option<String>,
    /// The finding.
    pub sameness: Sameness,
}

/// Pseudo-symbol of the executable code outside the kernels (device functions).
pub const OTHER_CODE: &str = "(other executable code)";

/// The bytes of kernel `k` of `o`: a cubin's `.text.<symbol>` section, an HSACO's function
/// symbol range inside its executable section.
fn kernel_bytes(o: &CodeObject, k: &KernelInfo) -> Option<Vec<u8>> {
    let data = o.bytes.as_deref()?;
    let file = ElfFile64::<LE>::parse(data).ok()?;
    match o.kind {
        ObjectKind::Cubin => {
            let s = file.section_by_name(&format!(".text.{}", k.symbol))?;
            Some(s.data().ok()?.to_vec())
        }
        ObjectKind::Hsaco => {
            let &(start, end) = crate::hsaco::function_ranges(data).get(&k.symbol)?;
            let s = executable(&file)
                .find(|s| start >= s.address() && end <= s.address().saturating_add(s.size()))?;
            let d = s.data().ok()?;
            let from = usize::try_from(start - s.address()).ok()?;
            let to = usize::try_from(end - s.address()).ok()?;
            d.get(from..to).map(<[u8]>::to_vec)
        }
        _ => None,
    }
}

/// The executable sections (`SHF_EXECINSTR`) of `file`, in section order.
fn executable<'a, 'd>(
    file: &'a ElfFile64<'d, LE>,
) -> impl Iterator<Item = object::read::elf::ElfSection64<'d, 'a, LE>> + 'a {
    file.sections().filter(|s| {
        s.elf_section_header().sh_flags(LE) & u64::from(object::elf::SHF_EXECINSTR) != 0
    })
}

/// Every executable section's bytes of `o`, one after another.
fn all_code(o: &CodeObject) -> Option<Vec<u8>> {
    let data = o.bytes.as_deref()?;
    let file = ElfFile64::<LE>::parse(data).ok()?;
    let mut out = Vec::new();
    for s in executable(&file) {
        out.extend_from_slice(s.data().ok()?);
    }
    Some(out)
}

/// The first offset at which `a` and `b` differ (the shorter one's length when one is a prefix
/// of the other), `None` when they are equal.
pub fn first_difference(a: &[u8], b: &[u8]) -> Option<u64> {
    if a == b {
        return None;
    }
    let at = a.iter().zip(b).position(|(x, y)| x != y);
    Some(at.unwrap_or(a.len().min(b.len())) as u64)
}

fn bytes_sameness(b: &[u8], c: &[u8]) -> Sameness {
    match first_difference(b, c) {
        None => Sameness::Identical {
            bytes: b.len() as u64,
        },
        Some(at) => Sameness::Differs {
            offset: Some(at),
            detail: format!(
                "code differs at byte {at:#x} ({} → {} bytes)",
                b.len(),
                c.len()
            ),
        },
    }
}

/// Compares one kernel of each side.
fn kernel_sameness(bo: &CodeObject, b: &KernelInfo, co: &CodeObject, c: &KernelInfo) -> Sameness {
    let (Some(bb), Some(cb)) = (kernel_bytes(bo, b), kernel_bytes(co, c)) else {
        return Sameness::Unknown {
            reason: "no machine code bytes to compare (a disassembly text, or no code section)"
                .into(),
        };
    };
    // The same bytes mean other instructions on another target (gfx942 and gfx950 builds of
    // one aiter kernel are byte-identical).
    if bo.arch != co.arch {
        return Sameness::Differs {
            offset: None,
            detail: format!(
                "another target ({} → {})",
                bo.arch.as_deref().unwrap_or("unknown"),
                co.arch.as_deref().unwrap_or("unknown")
            ),
        };
    }
    let same = bytes_sameness(&bb, &cb);
    if !matches!(same, Sameness::Identical { .. }) {
        return same;
    }
    if b.resources != c.resources {
        return Sameness::Differs {
            offset: None,
            detail: "same code bytes, other launch resources (registers, shared memory, stack)"
                .into(),
        };
    }
    if b.descriptor != c.descriptor {
        return Sameness::Differs {
            offset: None,
            detail: "same code bytes, another kernel descriptor".into(),
        };
    }
    same
}

/// The kernels of one side, each with its code object.
type Side<'a> = Vec<(&'a CodeObject, &'a KernelInfo)>;

/// The kernels of `objs`, each with its code object.
fn side(objs: &[CodeObject]) -> Side<'_> {
    objs.iter()
        .flat_map(|o| o.kernels.iter().map(move |k| (o, k)))
        .collect()
}

/// Pairs the kernels of both sides: by symbol; a side's unmatched kernels pair with the other
/// side's unmatched ones in order when there are as many (renames). The rest stay unpaired.
#[allow(clippy::type_complexity)]
fn pairs(
    base: &[(&CodeObject, &KernelInfo)],
    cand: &[(&CodeObject, &KernelInfo)],
) -> (Vec<(usize, usize)>, Vec<usize>, Vec<usize>) {
    let mut out = Vec::new();
    let mut cand_used = vec![false; cand.len()];
    let mut base_left = Vec::new();
    for (i, (_, b)) in base.iter().enumerate() {
        match (0..cand.len()).find(|&j| !cand_used[j] && cand[j].1.symbol == b.symbol) {
            Some(j) => {
                cand_used[j] = true;
                out.push((i, j));
            }
            None => base_left.push(i),
        }
    }
    let cand_left: Vec<usize> = (0..cand.len()).filter(|&j| !cand_used[j]).collect();
    if base_left.len() == cand_left.len() {
        out.extend(base_left.iter().copied().zip(cand_left.iter().copied()));
        return (out, Vec::new(), Vec::new());
    }
    (out, base_left, cand_left)
}

/// Compares the machine code of two builds (each may hold several code objects), kernel by
/// kernel, then the executable code outside the kernels. Kernels pair by symbol, renamed ones
/// in order; a kernel on one side only is a difference.
pub fn same_code(base: &[CodeObject], cand: &[CodeObject]) -> Vec<KernelSameness> {
    let (bs, cs) = (side(base), side(cand));
    let (paired, only_base, only_cand) = pairs(&bs, &cs);
    let mut out: Vec<KernelSameness> = paired
        .into_iter()
        .map(|(i, j)| {
            let ((bo, b), (co, c)) = (bs[i], cs[j]);
            KernelSameness {
                symbol: b.symbol.clone(),
                cand_symbol: (c.symbol != b.symbol).then(|| c.symbol.clone()),
                sameness: kernel_sameness(bo, b, co, c),
            }
        })
        .collect();
    let alone = |symbol: &str, side: &str| KernelSameness {
        symbol: symbol.to_string(),
        cand_symbol: None,
        sameness: Sameness::Differs {
            offset: None,
            detail: format!("only in the {side}"),
        },
    };
    out.extend(
        only_base
            .iter()
            .map(|&i| alone(&bs[i].1.symbol, "baseline")),
    );
    out.extend(
        only_cand
            .iter()
            .map(|&j| alone(&cs[j].1.symbol, "candidate")),
    );
    // Device functions: every executable section of every object, in order.
    let code = |objs: &[CodeObject]| -> Option<Vec<u8>> {
        let mut all = Vec::new();
        for o in objs {
            all.extend(all_code(o)?);
        }
        Some(all)
    };
    if let (Some(b), Some(c)) = (code(base), code(cand)) {
        if b != c
            && out
                .iter()
                .all(|k| matches!(k.sameness, Sameness::Identical { .. }))
        {
            out.push(KernelSameness {
                symbol: OTHER_CODE.into(),
                cand_symbol: None,
                sameness: bytes_sameness(&b, &c),
            });
        }
    }
    out
}

/// One line on `found`: `identical machine code: any difference is noise`, or what differs
/// (the first kernel that does, and where), or why it could not be told.
pub fn sameness_line(found: &[KernelSameness]) -> String {
    if found.is_empty() {
        return "machine code not compared: no kernel found".into();
    }
    let differing: Vec<(&KernelSameness, &str)> = found
        .iter()
        .filter_map(|k| match &k.sameness {
            Sameness::Differs { detail, .. } => Some((k, detail.as_str())),
            _ => None,
        })
        .collect();
    if let Some(&(k, detail)) = differing.first() {
        let renamed = k
            .cand_symbol
            .as_deref()
            .map(|c| format!(" (candidate {c})"))
            .unwrap_or_default();
        let more = match differing.len() - 1 {
            0 => String::new(),
            n => format!("; {n} more differ"),
        };
        return format!(
            "machine code differs: {}{renamed}: {detail}{more}",
            k.symbol
        );
    }
    if let Some(Sameness::Unknown { reason }) = found
        .iter()
        .map(|k| &k.sameness)
        .find(|s| matches!(s, Sameness::Unknown { .. }))
    {
        return format!("machine code not compared: {reason}");
    }
    let bytes: u64 = found
        .iter()
        .map(|k| match k.sameness {
            Sameness::Identical { bytes } => bytes,
            _ => 0,
        })
        .sum();
    format!(
        "identical machine code: any difference is noise ({} kernel{}, {bytes} bytes; names, notes and debug sections set aside)",
        found.len(),
        if found.len() == 1 { "" } else { "s" }
    )
}

/// Whether every kernel of `found` is identical (and there is one at least).
pub fn all_identical(found: &[KernelSameness]) -> bool {
    !found.is_empty()
        && found
            .iter()
            .all(|k| matches!(k.sameness, Sameness::Identical { .. }))
}
