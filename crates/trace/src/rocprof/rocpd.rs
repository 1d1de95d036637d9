//! The rocpd SQLite database (`*_results.db`) that rocprofv3 writes by default since ROCm 7.0.
//! Read through its stable views (`kernels`, `memory_copies`, `rocpd_metadata`), never the
//! GUID-suffixed tables (docs/formats/amd.md §1.10).

use crate::error::{Error, Result};
use crate::sqlite::{int, lossy_text, note_lossy, objects, rows, span, sql_err, text};
use kernelab_model::{
    Annotation, AnnotationScope, KernelDispatch, Launch, LaunchConfig, Location, Nanos, Profile,
    Resources, SourceInfo, Timestamp, Transfer, TransferKind,
};
use rusqlite::Connection;

/// Reads kernel dispatches and copies from a rocpd database; roctx marker regions become
/// annotated ranges, and with `host_launches` the API regions with a correlation id become
/// launch calls (for `--by-phase`).
pub(crate) fn read(
    conn: &Connection,
    host_launches: bool,
    p: &mut Profile,
    source: &mut SourceInfo,
) -> Result<()> {
    let objs = objects(conn)?;
    // Every table is read through SQLite (through views over tables named by GUID): each is
    // checked first, so that a damaged tree is an error naming it, not rows lost.
    for t in crate::sqlite::tables(conn)? {
        crate::sqlite::quick_check(conn, Some(&t))?;
    }
    let mut lossy = 0;
    if objs.iter().any(|o| o == "rocpd_metadata") {
        lossy += rows(conn, "rocpd_metadata", |m, _| {
            if let (Some(tag), Some(v)) = (text(m, "tag"), text(m, "value")) {
                if tag == "schema_version" {
                    source.facts.push(("rocpd schema_version".into(), v));
                }
            }
            Ok(())
        })?;
    }
    if !objs.iter().any(|o| o == "kernels") {
        return Err(Error::syntax(
            Location::default().with_field("kernels"),
            "the rocpd view `kernels`",
            "no such view",
        ));
    }
    if objs.iter().any(|o| o == "rocpd_info_agent") {
        let mut gpus = Vec::new();
        lossy += rows(conn, "rocpd_info_agent", |m, _| {
            if text(m, "type").as_deref() == Some("GPU") {
                let name = text(m, "product_name").unwrap_or_default();
                let isa = text(m, "name").unwrap_or_default();
                let s = format!("{name} ({isa})");
                if !gpus.contains(&s) {
                    gpus.push(s);
                }
            }
            Ok(())
        })?;
        if !gpus.is_empty() {
            source.facts.push(("device".into(), gpus.join(", ")));
        }
    }
    // The rank: host name and process id, as rocprofv3 names its output files (%hostname%/%pid%).
    let mut hosts = Vec::new();
    if objs.iter().any(|o| o == "rocpd_info_node") {
        lossy += rows(conn, "rocpd_info_node", |m, _| {
            if let Some(h) = text(m, "hostname").filter(|h| !hosts.contains(h)) {
                hosts.push(h);
            }
            Ok(())
        })?;
    }
    let mut pids = Vec::new();
    if objs.iter().any(|o| o == "rocpd_info_process") {
        lossy += rows(conn, "rocpd_info_process", |m, _| {
            if let Some(pid) = int(m, "pid").filter(|p| !pids.contains(p)) {
                pids.push(pid);
            }
            Ok(())
        })?;
    }
    if !hosts.is_empty() || !pids.is_empty() {
        let pids: Vec<String> = pids.iter().map(i64::to_string).collect();
        source.facts.push((
            "rank".into(),
            format!("{}/{}", hosts.join("+"), pids.join("+")),
        ));
    }
    source.notes.push("register counts are allocation granules from the kernel descriptor, not compiler counts (docs/formats/amd.md §1.12)".into());
    lossy += rows(conn, "kernels", |m, row| {
        let loc = |f: &str| Location::default().with_field(format!("kernels.{f} (row {row})"));
        let start = int(m, "start")
            .ok_or_else(|| Error::syntax(loc("start"), "integer nanoseconds", "NULL or text"))?;
        let end = int(m, "end")
            .ok_or_else(|| Error::syntax(loc("end"), "integer nanoseconds", "NULL or text"))?;
        let duration = end
            .checked_sub(start)
            .and_then(|d| u64::try_from(d).ok())
            .ok_or_else(|| {
                Error::syntax(
                    loc("end"),
                    "an end not before the start (a non-negative duration)",
                    format!("start {start}, end {end}"),
                )
            })?;
        let u = |k: &str| int(m, k).and_then(|v| u32::try_from(v).ok());
        let xyz = |a: &str, b: &str, c: &str| Some([u(a)?, u(b)?, u(c)?]);
        let launch = p.launches.intern(LaunchConfig {
            grid: xyz("grid_x", "grid_y", "grid_z"),
            block: xyz("workgroup_x", "workgroup_y", "workgroup_z"),
            resources: Resources {
                registers: u("vgpr_count"),
                agprs: u("accum_vgpr_count"),
                sgprs: u("sgpr_count"),
                shared_bytes: u("lds_size"),
                scratch_bytes: u("scratch_size"),
                granules: true,
            },
        });
        let name = text(m, "name").unwrap_or_default();
        let device = int(m, "agent_type_index")
            .or(int(m, "agent_abs_index"))
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(0);
        p.dispatches.push(KernelDispatch {
            name: p.names.intern_str(&name),
            device,
            stream: int(m, "stream_id")
                .and_then(|v| u64::try_from(v).ok())
                .unwrap_or(0),
            start: Timestamp::from_ns(start),
            duration: Nanos::from_ns(duration),
            launch,
            // rocpd links a dispatch to its launch region by `stack_id` (the internal
            // correlation id); `corr_id` is often 0.
            correlation: int(m, "stack_id")
                .filter(|&v| v > 0)
                .or(int(m, "corr_id"))
                .and_then(|v| u64::try_from(v).ok()),
            sub_ns: 0,
        });
        Ok(())
    })?;
    let mut host_only = 0u64;
    let copies_before = p.transfers.len();
    if objs.iter().any(|o| o == "memory_copies") {
        lossy += rows(conn, "memory_copies", |m, row| {
            if let (Some(s), Some(e)) = (int(m, "start"), int(m, "end")) {
                let duration = span(s, e, &format!("memory_copies.end (row {row})"))?;
                // The GPU end of the copy (the destination, or the source of a copy to the
                // host), by its index among GPUs; a copy between host agents is no GPU transfer.
                let ty = |end: &str| text(m, &format!("{end}_agent_type"));
                let end = match (ty("dst").as_deref(), ty("src").as_deref()) {
                    // A view without agent types: the destination.
                    (None, None) | (Some("GPU"), _) => "dst",
                    (_, Some("GPU")) => "src",
                    _ => {
                        host_only += 1;
                        return Ok(());
                    }
                };
                p.transfers.push(Transfer {
                    kind: TransferKind::Memcpy,
                    device: int(m, &format!("{end}_agent_type_index"))
                        .and_then(|v| u32::try_from(v).ok())
                        .unwrap_or(0),
                    stream: int(m, "stream_id")
                        .and_then(|v| u64::try_from(v).ok())
                        .unwrap_or(0),
                    start: Timestamp::from_ns(s),
                    duration,
                    bytes: int(m, "size").and_then(|v| u64::try_from(v).ok()),
                    sub_ns: 0,
                });
            }
            Ok(())
        })?;
    }
    // No copy rows: the run was not traced for copies (rocprofv3 without --memory-copy-trace
    // still writes the view), so their time is unknown, not zero.
    source.copies_unrecorded = p.transfers.len() == copies_before && host_only == 0;
    if objs.iter().any(|o| o == "regions") {
        lossy += regions(conn, host_launches, p, source)?;
    }
    source.facts.push((
        "device numbers".into(),
        "GPU index (agent_type_index), as --device selects it; a copy is on the GPU at its GPU end (the destination, or the source of a copy to the host)".into(),
    ));
    if host_only > 0 {
        source.notes.push(format!(
            "{host_only} copies between host agents are not GPU transfers and were left out"
        ));
    }
    note_lossy(&mut source.notes, "the rocpd database", lossy);
    Ok(())
}

/// Marker regions (`MARKER_*` categories: roctx ranges) become host-side annotated ranges;
/// other regions are API calls, kept as launch calls (linked to dispatches by `stack_id`) when
/// asked.
/// Returns how many TEXT values were not UTF-8.
fn regions(
    conn: &Connection,
    host_launches: bool,
    p: &mut Profile,
    source: &mut SourceInfo,
) -> Result<u64> {
    let t = "regions";
    let mut st = conn
        .prepare("SELECT category, name, pid, tid, start, \"end\", stack_id FROM regions")
        .map_err(sql_err(t))?;
    let mut q = st.query([]).map_err(sql_err(t))?;
    let (mut lossy, mut ranges, mut calls) = (0u64, 0u64, 0u64);
    let mut row = 0u64;
    while let Some(r) = q.next().map_err(sql_err(t))? {
        row += 1;
        let bytes = |i: usize| -> Result<Vec<u8>> {
            Ok(match r.get_ref(i).map_err(sql_err(t))? {
                rusqlite::types::ValueRef::Text(b) => b.to_vec(),
                _ => Vec::new(),
            })
        };
        let category = bytes(0)?;
        let g = |i: usize| r.get::<_, Option<i64>>(i).map_err(sql_err(t));
        let (Some(start), Some(end)) = (g(4)?, g(5)?) else {
            continue;
        };
        let (pid, tid) = (g(2)?.unwrap_or(0), g(3)?.unwrap_or(0));
        if category.starts_with(b"MARKER") {
            let duration = span(start, end, &format!("regions.end (row {row})"))?;
            if duration.ns() > 0 {
                let name = lossy_text(&bytes(1)?, &mut lossy);
                p.annotations.push(Annotation {
                    name: p.names.intern_str(&name),
                    scope: AnnotationScope::Cpu { pid, tid },
                    start: Timestamp::from_ns(start),
                    duration,
                });
                ranges += 1;
            }
        } else if host_launches {
            if let Some(correlation) = g(6)?.and_then(|c| u64::try_from(c).ok()).filter(|&c| c > 0)
            {
                p.host_launches.push(Launch {
                    correlation,
                    pid,
                    tid,
                    start: Timestamp::from_ns(start),
                });
                calls += 1;
            }
        }
    }
    source
        .facts
        .push(("marker ranges".into(), ranges.to_string()));
    if host_launches {
        source.facts.push(("API calls".into(), calls.to_string()));
    }
    Ok(lossy)
}
