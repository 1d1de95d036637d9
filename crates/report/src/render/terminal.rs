//! Terminal tables (comfy-table) and indented lines.

use crate::table::{Align, Block, Table};
use comfy_table::{
    presets::UTF8_FULL_CONDENSED, CellAlignment, ContentArrangement, Table as Comfy,
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
    c.set_header(t.columns.iter().map(|col| col.name.clone()));
    for r in &t.rows {
        c.add_row(r.clone());
    }
    for (i, col) in t.columns.iter().enumerate() {
        if let Some(column) = c.column_mut(i) {
            column.set_cell_alignment(match col.align {
                Align::Left => CellAlignment::Left,
                Align::Right => CellAlignment::Right,
            });
        }
    }
    out.push_str(&t.title);
    out.push('\n');
    out.push_str(&c.to_string());
    out.push_str("\n\n");
}

fn bullets(out: &mut String, lines: &[String]) {
    for l in lines {
        out.push_str("  - ");
        out.push_str(l);
        out.push('\n');
    }
    out.push('\n');
}

fn blocks(out: &mut String, bs: &[Block], width: Option<u16>) {
    for b in bs {
        match b {
            Block::Heading(h) => {
                out.push_str(h);
                out.push('\n');
            }
            Block::Lines(l) => bullets(out, l),
            Block::List { title, lines } => {
                if !lines.is_empty() {
                    out.push_str(title);
                    out.push('\n');
                    bullets(out, lines);
                }
            }
            Block::Table(t) => table(out, t, width),
            Block::Chart(_) => {}
            Block::Code(c) => {
                for l in c.lines() {
                    out.push_str("    ");
                    out.push_str(l);
                    out.push('\n');
                }
                out.push('\n');
            }
            Block::Details {
                summary,
                blocks: inner,
            } => {
                out.push_str(summary);
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
