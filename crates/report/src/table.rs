//! The table model every renderer draws.

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
        }
    }
    /// Appends a row.
    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }
}

/// A piece of a report: a table, or a list of lines under a heading.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Section {
    /// A table.
    Table(Table),
    /// A heading with bullet lines.
    Lines {
        /// Heading.
        title: String,
        /// Lines.
        lines: Vec<String>,
    },
}
