//! GitHub-flavoured Markdown, shaped to paste into a pull request: the one Markdown renderer of
//! blocks, for a command's own output and for the report.

use crate::format::{html_escape, md_cell, md_line, md_prose};
use crate::table::{Align, Block, Table};

/// A table under a heading of `level` (`##` … `####`); nothing when it has no rows.
pub(crate) fn table(t: &Table, level: usize) -> String {
    if t.rows.is_empty() {
        return String::new();
    }
    let mut out = format!("{} {}\n\n|", "#".repeat(level), md_cell(&t.title));
    for c in &t.columns {
        out.push_str(&format!(" {} |", md_cell(&c.name)));
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
            out.push_str(&format!(" {} |", md_cell(v)));
        }
        out.push('\n');
    }
    out.push('\n');
    out
}

fn bullets(out: &mut String, lines: &[String]) {
    for l in lines {
        out.push_str(&format!("- {}\n", md_prose(l)));
    }
    out.push('\n');
}

/// Appends `bs` to `out`: headings at `level − 1`, the titles of tables and lists at `level`.
pub(crate) fn blocks(out: &mut String, bs: &[Block], level: usize) {
    for b in bs {
        match b {
            Block::Heading(h) => {
                out.push_str(&format!(
                    "{} {}\n\n",
                    "#".repeat(level.saturating_sub(1).max(1)),
                    md_line(h)
                ));
            }
            Block::Lines(l) => bullets(out, l),
            Block::List { title, lines } => {
                if !lines.is_empty() {
                    out.push_str(&format!("{} {}\n\n", "#".repeat(level), md_line(title)));
                    bullets(out, lines);
                }
            }
            Block::Table(t) => out.push_str(&table(t, level)),
            Block::Chart(_) => {}
            Block::Code(c) => out.push_str(&format!(
                "```sh\n{}```\n\n",
                crate::format::escape_controls(c, &['\n', '\t'])
            )),
            Block::Details {
                summary,
                blocks: inner,
            } => {
                out.push_str(&format!(
                    "<details>\n<summary>{}</summary>\n\n",
                    html_escape(summary)
                ));
                blocks(out, inner, level);
                out.push_str("</details>\n\n");
            }
        }
    }
}

/// A command's output: tables and lists under `###` titles.
pub(super) fn render(bs: &[Block]) -> String {
    let mut out = String::new();
    blocks(&mut out, bs, 3);
    out
}
