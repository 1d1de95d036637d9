//! The kernel table of an Nsight Systems export, read row by row into the compact dispatch
//! store. Names are looked up by string id in a table, and launch configs through a cache per
//! name (the shape and resources a kernel last ran with), so a row hashes nothing in the common
//! case; correlation ids are read only when the store keeps them. Values are read through
//! [`IntRows`] (two C calls per value). A large table is read in rowid ranges on every core
//! (`super::parallel`), each range by [`read_rows`] as the whole table is on one thread.

use super::{col_or_null, u32_of};
use crate::error::Result;
use crate::sqlite::{span, sql_err, IntRows};
use crate::sqlite_pages::{Field, PageTable};
use kernelab_model::{KernelDispatch, LaunchConfig, NameId, Profile, Resources, Timestamp};
use rusqlite::Connection;
use std::collections::HashMap;

pub(super) const TABLE: &str = "CUPTI_ACTIVITY_KIND_KERNEL";

/// String ids to interned names: a table for the dense ids exports use, a map for the rest.
/// [`Names::reset`] empties it for the next chunk of a parallel read in time proportional to
/// what it held, so one table serves every chunk a thread reads.
pub(super) struct Names<'a> {
    strings: &'a HashMap<i64, String>,
    dense: Vec<Option<NameId>>,
    sparse: HashMap<i64, NameId>,
    /// The slots of `dense` that are set.
    touched: Vec<usize>,
}

impl<'a> Names<'a> {
    /// An empty table for the string ids of `strings`.
    pub(super) fn new(strings: &'a HashMap<i64, String>) -> Names<'a> {
        let dense_len = strings
            .keys()
            .filter_map(|&k| usize::try_from(k).ok())
            .max()
            .map_or(0, |m| m + 1)
            .min(strings.len().saturating_mul(4).saturating_add(1024));
        Names {
            strings,
            dense: vec![None; dense_len],
            sparse: HashMap::new(),
            touched: Vec::new(),
        }
    }

    /// Forgets every id (the names were interned into another profile).
    pub(super) fn reset(&mut self) {
        for &i in &self.touched {
            if let Some(e) = self.dense.get_mut(i) {
                *e = None;
            }
        }
        self.touched.clear();
        self.sparse.clear();
    }

    #[inline]
    fn get(&mut self, id: Option<i64>, p: &mut Profile) -> NameId {
        let slot = id
            .and_then(|i| usize::try_from(i).ok())
            .filter(|&i| i < self.dense.len());
        if let Some(Some(n)) = slot.and_then(|i| self.dense.get(i)) {
            return *n;
        }
        if let Some(n) = id.and_then(|i| self.sparse.get(&i)) {
            return *n;
        }
        let text = id
            .and_then(|i| self.strings.get(&i))
            .map(String::as_str)
            .unwrap_or("");
        let n = p.names.intern_str(text);
        match (slot, id) {
            (Some(i), _) => {
                if let Some(e) = self.dense.get_mut(i) {
                    *e = Some(n);
                    self.touched.push(i);
                }
            }
            (None, Some(i)) => {
                self.sparse.insert(i, n);
            }
            (None, None) => {}
        }
        n
    }
}

/// The kernel table's columns kernelab reads, in the order of [`query`].
pub(super) const COLUMNS: [&str; 16] = [
    "start",
    "end",
    "deviceId",
    "streamId",
    "correlationId",
    "demangledName",
    "gridX",
    "gridY",
    "gridZ",
    "blockX",
    "blockY",
    "blockZ",
    "registersPerThread",
    "staticSharedMemory",
    "dynamicSharedMemory",
    "localMemoryPerThread",
];

/// The place of `correlationId` in [`COLUMNS`].
pub(super) const CORRELATION: usize = 4;

/// The query of the kernel table's columns kernelab reads (missing ones as `NULL`; start and
/// end are required), over the rowids `range` (both ends included) when given, else over the
/// whole table. Correlation ids are read only when the store keeps them: one column less per
/// row.
pub(super) fn query(cols: &[String], keep_correlations: bool, range: Option<(i64, i64)>) -> String {
    let list: Vec<String> = COLUMNS
        .iter()
        .enumerate()
        .map(|(i, n)| match i {
            0 | 1 => format!("\"{n}\""),
            CORRELATION if !keep_correlations => "NULL".into(),
            _ => col_or_null(cols, n),
        })
        .collect();
    let mut q = format!("SELECT {} FROM {TABLE}", list.join(", "));
    if let Some((lo, hi)) = range {
        q.push_str(&format!(" WHERE rowid BETWEEN {lo} AND {hi}"));
    }
    q
}

/// Reads the rows of the query `q` (of [`query`]) into `p`, names through `names`.
pub(super) fn read_rows(
    conn: &Connection,
    q: &str,
    names: &mut Names<'_>,
    p: &mut Profile,
) -> Result<()> {
    let t = TABLE;
    let mut reader = RowReader::new(names);
    let mut rows = IntRows::prepare(conn, q).map_err(sql_err(t))?;
    while rows.next().map_err(sql_err(t))? {
        reader.row(|i| rows.int(i).map_err(sql_err(t)), p)?;
    }
    Ok(())
}

/// The columns of [`query`] as positions in the table's records (`None`: read as NULL), for
/// reading from the table's pages.
pub(super) fn positions(cols: &[String], keep_correlations: bool) -> Vec<Option<usize>> {
    COLUMNS
        .iter()
        .enumerate()
        .map(|(i, n)| match i {
            CORRELATION if !keep_correlations => None,
            _ => cols.iter().position(|c| c == n),
        })
        .collect()
}

/// Reads the records of the leaf pages `leaves` of `table` into `p`, names through `names`;
/// `columns` from [`positions`], `names_of` the column names of [`query`] (for the error a
/// value that is not an integer gives, as the query's).
pub(super) fn read_leaves(
    table: &PageTable,
    leaves: std::ops::Range<usize>,
    columns: &[Option<usize>],
    names_of: &[String],
    names: &mut Names<'_>,
    p: &mut Profile,
) -> Result<()> {
    let t = TABLE;
    let mut reader = RowReader::new(names);
    table.scan(t, leaves, columns, |fields| {
        reader.row(
            |i| match fields.get(i) {
                Some(Field::Int(v)) => Ok(Some(*v)),
                Some(Field::Null) => Ok(None),
                Some(Field::Other(ty)) => Err(sql_err(t)(rusqlite::Error::InvalidColumnType(
                    i,
                    names_of.get(i).cloned().unwrap_or_default(),
                    *ty,
                ))),
                None => Err(sql_err(t)(rusqlite::Error::InvalidColumnIndex(i))),
            },
            p,
        )
    })
}

/// The launch columns and config last seen per name (by name id).
type Seen = Option<([Option<i64>; 10], u32)>;

/// Turns rows of the kernel table's columns (in [`query`]'s order) into dispatches: names
/// through a table by string id, launch configs through a cache per name.
struct RowReader<'r, 's> {
    names: &'r mut Names<'s>,
    launch_cache: Vec<Seen>,
}

impl<'r, 's> RowReader<'r, 's> {
    fn new(names: &'r mut Names<'s>) -> RowReader<'r, 's> {
        RowReader {
            names,
            launch_cache: Vec::new(),
        }
    }

    /// Adds the row whose column `i` is `g(i)` to `p`.
    #[inline]
    fn row(&mut self, g: impl Fn(usize) -> Result<Option<i64>>, p: &mut Profile) -> Result<()> {
        let t = TABLE;
        let (start, end) = (g(0)?.unwrap_or(0), g(1)?.unwrap_or(0));
        let name = self.names.get(g(5)?, p);
        let mut raw = [None; 10];
        for (k, v) in raw.iter_mut().enumerate() {
            *v = g(6 + k)?;
        }
        let i = name.0 as usize;
        let launch = match self.launch_cache.get(i) {
            Some(Some((seen, id))) if *seen == raw => *id,
            _ => {
                let [gx, gy, gz, bx, by, bz, regs, stat, dyn_, local] = raw;
                let xyz = |a: Option<i64>, b: Option<i64>, c: Option<i64>| {
                    Some([u32_of(a)?, u32_of(b)?, u32_of(c)?])
                };
                let shared = match (stat, dyn_) {
                    (Some(s), Some(d)) => u32_of(s.checked_add(d)),
                    (s, d) => u32_of(s.or(d)),
                };
                let id = p.launches.intern(LaunchConfig {
                    grid: xyz(gx, gy, gz),
                    block: xyz(bx, by, bz),
                    resources: Resources {
                        registers: u32_of(regs),
                        shared_bytes: shared,
                        scratch_bytes: u32_of(local),
                        ..Resources::default()
                    },
                });
                if self.launch_cache.len() <= i {
                    self.launch_cache.resize(i + 1, None);
                }
                if let Some(e) = self.launch_cache.get_mut(i) {
                    *e = Some((raw, id));
                }
                id
            }
        };
        p.dispatches.push(KernelDispatch {
            name,
            device: u32_of(g(2)?).unwrap_or(0),
            stream: g(3)?.and_then(|s| u64::try_from(s).ok()).unwrap_or(0),
            start: Timestamp::from_ns(start),
            duration: span(start, end, t)?,
            launch,
            correlation: g(4)?.and_then(|c| u64::try_from(c).ok()),
            sub_ns: 0,
        });
        Ok(())
    }
}
