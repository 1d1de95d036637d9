//! `code_diff`: what changed in the machine code of two builds.

use super::callouts;
use crate::format::thousands;
use crate::kinds::{plain, rendered, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use crate::sink::{Kind as FigureKind, Sink};
use crate::svg;
use crate::table::Align;
use crate::table::Block;
use crate::table::Table;
use kernelab_code::ObjectDiff;

impl RecordKind for ObjectDiff {
    fn places(&self) -> &'static [Place] {
        &[Place::Code]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        rendered(code_diff_part(self))
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        let changed = self
            .kernels
            .iter()
            .filter(|k| k.code_changed.unwrap_or(true))
            .count();
        let text = format!(
            "{changed} of {} kernels changed{}",
            self.kernels.len(),
            if self.callouts.is_empty() {
                ""
            } else {
                "; spills or scratch"
            }
        );
        let mark = if self.callouts.is_empty() {
            Mark::Good
        } else {
            Mark::Warn
        };
        plain(text, mark)
    }
    fn figures(&self, sink: &mut Sink<'_>) {
        let changed = self
            .kernels
            .iter()
            .filter(|k| k.code_changed.unwrap_or(true))
            .count();
        sink.count_of(changed, self.kernels.len(), "kernels changed");
        for k in &self.kernels {
            let s = Some(k.symbol.as_str());
            for r in k.classes.iter().chain(&k.mnemonics).chain(&k.resources) {
                let what = format!("{} {}", k.symbol, r.item);
                for (side, v) in [("baseline", r.base), ("candidate", r.cand)] {
                    if let Some(v) = v {
                        sink.add(FigureKind::Count, v as f64, &format!("{what}, {side}"), s);
                    }
                }
                if let (Some(b), Some(c)) = (r.base, r.cand) {
                    sink.add(
                        FigureKind::Count,
                        c as f64 - b as f64,
                        &format!("{what}, difference"),
                        s,
                    );
                    if b > 0 {
                        sink.add(
                            FigureKind::Change,
                            c as f64 / b as f64 - 1.0,
                            &format!("{what}, change"),
                            s,
                        );
                    }
                }
            }
        }
    }
}

pub(crate) fn code_diff_part(r: &ObjectDiff) -> (Vec<Block>, String) {
    let mut blocks = Vec::new();
    let mut head = String::new();
    for k in &r.kernels {
        let name = crate::format::shorten(&k.symbol, 60);
        let table = |what: &str| {
            Table::new(
                format!("{what}: {name}"),
                &[
                    ("item", Align::Left),
                    ("baseline", Align::Right),
                    ("candidate", Align::Right),
                    ("change", Align::Right),
                ],
            )
        };
        let mut bars = Vec::new();
        let mut fill = |t: &mut Table, rows: &[kernelab_code::ChangeRow], bar: bool| {
            for row in rows {
                let (b, c) = (row.base, row.cand);
                if b == c {
                    continue;
                }
                let cr = crate::kinds::code::view::change(row);
                t.push(vec![
                    row.item.clone(),
                    b.map(thousands).unwrap_or_else(|| "–".into()),
                    c.map(thousands).unwrap_or_else(|| "–".into()),
                    cr.clone(),
                ]);
                if let (Some(b), Some(c), true) = (b, c, bar) {
                    if !row.item.contains("bytes") {
                        bars.push((row.item.clone(), c as f64 - b as f64, cr.clone()));
                    }
                }
            }
        };
        let (mut classes, mut mnemonics, mut resources) = (
            table("Instruction classes"),
            table("Mnemonics"),
            table("Resources"),
        );
        fill(&mut classes, &k.classes, true);
        fill(&mut mnemonics, &k.mnemonics, false);
        fill(&mut resources, &k.resources, true);
        for t in [&classes, &resources] {
            if let (true, Some(row)) = (head.is_empty(), t.rows.first()) {
                head = format!("{} {} → {}", row[0], row[1], row[2]);
            }
        }
        if k.classes.is_empty() && k.mnemonics.is_empty() {
            blocks.push(Block::Lines(vec![format!(
                "{}: instructions not compared (no disassembly)",
                crate::format::md_code(&k.symbol)
            )]));
        } else if classes.rows.is_empty() && mnemonics.rows.is_empty() {
            blocks.push(Block::Lines(vec![format!(
                "{}: no instruction class or mnemonic changed",
                crate::format::md_code(&k.symbol)
            )]));
        }
        for t in [classes, mnemonics] {
            if !t.rows.is_empty() {
                blocks.push(Block::Table(t));
            }
        }
        if resources.rows.is_empty() {
            let compared: Vec<&str> = k.resources.iter().map(|r| r.item.as_str()).collect();
            blocks.push(Block::Lines(vec![if compared.is_empty() {
                format!(
                    "{}: no resource figures to compare",
                    crate::format::md_code(&k.symbol)
                )
            } else {
                format!(
                    "{}: resources unchanged ({})",
                    crate::format::md_code(&k.symbol),
                    compared.join(", ")
                )
            }]));
        } else {
            blocks.push(Block::Table(resources));
        }
        if !bars.is_empty() {
            blocks.push(Block::Chart(svg::bars(
                "Instruction-class and resource changes (candidate − baseline)",
                &bars,
            )));
        }
    }
    let changed = r
        .kernels
        .iter()
        .filter(|k| k.code_changed.unwrap_or(true))
        .count();
    blocks.insert(
        0,
        Block::Lines(vec![format!(
            "{changed} of {} kernels changed{}",
            r.kernels.len(),
            if r.only_base.is_empty() && r.only_cand.is_empty() {
                String::new()
            } else {
                format!(
                    "; only in the baseline: {}; only in the candidate: {}",
                    r.only_base.len(),
                    r.only_cand.len()
                )
            }
        )]),
    );
    blocks.push(callouts(&r.callouts));
    if head.is_empty() {
        head = "machine code unchanged in every compared class".into();
    }
    (blocks, head)
}
