//! CSV of serializable flat rows (machine-readable: raw numbers, empty cells for unavailable).

use serde::Serialize;

/// Writes `rows` as CSV with a header row derived from the row type's field names.
pub fn csv_rows<T: Serialize>(rows: &[T]) -> crate::Result<String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r)?;
    }
    finish(w)
}

/// The text of a finished CSV writer.
pub(crate) fn finish(w: ::csv::Writer<Vec<u8>>) -> crate::Result<String> {
    let bytes = w
        .into_inner()
        .map_err(|e| ::csv::Error::from(e.into_error()))?;
    Ok(String::from_utf8(bytes)?)
}
