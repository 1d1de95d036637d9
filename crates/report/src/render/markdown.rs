//! GitHub-flavoured Markdown, shaped to paste into a pull request.

use crate::table::{Align, Section};

fn cell(text: &str) -> String {
    crate::format::md_cell(text)
}

pub(super) fn render(sections: &[Section]) -> String {
    let mut out = String::new();
    for s in sections {
        match s {
            Section::Table(t) => {
                if t.rows.is_empty() {
                    continue;
                }
                out.push_str(&format!("### {}\n\n", cell(&t.title)));
                out.push('|');
                for c in &t.columns {
                    out.push_str(&format!(" {} |", cell(&c.name)));
                }
                out.push_str("\n|");
                for c in &t.columns {
                    out.push_str(match c.align {
                        Align::Left => "---|",
                        Align::Right => "---:|",
                    });
                }
                out.push('\n');
                for r in &t.rows {
                    out.push('|');
                    for v in r {
                        out.push_str(&format!(" {} |", cell(v)));
                    }
                    out.push('\n');
                }
                out.push('\n');
            }
            Section::Lines { title, lines } => {
                if lines.is_empty() {
                    continue;
                }
                out.push_str(&format!("### {title}\n\n"));
                for l in lines {
                    out.push_str(&format!("- {}\n", l.replace('\n', " ")));
                }
                out.push('\n');
            }
        }
    }
    out
}
