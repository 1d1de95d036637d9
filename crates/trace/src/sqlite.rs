//! Shared SQLite helpers for the rocpd and Nsight Systems readers.

use crate::error::{Error, ErrorKind, Result};
use kernelab_model::Location;
use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, OpenFlags};
use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

pub(crate) fn sql_err(view: &str) -> impl Fn(rusqlite::Error) -> Error + '_ {
    move |e| {
        let interrupted = matches!(
            e.sqlite_error_code(),
            Some(rusqlite::ErrorCode::OperationInterrupted)
        );
        let message = if interrupted {
            "the query ran past the time limit (a view defined by an endless recursive query?)"
                .to_string()
        } else {
            e.to_string()
        };
        Error::new(
            Location::default().with_field(view),
            ErrorKind::Sqlite(message),
        )
    }
}

/// The longest a SQLite input may keep the reader busy: a 1 GB export reads in seconds, while a
/// hostile file (a view defined by an endless recursive query) would otherwise never finish.
pub(crate) const QUERY_TIME_LIMIT: Duration = Duration::from_secs(600);

/// Opens a SQLite file read-only, with every statement on it interrupted past
/// [`QUERY_TIME_LIMIT`] from the opening. A view defined by a recursive query (`WITH
/// RECURSIVE`, which no profiler writes) is refused at once, naming it, rather than run until
/// the limit.
pub(crate) fn open(path: &Path) -> Result<Connection> {
    check_header(path)?;
    let conn = open_with_limit(path, QUERY_TIME_LIMIT)?;
    refuse_recursive_views(&conn)?;
    Ok(conn)
}

/// The header of the database at `path` checked as SQLite checks it when it opens one (see
/// [`crate::sqlite_header::check_header`]): an error naming the first byte SQLite would refuse,
/// where SQLite says only `file is not a database` or that it is malformed. A file too short
/// for a header, or that cannot be read here, is left to SQLite.
fn check_header(path: &Path) -> Result<()> {
    let mut header = [0u8; 100];
    let Ok(len) = kernelab_model::open_regular(path).and_then(|mut f| {
        std::io::Read::read_exact(&mut f, &mut header)?;
        Ok(f.metadata()?.len())
    }) else {
        return Ok(());
    };
    crate::sqlite_header::check_header(&header, len).map(|_| ())
}

/// Whether the SQL text `sql` holds the word `a` followed by the word `b` (ASCII case ignored;
/// words are runs of letters, digits and `_`).
pub(crate) fn has_words(sql: &str, a: &str, b: &str) -> bool {
    let mut words = sql
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty());
    let mut last = words.next();
    for w in words {
        if last.is_some_and(|l| l.eq_ignore_ascii_case(a)) && w.eq_ignore_ascii_case(b) {
            return true;
        }
        last = Some(w);
    }
    false
}

/// An error naming the first view whose SQL holds a recursive common table expression.
fn refuse_recursive_views(conn: &Connection) -> Result<()> {
    let mut st = conn
        .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'view'")
        .map_err(sql_err("sqlite_master"))?;
    let mut q = st.query([]).map_err(sql_err("sqlite_master"))?;
    while let Some(r) = q.next().map_err(sql_err("sqlite_master"))? {
        let name = text_at(r, 0, &mut 0).map_err(sql_err("sqlite_master"))?;
        let sql = text_at(r, 1, &mut 0).map_err(sql_err("sqlite_master"))?;
        if has_words(&sql, "with", "recursive") {
            return Err(Error::new(
                Location::default().with_field(name.clone()),
                ErrorKind::Sqlite(format!(
                    "view `{name}` is defined by a recursive query (WITH RECURSIVE): refused, it may never finish"
                )),
            ));
        }
    }
    Ok(())
}

/// How a database is opened so that reading it creates nothing beside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sides {
    /// Rollback-journal mode, or WAL mode with both its `-wal` and `-shm` files: read-only
    /// (SQLite creates nothing then).
    ReadOnly,
    /// WAL mode with no `-wal` file or an empty one, and no `-shm`: immutable, so that SQLite
    /// does not create them (and leave them behind); there is nothing in a WAL to read.
    Immutable,
    /// WAL mode whose `-wal` file holds frames but with no `-shm`: SQLite would have to create
    /// the `-shm` to read the frames, and immutable would leave them unread.
    PendingFrames,
}

/// [`Sides`] of the database at `path`: WAL mode when bytes 18 and 19 of its header are 2.
fn sides(path: &Path) -> Sides {
    let mut header = [0u8; 20];
    let wal = kernelab_model::open_regular(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut header))
        .is_ok()
        && header.starts_with(b"SQLite format 3\0")
        && (header[18] == 2 || header[19] == 2);
    let side = |s: &str| {
        let mut p = path.as_os_str().to_owned();
        p.push(s);
        std::fs::metadata(Path::new(&p)).ok()
    };
    if !wal {
        return Sides::ReadOnly;
    }
    match (side("-wal"), side("-shm")) {
        (Some(_), Some(_)) => Sides::ReadOnly,
        (Some(w), None) if w.len() > 0 => Sides::PendingFrames,
        _ => Sides::Immutable,
    }
}

/// `path` as a SQLite URI (`file:` and the path, every byte but the unreserved ones
/// percent-encoded) with the query `query`.
fn uri(path: &Path, query: &str) -> String {
    #[cfg(unix)]
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()).to_vec();
    #[cfg(not(unix))]
    let bytes = path.to_string_lossy().into_owned().into_bytes();
    let mut out = String::from("file:");
    for b in bytes {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out.push('?');
    out.push_str(query);
    out
}

/// [`open`] with a given time limit. Reading never writes beside the input (see [`Sides`]): a
/// database in WAL mode whose `-wal` file holds frames, with no `-shm` beside it, is refused,
/// naming the `-wal` file.
pub(crate) fn open_with_limit(path: &Path, limit: Duration) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    // SQLite opens the file by name itself: in a confined run the name must resolve beneath
    // the root first (a link out of it is refused here).
    kernelab_model::confined(path)
        .map_err(|e| Error::new(Location::default(), ErrorKind::Io(e)))?;
    let conn = match sides(path) {
        Sides::ReadOnly => Connection::open_with_flags(path, flags),
        Sides::Immutable => Connection::open_with_flags(
            uri(path, "mode=ro&immutable=1"),
            flags | OpenFlags::SQLITE_OPEN_URI,
        ),
        Sides::PendingFrames => {
            return Err(Error::new(
                Location::default().with_field("-wal"),
                ErrorKind::Sqlite(format!(
                    "the database is in WAL mode and {}-wal beside it holds changes, with no -shm file: reading them would create one beside the input (open it once with sqlite3, which checkpoints the WAL, or read a copy of it and its -wal file made elsewhere)",
                    path.display()
                )),
            ))
        }
    }
    .map_err(|e| Error::new(Location::default(), ErrorKind::Sqlite(e.to_string())))?;
    let start = Instant::now();
    // Called every 100,000 virtual-machine steps; `true` interrupts the running statement.
    conn.progress_handler(100_000, Some(move || start.elapsed() > limit));
    Ok(conn)
}

/// The names of all tables and views.
pub(crate) fn objects(conn: &Connection) -> Result<Vec<String>> {
    let mut st = conn
        .prepare("SELECT name FROM sqlite_master WHERE type IN ('table','view')")
        .map_err(sql_err("sqlite_master"))?;
    let rows = st
        .query_map([], |r| text_at(r, 0, &mut 0))
        .map_err(sql_err("sqlite_master"))?;
    rows.collect::<std::result::Result<Vec<_>, _>>()
        .map_err(sql_err("sqlite_master"))
}

/// An owned value; TEXT is read as bytes (rusqlite's own conversion panics on invalid UTF-8)
/// and converted lossily, invalid bytes becoming U+FFFD, with `lossy` counting such values.
pub(crate) fn owned(v: ValueRef<'_>, lossy: &mut u64) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Integer(i),
        ValueRef::Real(r) => Value::Real(r),
        ValueRef::Text(b) => Value::Text(lossy_text(b, lossy)),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

/// Longest TEXT value copied out of a SQLite input: 1 MiB; a longer one is cut there (and
/// counted with the values that were not UTF-8).
pub(crate) const MAX_TEXT_BYTES: usize = 1 << 20;

/// `bytes` as text, invalid UTF-8 replaced by U+FFFD and anything past [`MAX_TEXT_BYTES`] cut
/// (either counted in `lossy`).
pub(crate) fn lossy_text(bytes: &[u8], lossy: &mut u64) -> String {
    let bytes = match bytes.get(..MAX_TEXT_BYTES) {
        Some(head) if bytes.len() > MAX_TEXT_BYTES => {
            *lossy += 1;
            return String::from_utf8_lossy(head).into_owned();
        }
        _ => bytes,
    };
    match std::str::from_utf8(bytes) {
        Ok(t) => t.to_string(),
        Err(_) => {
            *lossy += 1;
            String::from_utf8_lossy(bytes).into_owned()
        }
    }
}

/// Column `i` of a row as text (TEXT read lossily, numbers written out, NULL and BLOB empty).
pub(crate) fn text_at(
    r: &rusqlite::Row<'_>,
    i: usize,
    lossy: &mut u64,
) -> rusqlite::Result<String> {
    Ok(match r.get_ref(i)? {
        ValueRef::Text(b) => lossy_text(b, lossy),
        ValueRef::Integer(v) => v.to_string(),
        ValueRef::Real(v) => v.to_string(),
        ValueRef::Null | ValueRef::Blob(_) => String::new(),
    })
}

/// Adds the note that `n` TEXT values of `table` were not valid UTF-8 or were cut (nothing
/// when 0).
pub(crate) fn note_lossy(notes: &mut Vec<String>, table: &str, n: u64) {
    if n > 0 {
        notes.push(format!(
            "{n} TEXT values in {table} were not valid UTF-8 or longer than {MAX_TEXT_BYTES} bytes: invalid bytes are shown as U+FFFD, long values are cut"
        ));
    }
}

/// The duration from `start` to `end` in integer nanoseconds; an end before the start (or a
/// difference that overflows) is an error located at `field`.
pub(crate) fn span(start: i64, end: i64, field: &str) -> Result<kernelab_model::Nanos> {
    end.checked_sub(start)
        .and_then(|d| u64::try_from(d).ok())
        .map(kernelab_model::Nanos::from_ns)
        .ok_or_else(|| {
            Error::syntax(
                Location::default().with_field(field.to_string()),
                "an end not before the start (a non-negative duration)",
                format!("start {start}, end {end}"),
            )
        })
}

/// Reads every row of `view` as name → value maps (columns by name, never by position);
/// returns how many TEXT values were not valid UTF-8 (read lossily).
pub(crate) fn rows(
    conn: &Connection,
    view: &str,
    mut f: impl FnMut(&HashMap<String, Value>, u64) -> Result<()>,
) -> Result<u64> {
    let mut st = conn
        .prepare(&format!("SELECT * FROM \"{view}\""))
        .map_err(sql_err(view))?;
    // Names from the schema, read lossily: rusqlite's own column names panic on invalid UTF-8.
    let names: Vec<String> = columns(conn, view)?
        .iter()
        .map(|s| s.to_ascii_lowercase())
        .collect();
    if names.len() != st.column_count() {
        return Err(Error::new(
            Location::default().with_field(view),
            ErrorKind::Sqlite(format!(
                "{} columns in the schema but {} in its rows",
                names.len(),
                st.column_count()
            )),
        ));
    }
    let mut q = st.query([]).map_err(sql_err(view))?;
    let mut n = 0u64;
    let mut lossy = 0u64;
    let mut map = HashMap::new();
    while let Some(r) = q.next().map_err(sql_err(view))? {
        n += 1;
        map.clear();
        for (i, name) in names.iter().enumerate() {
            let v = owned(r.get_ref(i).map_err(sql_err(view))?, &mut lossy);
            map.insert(name.clone(), v);
        }
        f(&map, n)?;
    }
    Ok(lossy)
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

/// The names of all tables (not views).
pub(crate) fn tables(conn: &Connection) -> Result<Vec<String>> {
    let mut st = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .map_err(sql_err("sqlite_master"))?;
    let rows = st
        .query_map([], |r| text_at(r, 0, &mut 0))
        .map_err(sql_err("sqlite_master"))?;
    rows.collect::<std::result::Result<Vec<_>, _>>()
        .map_err(sql_err("sqlite_master"))
}

/// The column names of a table or view (empty if it does not exist).
pub(crate) fn columns(conn: &Connection, table: &str) -> Result<Vec<String>> {
    let mut st = conn
        .prepare(&format!("PRAGMA table_info(\"{table}\")"))
        .map_err(sql_err(table))?;
    let rows = st
        .query_map([], |r| text_at(r, 1, &mut 0))
        .map_err(sql_err(table))?;
    rows.collect::<std::result::Result<Vec<_>, _>>()
        .map_err(sql_err(table))
}

/// A statement whose result columns are read as integers straight through SQLite's C API: one
/// column lookup per value (`sqlite3_column_value`, then its type and integer) instead of
/// rusqlite's three, for tables of millions of rows. Errors read as rusqlite's own (`Row::get::<Option<i64>>`, `Rows::next`).
pub(crate) struct IntRows<'c> {
    /// Keeps the connection borrowed (and this value on its thread: a raw pointer is not `Send`).
    conn: &'c Connection,
    stmt: std::ptr::NonNull<rusqlite::ffi::sqlite3_stmt>,
    /// Column names, for the error a non-integer value gives.
    names: Vec<String>,
    on_row: bool,
    done: bool,
}

impl<'c> IntRows<'c> {
    /// Prepares `sql` on `conn`.
    pub(crate) fn prepare(conn: &'c Connection, sql: &str) -> rusqlite::Result<IntRows<'c>> {
        use rusqlite::ffi;
        let len = std::ffi::c_int::try_from(sql.len()).map_err(|_| {
            rusqlite::Error::SqliteFailure(ffi::Error::new(ffi::SQLITE_TOOBIG), None)
        })?;
        let mut raw: *mut ffi::sqlite3_stmt = std::ptr::null_mut();
        // SAFETY: `conn.handle()` is the open database of `conn`, used on this thread only (a
        // `Connection` is not `Sync`) while `conn` is borrowed; `sql` is valid for `len` bytes
        // (SQLite reads no further, no NUL needed), and `raw` is a valid place for the result.
        #[allow(unsafe_code)]
        let rc = unsafe {
            ffi::sqlite3_prepare_v2(
                conn.handle(),
                sql.as_ptr().cast(),
                len,
                &mut raw,
                std::ptr::null_mut(),
            )
        };
        if rc != ffi::SQLITE_OK {
            if !raw.is_null() {
                // SAFETY: `raw` came from `sqlite3_prepare_v2` and is finalized once, here.
                #[allow(unsafe_code)]
                unsafe {
                    ffi::sqlite3_finalize(raw);
                }
            }
            return Err(Self::error(conn, rc));
        }
        let Some(stmt) = std::ptr::NonNull::new(raw) else {
            // Empty SQL: no statement.
            return Err(rusqlite::Error::SqliteFailure(
                ffi::Error::new(ffi::SQLITE_MISUSE),
                Some("no statement in the query".into()),
            ));
        };
        let mut rows = IntRows {
            conn,
            stmt,
            names: Vec::new(),
            on_row: false,
            done: false,
        };
        // SAFETY: `stmt` is a live statement of this thread's connection.
        #[allow(unsafe_code)]
        let n = unsafe { ffi::sqlite3_column_count(rows.stmt.as_ptr()) };
        for i in 0..n.max(0) {
            // SAFETY: `i` is below the column count; the name, when not NULL, is a
            // NUL-terminated string valid until the statement is finalized or the name asked
            // for again, and it is copied at once.
            #[allow(unsafe_code)]
            let name = unsafe {
                let p = ffi::sqlite3_column_name(rows.stmt.as_ptr(), i);
                if p.is_null() {
                    String::new()
                } else {
                    std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
                }
            };
            rows.names.push(name);
        }
        Ok(rows)
    }

    /// The result columns' names, as SQLite gives them.
    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }

    /// rusqlite's error for the result code `rc` of the last call on `conn`.
    #[cold]
    fn error(conn: &Connection, rc: std::ffi::c_int) -> rusqlite::Error {
        use rusqlite::ffi;
        // SAFETY: the connection is open and used on this thread only; the message is a
        // NUL-terminated string owned by SQLite, copied at once.
        #[allow(unsafe_code)]
        let message = unsafe {
            let p = ffi::sqlite3_errmsg(conn.handle());
            (!p.is_null()).then(|| std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned())
        };
        rusqlite::Error::SqliteFailure(ffi::Error::new(rc), message)
    }

    /// Steps to the next row: `false` once there is none (and ever after).
    pub(crate) fn next(&mut self) -> rusqlite::Result<bool> {
        use rusqlite::ffi;
        if self.done {
            return Ok(false);
        }
        // SAFETY: a live statement of this thread's connection.
        #[allow(unsafe_code)]
        let rc = unsafe { ffi::sqlite3_step(self.stmt.as_ptr()) };
        match rc {
            ffi::SQLITE_ROW => {
                self.on_row = true;
                Ok(true)
            }
            ffi::SQLITE_DONE => {
                self.on_row = false;
                self.done = true;
                Ok(false)
            }
            _ => {
                self.on_row = false;
                self.done = true;
                Err(Self::error(self.conn, rc))
            }
        }
    }

    /// Column `i` of the current row: `None` for NULL, the error `Row::get::<Option<i64>>`
    /// gives for a value of another type or a column that is not there.
    #[inline]
    pub(crate) fn int(&self, i: usize) -> rusqlite::Result<Option<i64>> {
        use rusqlite::{ffi, types::Type};
        let Some(name) = self.names.get(i).filter(|_| self.on_row) else {
            return Err(rusqlite::Error::InvalidColumnIndex(i));
        };
        let col =
            std::ffi::c_int::try_from(i).map_err(|_| rusqlite::Error::InvalidColumnIndex(i))?;
        // SAFETY: the statement is on a row (`on_row`, set by the last step) and `col` is
        // below its column count (`names` holds one entry per column). The value is read at
        // once, before the statement moves, so it is still valid; it is "unprotected" (SQLite
        // holds no mutex for it), which only matters when the connection is shared between
        // threads, and this one is used on its thread alone (`IntRows` is not `Send`, a
        // `Connection` not `Sync`). Type and integer are read from the one value: one call
        // into the statement per column instead of two (`sqlite3_column_type` and
        // `sqlite3_column_int64` each look the column up, with the mutex calls).
        #[allow(unsafe_code)]
        let (ty, v) = unsafe {
            let v = ffi::sqlite3_column_value(self.stmt.as_ptr(), col);
            let ty = ffi::sqlite3_value_type(v);
            (
                ty,
                (ty == ffi::SQLITE_INTEGER).then(|| ffi::sqlite3_value_int64(v)),
            )
        };
        let t = match ty {
            ffi::SQLITE_INTEGER => return Ok(v),
            ffi::SQLITE_NULL => return Ok(None),
            ffi::SQLITE_FLOAT => Type::Real,
            ffi::SQLITE_TEXT => Type::Text,
            _ => Type::Blob,
        };
        Err(rusqlite::Error::InvalidColumnType(i, name.clone(), t))
    }
}

impl Drop for IntRows<'_> {
    fn drop(&mut self) {
        // SAFETY: the statement came from `sqlite3_prepare_v2` on this thread's connection,
        // which outlives it (borrowed), and is finalized once, here.
        #[allow(unsafe_code)]
        unsafe {
            rusqlite::ffi::sqlite3_finalize(self.stmt.as_ptr());
        }
    }
}

/// A read transaction held on a connection while this lives (ended when dropped): the
/// database's shared lock, so that no writer changes the file meanwhile. Nothing is held when
/// the connection is already in a transaction.
pub(crate) struct ReadLock<'c>(Option<&'c Connection>);

impl<'c> ReadLock<'c> {
    /// Begins the transaction and takes the shared lock (by reading the schema).
    pub(crate) fn hold(conn: &'c Connection) -> rusqlite::Result<ReadLock<'c>> {
        if !conn.is_autocommit() {
            return Ok(ReadLock(None));
        }
        conn.execute_batch("BEGIN")?;
        let lock = ReadLock(Some(conn));
        conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
            r.get::<_, i64>(0)
        })?;
        Ok(lock)
    }
}

impl Drop for ReadLock<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.0 {
            // A read transaction has nothing to commit; an error leaves nothing behind.
            let _ = conn.execute_batch("COMMIT");
        }
    }
}

/// Checks the b-trees of `table` and its indexes (`None`: of the whole database) as SQLite's
/// `PRAGMA quick_check` does: a page referenced twice, rowids out of order,
/// cells that do not fill their page. A scan through SQLite does none of this, so a damaged
/// tree would otherwise read as complete with rows missing or repeated. An error names the
/// table and the first problems SQLite reports (with their pages). It reads every page of the
/// table: about a full scan's time (docs/formats.md gives the cost).
pub(crate) fn quick_check(conn: &Connection, table: Option<&str>) -> Result<()> {
    let what = table.unwrap_or("the database");
    let q = match table {
        Some(t) => format!("PRAGMA quick_check(\"{}\")", t.replace('"', "\"\"")),
        None => "PRAGMA quick_check".into(),
    };
    let fail = |e: rusqlite::Error| {
        let e = sql_err(what)(e);
        Error::new(
            Location::default().with_field(what),
            ErrorKind::Sqlite(format!("PRAGMA quick_check of {what}: {}", e.kind())),
        )
    };
    let mut st = conn.prepare(&q).map_err(fail)?;
    let mut rows = st.query([]).map_err(fail)?;
    let mut problems = Vec::new();
    while let Some(r) = rows.next().map_err(fail)? {
        let line = text_at(r, 0, &mut 0).map_err(fail)?;
        if line != "ok" && problems.len() < 3 {
            problems.push(
                line.replace("*** in database main ***\n", "")
                    .replace('\n', "; "),
            );
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(Error::new(
        Location::default().with_field(what),
        ErrorKind::Sqlite(format!(
            "database disk image is malformed: PRAGMA quick_check of {what}: {}",
            problems.join("; ")
        )),
    ))
}

/// The column names of an index (`PRAGMA index_info`; an expression reads as empty).
pub(crate) fn columns_of_index(conn: &Connection, index: &str) -> Result<Vec<String>> {
    let mut st = conn
        .prepare(&format!(
            "PRAGMA index_info(\"{}\")",
            index.replace('"', "\"\"")
        ))
        .map_err(sql_err(index))?;
    let rows = st
        .query_map([], |r| text_at(r, 2, &mut 0))
        .map_err(sql_err(index))?;
    rows.collect::<std::result::Result<Vec<_>, _>>()
        .map_err(sql_err(index))
}

#[cfg(test)]
mod limit_tests {
    use super::*;

    #[test]
    fn long_text_is_cut_and_counted() {
        let mut lossy = 0;
        let long = vec![b'a'; MAX_TEXT_BYTES + 10];
        assert_eq!(lossy_text(&long, &mut lossy).len(), MAX_TEXT_BYTES);
        assert_eq!(lossy, 1);
        assert_eq!(lossy_text(b"short", &mut lossy), "short");
        assert_eq!(lossy, 1);
    }

    #[test]
    fn an_endless_recursive_view_is_interrupted() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("loop.db");
        {
            let c = Connection::open(&p).expect("create");
            c.execute_batch(
                "CREATE VIEW kernels AS WITH RECURSIVE n(x) AS \
                 (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x FROM n;",
            )
            .expect("view");
        }
        // Refused at open, naming the view, without running it.
        let started = Instant::now();
        let e = open(&p).expect_err("refused");
        assert!(
            e.to_string()
                .contains("view `kernels` is defined by a recursive query"),
            "{e}"
        );
        assert!(started.elapsed() < Duration::from_secs(2));
        let conn = open_with_limit(&p, Duration::from_millis(300)).expect("opens");
        let started = Instant::now();
        let r: std::result::Result<i64, _> =
            conn.query_row("SELECT count(*) FROM kernels", [], |r| r.get(0));
        let e = r.map_err(sql_err("kernels")).expect_err("interrupted");
        assert!(started.elapsed() < Duration::from_secs(20));
        assert!(e.to_string().contains("ran past the time limit"), "{e}");
    }
}
