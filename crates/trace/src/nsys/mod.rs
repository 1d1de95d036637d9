//! Nsight Systems SQLite export (`nsys export --type sqlite`, or the file `nsys stats` writes),
//! both schema generations seen (`EXPORT_META_DATA` in 2022.x, `META_DATA_EXPORT` in 2024.x):
//! kernels, memcpys, memsets, runtime launch calls (for phases), NVTX ranges and the GPU name.
//! Names come from `StringIds` through `demangledName`, as `cuda_gpu_kern_sum` reports them.
//! See `docs/formats.md` (Nsight Systems SQLite).

pub(crate) mod rep;

mod graphs;
mod kernel_read;
mod kernels;
mod parallel;

use crate::error::Result;
use crate::sqlite::{columns, note_lossy, objects, span, sql_err, text_at};
use kernelab_model::{
    Annotation, AnnotationScope, Launch, Profile, SourceInfo, Timestamp, Transfer, TransferKind,
};
use rusqlite::Connection;
use std::collections::HashMap;

/// True when the database looks like an Nsight Systems export.
/// A CPU-only capture has no `CUPTI_*` or `TARGET_INFO_GPU` tables, but still the session and
/// export metadata tables.
pub(crate) fn is_nsys(objs: &[String]) -> bool {
    objs.iter().any(|o| o == "StringIds")
        && objs.iter().any(|o| {
            o.starts_with("CUPTI_ACTIVITY_KIND")
                || o.starts_with("TARGET_INFO_")
                || o == "META_DATA_EXPORT"
                || o == "EXPORT_META_DATA"
        })
}

/// The device facts: the GPUs that ran kernels (by `TARGET_INFO_GPU.id`, the CUDA device
/// ordinal the kernel table's `deviceId` holds), and every GPU of the capture when more.
fn device_facts(conn: &Connection, ran: &[u32], source: &mut SourceInfo) -> Result<()> {
    let t = "TARGET_INFO_GPU";
    let mut st = conn
        .prepare("SELECT id, name FROM TARGET_INFO_GPU ORDER BY id")
        .map_err(sql_err(t))?;
    let gpus: Vec<(Option<i64>, String)> = st
        .query_map([], |r| {
            Ok((r.get::<_, Option<i64>>(0)?, text_at(r, 1, &mut 0)?))
        })
        .map_err(sql_err(t))?
        .collect::<std::result::Result<_, _>>()
        .map_err(sql_err(t))?;
    let mut used: Vec<String> = Vec::new();
    let mut all: Vec<String> = Vec::new();
    for (id, name) in &gpus {
        let label = match id {
            Some(i) => format!("{i}: {name}"),
            None => name.clone(),
        };
        if id
            .and_then(|i| u32::try_from(i).ok())
            .is_some_and(|i| ran.contains(&i))
        {
            used.push(label.clone());
        }
        all.push(label);
    }
    if !used.is_empty() {
        source.facts.push(("device".into(), used.join(", ")));
        if used.len() < all.len() {
            source
                .facts
                .push(("GPUs in the capture".into(), all.join(", ")));
        }
    } else if !all.is_empty() {
        source.facts.push((
            "device".into(),
            format!("none ran kernels; in the capture: {}", all.join(", ")),
        ));
    }
    Ok(())
}

/// The string table, TEXT read lossily (`lossy` counts values that were not UTF-8).
fn strings(conn: &Connection, lossy: &mut u64) -> Result<HashMap<i64, String>> {
    let mut st = conn
        .prepare("SELECT id, value FROM StringIds")
        .map_err(sql_err("StringIds"))?;
    let mut rows = st.query([]).map_err(sql_err("StringIds"))?;
    let mut map = HashMap::new();
    while let Some(r) = rows.next().map_err(sql_err("StringIds"))? {
        let id = r.get::<_, i64>(0).map_err(sql_err("StringIds"))?;
        map.insert(id, text_at(r, 1, lossy).map_err(sql_err("StringIds"))?);
    }
    Ok(map)
}

/// `col` if the table has it, else `NULL` (so optional columns read as unavailable).
pub(crate) fn col_or_null(cols: &[String], col: &str) -> String {
    if cols.iter().any(|c| c == col) {
        format!("\"{col}\"")
    } else {
        "NULL".to_string()
    }
}

pub(crate) fn u32_of(v: Option<i64>) -> Option<u32> {
    v.and_then(|x| u32::try_from(x).ok())
}

/// Reads an Nsight Systems export.
pub(crate) fn read(
    conn: &Connection,
    options: &crate::ReadOptions,
    p: &mut Profile,
    source: &mut SourceInfo,
) -> Result<()> {
    let host_launches = options.host_launches;
    let objs = objects(conn)?;
    // The tables read through SQLite, checked first (the kernel table when it is read so, in
    // `kernel_read::read`; from its pages, the page reader checks it).
    for t in [
        "META_DATA_EXPORT",
        "EXPORT_META_DATA",
        "StringIds",
        "TARGET_INFO_GPU",
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET",
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        "NVTX_EVENTS",
        "CUDA_GRAPH_NODE_EVENTS",
        "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
    ] {
        let runtime = host_launches || options.graphs;
        if (runtime || t != "CUPTI_ACTIVITY_KIND_RUNTIME") && objs.iter().any(|o| o == t) {
            crate::sqlite::quick_check(conn, Some(t))?;
        }
    }
    let mut lossy = 0u64;
    for meta in ["META_DATA_EXPORT", "EXPORT_META_DATA"] {
        if objs.iter().any(|o| o == meta) {
            let q = format!("SELECT name, value FROM {meta} WHERE name IN ('EXPORT_PRODUCT_VERSION', 'EXPORT_SCHEMA_VERSION')");
            let mut st = conn.prepare(&q).map_err(sql_err("META_DATA_EXPORT"))?;
            let rows = st
                .query_map([], |r| Ok((text_at(r, 0, &mut 0)?, text_at(r, 1, &mut 0)?)))
                .map_err(sql_err("META_DATA_EXPORT"))?;
            for row in rows {
                let (k, v) = row.map_err(sql_err("META_DATA_EXPORT"))?;
                source
                    .facts
                    .push((k.to_ascii_lowercase().replace("export_", "nsys "), v));
            }
        }
    }
    let names = strings(conn, &mut lossy)?;
    let name_of = |id: Option<i64>| {
        id.and_then(|i| names.get(&i))
            .map(String::as_str)
            .unwrap_or("")
    };
    let first = p.dispatches.len();
    if objs.iter().any(|o| o == "CUPTI_ACTIVITY_KIND_KERNEL") {
        kernel_read::read(conn, &names, p)?;
    }
    let mut used = vec![false; p.dispatches.contexts().len()];
    for i in first..p.dispatches.len() {
        if let Some(u) = p
            .dispatches
            .timing(i)
            .and_then(|t| used.get_mut(t.2 as usize))
        {
            *u = true;
        }
    }
    let mut ran: Vec<u32> = (p.dispatches.contexts().iter().zip(&used))
        .filter(|(_, &u)| u)
        .map(|(c, _)| c.device)
        .collect();
    ran.sort_unstable();
    ran.dedup();
    if objs.iter().any(|o| o == "TARGET_INFO_GPU") {
        device_facts(conn, &ran, source)?;
    }
    source.facts.push((
        "device numbers".into(),
        "CUDA device ordinal (deviceId), as --device selects it".into(),
    ));
    if !objs.iter().any(|o| o.starts_with("CUPTI_ACTIVITY_KIND")) {
        source.notes.push(
            "the export has no GPU activity tables (CUPTI_ACTIVITY_KIND_*): a CPU-only capture"
                .into(),
        );
    }
    for (t, kind) in [
        ("CUPTI_ACTIVITY_KIND_MEMCPY", TransferKind::Memcpy),
        ("CUPTI_ACTIVITY_KIND_MEMSET", TransferKind::Memset),
    ] {
        if !objs.iter().any(|o| o == t) {
            continue;
        }
        let cols = columns(conn, t)?;
        let q = format!(
            "SELECT start, \"end\", {}, {}, {} FROM {t}",
            col_or_null(&cols, "deviceId"),
            col_or_null(&cols, "streamId"),
            col_or_null(&cols, "bytes")
        );
        let mut st = conn.prepare(&q).map_err(sql_err(t))?;
        let mut rows = st.query([]).map_err(sql_err(t))?;
        while let Some(r) = rows.next().map_err(sql_err(t))? {
            let g = |i: usize| r.get::<_, Option<i64>>(i).map_err(sql_err(t));
            let (start, end) = (g(0)?.unwrap_or(0), g(1)?.unwrap_or(0));
            p.transfers.push(Transfer {
                kind,
                device: u32_of(g(2)?).unwrap_or(0),
                stream: g(3)?.and_then(|s| u64::try_from(s).ok()).unwrap_or(0),
                start: Timestamp::from_ns(start),
                duration: span(start, end, t)?,
                bytes: g(4)?.and_then(|b| u64::try_from(b).ok()),
                sub_ns: 0,
            });
        }
    }
    let split = graphs::split_tid;
    if host_launches && objs.iter().any(|o| o == "CUPTI_ACTIVITY_KIND_RUNTIME") {
        let t = "CUPTI_ACTIVITY_KIND_RUNTIME";
        let mut st = conn
            .prepare("SELECT correlationId, globalTid, start FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId IS NOT NULL")
            .map_err(sql_err(t))?;
        let mut rows = st.query([]).map_err(sql_err(t))?;
        while let Some(r) = rows.next().map_err(sql_err(t))? {
            let (corr, gtid, start) = (
                r.get::<_, i64>(0).map_err(sql_err(t))?,
                r.get::<_, Option<i64>>(1).map_err(sql_err(t))?.unwrap_or(0),
                r.get::<_, i64>(2).map_err(sql_err(t))?,
            );
            let (pid, tid) = split(gtid);
            if let Ok(correlation) = u64::try_from(corr) {
                p.host_launches.push(Launch {
                    correlation,
                    pid,
                    tid,
                    start: Timestamp::from_ns(start),
                });
            }
        }
    }
    let ranges_from = p.annotations.len();
    if objs.iter().any(|o| o == "NVTX_EVENTS") {
        let t = "NVTX_EVENTS";
        // 59 = push/pop range, 60 = start/end range; marks and naming events have no end.
        let mut st = conn
            .prepare("SELECT start, \"end\", text, textId, globalTid FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND \"end\" IS NOT NULL")
            .map_err(sql_err(t))?;
        let mut rows = st.query([]).map_err(sql_err(t))?;
        let mut n = 0u64;
        while let Some(r) = rows.next().map_err(sql_err(t))? {
            let start = r.get::<_, i64>(0).map_err(sql_err(t))?;
            let end = r.get::<_, i64>(1).map_err(sql_err(t))?;
            let text = match r.get_ref(2).map_err(sql_err(t))? {
                rusqlite::types::ValueRef::Null => None,
                _ => Some(text_at(r, 2, &mut lossy).map_err(sql_err(t))?),
            };
            let text_id: Option<i64> = r.get(3).map_err(sql_err(t))?;
            let (pid, tid) = split(r.get::<_, Option<i64>>(4).map_err(sql_err(t))?.unwrap_or(0));
            let name = text.unwrap_or_else(|| name_of(text_id).to_string());
            p.annotations.push(Annotation {
                name: p.names.intern_str(&name),
                scope: AnnotationScope::Cpu { pid, tid },
                start: Timestamp::from_ns(start),
                duration: span(start, end, t)?,
            });
            n += 1;
        }
        source.facts.push(("NVTX ranges".into(), n.to_string()));
    }
    if objs.iter().any(|o| o == "CUPTI_ACTIVITY_KIND_GRAPH_TRACE") {
        graphs::whole_graph_note(conn, source)?;
    }
    if options.graphs {
        graphs::read(
            conn,
            &objs,
            &names,
            (first, ranges_from),
            options.graph_operators,
            p,
        )?;
    }
    note_lossy(&mut source.notes, "the Nsight Systems export", lossy);
    Ok(())
}
