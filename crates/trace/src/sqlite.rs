//! Shared SQLite helpers for the rocpd and Nsight Systems readers.

use crate::error::{Error, ErrorKind, Result};
use kernelab_model::Location;
use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags};
use std::collections::HashMap;
use std::path::Path;

pub(crate) fn sql_err(view: &str) -> impl Fn(rusqlite::Error) -> Error + '_ {
    move |e| {
        Error::new(
            Location::default().with_field(view),
            ErrorKind::Sqlite(e.to_string()),
        )
    }
}

/// Opens a SQLite file read-only.
pub(crate) fn open(path: &Path) -> Result<Connection> {
    Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| Error::new(Location::default(), ErrorKind::Sqlite(e.to_string())))
}

/// The names of all tables and views.
pub(crate) fn objects(conn: &Connection) -> Result<Vec<String>> {
    let mut st = conn
        .prepare("SELECT name FROM sqlite_master WHERE type IN ('table','view')")
        .map_err(sql_err("sqlite_master"))?;
    let rows = st
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(sql_err("sqlite_master"))?;
    rows.collect::<std::result::Result<Vec<_>, _>>()
        .map_err(sql_err("sqlite_master"))
}

/// Reads every row of `view` as name → value maps (columns by name, never by position).
pub(crate) fn rows(
    conn: &Connection,
    view: &str,
    mut f: impl FnMut(&HashMap<String, Value>, u64) -> Result<()>,
) -> Result<()> {
    let mut st = conn
        .prepare(&format!("SELECT * FROM \"{view}\""))
        .map_err(sql_err(view))?;
    let names: Vec<String> = st
        .column_names()
        .iter()
        .map(|s| s.to_ascii_lowercase())
        .collect();
    let mut q = st.query([]).map_err(sql_err(view))?;
    let mut n = 0u64;
    let mut map = HashMap::new();
    while let Some(r) = q.next().map_err(sql_err(view))? {
        n += 1;
        map.clear();
        for (i, name) in names.iter().enumerate() {
            map.insert(name.clone(), r.get::<_, Value>(i).map_err(sql_err(view))?);
        }
        f(&map, n)?;
    }
    Ok(())
}

pub(crate) fn int(map: &HashMap<String, Value>, key: &str) -> Option<i64> {
    match map.get(key)? {
        Value::Integer(i) => Some(*i),
        Value::Real(r) if r.fract() == 0.0 => Some(*r as i64),
        Value::Text(t) => t.trim().parse().ok(),
        _ => None,
    }
}

pub(crate) fn text(map: &HashMap<String, Value>, key: &str) -> Option<String> {
    match map.get(key)? {
        Value::Text(t) => Some(t.clone()),
        Value::Integer(i) => Some(i.to_string()),
        _ => None,
    }
}

/// The column names of a table or view (empty if it does not exist).
pub(crate) fn columns(conn: &Connection, table: &str) -> Result<Vec<String>> {
    let mut st = conn
        .prepare(&format!("PRAGMA table_info(\"{table}\")"))
        .map_err(sql_err(table))?;
    let rows = st
        .query_map([], |r| r.get::<_, String>(1))
        .map_err(sql_err(table))?;
    rows.collect::<std::result::Result<Vec<_>, _>>()
        .map_err(sql_err(table))
}
