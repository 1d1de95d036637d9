//! A rowid table of a SQLite file read straight from its pages: the table's b-tree walked once
//! for its leaf pages (in key order, the order of a full scan), then the leaves read in runs
//! of consecutive pages and their records decoded field by field, integers only. SQLite's own
//! scan spends most of its time in its virtual machine, decoding every column of a row through
//! a generic opcode, and in one read call per page; here a row costs a few varints. The format
//! is SQLite's documented, stable file format (<https://www.sqlite.org/fileformat2.html>); no
//! crate reads it without an engine of its own, so the part needed is written here.
//!
//! Only a table whose values read the same as through SQLite is read this way ([`PageTable::open`]
//! says `None` otherwise, and the caller queries SQLite): a plain rowid table of a file in
//! rollback-journal mode with no journal or WAL file beside it, no hidden or generated column,
//! no column that is the rowid, no column read with REAL affinity (SQLite turns the integers
//! it stores for those into reals), and column defaults (for records written before a column
//! was added) that are NULL or integer literals. The caller holds a read transaction while it
//! reads, so no writer changes the file meanwhile; the file is opened once, before the
//! transaction, and closed after it ([`database_file`]). A structure that breaks the format (a page
//! of the wrong kind, a cell past its page, a cycle) is an error naming the page.

use crate::error::{Error, ErrorKind, Result};
use crate::sqlite::has_words;
use crate::sqlite_header::{be, check_header, Header};
use kernelab_model::Location;
use rusqlite::types::Type;
use rusqlite::Connection;
use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Leaf pages read at once (one read call for a run of consecutive pages).
const RUN_PAGES: usize = 64;

/// Deepest b-tree walked (SQLite's own limit is 20 levels; a deeper tree is malformed).
const MAX_DEPTH: usize = 40;

/// A field of a record as read: what the caller's query would see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// SQL NULL (or a column the table does not have).
    Null,
    /// An integer.
    Int(i64),
    /// A value of another storage class (REAL, TEXT or BLOB).
    Other(Type),
}

/// A rowid table laid out for reading from its pages; see the module documentation.
#[derive(Debug)]
pub(crate) struct PageTable<'f> {
    path: PathBuf,
    /// The database (from [`database_file`]), through which every read goes (positioned
    /// reads, from any thread).
    file: &'f File,
    /// Pages in the file.
    pages: u32,
    /// Overflow pages that may still be read: each page of a valid file belongs to one chain,
    /// so the reads of every chain together stay below the file's pages (a bound on the work
    /// a file whose cells share a chain, or whose chain loops, could make).
    overflow_budget: AtomicU64,
    page_size: usize,
    /// Bytes of a page the b-tree uses (the page size less the reserved bytes).
    usable: usize,
    /// The table's leaf pages, in key order, with the rowids their parents' keys allow.
    leaves: Vec<Leaf>,
    /// Default value per table column, for records shorter than the table.
    defaults: Vec<Field>,
}

/// A leaf page of a table and the rowids the keys of the pages above it allow: above `lo`
/// (when set), at most `hi` (when set), as in every valid file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Leaf {
    page: u32,
    lo: Option<i64>,
    hi: Option<i64>,
}

/// The error for a page that breaks the format.
fn malformed(table: &str, page: u32, what: &str) -> Error {
    Error::new(
        Location::default().with_field(table),
        ErrorKind::Sqlite(format!(
            "database disk image is malformed: page {page} of table {table}: {what}"
        )),
    )
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::new(Location::default().with_path(path), ErrorKind::Io(e))
}

/// A SQLite varint at `at`: its value and length.
#[inline]
fn varint(b: &[u8], at: usize) -> Option<(u64, usize)> {
    let first = *b.get(at)?;
    if first < 0x80 {
        return Some((u64::from(first), 1));
    }
    let mut v = 0u64;
    for k in 0..8 {
        let x = *b.get(at + k)?;
        v = (v << 7) | u64::from(x & 0x7f);
        if x & 0x80 == 0 {
            return Some((v, k + 1));
        }
    }
    let x = *b.get(at + 8)?;
    Some(((v << 8) | u64::from(x), 9))
}

/// A column's type affinity, by the rules of SQLite (section 3.1 of its datatype
/// documentation), in their order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Affinity {
    Integer,
    Text,
    Blob,
    Real,
    Numeric,
}

fn affinity(declared: &str) -> Affinity {
    let t = declared.to_ascii_uppercase();
    if t.contains("INT") {
        Affinity::Integer
    } else if ["CHAR", "CLOB", "TEXT"].iter().any(|w| t.contains(w)) {
        Affinity::Text
    } else if t.contains("BLOB") || t.trim().is_empty() {
        Affinity::Blob
    } else if ["REAL", "FLOA", "DOUB"].iter().any(|w| t.contains(w)) {
        Affinity::Real
    } else {
        Affinity::Numeric
    }
}

/// A column default as the field SQLite reads for a record written before the column was
/// added: NULL, or an integer literal (text on a column of TEXT affinity, which SQLite applies
/// to the default); `None` for any other expression.
fn default_field(dflt: Option<&str>, affinity: Affinity) -> Option<Field> {
    let Some(d) = dflt.map(str::trim) else {
        return Some(Field::Null);
    };
    if d.eq_ignore_ascii_case("null") {
        return Some(Field::Null);
    }
    let digits = d.strip_prefix(['+', '-']).unwrap_or(d);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let v = d.trim_start_matches('+').parse::<i64>().ok()?;
    Some(match affinity {
        Affinity::Text => Field::Other(Type::Text),
        _ => Field::Int(v),
    })
}

/// The database file of `conn`, opened for reading its pages (`None`: it has none, or it
/// cannot be opened here: it is then read through SQLite). Open it BEFORE the read
/// transaction and close it AFTER: closing any handle on a file releases every POSIX lock the
/// process holds on it, SQLite's shared lock included.
pub(crate) fn database_file(conn: &Connection) -> Option<File> {
    let path = conn.path().filter(|p| !p.is_empty())?;
    // Through the confined layer: the pages read are those of a file beneath the root.
    kernelab_model::open_regular(Path::new(path)).ok()
}

impl<'f> PageTable<'f> {
    /// The table `table` of the database `conn` has open (`file`: from [`database_file`]), laid
    /// out for reading from its pages, or `None` when it must be read through SQLite (see the
    /// module documentation).
    pub(crate) fn open(
        conn: &Connection,
        file: &'f File,
        table: &str,
    ) -> Result<Option<PageTable<'f>>> {
        let Some(path) = conn.path().filter(|p| !p.is_empty()).map(PathBuf::from) else {
            return Ok(None);
        };
        for side in ["-wal", "-journal"] {
            let mut p = path.clone().into_os_string();
            p.push(side);
            if Path::new(&p).exists() {
                return Ok(None);
            }
        }
        let len = file.metadata().map_err(io_err(&path))?.len();
        let mut header = [0u8; 100];
        if !read_at(file, &mut header, 0).unwrap_or(false) {
            return Ok(None);
        }
        let Header {
            page_size,
            reserved,
            pages,
        } = check_header(&header, len)?;
        // Bytes 18 and 19 are 1 in rollback-journal mode (2: WAL, read through SQLite).
        if header[18] != 1 || header[19] != 1 || len % page_size as u64 != 0 {
            return Ok(None);
        }
        let usable = page_size - reserved;
        let master: Option<(String, Option<i64>, String)> = conn
            .query_row(
                "SELECT type, rootpage, coalesce(sql, '') FROM sqlite_master WHERE name = ?1",
                [table],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .ok();
        let Some((kind, Some(root), sql)) = master else {
            return Ok(None);
        };
        if kind != "table"
            || has_words(&sql, "without", "rowid")
            || has_words(&sql, "create", "virtual")
        {
            return Ok(None);
        }
        let Ok(root) = u32::try_from(root) else {
            return Ok(None);
        };
        let Some(defaults) = column_defaults(conn, table)? else {
            return Ok(None);
        };
        let leaves = match leaf_pages(file, &path, page_size, usable, pages, root, table)? {
            Some(l) => l,
            None => return Ok(None),
        };
        Ok(Some(PageTable {
            path,
            file,
            pages,
            overflow_budget: AtomicU64::new(u64::from(pages)),
            page_size,
            usable,
            leaves,
            defaults,
        }))
    }

    /// The number of leaf pages.
    pub(crate) fn leaf_count(&self) -> usize {
        self.leaves.len()
    }

    /// Calls `row` with the fields `columns` (table column positions; `None`: NULL) of every
    /// record on the leaf pages `leaves` (indices into the leaf list), in key order; `table`
    /// names the table in errors.
    pub(crate) fn scan(
        &self,
        table: &str,
        leaves: Range<usize>,
        columns: &[Option<usize>],
        mut row: impl FnMut(&[Field]) -> Result<()>,
    ) -> Result<()> {
        let Some(list) = self.leaves.get(leaves) else {
            return Ok(());
        };
        let mut buf = Vec::new();
        let mut fields = vec![Field::Null; columns.len()];
        let wanted = Wanted::new(columns);
        let mut scratch = Vec::new();
        let mut k = 0;
        while k < list.len() {
            // A run of consecutive pages, read at once.
            let first = list[k].page;
            let mut n = 1;
            while n < RUN_PAGES
                && list
                    .get(k + n)
                    .is_some_and(|l| Some(l.page) == first.checked_add(n as u32))
            {
                n += 1;
            }
            buf.resize(n * self.page_size, 0);
            read_pages(self.file, &self.path, self.page_size, first, &mut buf)?;
            for (j, page) in buf.chunks(self.page_size).enumerate() {
                let number = first + j as u32;
                let Some(&leaf) = list.get(k + j) else {
                    break;
                };
                let mut last = leaf.lo;
                let mut on_cell = |rowid: i64, payload: &[u8]| {
                    // Rowids rise through the leaf within the keys above it: a leaf reached
                    // from the wrong parent, or cells moved, would break this.
                    if last.is_some_and(|l| rowid <= l) || leaf.hi.is_some_and(|h| rowid > h) {
                        return Err(malformed(
                            table,
                            number,
                            &format!(
                                "rowid {rowid} out of order (the keys above the page allow {} to {})",
                                leaf.lo.map_or("any".into(), |l| format!("above {l}")),
                                leaf.hi.map_or("any".into(), |h| h.to_string())
                            ),
                        ));
                    }
                    last = Some(rowid);
                    wanted
                        .decode(payload, &self.defaults, &mut fields)
                        .ok_or_else(|| malformed(table, number, "a record that does not decode"))?;
                    row(&fields)
                };
                leaf_cells(
                    page,
                    number,
                    self.usable,
                    table,
                    &mut |cell: Cell<'_>| match cell {
                        Cell::Local { rowid, payload } => on_cell(rowid, payload),
                        Cell::Overflow {
                            rowid,
                            local,
                            total,
                            next,
                        } => {
                            self.overflow_payload(table, local, total, next, &mut scratch)?;
                            on_cell(rowid, &scratch)
                        }
                    },
                )?;
            }
            k += n;
        }
        Ok(())
    }
}

/// The default per table column (`PRAGMA table_xinfo`), or `None` when the table has a hidden
/// or generated column, a column that is the rowid, a column of REAL affinity, or a default
/// that is not NULL or an integer literal.
fn column_defaults(conn: &Connection, table: &str) -> Result<Option<Vec<Field>>> {
    let q = format!("PRAGMA table_xinfo(\"{}\")", table.replace('"', "\"\""));
    let mut st = conn.prepare(&q).map_err(crate::sqlite::sql_err(table))?;
    // The default as text (`None`: NULL, or a value that cannot be read as text).
    type Info = (String, Option<Option<String>>, i64, i64);
    let rows: Vec<Info> = st
        .query_map([], |r| {
            Ok((
                crate::sqlite::text_at(r, 2, &mut 0)?,
                r.get::<_, Option<String>>(4).ok(),
                r.get::<_, Option<i64>>(5)?.unwrap_or(0),
                r.get::<_, Option<i64>>(6)?.unwrap_or(0),
            ))
        })
        .map_err(crate::sqlite::sql_err(table))?
        .collect::<std::result::Result<_, _>>()
        .map_err(crate::sqlite::sql_err(table))?;
    let mut out = Vec::with_capacity(rows.len());
    for (declared, dflt, pk, hidden) in rows {
        let affinity = affinity(&declared);
        let Some(dflt) = dflt else {
            return Ok(None);
        };
        if pk != 0 || hidden != 0 || affinity == Affinity::Real {
            return Ok(None);
        }
        match default_field(dflt.as_deref(), affinity) {
            Some(f) => out.push(f),
            None => return Ok(None),
        }
    }
    Ok((!out.is_empty()).then_some(out))
}

/// Reads `buf.len()` bytes at `offset` of `file` (a positioned read, which leaves the handle
/// as it was, so threads share it); `Ok(false)` at the end of the file.
#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<bool> {
    use std::os::unix::fs::FileExt;
    match file.read_exact_at(buf, offset) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(false),
        Err(e) => Err(e),
    }
}

/// Elsewhere no table is read from its pages (SQLite reads it).
#[cfg(not(unix))]
fn read_at(_file: &File, _buf: &mut [u8], _offset: u64) -> std::io::Result<bool> {
    Ok(false)
}

/// Reads `buf.len()` bytes from page `first` on.
fn read_pages(
    file: &File,
    path: &Path,
    page_size: usize,
    first: u32,
    buf: &mut [u8],
) -> Result<()> {
    let at = u64::from(first.saturating_sub(1)) * page_size as u64;
    if read_at(file, buf, at).map_err(io_err(path))? {
        Ok(())
    } else {
        Err(io_err(path)(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("the file ends within page {first}"),
        )))
    }
}

/// The leaf pages of the table b-tree rooted at `root`, in key order, with the rowids the
/// keys above each allow; `None` when a page is not a table b-tree page (the caller leaves the
/// file to SQLite, which says what is wrong). A page met twice (a cycle, or a child pointer
/// changed to another page of the tree, so that some leaves would be read twice and others
/// never) is an error naming it: SQLite's own scan would read such a tree without a word.
#[allow(clippy::too_many_arguments)]
fn leaf_pages(
    file: &File,
    path: &Path,
    page_size: usize,
    usable: usize,
    pages: u32,
    root: u32,
    table: &str,
) -> Result<Option<Vec<Leaf>>> {
    let mut leaves = Vec::new();
    let mut page = vec![0u8; page_size];
    // Pages still to visit, last first, with their depth and key bounds.
    let mut stack: Vec<(Leaf, usize)> = vec![(
        Leaf {
            page: root,
            lo: None,
            hi: None,
        },
        0,
    )];
    let mut seen = vec![0u64; (pages as usize).div_ceil(64) + 1];
    while let Some((node, depth)) = stack.pop() {
        let number = node.page;
        if number == 0 || number > pages || depth > MAX_DEPTH {
            return Ok(None);
        }
        let (word, bit) = (number as usize / 64, 1u64 << (number % 64));
        match seen.get_mut(word) {
            Some(w) if *w & bit == 0 => *w |= bit,
            _ => {
                return Err(malformed(
                    table,
                    number,
                    "a page referenced twice in the table's b-tree (some pages would be read twice, others never)",
                ))
            }
        }
        read_pages(file, path, page_size, number, &mut page)?;
        let h = if number == 1 { 100 } else { 0 };
        match page.get(h) {
            Some(0x0d) => leaves.push(node),
            Some(0x05) => {
                let cells = be::<2>(&page, h + 3).unwrap_or(0) as usize;
                let Some(right) = be::<4>(&page, h + 8) else {
                    return Ok(None);
                };
                let mut children = Vec::with_capacity(cells + 1);
                let mut lo = node.lo;
                for c in 0..cells {
                    let Some(at) = be::<2>(&page, h + 12 + 2 * c).map(|a| a as usize) else {
                        return Ok(None);
                    };
                    let child = be::<4>(&page, at).filter(|_| at + 4 <= usable);
                    let key = varint(page.get(..usable).unwrap_or_default(), at + 4);
                    match (child, key) {
                        (Some(child), Some((key, _))) => {
                            // The key bounds the child's rowids from above (and the next
                            // child's from below); SQLite stores it as a 64-bit two's complement.
                            let key = key as i64;
                            children.push(Leaf {
                                page: child as u32,
                                lo,
                                hi: Some(node.hi.map_or(key, |h| h.min(key))),
                            });
                            lo = Some(lo.map_or(key, |l| l.max(key)));
                        }
                        _ => return Ok(None),
                    }
                }
                children.push(Leaf {
                    page: right as u32,
                    lo,
                    hi: node.hi,
                });
                // Visited left to right: pushed right to left.
                stack.extend(children.into_iter().rev().map(|c| (c, depth + 1)));
            }
            _ => return Ok(None),
        }
    }
    Ok(Some(leaves))
}

/// A cell of a table leaf page: its payload, whole or with the rest on overflow pages.
enum Cell<'a> {
    Local {
        rowid: i64,
        payload: &'a [u8],
    },
    Overflow {
        rowid: i64,
        local: &'a [u8],
        total: usize,
        next: u32,
    },
}

/// Calls `f` with each cell of the table leaf page `page` (page number `number`), in order.
/// The cells, free blocks and fragmented bytes must fill the page's content area exactly, as
/// in every valid file: a cell count lowered by damage (cells dropped) is an error naming the
/// page, once the cells counted have been read.
fn leaf_cells(
    page: &[u8],
    number: u32,
    usable: usize,
    table: &str,
    f: &mut dyn FnMut(Cell<'_>) -> Result<()>,
) -> Result<()> {
    let h = if number == 1 { 100 } else { 0 };
    let bad = |what: &str| malformed(table, number, what);
    if page.get(h) != Some(&0x0d) {
        return Err(bad("not a table leaf page"));
    }
    let page = page
        .get(..usable)
        .ok_or_else(|| bad("shorter than a page"))?;
    let cells = be::<2>(page, h + 3).ok_or_else(|| bad("no cell count"))? as usize;
    if h + 8 + 2 * cells > usable {
        return Err(bad("more cells than the page holds pointers for"));
    }
    // Largest payload kept on the page, and the least (section 1.6 of the file format).
    let max_local = usable - 35;
    let min_local = (usable - 12) * 32 / 255 - 23;
    // Bytes the cells take in the content area (SQLite counts at least 4 a cell).
    let mut used = 0usize;
    for c in 0..cells {
        let at = be::<2>(page, h + 8 + 2 * c).ok_or_else(|| bad("a cell pointer past the page"))?
            as usize;
        let (total, n1) = varint(page, at).ok_or_else(|| bad("a cell past the page"))?;
        let (rowid, n2) = varint(page, at + n1).ok_or_else(|| bad("a cell past the page"))?;
        let rowid = rowid as i64;
        let start = at + n1 + n2;
        let total = usize::try_from(total).map_err(|_| bad("a payload size out of range"))?;
        if total <= max_local {
            let payload = page
                .get(start..start.saturating_add(total))
                .ok_or_else(|| bad("a payload past the page"))?;
            used += (n1 + n2 + total).max(4);
            f(Cell::Local { rowid, payload })?;
        } else {
            let k = min_local + (total - min_local) % (usable - 4);
            let local_len = if k <= max_local { k } else { min_local };
            let local = page
                .get(start..start + local_len)
                .ok_or_else(|| bad("a payload past the page"))?;
            let next = be::<4>(page, start + local_len)
                .ok_or_else(|| bad("an overflow pointer past the page"))?;
            used += n1 + n2 + local_len + 4;
            f(Cell::Overflow {
                rowid,
                local,
                total,
                next: next as u32,
            })?;
        }
    }
    let content = match be::<2>(page, h + 5) {
        Some(0) => 65536,
        Some(c) => c as usize,
        None => usable,
    };
    let mut free = usize::from(page.get(h + 7).copied().unwrap_or(0));
    let mut block = be::<2>(page, h + 1).unwrap_or(0) as usize;
    while block != 0 {
        // Free blocks are chained in rising order, each at least 4 bytes, inside the area.
        let next = be::<2>(page, block).unwrap_or(0) as usize;
        let size = be::<2>(page, block + 2).unwrap_or(0) as usize;
        if block < content || size < 4 || block + size > usable || (next != 0 && next <= block) {
            return Err(bad("a free block outside the content area or out of order"));
        }
        free += size;
        block = next;
    }
    let area = usable.saturating_sub(content);
    if content > usable || used + free != area {
        return Err(bad(&format!(
            "{cells} cells, free blocks and fragments that take {} of the {area} bytes of the content area (cells dropped or overlapping)",
            used + free
        )));
    }
    Ok(())
}

impl PageTable<'_> {
    /// The whole payload of a cell whose rest is on the overflow chain from page `next`, into
    /// `out`.
    fn overflow_payload(
        &self,
        table: &str,
        local: &[u8],
        total: usize,
        mut next: u32,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let per_page = self.usable - 4;
        // The pages the rest takes: more than the budget left is no valid file.
        let need = (total.saturating_sub(local.len())).div_ceil(per_page) as u64;
        let granted = self
            .overflow_budget
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(need)
            })
            .is_ok();
        if !granted {
            return Err(malformed(
                table,
                next,
                "overflow chains longer than the file (cells sharing a chain, or a chain that loops)",
            ));
        }
        out.clear();
        out.extend_from_slice(local);
        let mut page = vec![0u8; self.page_size];
        while out.len() < total {
            if next == 0 || next > self.pages {
                return Err(malformed(table, next, "an overflow chain that ends early"));
            }
            read_pages(self.file, &self.path, self.page_size, next, &mut page)?;
            let take = (total - out.len()).min(per_page);
            out.extend_from_slice(page.get(4..4 + take).unwrap_or_default());
            next = be::<4>(&page, 0).unwrap_or(0) as u32;
        }
        Ok(())
    }
}

/// The size in bytes of a field of serial type `t` (the reserved types 10 and 11 take none).
fn field_size(t: u64) -> Option<usize> {
    Some(match t {
        0 | 8 | 9 => 0,
        1..=4 => t as usize,
        5 => 6,
        6 | 7 => 8,
        10 | 11 => 0,
        _ => usize::try_from((t - 12) / 2).ok()?,
    })
}

/// Which table columns a scan reads, and where each goes.
struct Wanted {
    /// Per table column up to the last one read, the output field it goes to.
    slot_of: Vec<Option<usize>>,
    /// Output fields that repeat an earlier one's column: (the earlier one, the repeat).
    repeats: Vec<(usize, usize)>,
}

impl Wanted {
    fn new(columns: &[Option<usize>]) -> Wanted {
        let end = columns.iter().flatten().map(|&c| c + 1).max().unwrap_or(0);
        let mut slot_of = vec![None; end];
        let mut repeats = Vec::new();
        for (i, &c) in columns.iter().enumerate() {
            if let Some(c) = c {
                match slot_of[c] {
                    Some(first) => repeats.push((first, i)),
                    None => slot_of[c] = Some(i),
                }
            }
        }
        Wanted { slot_of, repeats }
    }

    /// Decodes into `out` the fields of the record `payload` (a short record takes the table's
    /// `defaults` past its end); `None` when the record breaks the format.
    fn decode(&self, payload: &[u8], defaults: &[Field], out: &mut [Field]) -> Option<()> {
        let (header_len, n) = varint(payload, 0)?;
        let header_len = usize::try_from(header_len).ok()?;
        if header_len > payload.len() || header_len < n {
            return None;
        }
        out.fill(Field::Null);
        let end = self.slot_of.len();
        let (mut at, mut body, mut col) = (n, header_len, 0usize);
        while at < header_len && col < end {
            let (t, k) = varint(payload, at)?;
            at += k;
            let size = field_size(t)?;
            if let Some(slot) = self.slot_of.get(col).copied().flatten() {
                let bytes = payload.get(body..body.checked_add(size)?)?;
                let value = match t {
                    // 10 and 11 are reserved: SQLite reads them as NULL.
                    0 | 10 | 11 => Field::Null,
                    8 => Field::Int(0),
                    9 => Field::Int(1),
                    1..=6 => {
                        let raw = bytes.iter().fold(0u64, |a, &x| (a << 8) | u64::from(x));
                        let shift = 64 - 8 * size as u32;
                        Field::Int(((raw << shift) as i64) >> shift)
                    }
                    // A stored NaN reads as NULL.
                    7 => {
                        let raw = bytes.iter().fold(0u64, |a, &x| (a << 8) | u64::from(x));
                        if f64::from_bits(raw).is_nan() {
                            Field::Null
                        } else {
                            Field::Other(Type::Real)
                        }
                    }
                    _ if t % 2 == 0 => Field::Other(Type::Blob),
                    _ => Field::Other(Type::Text),
                };
                if let Some(o) = out.get_mut(slot) {
                    *o = value;
                }
            }
            body = body.checked_add(size)?;
            col += 1;
        }
        if col < end {
            // A record shorter than the table: the columns added after it take their defaults.
            if at != header_len {
                return None;
            }
            for c in col..end {
                if let Some(slot) = self.slot_of.get(c).copied().flatten() {
                    *out.get_mut(slot)? = *defaults.get(c)?;
                }
            }
        }
        if body > payload.len() {
            return None;
        }
        for &(first, repeat) in &self.repeats {
            let v = *out.get(first)?;
            *out.get_mut(repeat)? = v;
        }
        Some(())
    }
}

/// Decodes the records of one table leaf page (fuzzing and tests): the fields `columns` of
/// each, or the first error.
pub fn decode_leaf(
    page: &[u8],
    columns: &[Option<usize>],
    defaults: usize,
) -> std::result::Result<Vec<Vec<Field>>, String> {
    let defaults = vec![Field::Null; defaults];
    let mut rows = Vec::new();
    let mut fields = vec![Field::Null; columns.len()];
    let wanted = Wanted::new(columns);
    let usable = page.len();
    if !(480..=65536).contains(&usable) {
        return Err("a page of 480 to 65,536 bytes".into());
    }
    leaf_cells(page, 2, usable, "t", &mut |cell| match cell {
        Cell::Local { payload: p, .. } => {
            wanted
                .decode(p, &defaults, &mut fields)
                .ok_or_else(|| malformed("t", 2, "a record that does not decode"))?;
            rows.push(fields.clone());
            Ok(())
        }
        Cell::Overflow { .. } => Err(malformed("t", 2, "an overflow page")),
    })
    .map_err(|e| e.to_string())?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database made by `sql` in `dir`.
    fn db(dir: &Path, name: &str, sql: &str) -> PathBuf {
        let p = dir.join(name);
        let c = Connection::open(&p).expect("create");
        c.execute_batch(sql).expect("schema");
        p
    }

    /// Every row of `table`'s `columns` read from its pages, or `None` when it is not read so.
    fn from_pages(path: &Path, table: &str, columns: &[Option<usize>]) -> Option<Vec<Vec<Field>>> {
        let conn = crate::sqlite::open(path).expect("open");
        let file = database_file(&conn).expect("the file");
        let t = PageTable::open(&conn, &file, table).expect("open the table")?;
        let mut rows = Vec::new();
        t.scan(table, 0..t.leaf_count(), columns, |f| {
            rows.push(f.to_vec());
            Ok(())
        })
        .expect("scan");
        Some(rows)
    }

    /// The same columns through SQLite, in rowid order.
    fn through_sqlite(path: &Path, table: &str, names: &[&str]) -> Vec<Vec<Field>> {
        let conn = crate::sqlite::open(path).expect("open");
        let q = format!("SELECT {} FROM {table} ORDER BY rowid", names.join(", "));
        let mut st = conn.prepare(&q).expect("prepare");
        let mut rows = st.query([]).expect("query");
        let mut out = Vec::new();
        while let Some(r) = rows.next().expect("row") {
            out.push(
                (0..names.len())
                    .map(|i| match r.get_ref(i).expect("value") {
                        rusqlite::types::ValueRef::Null => Field::Null,
                        rusqlite::types::ValueRef::Integer(v) => Field::Int(v),
                        rusqlite::types::ValueRef::Real(_) => Field::Other(Type::Real),
                        rusqlite::types::ValueRef::Text(_) => Field::Other(Type::Text),
                        rusqlite::types::ValueRef::Blob(_) => Field::Other(Type::Blob),
                    })
                    .collect(),
            );
        }
        out
    }

    #[test]
    fn every_serial_type_reads_as_sqlite_reads_it() {
        let dir = tempfile::tempdir().expect("tmp");
        let values = [
            "0",
            "1",
            "-1",
            "127",
            "-128",
            "128",
            "32767",
            "-32769",
            "8388607",
            "-8388609",
            "2147483647",
            "-2147483649",
            "140737488355327",
            "-140737488355329",
            "9223372036854775807",
            "-9223372036854775808",
            "NULL",
            "1.5",
            "'text'",
            "X'00ff'",
            "''",
            "X''",
        ];
        let inserts: String = values
            .iter()
            .map(|v| format!("INSERT INTO t VALUES ({v}, 7, {v});"))
            .collect();
        let p = db(
            dir.path(),
            "types.db",
            &format!("CREATE TABLE t (a INTEGER, b INTEGER, c); {inserts}"),
        );
        let cols = [Some(2), None, Some(0), Some(1), Some(0)];
        let got = from_pages(&p, "t", &cols).expect("read from the pages");
        let want = through_sqlite(&p, "t", &["c", "NULL", "a", "b", "a"]);
        assert_eq!(got.len(), values.len());
        assert_eq!(got, want);
    }

    #[test]
    fn records_older_than_a_column_take_its_default() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = db(
            dir.path(),
            "alter.db",
            "CREATE TABLE t (a INTEGER);
             INSERT INTO t VALUES (1), (2);
             ALTER TABLE t ADD COLUMN b INTEGER DEFAULT -7;
             ALTER TABLE t ADD COLUMN c INTEGER;
             ALTER TABLE t ADD COLUMN d INTEGER DEFAULT +12;
             INSERT INTO t VALUES (3, 4, 5, 6);",
        );
        let got = from_pages(&p, "t", &[Some(0), Some(1), Some(2), Some(3)]).expect("pages");
        assert_eq!(got, through_sqlite(&p, "t", &["a", "b", "c", "d"]));
        assert_eq!(
            got[0],
            vec![Field::Int(1), Field::Int(-7), Field::Null, Field::Int(12)]
        );
        // A default that is an expression is left to SQLite.
        let q = db(
            dir.path(),
            "expr.db",
            "CREATE TABLE t (a INTEGER, b INTEGER DEFAULT (1 + 1)); INSERT INTO t VALUES (1, 2);
             ALTER TABLE t ADD COLUMN c INTEGER DEFAULT 0x10;",
        );
        assert_eq!(from_pages(&q, "t", &[Some(0)]), None);
    }

    #[test]
    fn payloads_on_overflow_pages_and_deep_trees_read_whole() {
        let dir = tempfile::tempdir().expect("tmp");
        for page_size in [512, 4096] {
            let p = db(
                dir.path(),
                &format!("big{page_size}.db"),
                &format!(
                    "PRAGMA page_size = {page_size};
                     CREATE TABLE t (a INTEGER, big TEXT, b INTEGER);
                     WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 3000)
                     INSERT INTO t SELECT i, CASE WHEN i % 100 = 0 THEN printf('%.*c', i * 7, 'x')
                       ELSE 'short' END, -i * 1000003 FROM r;"
                ),
            );
            let conn = crate::sqlite::open(&p).expect("open");
            let file = database_file(&conn).expect("the file");
            let t = PageTable::open(&conn, &file, "t")
                .expect("open")
                .expect("pages");
            assert!(
                t.leaf_count() > 10,
                "{page_size}: {} leaves",
                t.leaf_count()
            );
            let got = from_pages(&p, "t", &[Some(2), Some(0), Some(1)]).expect("pages");
            assert_eq!(got.len(), 3000);
            assert_eq!(
                got,
                through_sqlite(&p, "t", &["b", "a", "big"]),
                "{page_size}"
            );
        }
    }

    #[test]
    fn tables_sqlite_would_read_otherwise_are_left_to_it() {
        let dir = tempfile::tempdir().expect("tmp");
        let cases = [
            (
                "real affinity",
                "CREATE TABLE t (a INTEGER, r REAL); INSERT INTO t VALUES (1, 2);",
            ),
            (
                "float type",
                "CREATE TABLE t (a INTEGER, r DOUBLE PRECISION);",
            ),
            (
                "rowid alias",
                "CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER);",
            ),
            (
                "generated",
                "CREATE TABLE t (a INTEGER, g INTEGER AS (a * 2));",
            ),
            (
                "without rowid",
                "CREATE TABLE t (a INTEGER PRIMARY KEY, b INTEGER) WITHOUT ROWID;",
            ),
            (
                "view",
                "CREATE TABLE k (a INTEGER); CREATE VIEW t AS SELECT a FROM k;",
            ),
            (
                "text default",
                "CREATE TABLE t (a INTEGER, b TEXT DEFAULT 'x');",
            ),
            (
                "wal",
                "PRAGMA journal_mode = WAL; CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1);",
            ),
        ];
        for (i, (what, sql)) in cases.iter().enumerate() {
            let p = db(dir.path(), &format!("c{i}.db"), sql);
            assert_eq!(from_pages(&p, "t", &[Some(0)]), None, "{what}");
        }
        // A journal beside the file: SQLite may have to roll it back first.
        let p = db(
            dir.path(),
            "j.db",
            "CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1);",
        );
        assert!(from_pages(&p, "t", &[Some(0)]).is_some());
        std::fs::write(dir.path().join("j.db-journal"), b"").expect("journal");
        assert_eq!(from_pages(&p, "t", &[Some(0)]), None);
        // No such table.
        assert_eq!(from_pages(&p, "missing", &[Some(0)]), None);
    }

    #[test]
    fn a_damaged_leaf_is_an_error_naming_its_page_or_left_to_sqlite() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = db(
            dir.path(),
            "d.db",
            "CREATE TABLE t (a INTEGER, b INTEGER);
             WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 2000)
             INSERT INTO t SELECT i, i * 3 FROM r;",
        );
        let clean = std::fs::read(&p).expect("read");
        let page = 4096;
        let mut errors = 0;
        // Every byte of every page past the schema, one at a time, set to 0xff: never a panic;
        // an error names the table's page, or the file is left to SQLite.
        for at in (page..clean.len()).step_by(61) {
            let mut bytes = clean.clone();
            bytes[at] = 0xff;
            let q = dir.path().join("damaged.db");
            std::fs::write(&q, &bytes).expect("write");
            let Ok(conn) = crate::sqlite::open(&q) else {
                continue;
            };
            let Some(file) = database_file(&conn) else {
                continue;
            };
            let Ok(Some(t)) = PageTable::open(&conn, &file, "t") else {
                continue;
            };
            if let Err(e) = t.scan("t", 0..t.leaf_count(), &[Some(0), Some(1)], |_| Ok(())) {
                errors += 1;
                assert!(e.to_string().contains("malformed: page "), "{e}");
            }
        }
        assert!(errors > 0);
        // Leaf pages decoded alone, as the fuzz target does.
        let leaf = &clean[page * 2..page * 3];
        let rows = decode_leaf(leaf, &[Some(1), Some(0)], 2).expect("a leaf");
        assert!(!rows.is_empty());
        assert!(decode_leaf(&leaf[..100], &[Some(0)], 1).is_err());
        assert!(decode_leaf(&[0u8; 4096], &[Some(0)], 1).is_err());
    }

    #[test]
    fn deleted_and_shrunk_rows_leave_pages_that_account_exactly() {
        // Deletes and updates leave free blocks and fragments: every byte of every leaf's
        // content area is still a cell, a free block or a counted fragment.
        let dir = tempfile::tempdir().expect("tmp");
        let p = db(
            dir.path(),
            "holes.db",
            "CREATE TABLE t (a INTEGER, s TEXT, b INTEGER);
             WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 4000)
             INSERT INTO t SELECT i, printf('%.*c', i % 300, 'y'), i * 7 FROM r;
             DELETE FROM t WHERE a % 3 = 0;
             UPDATE t SET s = substr(s, 1, 2) WHERE a % 5 = 0;
             UPDATE t SET s = printf('%.*c', 2000, 'z') WHERE a % 97 = 0;",
        );
        let got = from_pages(&p, "t", &[Some(0), Some(2), Some(1)]).expect("pages");
        assert_eq!(got, through_sqlite(&p, "t", &["a", "b", "s"]));
        assert_eq!(got.len(), 4000 - 1333);
    }

    #[test]
    fn headers_sqlite_refuses_are_errors_naming_the_byte() {
        let mut h = [0u8; 100];
        h[..16].copy_from_slice(b"SQLite format 3\0");
        h[16..24].copy_from_slice(&[0x02, 0x00, 1, 1, 0, 64, 32, 32]);
        let ok = check_header(&h, 512 * 4).expect("valid");
        assert_eq!((ok.page_size, ok.pages), (512, 4));
        let byte = |h: &[u8; 100]| check_header(h, 512 * 4).expect_err("refused").to_string();
        let mut r = h;
        r[20] = 40;
        assert!(byte(&r).starts_with("byte 20:"), "{}", byte(&r));
        let mut r = h;
        r[16..18].copy_from_slice(&[0x01, 0x00]);
        assert!(byte(&r).starts_with("byte 16:"), "{}", byte(&r));
        let mut r = h;
        r[22] = 31;
        assert!(byte(&r).starts_with("byte 22:"), "{}", byte(&r));
        // A size past the file, valid for its change counter: refused; stale: the file's.
        let mut r = h;
        r[28..32].copy_from_slice(&9u32.to_be_bytes());
        assert!(byte(&r).starts_with("byte 28:"), "{}", byte(&r));
        r[92] = 1;
        assert_eq!(check_header(&r, 512 * 4).expect("stale size").pages, 4);
        r[92] = 0;
        r[28..32].copy_from_slice(&3u32.to_be_bytes());
        assert_eq!(check_header(&r, 512 * 4).expect("shorter").pages, 3);
    }

    #[test]
    fn a_nan_and_the_reserved_serial_types_read_as_null() {
        // Header: its length, then serial types 7 (a NaN), 10, 11, 1 (the byte 5).
        let nan = f64::NAN.to_bits().to_be_bytes();
        let mut record = vec![5u8, 7, 10, 11, 1];
        record.extend_from_slice(&nan);
        record.push(5);
        let wanted = Wanted::new(&[Some(0), Some(1), Some(2), Some(3)]);
        let mut out = vec![Field::Int(9); 4];
        wanted
            .decode(&record, &[Field::Null; 4], &mut out)
            .expect("decodes");
        assert_eq!(out, [Field::Null, Field::Null, Field::Null, Field::Int(5)]);
        let one = 1.0f64.to_bits().to_be_bytes();
        record[5..13].copy_from_slice(&one);
        wanted
            .decode(&record, &[Field::Null; 4], &mut out)
            .expect("decodes");
        assert_eq!(out[0], Field::Other(Type::Real));
    }

    #[test]
    fn a_writer_in_another_process_waits_while_the_table_is_read() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = db(
            dir.path(),
            "w.db",
            "CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1);",
        );
        let write = |p: &Path| {
            std::process::Command::new("python3")
                .args([
                    "-c",
                    "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], timeout=0); \
                     c.execute('INSERT INTO t VALUES (2)'); c.commit()",
                ])
                .arg(p)
                .output()
        };
        let conn = crate::sqlite::open(&p).expect("open");
        let file = database_file(&conn).expect("the file");
        let lock = crate::sqlite::ReadLock::hold(&conn).expect("lock");
        let t = PageTable::open(&conn, &file, "t")
            .expect("open")
            .expect("pages");
        // Another table read and dropped meanwhile: no handle on the file is closed.
        assert_eq!(
            PageTable::open(&conn, &file, "t")
                .expect("open")
                .map(|t| t.leaf_count()),
            Some(1)
        );
        t.scan("t", 0..t.leaf_count(), &[Some(0)], |_| Ok(()))
            .expect("scan");
        let Ok(out) = write(&p) else {
            kernelab_testkit::skip("python3", "no python3 to write from another process");
            return;
        };
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains("locked"), "{err}");
        drop(t);
        drop(lock);
        drop(file);
        let out = write(&p).expect("python3");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    #[test]
    fn varints_and_defaults_parse_as_sqlite_writes_them() {
        assert_eq!(varint(&[0x7f], 0), Some((127, 1)));
        assert_eq!(varint(&[0x81, 0x00], 0), Some((128, 2)));
        assert_eq!(varint(&[0xff; 9], 0), Some((u64::MAX, 9)));
        assert_eq!(varint(&[0x81], 0), None);
        let int = Affinity::Integer;
        assert_eq!(default_field(None, int), Some(Field::Null));
        assert_eq!(default_field(Some("NULL"), int), Some(Field::Null));
        assert_eq!(default_field(Some("-5"), int), Some(Field::Int(-5)));
        assert_eq!(default_field(Some("+5"), int), Some(Field::Int(5)));
        assert_eq!(
            default_field(Some("5"), Affinity::Blob),
            Some(Field::Int(5))
        );
        assert_eq!(
            default_field(Some("5"), Affinity::Text),
            Some(Field::Other(Type::Text))
        );
        assert_eq!(default_field(Some("5.0"), int), None);
        assert_eq!(default_field(Some("'5'"), int), None);
        assert_eq!(default_field(Some("99999999999999999999"), int), None);
        for (t, a) in [
            ("REAL", Affinity::Real),
            ("double", Affinity::Real),
            ("FLOAT", Affinity::Real),
            ("INTEGER", Affinity::Integer),
            ("FLOATING POINT INT", Affinity::Integer),
            ("", Affinity::Blob),
            ("NUMERIC", Affinity::Numeric),
            ("varchar(10)", Affinity::Text),
        ] {
            assert_eq!(affinity(t), a, "{t}");
        }
    }
}
