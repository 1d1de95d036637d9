//! Terminal tables (comfy-table).

use crate::table::{Align, Section};
use comfy_table::{
    presets::UTF8_FULL_CONDENSED, CellAlignment, ContentArrangement, Table as Comfy,
};

pub(super) fn render(sections: &[Section], width: Option<u16>) -> String {
    let mut out = String::new();
    for s in sections {
        match s {
            Section::Table(t) => {
                if t.rows.is_empty() {
                    continue;
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
            Section::Lines { title, lines } => {
                if lines.is_empty() {
                    continue;
                }
                out.push_str(title);
                out.push('\n');
                for l in lines {
                    out.push_str("  - ");
                    out.push_str(l);
                    out.push('\n');
                }
                out.push('\n');
            }
        }
    }
    out
}
