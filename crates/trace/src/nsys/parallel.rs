//! The kernel table of a large Nsight Systems export read on every core: its leaf pages (when it
//! is read from its pages, [`read_from_pages`]) or its rowids (through SQLite, [`read`]) are
//! cut into ranges, each read by a worker thread (through a read-only connection of its own
//! for SQL: SQLite allows any number of readers) into a store of its own, with its own name
//! and launch tables;
//! the stores are merged in rowid order, their names and launch configs interned into the
//! profile's (each distinct one once per range), so the profile is the one the one-thread
//! reader makes, bit for bit: a full scan of a rowid table goes in rowid order too, and its
//! leaf pages hold the rows in that order.
//!
//! Through SQL, only a plain rowid table is split (not a view, nor a `WITHOUT ROWID` table, nor one with a
//! column named like the rowid, nor one with an index that covers the columns read, which a
//! full scan could follow instead), of at least two minimum ranges, when the connection has a
//! file path and `KERNELAB_THREADS` (else the cores) gives two threads or more. Errors come from
//! the first range, in rowid order, that has one: the error the one-thread reader meets first.
//! Memory: the merged store, and at most two ranges per thread not merged yet (workers wait
//! for the merge beyond that), whatever the table's size.

use super::kernels::{query, read_leaves, read_rows, Names, COLUMNS, CORRELATION, TABLE};
use crate::error::{Error, ErrorKind, Result};
use crate::kineto::reader_threads;
use crate::sqlite::{has_words, open_with_limit, sql_err, QUERY_TIME_LIMIT};
use crate::sqlite_pages::PageTable;
use kernelab_model::{Location, NameId, Profile};
use rusqlite::Connection;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{mpsc, Condvar, Mutex, PoisonError};

/// The fewest rowids a range holds (the last one aside): a table of fewer than two is read on
/// one thread.
pub(super) const MIN_RANGE_ROWS: i64 = 1 << 15;

/// The most rowids a range holds, unless that would make more than [`MAX_RANGES`]: it bounds
/// the memory of the ranges read but not merged yet (12 bytes a kernel).
pub(super) const MAX_RANGE_ROWS: i64 = 1 << 17;

/// At most this many ranges.
const MAX_RANGES: i64 = 1 << 12;

/// How the kernel table of one export is read on several threads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Plan {
    /// The export (each worker opens it on its own).
    pub path: PathBuf,
    /// Worker threads.
    pub threads: usize,
    /// The smallest and largest rowid.
    pub rowids: (i64, i64),
    /// Rowids per range.
    pub range_rows: i64,
}

impl Plan {
    /// The number of ranges.
    fn ranges(&self) -> usize {
        let span = i128::from(self.rowids.1) - i128::from(self.rowids.0) + 1;
        let n = span.div_euclid(i128::from(self.range_rows.max(1)))
            + i128::from(span.rem_euclid(i128::from(self.range_rows.max(1))) != 0);
        usize::try_from(n.max(0)).unwrap_or(0)
    }

    /// The rowids of range `i`, both ends included.
    fn range(&self, i: usize) -> (i64, i64) {
        let (lo, hi) = self.rowids;
        let step = i128::from(self.range_rows.max(1));
        let a = i128::from(lo) + step * i128::try_from(i).unwrap_or(i128::MAX / 4);
        let b = (a + step - 1).min(i128::from(hi));
        let clamp = |x: i128| i64::try_from(x).unwrap_or(if x < 0 { i64::MIN } else { i64::MAX });
        (clamp(a), clamp(b))
    }
}

/// The plan for the kernel table of `conn` (whose columns are `cols`), or `None` when it is read
/// on one thread (see the module documentation).
pub(super) fn plan(
    conn: &Connection,
    cols: &[String],
    keep_correlations: bool,
) -> Result<Option<Plan>> {
    plan_with(conn, cols, keep_correlations, reader_threads(), None)
}

/// [`plan`] with a given number of threads and rowids per range (else the automatic one:
/// four ranges per thread, within [`MIN_RANGE_ROWS`] and [`MAX_RANGE_ROWS`]).
pub(super) fn plan_with(
    conn: &Connection,
    cols: &[String],
    keep_correlations: bool,
    threads: usize,
    range_rows: Option<i64>,
) -> Result<Option<Plan>> {
    let t = TABLE;
    let Some(path) = conn.path().filter(|p| !p.is_empty()).map(PathBuf::from) else {
        return Ok(None);
    };
    if threads < 2
        || cols.iter().any(|c| {
            ["rowid", "_rowid_", "oid"]
                .iter()
                .any(|r| c.eq_ignore_ascii_case(r))
        })
    {
        return Ok(None);
    }
    let kind: Option<(String, String)> = conn
        .query_row(
            "SELECT type, coalesce(sql, '') FROM sqlite_master WHERE name = ?1",
            [t],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .ok();
    let Some((kind, sql)) = kind else {
        return Ok(None);
    };
    if kind != "table" || has_words(&sql, "without", "rowid") {
        return Ok(None);
    }
    // An error here is left to the one-thread reader to report.
    if covering_index(conn, cols, keep_correlations).unwrap_or(true) {
        return Ok(None);
    }
    // Two subqueries: each is one b-tree descent, where `min(rowid), max(rowid)` together
    // would scan the whole table.
    let q = format!("SELECT (SELECT min(rowid) FROM {t}), (SELECT max(rowid) FROM {t})");
    let (lo, hi): (Option<i64>, Option<i64>) =
        match conn.query_row(&q, [], |r| Ok((r.get(0)?, r.get(1)?))) {
            Ok(v) => v,
            // A table the one-thread reader will report on.
            Err(_) => return Ok(None),
        };
    let (Some(lo), Some(hi)) = (lo, hi) else {
        return Ok(None);
    };
    let Some(span) = hi.checked_sub(lo).and_then(|s| s.checked_add(1)) else {
        return Ok(None);
    };
    let range_rows = match range_rows {
        Some(r) => r.max(1),
        None => {
            if span < 2 * MIN_RANGE_ROWS {
                return Ok(None);
            }
            let per = span
                / (i64::try_from(threads)
                    .unwrap_or(i64::MAX / 4)
                    .saturating_mul(4));
            per.clamp(MIN_RANGE_ROWS, MAX_RANGE_ROWS)
        }
    };
    let range_rows = range_rows.max(span / MAX_RANGES + 1);
    if range_rows >= span {
        return Ok(None);
    }
    Ok(Some(Plan {
        path,
        threads,
        rowids: (lo, hi),
        range_rows,
    }))
}

/// Whether an index of the kernel table holds every column the reader reads (a full scan
/// could then follow that index rather than the rowids).
pub(super) fn covering_index(
    conn: &Connection,
    cols: &[String],
    keep_correlations: bool,
) -> Result<bool> {
    let t = TABLE;
    // The columns the query names: start and end whatever their case (SQLite matches names so),
    // the others by their exact names (`col_or_null`), correlation ids only when kept.
    let wanted: Vec<&String> = cols
        .iter()
        .filter(|c| {
            COLUMNS.iter().enumerate().any(|(i, r)| match i {
                0 | 1 => c.eq_ignore_ascii_case(r),
                CORRELATION => keep_correlations && c == r,
                _ => c == r,
            })
        })
        .collect();
    let mut st = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?1")
        .map_err(sql_err("sqlite_master"))?;
    let indexes: Vec<String> = st
        .query_map([t], |r| crate::sqlite::text_at(r, 0, &mut 0))
        .map_err(sql_err("sqlite_master"))?
        .collect::<std::result::Result<_, _>>()
        .map_err(sql_err("sqlite_master"))?;
    for index in indexes {
        let in_index = crate::sqlite::columns_of_index(conn, &index)?;
        if wanted
            .iter()
            .all(|w| in_index.iter().any(|c| c.eq_ignore_ascii_case(w)))
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// What the workers and the merge share.
struct Shared {
    state: Mutex<Progress>,
    wake: Condvar,
}

#[derive(Default)]
struct Progress {
    /// The next range to read.
    next: usize,
    /// Ranges merged so far.
    merged: usize,
    /// Set when the merge ended (done, an error, or a worker's panic).
    stop: bool,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Progress> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next range for a worker, once it is within `window` ranges of the merge; `None`
    /// when there is none left or the merge ended.
    fn claim(&self, ranges: usize, window: usize) -> Option<usize> {
        let mut s = self.lock();
        if s.stop || s.next >= ranges {
            return None;
        }
        let i = s.next;
        s.next += 1;
        while !s.stop && i >= s.merged + window {
            s = self.wake.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
        (!s.stop).then_some(i)
    }

    fn stop(&self) {
        self.lock().stop = true;
        self.wake.notify_all();
    }
}

/// Ends the merge when a worker panics, so that the others and the merge do not wait for it.
struct StopOnPanic<'a>(&'a Shared);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop();
        }
    }
}

/// Reads the kernel table as `plan` says into `p`, with names from `strings`.
pub(super) fn read(
    plan: Plan,
    cols: &[String],
    strings: &HashMap<i64, String>,
    p: &mut Profile,
) -> Result<()> {
    let keep_correlations = p.dispatches.keeps_correlations();
    read_parts(
        plan.threads,
        plan.ranges(),
        strings,
        p,
        || None,
        |conn: &mut Option<Connection>, i, names, part| {
            let c = match conn {
                Some(c) => c,
                None => conn.insert(open_with_limit(&plan.path, QUERY_TIME_LIMIT)?),
            };
            read_rows(
                c,
                &query(cols, keep_correlations, Some(plan.range(i))),
                names,
                part,
            )
        },
    )
}

/// The fewest leaf pages a range of a read from the pages holds (the last one aside): a table
/// of fewer than two is read on one thread.
pub(super) const MIN_RANGE_LEAVES: usize = 1 << 8;

/// The most leaf pages a range holds (about 100,000 kernels of an export's 4 KiB pages): it
/// bounds the memory of the ranges read but not merged yet.
pub(super) const MAX_RANGE_LEAVES: usize = 1 << 11;

/// Reads the kernel table from its pages (`table`; `columns` and `names_of` as
/// [`read_leaves`] takes them) into `p`: in ranges of leaf pages on every core when it has
/// enough of them and `KERNELAB_THREADS` (else the cores) gives two threads or more, else on
/// this thread.
pub(super) fn read_from_pages(
    table: &PageTable,
    columns: &[Option<usize>],
    names_of: &[String],
    strings: &HashMap<i64, String>,
    p: &mut Profile,
) -> Result<()> {
    read_from_pages_with(table, columns, names_of, strings, p, reader_threads(), None)
}

/// [`read_from_pages`] with a given number of threads and leaf pages per range (else the
/// automatic one: four ranges per thread, within [`MIN_RANGE_LEAVES`] and
/// [`MAX_RANGE_LEAVES`]).
pub(super) fn read_from_pages_with(
    table: &PageTable,
    columns: &[Option<usize>],
    names_of: &[String],
    strings: &HashMap<i64, String>,
    p: &mut Profile,
    threads: usize,
    range_leaves: Option<usize>,
) -> Result<()> {
    let leaves = table.leaf_count();
    let per = match range_leaves {
        Some(n) => n.max(1),
        None => {
            (leaves / threads.saturating_mul(4).max(1)).clamp(MIN_RANGE_LEAVES, MAX_RANGE_LEAVES)
        }
    };
    let ranges = leaves.div_ceil(per);
    if threads < 2 || ranges < 2 || (range_leaves.is_none() && leaves < 2 * MIN_RANGE_LEAVES) {
        return read_leaves(
            table,
            0..leaves,
            columns,
            names_of,
            &mut Names::new(strings),
            p,
        );
    }
    read_parts(
        threads,
        ranges,
        strings,
        p,
        || (),
        |_: &mut (), i, names, part| {
            let from = i.saturating_mul(per);
            read_leaves(
                table,
                from..from.saturating_add(per).min(leaves),
                columns,
                names_of,
                names,
                part,
            )
        },
    )
}

/// Reads `ranges` ranges on `threads` workers, range `i` into a store of its own by
/// `read_range` (given the worker's state, which `init` makes on the worker's thread, and its
/// name table), merging the stores into `p` in range order as they come.
fn read_parts<W>(
    threads: usize,
    ranges: usize,
    strings: &HashMap<i64, String>,
    p: &mut Profile,
    init: impl Fn() -> W + Sync,
    read_range: impl Fn(&mut W, usize, &mut Names<'_>, &mut Profile) -> Result<()> + Sync,
) -> Result<()> {
    let window = threads.saturating_mul(2).max(2);
    let keep_correlations = p.dispatches.keeps_correlations();
    let shared = Shared {
        state: Mutex::new(Progress::default()),
        wake: Condvar::new(),
    };
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<(usize, Result<Profile>)>();
        for _ in 0..threads.min(ranges) {
            let tx = tx.clone();
            let (shared, init, read_range) = (&shared, &init, &read_range);
            s.spawn(move || {
                let _guard = StopOnPanic(shared);
                let mut state = init();
                let mut names = Names::new(strings);
                while let Some(i) = shared.claim(ranges, window) {
                    let mut part = Profile::default();
                    part.dispatches.keep_correlations(keep_correlations);
                    names.reset();
                    let r = read_range(&mut state, i, &mut names, &mut part).map(|()| part);
                    if tx.send((i, r)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        let r = merge_all(p, ranges, &rx, &shared);
        shared.stop();
        r
    })
}

/// Merges the ranges in rowid order as they come; the first error in that order ends it.
fn merge_all(
    p: &mut Profile,
    ranges: usize,
    rx: &mpsc::Receiver<(usize, Result<Profile>)>,
    shared: &Shared,
) -> Result<()> {
    let mut pending: HashMap<usize, Result<Profile>> = HashMap::new();
    for c in 0..ranges {
        let result = loop {
            if let Some(r) = pending.remove(&c) {
                break r;
            }
            match rx.recv() {
                Ok((i, r)) if i == c => break r,
                Ok((i, r)) => {
                    pending.insert(i, r);
                }
                Err(_) => {
                    return Err(Error::new(
                        Location::default().with_field(TABLE),
                        ErrorKind::Io(std::io::Error::other(
                            "a reader thread ended without its range of the kernel table",
                        )),
                    ))
                }
            }
        };
        merge(p, result?);
        shared.lock().merged = c + 1;
        shared.wake.notify_all();
    }
    Ok(())
}

/// Adds the dispatches of a range's store to `p`, in order, its names and launch configs
/// interned into `p`'s tables (in the range's first-seen order, which is the table's).
fn merge(p: &mut Profile, part: Profile) {
    let name_ids: Vec<NameId> = (0..part.names.len())
        .map(|i| {
            let id = NameId(u32::try_from(i).unwrap_or(u32::MAX));
            p.names.intern_str(part.names.name(id))
        })
        .collect();
    let launch_ids: Vec<u32> = (0..part.launches.len())
        .map(|i| {
            let id = u32::try_from(i).unwrap_or(u32::MAX);
            p.launches
                .intern(part.launches.get(id).copied().unwrap_or_default())
        })
        .collect();
    p.dispatches.append(
        &part.dispatches,
        |n| name_ids.get(n.0 as usize).copied().unwrap_or(n),
        |l| launch_ids.get(l as usize).copied().unwrap_or(l),
    );
}

#[cfg(test)]
use super::kernel_read::page_table;
#[cfg(test)]
use super::kernels::positions;

#[cfg(test)]
#[path = "parallel_tests.rs"]
mod tests;
