//! rocprof-compute analysis databases (`rocprof-compute analyze --output-format db`, its own
//! schema 1.x): the workload (`compute_workload`, with the system info as JSON), its kernels
//! (`compute_kernel`) and their dispatches (`compute_dispatch`: GPU, start and end in ns), the
//! metric definitions and per-kernel values, and per-kernel roofline data. Read here: kernels
//! and dispatches, the versions and the device; detected by its tables. The metric values and
//! roofline data are read by `compute_analysis`.

use crate::error::{Error, Result};
use crate::sqlite::{int, note_lossy, rows, span, text};
use kernelab_model::{
    KernelDispatch, LaunchConfig, Location, NameId, Profile, SourceInfo, Timestamp,
};
use rusqlite::Connection;
use std::collections::HashMap;

/// Whether the database's objects are those of a rocprof-compute analysis database.
pub(crate) fn is_compute_db(objs: &[String]) -> bool {
    ["compute_kernel", "compute_dispatch"]
        .iter()
        .all(|t| objs.iter().any(|o| o == t))
}

/// Reads the dispatches of a rocprof-compute analysis database, each named by its kernel.
pub(crate) fn read(conn: &Connection, p: &mut Profile, source: &mut SourceInfo) -> Result<()> {
    // Every table is checked first, so a damaged tree is an error naming it, not rows lost.
    for t in crate::sqlite::tables(conn)? {
        crate::sqlite::quick_check(conn, Some(&t))?;
    }
    let objs = crate::sqlite::objects(conn)?;
    let has = |t: &str| objs.iter().any(|o| o == t);
    let mut lossy = 0;
    if has("compute_metadata") {
        lossy += rows(conn, "compute_metadata", |m, _| {
            for (col, fact) in [
                ("compute_version", "rocprof-compute version"),
                ("schema_version", "rocprof-compute db schema_version"),
            ] {
                if let Some(v) = text(m, col) {
                    source.facts.push((fact.into(), v));
                }
            }
            Ok(())
        })?;
    }
    if has("compute_workload") {
        lossy += rows(conn, "compute_workload", |m, _| {
            if let Some(name) = text(m, "name") {
                source.facts.push(("workload".into(), name));
            }
            let info: serde_json::Value = text(m, "sys_info_extdata")
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or_default();
            let s = |k: &str| info.get(k).and_then(serde_json::Value::as_str);
            let device = match (
                s("gpu_model").or(text(m, "sub_name").as_deref()),
                s("gpu_arch"),
            ) {
                (Some(model), Some(arch)) => Some(format!("{model} ({arch})")),
                (Some(model), None) => Some(model.to_string()),
                _ => None,
            };
            source
                .facts
                .extend(device.map(|d| ("device".to_string(), d)));
            if let Some(v) = s("rocm_version") {
                source.facts.push(("rocm_version".into(), v.to_string()));
            }
            Ok(())
        })?;
    }
    let mut names: HashMap<i64, NameId> = HashMap::new();
    lossy += rows(conn, "compute_kernel", |m, row| {
        let uuid = int(m, "kernel_uuid").ok_or_else(|| {
            Error::syntax(
                Location::default().with_field(format!("compute_kernel.kernel_uuid (row {row})")),
                "an integer id",
                "NULL or text",
            )
        })?;
        let name = text(m, "kernel_name").unwrap_or_default();
        names.insert(uuid, p.names.intern_str(&name));
        Ok(())
    })?;
    let launch = p.launches.intern(LaunchConfig::default());
    lossy += rows(conn, "compute_dispatch", |m, row| {
        let loc =
            |f: &str| Location::default().with_field(format!("compute_dispatch.{f} (row {row})"));
        let need =
            |f: &str| int(m, f).ok_or_else(|| Error::syntax(loc(f), "an integer", "NULL or text"));
        let kernel = need("kernel_uuid")?;
        let name = *names.get(&kernel).ok_or_else(|| {
            Error::syntax(
                loc("kernel_uuid"),
                "the id of a compute_kernel row",
                kernel.to_string(),
            )
        })?;
        let (start, end) = (need("start_timestamp")?, need("end_timestamp")?);
        let duration = span(
            start,
            end,
            &format!("compute_dispatch.end_timestamp (row {row})"),
        )?;
        p.dispatches.push(KernelDispatch {
            name,
            device: int(m, "gpu_id")
                .and_then(|v| u32::try_from(v).ok())
                .unwrap_or(0),
            stream: 0,
            start: Timestamp::from_ns(start),
            duration,
            launch,
            correlation: int(m, "dispatch_id").and_then(|v| u64::try_from(v).ok()),
            sub_ns: 0,
        });
        Ok(())
    })?;
    source.facts.push((
        "device numbers".into(),
        "GPU index (compute_dispatch.gpu_id), as --device selects it".into(),
    ));
    source.copies_unrecorded = true;
    source.notes.push(
        "rocprof-compute analysis database: each dispatch with its GPU and time (from the \
         profiling passes rocprof-compute ran); no streams (all on stream 0), copies or launch \
         shapes (its metric values: `kernelab counters --from`; its roofline points and \
         benchmark peaks: `kernelab roofline`)"
            .into(),
    );
    note_lossy(&mut source.notes, "the rocprof-compute database", lossy);
    Ok(())
}
