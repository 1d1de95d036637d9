//! The `code` views: resources and instruction classes, diffs between builds, build matrices.

use crate::format::shorten;
use crate::format::{decimal, thousands, UNAVAILABLE};
use crate::table::{Align, Block, Table};
use kernelab_code::{ChangeRow, CodeObject, Matrix, ObjectDiff};

fn opt(v: Option<u64>) -> String {
    v.map(thousands).unwrap_or_else(|| "–".into())
}

/// `+12 (+4.2%)`, `-1,512 (-73.5%)`, `unchanged`, or `unavailable`.
pub fn change(r: &ChangeRow) -> String {
    match (r.base, r.cand) {
        (Some(b), Some(c)) if b == c => "unchanged".into(),
        (Some(b), Some(c)) => {
            let d = c as i128 - b as i128;
            let sign = if d > 0 { "+" } else { "-" };
            let pct = if b > 0 {
                format!(
                    " ({sign}{}%)",
                    decimal((d.unsigned_abs() as f64) * 100.0 / b as f64, 1)
                )
            } else {
                String::new()
            };
            format!("{sign}{}{pct}", thousands(d.unsigned_abs() as u64))
        }
        (None, Some(_)) => "new".into(),
        (Some(_), None) => "gone".into(),
        (None, None) => UNAVAILABLE.into(),
    }
}

fn name(k: &kernelab_code::KernelInfo, width: usize) -> String {
    shorten(k.demangled.as_deref().unwrap_or(&k.symbol), width)
}

/// Sections of `kernelab code show`.
pub fn code_show_tables(objects: &[CodeObject], width: usize) -> Vec<Block> {
    let mut out = Vec::new();
    for o in objects {
        let facts: Vec<String> = o.facts.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        out.push(Block::List {
            title: format!(
                "{} ({:?}, {})",
                o.label,
                o.kind,
                o.arch.as_deref().unwrap_or("arch unknown")
            )
            .replace("Cubin", "cubin")
            .replace("Hsaco", "HSACO")
            .replace("Disassembly", "disassembly"),
            lines: facts,
        });
        let mut t = Table::new(
            crate::format::count(o.kernels.len(), "kernel", "kernels"),
            &[
                ("kernel", Align::Left),
                ("regs/VGPR", Align::Right),
                ("AGPR", Align::Right),
                ("SGPR", Align::Right),
                ("spills V/S", Align::Right),
                ("barriers", Align::Right),
                ("shared/LDS B", Align::Right),
                ("local/scratch B", Align::Right),
                ("stack B", Align::Right),
                ("code B", Align::Right),
                ("instructions", Align::Right),
            ],
        );
        for k in &o.kernels {
            let r = &k.resources;
            let u = |x: Option<u32>| opt(x.map(u64::from));
            let spills = match (r.vgpr_spills, r.sgpr_spills) {
                (None, None) => "–".into(),
                (v, s) => format!("{}/{}", u(v), u(s)),
            };
            t.push(vec![
                name(k, width),
                u(r.registers),
                u(r.agprs),
                u(r.sgprs),
                spills,
                u(r.barriers),
                opt(r.shared_bytes),
                opt(r.local_bytes),
                opt(r.stack_bytes),
                opt(k.code_size),
                opt(k.instructions),
            ]);
        }
        out.push(Block::Table(t));
        for k in &o.kernels {
            let Some(classes) = &k.classes else { continue };
            let mut rows: Vec<(&String, &u64)> = classes.iter().collect();
            rows.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
            let mut t = Table::new(
                format!("Instruction classes: {}", name(k, width)),
                &[("class", Align::Left), ("count", Align::Right)],
            );
            for (c, n) in rows {
                t.push(vec![c.clone(), thousands(*n)]);
            }
            out.push(Block::Table(t));
        }
    }
    out
}

fn change_table(title: String, rows: &[ChangeRow]) -> Table {
    let mut t = Table::new(
        title,
        &[
            ("item", Align::Left),
            ("baseline", Align::Right),
            ("candidate", Align::Right),
            ("change", Align::Right),
        ],
    );
    for r in rows {
        t.push(vec![r.item.clone(), opt(r.base), opt(r.cand), change(r)]);
    }
    t
}

/// Sections of `kernelab code diff`.
pub fn code_diff_tables(d: &ObjectDiff, width: usize) -> Vec<Block> {
    let mut out = Vec::new();
    for k in &d.kernels {
        let title = shorten(&k.symbol, width);
        let code = match k.code_changed {
            Some(true) => "machine code changed",
            Some(false) => "machine code identical",
            None => "machine code not compared",
        };
        let mut lines = vec![code.to_string()];
        if let Some(c) = &k.cand_symbol {
            lines.push(format!(
                "paired with candidate symbol {c} (one kernel on each side)"
            ));
        }
        out.push(Block::List {
            title: format!("Kernel {title}"),
            lines,
        });
        if k.classes.is_empty() {
            out.push(Block::List {
                title: "Instruction classes".into(),
                lines: vec![
                    "unavailable: no disassembly (install the disassembler or give a text dump)"
                        .into(),
                ],
            });
        } else {
            out.push(Block::Table(change_table(
                "Instruction classes".into(),
                &k.classes,
            )));
        }
        if !k.mnemonics.is_empty() {
            out.push(Block::Table(change_table(
                "Mnemonics that changed".into(),
                &k.mnemonics,
            )));
        }
        out.push(Block::Table(change_table("Resources".into(), &k.resources)));
    }
    let mut notes = d.callouts.clone();
    if !d.only_base.is_empty() {
        notes.push(format!("only in the baseline: {}", d.only_base.join(", ")));
    }
    if !d.only_cand.is_empty() {
        notes.push(format!("only in the candidate: {}", d.only_cand.join(", ")));
    }
    out.push(Block::List {
        title: "Spills, scratch and kernels on one side".into(),
        lines: notes,
    });
    out
}

/// Sections of `kernelab code matrix`.
pub fn code_matrix_tables(m: &Matrix, width: usize) -> Vec<Block> {
    let mut lines = vec![
        format!("{} of {} code objects changed", m.changed, m.total),
        format!("{} distinct kernel symbols", m.distinct_symbols),
    ];
    if m.callouts.is_empty() {
        lines.push("no spills, and no scratch or stack growth, in any candidate kernel".into());
    }
    let mut t = Table::new(
        "Code objects",
        &[
            ("key", Align::Left),
            ("changed", Align::Left),
            ("kernels whose code changed", Align::Left),
        ],
    );
    for p in &m.pairs {
        t.push(vec![
            shorten(&p.key, width),
            if p.changed { "yes" } else { "no" }.into(),
            p.changed_kernels
                .iter()
                .map(|k| shorten(k, 60))
                .collect::<Vec<_>>()
                .join(", "),
        ]);
    }
    let mut notes: Vec<String> = m.callouts.clone();
    if !m.only_base.is_empty() {
        notes.push(format!(
            "only in the baseline build: {}",
            m.only_base.join(", ")
        ));
    }
    if !m.only_cand.is_empty() {
        notes.push(format!(
            "only in the candidate build: {}",
            m.only_cand.join(", ")
        ));
    }
    let mut out = vec![
        Block::List {
            title: "Build matrix".into(),
            lines,
        },
        Block::Table(t),
    ];
    for p in m.pairs.iter().filter(|p| p.changed) {
        if let Some(d) = &p.diff {
            for k in &d.kernels {
                let rows: Vec<ChangeRow> = k
                    .classes
                    .iter()
                    .chain(&k.resources)
                    .filter(|r| r.changed())
                    .cloned()
                    .collect();
                if !rows.is_empty() {
                    out.push(Block::Table(change_table(
                        format!("{}: {}", shorten(&p.key, width), shorten(&k.symbol, 60)),
                        &rows,
                    )));
                }
            }
        }
    }
    out.push(Block::List {
        title: "Spills, scratch and unpaired builds".into(),
        lines: notes,
    });
    out
}
