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
pub(crate) const MAX_XPLANE_BYTES: u64 = 2 << 30;

/// Most planes an `XSpace` may hold (real ones hold tens): counted as they are met.
pub(crate) const MAX_XPLANE_PLANES: u64 = 1 << 16;

/// Most bytes the decoded structures of one device plane may take (estimated from the wire
/// format before decoding it: a message of two bytes, an empty stat, takes a hundred once
/// decoded, so a small file could otherwise expand past any memory). Planes are decoded one at
/// a time, and only device planes (`/device:GPU:N`) are decoded at all.
pub(crate) const MAX_XPLANE_DECODED_BYTES: u64 = 768 << 20;

/// Hosts named in the profile's facts, at most (the rest are counted).
const MAX_HOSTNAMES: usize = 64;

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

/// The top level of an `XSpace` read from its wire format without decoding the planes: where
/// each device plane lies (decoded later, one at a time, within [`MAX_XPLANE_DECODED_BYTES`]),
/// the first errors and the host names. Other planes (host threads, task environment) are
/// skipped unread.
struct Space {
    /// Per device plane: the file offset of its message, its device number, its bytes.
    device_planes: Vec<(u64, u32, std::ops::Range<usize>)>,
    errors: Vec<String>,
    hostnames: Vec<String>,
    more_hostnames: u64,
}

/// A protobuf wire-format error at byte `at` of the file.
fn wire_err(at: usize, what: &str) -> Error {
    Error::syntax(
        Location::byte(at as u64),
        "an XSpace protobuf (tsl/profiler/protobuf/xplane.proto)",
        what.to_string(),
    )
}

/// A varint at `*pos` of `b` (advanced past it).
fn wire_varint(b: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for k in 0..10 {
        let x = *b.get(*pos)?;
        *pos += 1;
        v |= u64::from(x & 0x7f) << (7 * k);
        if x & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// The fields of the message `b[range]`: calls `f(tag, wire type, value range)` for each
/// (the value's bytes for a length-delimited field, else the varint or fixed bytes). Errors
/// name the byte (`base` is the offset of `b` in the file).
fn wire_fields(
    b: &[u8],
    range: std::ops::Range<usize>,
    base: usize,
    f: &mut dyn FnMut(u64, u64, std::ops::Range<usize>) -> Result<()>,
) -> Result<()> {
    let mut pos = range.start;
    while pos < range.end {
        let at = pos;
        let key = wire_varint(b, &mut pos).ok_or_else(|| wire_err(base + at, "a field key"))?;
        let (tag, wire) = (key >> 3, key & 7);
        let start = pos;
        let end = match wire {
            0 => {
                wire_varint(b, &mut pos).ok_or_else(|| wire_err(base + at, "a varint"))?;
                pos
            }
            1 => pos + 8,
            5 => pos + 4,
            2 => {
                let len = wire_varint(b, &mut pos)
                    .and_then(|l| usize::try_from(l).ok())
                    .ok_or_else(|| wire_err(base + at, "a length"))?;
                let s = pos;
                pos = s
                    .checked_add(len)
                    .ok_or_else(|| wire_err(base + at, "a length"))?;
                if pos > range.end {
                    return Err(wire_err(base + at, "a length inside its message"));
                }
                f(tag, wire, s..pos)?;
                continue;
            }
            _ => {
                return Err(wire_err(
                    base + at,
                    "a wire type xplane.proto uses (0, 1, 2 or 5)",
                ))
            }
        };
        if end > range.end {
            return Err(wire_err(base + at, "a value inside its message"));
        }
        pos = end;
        f(tag, wire, start..end)?;
    }
    Ok(())
}

/// The messages of `xplane.proto` whose decoded size [`decoded_size`] estimates.
#[derive(Clone, Copy)]
enum Kind {
    Plane,
    Line,
    Event,
    Stat,
    EventMetaEntry,
    EventMeta,
    StatMetaEntry,
    StatMeta,
}

/// Messages counted while estimating: (events, stats).
type Counts = (u64, u64);

/// About how many bytes the message `b[range]` of kind `kind` takes once decoded by `prost`
/// (each message's struct, each string's bytes, map entries twice over for the table), added
/// to `*size`, stopping with an error once past `cap`. Linear in the bytes, no allocation.
fn decoded_size(
    b: &[u8],
    range: std::ops::Range<usize>,
    kind: Kind,
    size: &mut u64,
    counts: &mut Counts,
    cap: u64,
) -> Result<()> {
    use std::mem::size_of;
    let own = match kind {
        Kind::Plane => size_of::<XPlane>(),
        Kind::Line => size_of::<XLine>(),
        Kind::Event => {
            counts.0 += 1;
            size_of::<XEvent>()
        }
        Kind::Stat => {
            counts.1 += 1;
            size_of::<XStat>()
        }
        Kind::EventMetaEntry => 2 * size_of::<(i64, XEventMetadata)>(),
        Kind::StatMetaEntry => 2 * size_of::<(i64, XStatMetadata)>(),
        Kind::EventMeta | Kind::StatMeta => 0,
    };
    *size = size.saturating_add(own as u64);
    if *size > cap {
        return Err(Error::new(
            Location::byte(range.start as u64),
            ErrorKind::Unsupported {
                detail: format!(
                    "a device plane whose decoded messages ({} events, {} stats so far) would take more than the cap of {cap} bytes (MAX_XPLANE_DECODED_BYTES)",
                    counts.0, counts.1
                ),
            },
        ));
    }
    wire_fields(b, range, 0, &mut |tag, wire, r| {
        let child = match (kind, tag) {
            (Kind::Plane, 3) => Some(Kind::Line),
            (Kind::Plane, 4) => Some(Kind::EventMetaEntry),
            (Kind::Plane, 5) => Some(Kind::StatMetaEntry),
            (Kind::Plane, 6) | (Kind::Event, 4) | (Kind::EventMeta, 5) => Some(Kind::Stat),
            (Kind::Line, 4) => Some(Kind::Event),
            (Kind::EventMetaEntry, 2) => Some(Kind::EventMeta),
            (Kind::StatMetaEntry, 2) => Some(Kind::StatMeta),
            _ => None,
        };
        match child {
            Some(c) if wire == 2 => decoded_size(b, r, c, size, counts, cap),
            _ => {
                // A string or bytes value takes its length; a repeated integer (child ids)
                // eight bytes a value.
                let extra = match (kind, tag, wire) {
                    (Kind::EventMeta, 6, 2) => 8 * r.len(),
                    (Kind::EventMeta, 6, _) => 8,
                    (_, _, 2) => r.len(),
                    _ => 0,
                };
                *size = size.saturating_add(extra as u64);
                Ok(())
            }
        }
    })
}

impl Space {
    /// Scans the `XSpace` `b`: planes counted against [`MAX_XPLANE_PLANES`], each device
    /// plane's decoded size checked against [`MAX_XPLANE_DECODED_BYTES`].
    fn scan(b: &[u8]) -> Result<Space> {
        let mut space = Space {
            device_planes: Vec::new(),
            errors: Vec::new(),
            hostnames: Vec::new(),
            more_hostnames: 0,
        };
        let mut planes = 0u64;
        let text = |r: std::ops::Range<usize>| {
            String::from_utf8_lossy(b.get(r).unwrap_or_default()).into_owned()
        };
        wire_fields(b, 0..b.len(), 0, &mut |tag, wire, r| {
            match (tag, wire) {
                (1, 2) => {
                    planes += 1;
                    if planes > MAX_XPLANE_PLANES {
                        return Err(Error::new(
                            Location::byte(r.start as u64),
                            ErrorKind::Unsupported {
                                detail: format!(
                                    "more than the cap of {MAX_XPLANE_PLANES} planes in one XSpace (MAX_XPLANE_PLANES)"
                                ),
                            },
                        ));
                    }
                    // The plane's name: its last field 2, as a decoder reads it.
                    let mut name = None;
                    wire_fields(b, r.clone(), 0, &mut |t, w, v| {
                        if (t, w) == (2, 2) {
                            name = Some(v);
                        }
                        Ok(())
                    })?;
                    let device = name
                        .map(&text)
                        .and_then(|n| n.strip_prefix("/device:GPU:")?.parse::<u32>().ok());
                    if let Some(device) = device {
                        let (mut size, mut counts) = (0u64, (0, 0));
                        decoded_size(
                            b,
                            r.clone(),
                            Kind::Plane,
                            &mut size,
                            &mut counts,
                            MAX_XPLANE_DECODED_BYTES,
                        )?;
                        space.device_planes.push((r.start as u64, device, r));
                    }
                }
                (2, 2) if space.errors.len() < 3 => space.errors.push(text(r)),
                (4, 2) if space.hostnames.len() < MAX_HOSTNAMES => space.hostnames.push(text(r)),
                (4, 2) => space.more_hostnames += 1,
                _ => {}
            }
            Ok(())
        })?;
        Ok(space)
    }
}

/// True when `head` starts like an `XSpace`: field 1 (a plane) as a length-delimited message
/// whose first bytes hold a plane name (`/device:`, `/host:`, or a `Task Environment` plane).
pub(crate) fn looks_like(head: &[u8]) -> bool {
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
pub(crate) fn read<R: Read>(
    reader: R,
    profile: &mut Profile,
    source: &mut SourceInfo,
) -> Result<()> {
    let bytes = kernelab_model::read_capped(reader, MAX_XPLANE_BYTES).map_err(|e| {
        Error::new(
            Location::byte(0),
            ErrorKind::Unsupported {
                detail: format!("an XPlane file kernelab cannot hold whole ({e})"),
            },
        )
    })?;
    let space = Space::scan(&bytes)?;
    let (mut kernels, mut copies, mut skipped_lines) = (0u64, 0u64, 0u64);
    let mut devices = Vec::new();
    for &(at, device, ref range) in &space.device_planes {
        let slice = bytes.get(range.clone()).unwrap_or_default();
        let plane = XPlane::decode(slice).map_err(|e| {
            Error::syntax(
                Location::byte(at),
                "an XPlane message (tsl/profiler/protobuf/xplane.proto)",
                format!("{e}"),
            )
        })?;
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
        let mut hosts = space.hostnames.join(", ");
        if space.more_hostnames > 0 {
            hosts.push_str(&format!(" and {} more", space.more_hostnames));
        }
        source.facts.push(("hosts".into(), hosts));
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
    for e in &space.errors {
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
