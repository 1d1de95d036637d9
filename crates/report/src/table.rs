//! The render model every renderer draws: blocks of lines, tables, charts and code.

/// Column alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Text columns.
    Left,
    /// Number columns.
    Right,
}

/// A column header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// Header text.
    pub name: String,
    /// Alignment.
    pub align: Align,
}

/// A titled table of already formatted cells.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    /// Title shown above the table.
    pub title: String,
    /// Columns.
    pub columns: Vec<Column>,
    /// Rows of cells, one per column.
    pub rows: Vec<Vec<String>>,
    /// The columns (by place) that give way, first to last, when a terminal is too narrow for
    /// every column; the others give way only after these, from the right.
    pub give_way: Vec<usize>,
}

impl Table {
    /// A table with `columns` given as (name, align).
    pub fn new(title: impl Into<String>, columns: &[(&str, Align)]) -> Self {
        Table {
            title: title.into(),
            columns: columns
                .iter()
                .map(|(n, a)| Column {
                    name: n.to_string(),
                    align: *a,
                })
                .collect(),
            rows: Vec::new(),
            give_way: Vec::new(),
        }
    }
    /// States the columns named `names` as giving way, first to last, in a narrow terminal
    /// (a name that is not a column is passed over).
    pub fn giving_way(mut self, names: &[&str]) -> Self {
        self.give_way = names
            .iter()
            .filter_map(|n| self.columns.iter().position(|c| c.name == *n))
            .collect();
        self
    }
    /// Appends a row.
    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }
}

/// A piece of any output: every renderer (terminal, Markdown, HTML) draws these, for a
/// command's own output and for the report alike.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block {
    /// A sub-heading (in the report: a label).
    Heading(String),
    /// Bullet lines.
    Lines(Vec<String>),
    /// Bullet lines under their own title, as a table has one (left out when empty).
    List {
        /// Title.
        title: String,
        /// Lines.
        lines: Vec<String>,
    },
    /// A table (left out when it has no rows).
    Table(Table),
    /// An inline SVG chart (HTML only).
    Chart(String),
    /// A code block.
    Code(String),
    /// Blocks folded under a one-line summary (`<details>`).
    Details {
        /// The line shown when folded.
        summary: String,
        /// The folded content.
        blocks: Vec<Block>,
    },
}
