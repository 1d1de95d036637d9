//! One renderer per output format, all drawing the same [`Block`]s.

mod csv;
mod evidence_md;
mod fit;
mod html;
mod markdown;
mod terminal;

use crate::table::Block;

pub use self::csv::csv_rows;
pub(crate) use self::csv::finish as csv_finish;
pub use self::evidence_md::{
    markdown as evidence_markdown, pr_body, CONVENTION, GITHUB_BODY_LIMIT,
};
pub use self::html::html as evidence_html;

/// An output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutputFormat {
    /// Tables for a terminal.
    Terminal,
    /// GitHub-flavoured Markdown.
    Markdown,
}

/// Renders blocks as text in `format`. `width` fits terminal text to that many columns (tables
/// keep one line per row, columns giving way; None: drawn whole, as for a pipe).
pub fn render(sections: &[Block], format: OutputFormat, width: Option<u16>) -> String {
    match format {
        OutputFormat::Terminal => terminal::render(sections, width),
        OutputFormat::Markdown => markdown::render(sections),
    }
}
