//! The kernel table of an Nsight Systems export, read row by row into the compact dispatch
//! store. Names are looked up by string id in a table, and launch configs through a cache per
//! name (the shape and resources a kernel last ran with), so a row hashes nothing in the common
//! case; correlation ids are read only when the store keeps them.

use super::{col_or_null, u32_of};
use crate::error::Result;
use crate::sqlite::{columns, span, sql_err};
use kernelab_model::{KernelDispatch, LaunchConfig, NameId, Profile, Resources, Timestamp};
use rusqlite::types::ValueRef;
use rusqlite::Connection;
use std::collections::HashMap;

const TABLE: &str = "CUPTI_ACTIVITY_KIND_KERNEL";

/// String ids to interned names: a table for the dense ids exports use, a map for the rest.
struct Names<'a> {
    strings: &'a HashMap<i64, String>,
    dense: Vec<Option<NameId>>,
    sparse: HashMap<i64, NameId>,
}

impl Names<'_> {
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

/// Reads the kernel table into `p` (correlation ids only when the store keeps them).
pub(super) fn read(
    conn: &Connection,
    strings: &HashMap<i64, String>,
    p: &mut Profile,
) -> Result<()> {
    let t = TABLE;
    let cols = columns(conn, t)?;
    let c = |n: &str| col_or_null(&cols, n);
    // Correlation ids are read only when the store keeps them: one column less per row.
    let keep_correlations = p.dispatches.keeps_correlations();
    let q = format!(
        "SELECT start, \"end\", {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {} FROM {t}",
        c("deviceId"),
        c("streamId"),
        if keep_correlations {
            c("correlationId")
        } else {
            "NULL".into()
        },
        c("demangledName"),
        c("gridX"),
        c("gridY"),
        c("gridZ"),
        c("blockX"),
        c("blockY"),
        c("blockZ"),
        c("registersPerThread"),
        c("staticSharedMemory"),
        c("dynamicSharedMemory"),
        c("localMemoryPerThread"),
    );
    let dense_len = strings
        .keys()
        .filter_map(|&k| usize::try_from(k).ok())
        .max()
        .map_or(0, |m| m + 1)
        .min(strings.len().saturating_mul(4).saturating_add(1024));
    let mut names = Names {
        strings,
        dense: vec![None; dense_len],
        sparse: HashMap::new(),
    };
    // The launch columns and config last seen per name (by name id).
    type Seen = Option<([Option<i64>; 10], u32)>;
    let mut launch_cache: Vec<Seen> = Vec::new();
    let mut st = conn.prepare(&q).map_err(sql_err(t))?;
    let mut rows = st.query([]).map_err(sql_err(t))?;
    while let Some(r) = rows.next().map_err(sql_err(t))? {
        // `get_ref` and a match: the integer without `FromSql`'s conversions; another type is
        // the same error `get::<Option<i64>>` gives.
        let g = |i: usize| match r.get_ref(i) {
            Ok(ValueRef::Integer(x)) => Ok(Some(x)),
            Ok(ValueRef::Null) => Ok(None),
            _ => r.get::<_, Option<i64>>(i).map_err(sql_err(t)),
        };
        let (start, end) = (g(0)?.unwrap_or(0), g(1)?.unwrap_or(0));
        let name = names.get(g(5)?, p);
        let mut raw = [None; 10];
        for (k, v) in raw.iter_mut().enumerate() {
            *v = g(6 + k)?;
        }
        let i = name.0 as usize;
        let launch = match launch_cache.get(i) {
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
                if launch_cache.len() <= i {
                    launch_cache.resize(i + 1, None);
                }
                if let Some(e) = launch_cache.get_mut(i) {
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
    }
    Ok(())
}
