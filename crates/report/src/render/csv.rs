//! CSV of serializable flat rows (machine-readable: raw numbers, empty cells for unavailable).

use serde::Serialize;

/// Writes `rows` as CSV with a header row derived from the row type's field names.
pub fn csv_rows<T: Serialize>(rows: &[T]) -> Result<String, String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r).map_err(|e| e.to_string())?;
    }
    let bytes = w.into_inner().map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}
