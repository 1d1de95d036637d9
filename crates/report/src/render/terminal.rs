//! Terminal tables (comfy-table) and indented lines. Every piece of text passes through
//! [`vis`]: a control character from an input (an ESC sequence in a kernel name) is shown as
//! its escape, never sent to the terminal.

use crate::format::escape_controls;
use crate::table::{Align, Block, Table};
use std::borrow::Cow;

/// `s` as the terminal shows it: control characters escaped ([`escape_controls`]).
fn vis(s: &str) -> Cow<'_, str> {
    escape_controls(s, &[])
}
use comfy_table::{
    presets::UTF8_FULL_CONDENSED, CellAlignment, ColumnConstraint, ContentArrangement,
    Table as Comfy, Width,
};

fn table(out: &mut String, t: &Table, width: Option<u16>) {
    if t.rows.is_empty() {
        return;
    }
    let mut c = Comfy::new();
    c.load_preset(UTF8_FULL_CONDENSED);
    match width {
        Some(w) => {
            c.set_content_arrangement(ContentArrangement::Dynamic);
            c.set_width(w);
        }
        None => {
            c.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    c.set_header(t.columns.iter().map(|col| vis(&col.name).into_owned()));
    let rows: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|r| r.iter().map(|v| vis(v).into_owned()).collect())
        .collect();
    for r in &rows {
        c.add_row(r.clone());
    }
    for (i, col) in t.columns.iter().enumerate() {
        // A number is never broken across lines: a right-aligned (figure) column is at least
        // as wide as its widest cell; text columns give way.
        let widest = rows
            .iter()
            .filter_map(|r| r.get(i))
            .map(|s| s.chars().count())
            .max()
            .unwrap_or(0);
        if let Some(column) = c.column_mut(i) {
            column.set_cell_alignment(match col.align {
                Align::Left => CellAlignment::Left,
                Align::Right => CellAlignment::Right,
            });
            if col.align == Align::Right && width.is_some() {
                let w = u16::try_from(widest).unwrap_or(u16::MAX);
                column.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(w)));
            }
        }
    }
    out.push_str(&vis(&t.title));
    out.push('\n');
    out.push_str(&c.to_string());
    out.push_str("\n\n");
}

fn bullets(out: &mut String, lines: &[String]) {
    for l in lines {
        out.push_str("  - ");
        out.push_str(&vis(l));
        out.push('\n');
    }
    out.push('\n');
}

fn blocks(out: &mut String, bs: &[Block], width: Option<u16>) {
    for b in bs {
        match b {
            Block::Heading(h) => {
                out.push_str(&vis(h));
                out.push('\n');
            }
            Block::Lines(l) => bullets(out, l),
            Block::List { title, lines } => {
                if !lines.is_empty() {
                    out.push_str(&vis(title));
                    out.push('\n');
                    bullets(out, lines);
                }
            }
            Block::Table(t) => table(out, t, width),
            Block::Chart(_) => {}
            Block::Code(c) => {
                for l in c.lines() {
                    out.push_str("    ");
                    out.push_str(&vis(l));
                    out.push('\n');
                }
                out.push('\n');
            }
            Block::Details {
                summary,
                blocks: inner,
            } => {
                out.push_str(&vis(summary));
                out.push('\n');
                blocks(out, inner, width);
            }
        }
    }
}

pub(super) fn render(bs: &[Block], width: Option<u16>) -> String {
    let mut out = String::new();
    blocks(&mut out, bs, width);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Table;

    #[test]
    fn a_narrow_terminal_wraps_names_never_numbers() {
        let mut t = Table::new(
            "t",
            &[
                ("kernel", Align::Left),
                ("total", Align::Right),
                ("mean", Align::Right),
            ],
        );
        let name = "void fla::ops::gated_delta_rule::chunk_fwd_kernel_o<64, 128, true>(float*)";
        t.push(vec![
            name.into(),
            "463.203 µs".into(),
            "12,345.678 ns".into(),
        ]);
        let out = render(&[Block::Table(t.clone())], Some(60));
        assert!(
            out.contains("463.203 µs") && out.contains("12,345.678 ns"),
            "{out}"
        );
        assert!(
            out.lines().all(|l| l.chars().count() <= 60),
            "fits 60 columns:\n{out}"
        );
        assert!(!out.contains(name), "the name wrapped:\n{out}");
        // Not a terminal: plain rows, nothing wrapped.
        let plain = render(&[Block::Table(t)], None);
        assert!(plain.contains(name));
    }
}
