//! Diffs between builds: one kernel's instruction classes and resources, and a matrix of many
//! code objects paired by key ("k of N code objects changed").

use crate::codeobj::{CodeObject, CodeResources, KernelInfo};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One compared item: baseline and candidate values (`None` = unavailable).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChangeRow {
    /// What is compared (a class, a mnemonic, a resource).
    pub item: String,
    /// Baseline value.
    pub base: Option<u64>,
    /// Candidate value.
    pub cand: Option<u64>,
}

impl ChangeRow {
    /// True when both are known and differ, or exactly one is known.
    pub fn changed(&self) -> bool {
        self.base != self.cand
    }
}

/// The comparison of one kernel in two builds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KernelDiff {
    /// Kernel symbol (baseline's, when they differ).
    pub symbol: String,
    /// Candidate symbol when it differs from the baseline's.
    pub cand_symbol: Option<String>,
    /// Whether the machine code differs (by SHA-256), when both hashes are known.
    pub code_changed: Option<bool>,
    /// Instruction counts per class, and the total.
    pub classes: Vec<ChangeRow>,
    /// Per-mnemonic counts that differ.
    pub mnemonics: Vec<ChangeRow>,
    /// Resources.
    pub resources: Vec<ChangeRow>,
}

/// The comparison of two builds' kernels.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ObjectDiff {
    /// Kernels present in both.
    pub kernels: Vec<KernelDiff>,
    /// Kernels only in the baseline.
    pub only_base: Vec<String>,
    /// Kernels only in the candidate.
    pub only_cand: Vec<String>,
    /// Spills, scratch or stack growth in the candidate.
    pub callouts: Vec<String>,
}

impl kernelab_model::Body for ObjectDiff {
    const KIND: &'static str = "code_diff";
}

fn resource_rows(
    b: &CodeResources,
    c: &CodeResources,
    bk: &KernelInfo,
    ck: &KernelInfo,
) -> Vec<ChangeRow> {
    let u = |x: Option<u32>| x.map(u64::from);
    let mut rows = vec![
        ("registers (VGPR/regs)", u(b.registers), u(c.registers)),
        ("AGPRs", u(b.agprs), u(c.agprs)),
        ("SGPRs", u(b.sgprs), u(c.sgprs)),
        ("VGPR spills", u(b.vgpr_spills), u(c.vgpr_spills)),
        ("SGPR spills", u(b.sgpr_spills), u(c.sgpr_spills)),
        ("barriers", u(b.barriers), u(c.barriers)),
        ("shared/LDS bytes", b.shared_bytes, c.shared_bytes),
        ("local/scratch bytes", b.local_bytes, c.local_bytes),
        ("stack frame bytes", b.frame_bytes, c.frame_bytes),
        ("stack bytes", b.stack_bytes, c.stack_bytes),
        ("constant bank 0 bytes", b.const0_bytes, c.const0_bytes),
        ("kernarg bytes", b.kernarg_bytes, c.kernarg_bytes),
        ("max threads", u(b.max_threads), u(c.max_threads)),
        ("wavefront size", u(b.wavefront_size), u(c.wavefront_size)),
        ("code bytes", bk.code_size, ck.code_size),
    ];
    rows.retain(|(_, x, y)| x.is_some() || y.is_some());
    rows.into_iter()
        .map(|(i, base, cand)| ChangeRow {
            item: i.to_string(),
            base,
            cand,
        })
        .collect()
}

fn count_rows(
    b: Option<&BTreeMap<String, u64>>,
    c: Option<&BTreeMap<String, u64>>,
    only_changed: bool,
) -> Vec<ChangeRow> {
    if b.is_none() && c.is_none() {
        return Vec::new();
    }
    let keys: BTreeSet<&String> = b
        .into_iter()
        .flat_map(|m| m.keys())
        .chain(c.into_iter().flat_map(|m| m.keys()))
        .collect();
    keys.into_iter()
        .map(|k| ChangeRow {
            item: k.clone(),
            base: b.map(|m| m.get(k).copied().unwrap_or(0)),
            cand: c.map(|m| m.get(k).copied().unwrap_or(0)),
        })
        .filter(|r| !only_changed || r.changed())
        .collect()
}

/// Compares one kernel.
pub fn kernel_diff(b: &KernelInfo, c: &KernelInfo) -> KernelDiff {
    let mut classes = count_rows(b.classes.as_ref(), c.classes.as_ref(), false);
    if b.instructions.is_some() || c.instructions.is_some() {
        classes.push(ChangeRow {
            item: "instructions (total)".into(),
            base: b.instructions,
            cand: c.instructions,
        });
    }
    KernelDiff {
        symbol: b.symbol.clone(),
        cand_symbol: (c.symbol != b.symbol).then(|| c.symbol.clone()),
        code_changed: b
            .code_sha256
            .as_ref()
            .zip(c.code_sha256.as_ref())
            .map(|(x, y)| x != y),
        classes,
        mnemonics: count_rows(b.mnemonics.as_ref(), c.mnemonics.as_ref(), true),
        resources: resource_rows(&b.resources, &c.resources, b, c),
    }
}

fn callouts(d: &KernelDiff) -> Vec<String> {
    let mut out = Vec::new();
    for r in &d.resources {
        let (b, c) = (r.base.unwrap_or(0), r.cand.unwrap_or(0));
        let spill = r.item.contains("spills");
        let memory = r.item == "local/scratch bytes" || r.item == "stack bytes";
        if (spill && c > 0) || (memory && c > b) {
            out.push(format!("{}: {} {} → {}", d.symbol, r.item, b, c));
        }
    }
    out
}

/// Compares every kernel of two builds (each may hold several code objects). Kernels pair by
/// symbol; when each side has exactly one kernel they pair whatever their names.
pub fn diff(base: &[CodeObject], cand: &[CodeObject]) -> ObjectDiff {
    let bk: Vec<&KernelInfo> = base.iter().flat_map(|o| &o.kernels).collect();
    let ck: Vec<&KernelInfo> = cand.iter().flat_map(|o| &o.kernels).collect();
    let mut out = ObjectDiff::default();
    if bk.len() == 1 && ck.len() == 1 {
        out.kernels.push(kernel_diff(bk[0], ck[0]));
    } else {
        for b in &bk {
            match ck.iter().find(|c| c.symbol == b.symbol) {
                Some(c) => out.kernels.push(kernel_diff(b, c)),
                None => out.only_base.push(b.symbol.clone()),
            }
        }
        out.only_cand = ck
            .iter()
            .filter(|c| !bk.iter().any(|b| b.symbol == c.symbol))
            .map(|c| c.symbol.clone())
            .collect();
    }
    out.callouts = out.kernels.iter().flat_map(callouts).collect();
    out
}

/// One pair of builds in a matrix.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MatrixPair {
    /// The pairing key.
    pub key: String,
    /// Baseline file.
    pub base: String,
    /// Candidate file.
    pub cand: String,
    /// Whether any kernel's code differs, or the kernel sets differ.
    pub changed: bool,
    /// Kernels whose code changed.
    pub changed_kernels: Vec<String>,
    /// The detailed diff, for changed pairs.
    pub diff: Option<ObjectDiff>,
}

/// A build matrix: many code objects in two builds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Matrix {
    /// Pairs, by key.
    pub pairs: Vec<MatrixPair>,
    /// Pairs whose code changed.
    pub changed: usize,
    /// Pairs compared.
    pub total: usize,
    /// Keys present in the baseline only.
    pub only_base: Vec<String>,
    /// Keys present in the candidate only.
    pub only_cand: Vec<String>,
    /// Distinct kernel symbols over both builds.
    pub distinct_symbols: usize,
    /// Spills, scratch or stack growth anywhere.
    pub callouts: Vec<String>,
}

impl kernelab_model::Body for Matrix {
    const KIND: &'static str = "code_matrix";
}

/// One side of a matrix: key → (file label, its code objects).
pub type Build = BTreeMap<String, (String, Vec<CodeObject>)>;

/// Compares two builds paired by key.
pub fn matrix(base: &Build, cand: &Build) -> Matrix {
    let mut m = Matrix::default();
    let mut symbols = BTreeSet::new();
    for (key, (blabel, bobjs)) in base {
        symbols.extend(
            bobjs
                .iter()
                .flat_map(|o| o.kernels.iter().map(|k| k.symbol.clone())),
        );
        let Some((clabel, cobjs)) = cand.get(key) else {
            m.only_base.push(key.clone());
            continue;
        };
        let d = diff(bobjs, cobjs);
        let changed_kernels: Vec<String> = d
            .kernels
            .iter()
            .filter(|k| k.code_changed != Some(false))
            .map(|k| k.symbol.clone())
            .collect();
        let changed =
            !changed_kernels.is_empty() || !d.only_base.is_empty() || !d.only_cand.is_empty();
        m.callouts
            .extend(d.callouts.iter().map(|c| format!("{key}: {c}")));
        m.total += 1;
        m.changed += usize::from(changed);
        m.pairs.push(MatrixPair {
            key: key.clone(),
            base: blabel.clone(),
            cand: clabel.clone(),
            changed,
            changed_kernels,
            diff: changed.then_some(d),
        });
    }
    for (key, (_, cobjs)) in cand {
        symbols.extend(
            cobjs
                .iter()
                .flat_map(|o| o.kernels.iter().map(|k| k.symbol.clone())),
        );
        if !base.contains_key(key) {
            m.only_cand.push(key.clone());
        }
    }
    m.distinct_symbols = symbols.len();
    m
}
