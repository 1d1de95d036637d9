//! Terminal tables (comfy-table) and indented lines. Every piece of text passes through
//! [`vis`]: a control character from an input (an ESC sequence in a kernel name) is shown as
//! its escape, never sent to the terminal.

use super::fit;
use crate::format::escape_controls;
use crate::table::{Align, Block, Column, Table};
use std::borrow::Cow;

/// `s` as the terminal shows it: control characters escaped ([`escape_controls`]).
fn vis(s: &str) -> Cow<'_, str> {
    escape_controls(s, &[])
}
use comfy_table::{
    presets::UTF8_FULL_CONDENSED, CellAlignment, ContentArrangement, Table as Comfy,
};

/// Writes `text` as one line, or in a terminal of `width` columns wrapped between words: the
/// first line starting with `first`, the others with `rest`.
fn line(out: &mut String, text: &str, width: Option<u16>, first: &str, rest: &str) {
    match width {
        Some(w) => {
            for l in fit::wrap(&vis(text), usize::from(w), first, rest) {
                out.push_str(&l);
                out.push('\n');
            }
        }
        None => {
            out.push_str(first);
            out.push_str(&vis(text));
            out.push('\n');
        }
    }
}

fn table(out: &mut String, t: &Table, width: Option<u16>) {
    if t.rows.is_empty() {
        return;
    }
    let visible = Table {
        columns: t
            .columns
            .iter()
            .map(|c| Column {
                name: vis(&c.name).into_owned(),
                align: c.align,
            })
            .collect(),
        rows: t
            .rows
            .iter()
            .map(|r| r.iter().map(|v| vis(v).into_owned()).collect())
            .collect(),
        ..t.clone()
    };
    let fitted = width.map(|w| fit::table(&visible, usize::from(w)));
    let drawn = fitted.as_ref().map_or(&visible, |f| &f.table);
    let mut c = Comfy::new();
    c.load_preset(UTF8_FULL_CONDENSED);
    // Fitted or not, a row is one line: its cells were cut to the width beforehand.
    c.set_content_arrangement(ContentArrangement::Disabled);
    c.set_header(drawn.columns.iter().map(|col| col.name.clone()));
    for r in &drawn.rows {
        c.add_row(r.clone());
    }
    for (i, col) in drawn.columns.iter().enumerate() {
        if let Some(column) = c.column_mut(i) {
            column.set_cell_alignment(match col.align {
                Align::Left => CellAlignment::Left,
                Align::Right => CellAlignment::Right,
            });
        }
    }
    line(out, &t.title, width, "", "  ");
    out.push_str(&c.to_string());
    out.push('\n');
    if let (Some(f), Some(w)) = (&fitted, width) {
        if let Some(note) = fitted_note(f, w) {
            line(out, &note, width, "", "  ");
        }
    }
    out.push('\n');
}

/// The line under a fitted table: which columns were left out or cut to fit, and how to see
/// them whole.
fn fitted_note(f: &fit::Fitted, width: u16) -> Option<String> {
    let mut parts = Vec::new();
    if !f.left_out.is_empty() {
        parts.push(format!(
            "left out to fit {width} columns: {}",
            f.left_out.join(", ")
        ));
    }
    if !f.cut.is_empty() {
        parts.push(format!("cut to fit: {}", f.cut.join(", ")));
    }
    if parts.is_empty() {
        return None;
    }
    Some(format!(
        "({}; --wide shows every column whole, --format md writes the full table)",
        parts.join("; ")
    ))
}

fn bullets(out: &mut String, lines: &[String], width: Option<u16>) {
    for l in lines {
        line(out, l, width, "  - ", "    ");
    }
    out.push('\n');
}

fn blocks(out: &mut String, bs: &[Block], width: Option<u16>) {
    for b in bs {
        match b {
            Block::Heading(h) => line(out, h, width, "", "  "),
            Block::Lines(l) => bullets(out, l, width),
            Block::List { title, lines } => {
                if !lines.is_empty() {
                    line(out, title, width, "", "  ");
                    bullets(out, lines, width);
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
                line(out, summary, width, "", "  ");
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
    fn a_narrow_terminal_cuts_names_never_numbers() {
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
        assert!(!out.contains(name), "the name was cut:\n{out}");
        assert!(
            out.contains("…128, true>(float*)"),
            "its end is kept:\n{out}"
        );
        assert_eq!(
            out.lines().filter(|l| l.starts_with('│')).count(),
            2,
            "one line per row:\n{out}"
        );
        assert!(out.contains("cut to fit: kernel; --wide"), "{out}");
        // Too narrow for every column: the last gives way, and the line under says so.
        let out = render(&[Block::Table(t.clone())], Some(40));
        assert!(out.lines().all(|l| l.chars().count() <= 40), "{out}");
        assert!(out.contains("left out to fit 40 columns: mean"), "{out}");
        // Not a terminal: plain rows, nothing wrapped.
        let plain = render(&[Block::Table(t)], None);
        assert!(plain.contains(name));
    }
}
