//! How the kernel table of an Nsight Systems export is read: from its pages when SQLite would
//! read the same values from them, else through SQLite; on every core when the table is large
//! ([`super::parallel`]), else row by row on this thread ([`super::kernels`]).

use super::kernels::{positions, query, read_rows, Names, TABLE};
use super::parallel;
use crate::error::Result;
use crate::sqlite::{columns, sql_err, IntRows, ReadLock};
use crate::sqlite_pages::{database_file, PageTable};
use kernelab_model::Profile;
use rusqlite::Connection;
use std::collections::HashMap;
use std::fs::File;

/// Reads the kernel table into `p` (correlation ids only when the store keeps them): from the
/// table's pages when SQLite would read the same values from them (see
/// [`crate::sqlite_pages`]), else through SQLite; on every core when the table is large (see
/// [`super::parallel`]), else on this thread.
pub(super) fn read(
    conn: &Connection,
    strings: &HashMap<i64, String>,
    p: &mut Profile,
) -> Result<()> {
    // The handle the pages are read through is opened before the read transaction and closed
    // after it: closing a handle on the file releases the process's locks on it.
    let file = database_file(conn);
    let r = read_locked(conn, file.as_ref(), strings, p);
    drop(file);
    r
}

/// [`read`] inside a read transaction (no writer may change the file, its schema included,
/// while it is read), from the pages through `file` when it can.
fn read_locked(
    conn: &Connection,
    file: Option<&File>,
    strings: &HashMap<i64, String>,
    p: &mut Profile,
) -> Result<()> {
    let _lock = ReadLock::hold(conn).map_err(sql_err(TABLE))?;
    let cols = columns(conn, TABLE)?;
    let keep = p.dispatches.keeps_correlations();
    let q = query(&cols, keep, None);
    if let Some(table) = page_table(conn, file, &cols, keep)? {
        // The query's own column names, for the error a value of another type gives.
        let names_of = IntRows::prepare(conn, &q)
            .map_err(sql_err(TABLE))?
            .names()
            .to_vec();
        let columns = positions(&cols, keep);
        return parallel::read_from_pages(&table, &columns, &names_of, strings, p);
    }
    // Read through SQLite: its scan does not see a damaged tree, quick_check does.
    crate::sqlite::quick_check(conn, Some(TABLE))?;
    if let Some(plan) = parallel::plan(conn, &cols, keep)? {
        return parallel::read(plan, &cols, strings, p);
    }
    read_rows(conn, &q, &mut Names::new(strings), p)
}

/// The kernel table laid out for reading from its pages, unless it lacks a column named
/// exactly `start` or `end` (the query names them whatever the table has), an index covers
/// the columns read (a full scan could follow that index, in another order) or the table is
/// not one [`PageTable::open`] reads.
pub(super) fn page_table<'f>(
    conn: &Connection,
    file: Option<&'f File>,
    cols: &[String],
    keep_correlations: bool,
) -> Result<Option<PageTable<'f>>> {
    let Some(file) = file else {
        return Ok(None);
    };
    if !["start", "end"].iter().all(|n| cols.iter().any(|c| c == n))
        || parallel::covering_index(conn, cols, keep_correlations).unwrap_or(true)
    {
        return Ok(None);
    }
    PageTable::open(conn, file, TABLE)
}
