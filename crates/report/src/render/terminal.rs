//! Terminal tables (comfy-table).

use crate::table::{Align, Section};
use comfy_table::{
    presets::UTF8_FULL_CONDENSED, CellAlignment, ColumnConstraint, ContentArrangement,
    Table as Comfy, Width,
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
                    // A number is never broken across lines: a right-aligned (figure) column
                    // is at least as wide as its widest cell; text columns give way.
                    let widest = t
                        .rows
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
        let out = render(&[Section::Table(t.clone())], Some(60));
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
        let plain = render(&[Section::Table(t)], None);
        assert!(plain.contains(name));
    }
}
