//! The rocpd SQLite database (`*_results.db`) that rocprofv3 writes by default since ROCm 7.0.
//! Read through its stable views (`kernels`, `memory_copies`, `rocpd_metadata`), never the
//! GUID-suffixed tables (docs/formats/amd.md §1.10).

use crate::error::{Error, Result};
use crate::sqlite::{int, note_lossy, objects, rows, span, text};
use kernelab_model::{
    KernelDispatch, LaunchConfig, Location, Nanos, Profile, Resources, SourceInfo, Timestamp,
    Transfer, TransferKind,
};
use rusqlite::Connection;

/// Reads kernel dispatches and copies from a rocpd database.
pub fn read(conn: &Connection, p: &mut Profile, source: &mut SourceInfo) -> Result<()> {
    let objs = objects(conn)?;
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
            correlation: int(m, "corr_id").and_then(|v| u64::try_from(v).ok()),
        });
        Ok(())
    })?;
    if objs.iter().any(|o| o == "memory_copies") {
        lossy += rows(conn, "memory_copies", |m, row| {
            if let (Some(s), Some(e)) = (int(m, "start"), int(m, "end")) {
                let duration = span(s, e, &format!("memory_copies.end (row {row})"))?;
                p.transfers.push(Transfer {
                    kind: TransferKind::Memcpy,
                    device: int(m, "dst_agent_type_index")
                        .and_then(|v| u32::try_from(v).ok())
                        .unwrap_or(0),
                    stream: int(m, "stream_id")
                        .and_then(|v| u64::try_from(v).ok())
                        .unwrap_or(0),
                    start: Timestamp::from_ns(s),
                    duration,
                    bytes: int(m, "size").and_then(|v| u64::try_from(v).ok()),
                });
            }
            Ok(())
        })?;
    }
    source.facts.push((
        "device numbers".into(),
        "GPU index (agent_type_index), as --device selects it".into(),
    ));
    note_lossy(&mut source.notes, "the rocpd database", lossy);
    Ok(())
}
