//! The report as Markdown, shaped like a performance pull request body.

use crate::evidence::{Block, Headline, Part};
use crate::render::render;
use crate::table::Section;

/// Renders the report as Markdown (charts are in the HTML page only).
pub fn markdown(title: &str, heads: &[Headline], parts: &[Part]) -> String {
    let mut s = format!("# {title}\n\n");
    for h in heads {
        s += &format!("- **{}**: {}\n", h.kind, h.headline);
    }
    s.push('\n');
    for p in parts {
        s += &format!("## {}\n\n", p.title);
        for b in &p.blocks {
            match b {
                Block::Lines(l) => {
                    for x in l {
                        s += &format!("- {x}\n");
                    }
                    s.push('\n');
                }
                Block::Table(t) => {
                    s += &render(
                        &[Section::Table(t.clone())],
                        crate::OutputFormat::Markdown,
                        None,
                    )
                    .replace("### ", "#### ")
                }
                Block::Chart(_) => {}
                Block::Code(c) => s += &format!("```sh\n{c}```\n\n"),
            }
        }
    }
    s
}
