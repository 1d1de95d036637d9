//! Where in an input file something went wrong.

use std::fmt;
use std::path::PathBuf;

/// A position inside an input: the file, and a line, byte offset or record where known, plus
/// the column or key involved. Printed as `trace.json.gz: byte 1048576: key "ts"`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location {
    /// The file, when known.
    pub path: Option<PathBuf>,
    /// 1-based line number.
    pub line: Option<u64>,
    /// 0-based byte offset (of the decompressed stream for compressed inputs).
    pub byte: Option<u64>,
    /// The column, key or table involved.
    pub field: Option<String>,
}

impl Location {
    /// A location at a byte offset.
    pub fn byte(byte: u64) -> Self {
        Location {
            byte: Some(byte),
            ..Location::default()
        }
    }
    /// A location at a 1-based line.
    pub fn line(line: u64) -> Self {
        Location {
            line: Some(line),
            ..Location::default()
        }
    }
    /// This location with the column or key named.
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }
    /// This location with the file attached (kept if one is already set).
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        if self.path.is_none() {
            self.path = Some(path.into());
        }
        self
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        if let Some(p) = &self.path {
            parts.push(p.display().to_string());
        }
        if let Some(l) = self.line {
            parts.push(format!("line {l}"));
        }
        if let Some(b) = self.byte {
            parts.push(format!("byte {b}"));
        }
        if let Some(k) = &self.field {
            parts.push(format!("`{k}`"));
        }
        if parts.is_empty() {
            parts.push("<input>".to_string());
        }
        write!(f, "{}", parts.join(": "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_joins_parts() {
        let l = Location::byte(42).with_field("ts").with_path("t.json");
        assert_eq!(l.to_string(), "t.json: byte 42: `ts`");
        assert_eq!(Location::line(3).to_string(), "line 3");
    }
}
