//! XPlane protobuf (`*.xplane.pb`, written by the JAX / TensorFlow / XLA profiler): an `XSpace`
//! of planes, per the public `tsl/profiler/protobuf/xplane.proto` (messages declared here with
//! `prost`, field numbers as in that file). Device planes (`/device:GPU:N`) hold one line per
//! stream (`Stream #N(Kernel)`, `Stream #N(MemcpyD2D)`, …); their events are kernels (or copies)
//! with a metadata id naming them and stats (`kernel_details`: `grid:X,Y,Z block:X,Y,Z regs:R
//! static_shared:B dynamic_shared:B` or AMD's `private_mem` / `group_mem`). Derived lines (`XLA
//! Ops`, `XLA Modules`, `Steps`) repeat the kernels' time and are skipped. A protobuf cannot be
//! streamed: the file is read whole, up to [`MAX_XPLANE_BYTES`].

use crate::error::{Error, ErrorKind, Result};
use kernelab_model::{
    KernelDispatch, LaunchConfig, Location, Nanos, Profile, SourceInfo, Timestamp, Transfer,
    TransferKind,
};
use prost::Message;
use std::collections::HashMap;
use std::io::Read;

/// Most bytes of an XPlane file read (it is decoded whole).
pub const MAX_XPLANE_BYTES: u64 = 2 << 30;

#[derive(Clone, PartialEq, Message)]
struct XSpace {
    #[prost(message, repeated, tag = "1")]
    planes: Vec<XPlane>,
    #[prost(string, repeated, tag = "2")]
    errors: Vec<String>,
    #[prost(string, repeated, tag = "3")]
    warnings: Vec<String>,
    #[prost(string, repeated, tag = "4")]
    hostnames: Vec<String>,
}

#[derive(Clone, PartialEq, Message)]
struct XPlane {
    #[prost(int64, tag = "1")]
    id: i64,
    #[prost(string, tag = "2")]
    name: String,
    #[prost(message, repeated, tag = "3")]
    lines: Vec<XLine>,
    #[prost(map = "int64, message", tag = "4")]
    event_metadata: HashMap<i64, XEventMetadata>,
    #[prost(map = "int64, message", tag = "5")]
    stat_metadata: HashMap<i64, XStatMetadata>,
    #[prost(message, repeated, tag = "6")]
    stats: Vec<XStat>,
}

#[derive(Clone, PartialEq, Message)]
struct XLine {
    #[prost(int64, tag = "1")]
    id: i64,
    #[prost(string, tag = "2")]
    name: String,
    #[prost(int64, tag = "3")]
    timestamp_ns: i64,
    #[prost(message, repeated, tag = "4")]
    events: Vec<XEvent>,
    #[prost(int64, tag = "9")]
    duration_ps: i64,
    #[prost(int64, tag = "10")]
    display_id: i64,
    #[prost(string, tag = "11")]
    display_name: String,
}

#[derive(Clone, PartialEq, Message)]
struct XEvent {
    #[prost(int64, tag = "1")]
    metadata_id: i64,
    #[prost(int64, tag = "2")]
    offset_ps: i64,
    #[prost(int64, tag = "5")]
    num_occurrences: i64,
    #[prost(int64, tag = "3")]
    duration_ps: i64,
    #[prost(message, repeated, tag = "4")]
    stats: Vec<XStat>,
}

#[derive(Clone, PartialEq, Message)]
struct XStat {
    #[prost(int64, tag = "1")]
    metadata_id: i64,
    #[prost(double, optional, tag = "2")]
    double_value: Option<f64>,
    #[prost(uint64, optional, tag = "3")]
    uint64_value: Option<u64>,
    #[prost(int64, optional, tag = "4")]
    int64_value: Option<i64>,
    #[prost(string, optional, tag = "5")]
    str_value: Option<String>,
    #[prost(bytes = "vec", optional, tag = "6")]
    bytes_value: Option<Vec<u8>>,
    #[prost(uint64, optional, tag = "7")]
    ref_value: Option<u64>,
}

#[derive(Clone, PartialEq, Message)]
struct XEventMetadata {
    #[prost(int64, tag = "1")]
    id: i64,
    #[prost(string, tag = "2")]
    name: String,
    #[prost(bytes = "vec", tag = "3")]
    metadata: Vec<u8>,
    #[prost(string, tag = "4")]
    display_name: String,
    #[prost(message, repeated, tag = "5")]
    stats: Vec<XStat>,
    #[prost(int64, repeated, tag = "6")]
    child_id: Vec<i64>,
}

#[derive(Clone, PartialEq, Message)]
struct XStatMetadata {
    #[prost(int64, tag = "1")]
    id: i64,
    #[prost(string, tag = "2")]
    name: String,
    #[prost(string, tag = "3")]
    description: String,
}

/// True when `head` starts like an `XSpace`: field 1 (a plane) as a length-delimited message
/// whose first bytes hold a plane name (`/device:`, `/host:`, or a `Task Environment` plane).
pub fn looks_like(head: &[u8]) -> bool {
    if head.first() != Some(&0x0a) {
        return false;
    }
    let window = &head[..head.len().min(4096)];
    [
        b"/device:".as_slice(),
        b"/host:".as_slice(),
        b"Task Environment".as_slice(),
    ]
    .iter()
    .any(|n| memchr::memmem::find(window, n).is_some())
}

/// The text of a stat: a string, or the name its `ref_value` points to, or a number.
fn stat_text(s: &XStat, meta: &HashMap<i64, XStatMetadata>) -> Option<String> {
    if let Some(v) = &s.str_value {
        return Some(v.clone());
    }
    if let Some(r) = s.ref_value {
        return i64::try_from(r)
            .ok()
            .and_then(|r| meta.get(&r))
            .map(|m| m.name.clone());
    }
    s.int64_value
        .map(|v| v.to_string())
        .or(s.uint64_value.map(|v| v.to_string()))
}

/// The launch configuration in a `kernel_details` stat.
fn launch_of(details: &str) -> LaunchConfig {
    let mut c = LaunchConfig::default();
    let (mut shared, mut any_shared) = (0u32, false);
    for tok in details.split_ascii_whitespace() {
        let Some((k, v)) = tok.split_once(':') else {
            continue;
        };
        let triple = || -> Option<[u32; 3]> {
            let mut out = [0u32; 3];
            let mut parts = v.split(',');
            for slot in &mut out {
                *slot = parts.next()?.trim().parse().ok()?;
            }
            parts.next().is_none().then_some(out)
        };
        match k {
            "grid" => c.grid = triple(),
            "block" => c.block = triple(),
            "regs" => c.resources.registers = v.parse().ok(),
            "static_shared" | "dynamic_shared" | "group_mem" => {
                if let Ok(b) = v.parse::<u32>() {
                    shared = shared.saturating_add(b);
                    any_shared = true;
                }
            }
            "private_mem" => c.resources.scratch_bytes = v.parse().ok(),
            _ => {}
        }
    }
    if any_shared {
        c.resources.shared_bytes = Some(shared);
    }
    c
}

/// The stream number of a line named `Stream #N(...)`, `None` for any other line.
fn stream_of(line: &str) -> Option<u64> {
    let rest = line.strip_prefix("Stream #")?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest.get(..end)?.parse().ok()
}

/// Picoseconds as nanoseconds, rounded to the nearest.
fn ps_to_ns(ps: i64) -> i64 {
    ps.saturating_add(500).div_euclid(1000)
}

/// Reads an XPlane file from `reader` into `profile`.
pub fn read<R: Read>(reader: R, profile: &mut Profile, source: &mut SourceInfo) -> Result<()> {
    let bytes = kernelab_model::read_capped(reader, MAX_XPLANE_BYTES).map_err(|e| {
        Error::new(
            Location::byte(0),
            ErrorKind::Unsupported {
                detail: format!("an XPlane file kernelab cannot hold whole ({e})"),
            },
        )
    })?;
    let space = XSpace::decode(bytes.as_slice()).map_err(|e| {
        Error::syntax(
            Location::byte(0),
            "an XSpace protobuf (tsl/profiler/protobuf/xplane.proto)",
            format!("{e}"),
        )
    })?;
    drop(bytes);
    let (mut kernels, mut copies, mut skipped_lines) = (0u64, 0u64, 0u64);
    let mut devices = Vec::new();
    for plane in &space.planes {
        let Some(device) = plane
            .name
            .strip_prefix("/device:GPU:")
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        devices.push(device);
        let stat_id = |name: &str| {
            plane
                .stat_metadata
                .iter()
                .find(|(_, m)| m.name == name)
                .map(|(k, _)| *k)
        };
        let (details_id, correlation_id) = (stat_id("kernel_details"), stat_id("correlation_id"));
        for line in &plane.lines {
            let Some(stream) = stream_of(&line.name) else {
                skipped_lines += 1;
                continue;
            };
            let copy = line.name.contains("Memcpy") || line.name.contains("Memset");
            for e in &line.events {
                let start = line.timestamp_ns.saturating_add(ps_to_ns(e.offset_ps));
                let dur = u64::try_from(ps_to_ns(e.duration_ps)).map_err(|_| {
                    Error::syntax(
                        Location::default().with_field(format!(
                            "plane {} line {:?} event duration_ps",
                            plane.name, line.name
                        )),
                        "a non-negative duration",
                        e.duration_ps.to_string(),
                    )
                })?;
                let (start, duration) = (Timestamp::from_ns(start), Nanos::from_ns(dur));
                if copy {
                    copies += 1;
                    profile.transfers.push(Transfer {
                        kind: if line.name.contains("Memset") {
                            TransferKind::Memset
                        } else {
                            TransferKind::Memcpy
                        },
                        device,
                        stream,
                        start,
                        duration,
                        bytes: None,
                        sub_ns: 0,
                    });
                    continue;
                }
                let name = plane
                    .event_metadata
                    .get(&e.metadata_id)
                    .map(|m| {
                        if m.name.is_empty() {
                            m.display_name.as_str()
                        } else {
                            m.name.as_str()
                        }
                    })
                    .unwrap_or("");
                let mut config = LaunchConfig::default();
                let mut correlation = None;
                for s in &e.stats {
                    if Some(s.metadata_id) == details_id {
                        if let Some(t) = stat_text(s, &plane.stat_metadata) {
                            config = launch_of(&t);
                        }
                    } else if Some(s.metadata_id) == correlation_id {
                        correlation = s
                            .uint64_value
                            .or(s.int64_value.and_then(|v| u64::try_from(v).ok()));
                    }
                }
                let name = profile.names.intern_str(name);
                let launch = profile.launches.intern(config);
                kernels += 1;
                profile.dispatches.push(KernelDispatch {
                    name,
                    device,
                    stream,
                    start,
                    duration,
                    launch,
                    correlation,
                    sub_ns: 0,
                });
            }
        }
    }
    source.facts.push(("kernels".into(), kernels.to_string()));
    if copies > 0 {
        source.facts.push(("copies".into(), copies.to_string()));
    }
    source.facts.push((
        "device numbers".into(),
        "the N of each /device:GPU:N plane, as --device selects it".into(),
    ));
    if !space.hostnames.is_empty() {
        source
            .facts
            .push(("hosts".into(), space.hostnames.join(", ")));
    }
    if devices.is_empty() {
        source
            .notes
            .push("no /device:GPU:N plane: the profile holds no GPU activity".into());
    }
    if skipped_lines > 0 {
        source.notes.push(format!(
            "{skipped_lines} device lines that are not streams (XLA Ops, XLA Modules, Steps: derived from the kernels) were not counted"
        ));
    }
    for e in space.errors.iter().take(3) {
        source.notes.push(format!("the profiler reported: {e}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_details_of_both_vendors() {
        let amd = launch_of(" grid:1280,1,1 block:256,1,1 private_mem:0 group_mem:2112 occ_pct:0");
        assert_eq!(amd.grid, Some([1280, 1, 1]));
        assert_eq!(amd.block, Some([256, 1, 1]));
        assert_eq!(amd.resources.shared_bytes, Some(2112));
        let nv = launch_of("regs:32 static_shared:16 dynamic_shared:48 grid:1,2,3 block:32,1,1");
        assert_eq!(nv.resources.registers, Some(32));
        assert_eq!(nv.resources.shared_bytes, Some(64));
        assert_eq!(nv.grid, Some([1, 2, 3]));
        assert_eq!(stream_of("Stream #17(Kernel)"), Some(17));
        assert_eq!(stream_of("XLA Ops"), None);
        assert_eq!(ps_to_ns(1499), 1);
        assert_eq!(ps_to_ns(1500), 2);
    }
}
