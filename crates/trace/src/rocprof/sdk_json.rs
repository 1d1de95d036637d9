//! rocprofv3 `-f json` output (`<prefix>_results.json`): `{"rocprofiler-sdk-tool": [ {…} ]}`,
//! one element per process (docs/formats/amd.md §1.8).
//!
//! Streamed through the Kineto reader's window: each agent, kernel symbol, dispatch and copy
//! is parsed on its own, and every other array is skipped element by element, so memory does
//! not grow with the number of API records. Names come from `kernel_symbols` by `kernel_id`
//! (rocprofiler-sdk writes the symbols before the records); devices are GPU indexes (the
//! agent's `logical_node_type_id`, as rocpd's `agent_type_index`).

use crate::error::{snippet, Error, ErrorKind, Result};
use crate::kineto::window::Window;
use kernelab_model::{
    KernelDispatch, LaunchConfig, Location, NameId, Nanos, Profile, Resources, SourceInfo,
    Timestamp, Transfer, TransferKind,
};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::collections::HashMap;
use std::io::Read;

/// The top-level key that names the format.
pub(crate) const TOP_KEY: &[u8] = b"\"rocprofiler-sdk-tool\"";

/// Whether `text` (after a `{` and whitespace) opens with the rocprofv3 JSON key.
pub(crate) fn looks_like(text: &[u8]) -> bool {
    let mut rest = text.iter().skip_while(|c| c.is_ascii_whitespace());
    if rest.next() != Some(&b'{') {
        return false;
    }
    let rest: Vec<u8> = rest
        .skip_while(|c| c.is_ascii_whitespace())
        .take(TOP_KEY.len())
        .copied()
        .collect();
    rest == TOP_KEY
}

#[derive(Deserialize)]
struct Handle {
    handle: u64,
}

#[derive(Deserialize)]
struct Node {
    hostname: Option<String>,
}

#[derive(Deserialize)]
struct Metadata {
    pid: Option<i64>,
    node: Option<Node>,
}

#[derive(Deserialize)]
struct Agent {
    id: Handle,
    #[serde(rename = "type")]
    kind: Option<u64>,
    name: Option<String>,
    product_name: Option<String>,
    logical_node_type_id: Option<u32>,
}

/// rocprofiler-sdk's agent type of a GPU (`ROCPROFILER_AGENT_TYPE_GPU`).
const AGENT_GPU: u64 = 2;

#[derive(Deserialize)]
struct Symbol {
    kernel_id: u64,
    kernel_name: Option<String>,
    formatted_kernel_name: Option<String>,
    sgpr_count: Option<u32>,
    arch_vgpr_count: Option<u32>,
    accum_vgpr_count: Option<u32>,
}

#[derive(Deserialize)]
struct Xyz {
    x: u32,
    y: u32,
    z: u32,
}

#[derive(Deserialize)]
struct DispatchInfo {
    agent_id: Handle,
    queue_id: Option<Handle>,
    kernel_id: u64,
    private_segment_size: Option<u32>,
    group_segment_size: Option<u32>,
    workgroup_size: Option<Xyz>,
    grid_size: Option<Xyz>,
}

#[derive(Deserialize)]
struct Correlation {
    internal: Option<u64>,
}

#[derive(Deserialize)]
struct Dispatch {
    start_timestamp: i64,
    end_timestamp: i64,
    correlation_id: Option<Correlation>,
    dispatch_info: DispatchInfo,
    stream_id: Option<Handle>,
}

#[derive(Deserialize)]
struct Copy {
    start_timestamp: i64,
    end_timestamp: i64,
    dst_agent_id: Option<Handle>,
    src_agent_id: Option<Handle>,
    bytes: Option<u64>,
    stream_id: Option<Handle>,
}

/// What one process's element has said so far.
#[derive(Default)]
struct Process {
    /// Agent handle → (is a GPU, GPU index).
    agents: HashMap<u64, (bool, u32)>,
    /// Kernel id → name and registers.
    symbols: HashMap<u64, (NameId, Resources)>,
    /// Dispatches whose kernel id had no symbol before them.
    unnamed: u64,
    /// Copies with no GPU end.
    host_only: u64,
}

/// Reads a rocprofv3 JSON document from `reader` into `profile`.
pub(crate) fn read<R: Read>(
    reader: R,
    profile: &mut Profile,
    source: &mut SourceInfo,
) -> Result<()> {
    let mut w = Window::new(reader);
    let mut gpus = Vec::new();
    let mut ranks = Vec::new();
    let (mut unnamed, mut host_only) = (0, 0);
    let mut saw_tool = false;
    w.expect(b"{", "a JSON object")?;
    members(&mut w, |w, key| {
        if key != "rocprofiler-sdk-tool" {
            return skip(w);
        }
        saw_tool = true;
        w.expect(b"[", "an array of processes for \"rocprofiler-sdk-tool\"")?;
        elements(w, |w| {
            let mut p = Process::default();
            w.expect(b"{", "a process object")?;
            members(w, |w, key| {
                process_member(w, key, &mut p, &mut gpus, &mut ranks, profile)
            })?;
            unnamed += p.unnamed;
            host_only += p.host_only;
            Ok(())
        })
    })?;
    if !saw_tool {
        return Err(Error::syntax(
            Location::byte(w.offset(w.pos)).with_field("rocprofiler-sdk-tool"),
            "a top-level \"rocprofiler-sdk-tool\" array",
            "none",
        ));
    }
    if let Some(c) = w.peek()? {
        return Err(Error::syntax(
            Location::byte(w.offset(w.pos)),
            "end of input after the document",
            format!("{:?}", c as char),
        ));
    }
    if !gpus.is_empty() {
        source.facts.push(("device".into(), gpus.join(", ")));
    }
    if !ranks.is_empty() {
        source.facts.push(("rank".into(), ranks.join(" ")));
    }
    source.facts.push((
        "device numbers".into(),
        "GPU index (the agent's logical_node_type_id), as --device selects it; a copy is on the GPU at its GPU end (the destination, or the source of a copy to the host)".into(),
    ));
    source.facts.push((
        "stream numbers".into(),
        "stream_id (the HIP stream), else queue_id".into(),
    ));
    source.notes.push("register counts are allocation granules from the kernel descriptor, not compiler counts (docs/formats/amd.md §1.12)".into());
    if unnamed > 0 {
        source.notes.push(format!(
            "{unnamed} dispatches name a kernel_id with no kernel_symbols entry before them: named `kernel_id N`"
        ));
    }
    if host_only > 0 {
        source.notes.push(format!(
            "{host_only} copies between host agents are not GPU transfers and were left out"
        ));
    }
    Ok(())
}

/// Reads one member of a process object (its key just read).
fn process_member<R: Read>(
    w: &mut Window<R>,
    key: &str,
    p: &mut Process,
    gpus: &mut Vec<String>,
    ranks: &mut Vec<String>,
    profile: &mut Profile,
) -> Result<()> {
    match key {
        "metadata" => {
            let m: Metadata = parse(w, "metadata")?;
            let host = m.node.and_then(|n| n.hostname).unwrap_or_default();
            let pid = m.pid.map(|p| p.to_string()).unwrap_or_default();
            ranks.push(format!("{host}/{pid}"));
            Ok(())
        }
        "agents" => array(w, "agents", |w| {
            let a: Agent = parse(w, "agents[]")?;
            let gpu = a.kind == Some(AGENT_GPU);
            let index = match a.logical_node_type_id {
                Some(i) => i,
                None => {
                    let n = p.agents.values().filter(|(g, _)| *g == gpu).count();
                    u32::try_from(n).unwrap_or(u32::MAX)
                }
            };
            p.agents.insert(a.id.handle, (gpu, index));
            if gpu {
                let s = format!(
                    "{} ({})",
                    a.product_name.unwrap_or_default(),
                    a.name.unwrap_or_default()
                );
                if !gpus.contains(&s) {
                    gpus.push(s);
                }
            }
            Ok(())
        }),
        "kernel_symbols" => array(w, "kernel_symbols", |w| {
            let s: Symbol = parse(w, "kernel_symbols[]")?;
            let name = s
                .formatted_kernel_name
                .filter(|n| !n.is_empty())
                .or(s.kernel_name)
                .unwrap_or_default();
            let resources = Resources {
                registers: s.arch_vgpr_count,
                agprs: s.accum_vgpr_count,
                sgprs: s.sgpr_count,
                granules: true,
                ..Resources::default()
            };
            p.symbols
                .insert(s.kernel_id, (profile.names.intern_str(&name), resources));
            Ok(())
        }),
        "buffer_records" => {
            w.expect(b"{", "an object for \"buffer_records\"")?;
            members(w, |w, key| match key {
                "kernel_dispatch" => array(w, "kernel_dispatch", |w| {
                    let d: Dispatch = parse(w, "buffer_records.kernel_dispatch[]")?;
                    dispatch(d, w, p, profile)
                }),
                "memory_copy" => array(w, "memory_copy", |w| {
                    let c: Copy = parse(w, "buffer_records.memory_copy[]")?;
                    copy(c, w, p, profile)
                }),
                _ => skip(w),
            })
        }
        _ => skip(w),
    }
}

/// Adds one dispatch record (just parsed; `w` is after it, for error offsets).
fn dispatch<R: Read>(
    d: Dispatch,
    w: &Window<R>,
    p: &mut Process,
    profile: &mut Profile,
) -> Result<()> {
    let duration = span(d.start_timestamp, d.end_timestamp, w, "kernel_dispatch")?;
    let info = d.dispatch_info;
    let (name, mut resources) = match p.symbols.get(&info.kernel_id) {
        Some(&(name, resources)) => (name, resources),
        None => {
            p.unnamed += 1;
            let name = format!("kernel_id {}", info.kernel_id);
            (profile.names.intern_str(&name), Resources::default())
        }
    };
    resources.shared_bytes = info.group_segment_size;
    resources.scratch_bytes = info.private_segment_size;
    let xyz = |v: Option<Xyz>| v.map(|v| [v.x, v.y, v.z]);
    let launch = profile.launches.intern(LaunchConfig {
        grid: xyz(info.grid_size),
        block: xyz(info.workgroup_size),
        resources,
    });
    let stream = d.stream_id.or(info.queue_id).map_or(0, |h| h.handle);
    profile.dispatches.push(KernelDispatch {
        name,
        device: gpu_index(p, info.agent_id.handle),
        stream,
        start: Timestamp::from_ns(d.start_timestamp),
        duration,
        launch,
        correlation: d.correlation_id.and_then(|c| c.internal).filter(|&c| c > 0),
        sub_ns: 0,
    });
    Ok(())
}

/// Adds one copy record at its GPU end (the destination, else the source).
fn copy<R: Read>(c: Copy, w: &Window<R>, p: &mut Process, profile: &mut Profile) -> Result<()> {
    let duration = span(c.start_timestamp, c.end_timestamp, w, "memory_copy")?;
    let is_gpu = |h: &Option<Handle>| {
        h.as_ref()
            .and_then(|h| p.agents.get(&h.handle))
            .is_some_and(|(g, _)| *g)
    };
    let end = if is_gpu(&c.dst_agent_id) {
        c.dst_agent_id
    } else if is_gpu(&c.src_agent_id) {
        c.src_agent_id
    } else {
        p.host_only += 1;
        return Ok(());
    };
    profile.transfers.push(Transfer {
        kind: TransferKind::Memcpy,
        device: end.map_or(0, |h| gpu_index(p, h.handle)),
        stream: c.stream_id.map_or(0, |h| h.handle),
        start: Timestamp::from_ns(c.start_timestamp),
        duration,
        bytes: c.bytes,
        sub_ns: 0,
    });
    Ok(())
}

/// The GPU index of an agent (its handle when the agent was not listed).
fn gpu_index(p: &Process, handle: u64) -> u32 {
    p.agents
        .get(&handle)
        .map(|&(_, i)| i)
        .unwrap_or_else(|| u32::try_from(handle).unwrap_or(u32::MAX))
}

/// The duration from `start` to `end`, which must not be before it.
fn span<R: Read>(start: i64, end: i64, w: &Window<R>, what: &str) -> Result<Nanos> {
    end.checked_sub(start)
        .and_then(|d| u64::try_from(d).ok())
        .map(Nanos::from_ns)
        .ok_or_else(|| {
            Error::syntax(
                Location::byte(w.offset(w.pos)).with_field(format!("{what}.end_timestamp")),
                "an end not before the start (a non-negative duration)",
                format!("start {start}, end {end}"),
            )
        })
}

/// Parses the next value as `T` and consumes it.
fn parse<R: Read, T: DeserializeOwned>(w: &mut Window<R>, what: &str) -> Result<T> {
    let end = w.next_value()?;
    let at = w.offset(w.pos);
    let v = serde_json::from_slice(w.slice(0..end)).map_err(|e| {
        Error::syntax(
            Location::byte(at).with_field(what),
            format!("a {what} record ({e})"),
            snippet(w.slice(0..end), 24),
        )
    })?;
    w.consume(end);
    Ok(v)
}

/// Reads an array whose `[` is next, calling `each` at each element.
fn array<R: Read>(
    w: &mut Window<R>,
    what: &str,
    each: impl FnMut(&mut Window<R>) -> Result<()>,
) -> Result<()> {
    w.expect(b"[", &format!("an array for \"{what}\""))?;
    elements(w, each)
}

/// Reads the elements of an array whose `[` was just consumed, through its `]`.
fn elements<R: Read>(
    w: &mut Window<R>,
    mut each: impl FnMut(&mut Window<R>) -> Result<()>,
) -> Result<()> {
    if w.peek()? == Some(b']') {
        w.consume(1);
        return Ok(());
    }
    loop {
        each(w)?;
        if w.expect(b",]", "`,` or `]` after an array element")? == b']' {
            return Ok(());
        }
    }
}

/// Reads the members of an object whose `{` was just consumed, through its `}`, calling
/// `each` with each key (the value is next).
fn members<R: Read>(
    w: &mut Window<R>,
    mut each: impl FnMut(&mut Window<R>, &str) -> Result<()>,
) -> Result<()> {
    if w.peek()? == Some(b'}') {
        w.consume(1);
        return Ok(());
    }
    loop {
        let end = w.next_value()?;
        let at = w.offset(w.pos);
        let key: String = serde_json::from_slice(w.slice(0..end)).map_err(|_| {
            Error::new(
                Location::byte(at),
                ErrorKind::Syntax {
                    expected: "an object key string".into(),
                    found: snippet(w.slice(0..end), 24),
                },
            )
        })?;
        w.consume(end);
        w.expect(b":", "`:` after an object key")?;
        each(w, &key)?;
        if w.expect(b",}", "`,` or `}` after an object member")? == b'}' {
            return Ok(());
        }
    }
}

/// How deep [`skip`] walks arrays and objects before it takes a value whole.
const SKIP_DEPTH: u32 = 3;

/// Skips the next value; arrays and objects member by member down to [`SKIP_DEPTH`], so a long
/// array of records not read (API calls, `callback_records.counter_collection`) never has to
/// fit in the window.
fn skip<R: Read>(w: &mut Window<R>) -> Result<()> {
    skip_at(w, SKIP_DEPTH)
}

fn skip_at<R: Read>(w: &mut Window<R>, depth: u32) -> Result<()> {
    match w.peek()? {
        Some(b'[') if depth > 0 => {
            w.consume(1);
            elements(w, |w| skip_at(w, depth - 1))
        }
        Some(b'{') if depth > 0 => {
            w.consume(1);
            members(w, |w, _| skip_at(w, depth - 1))
        }
        _ => {
            let end = w.next_value()?;
            w.consume(end);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(s: &str) -> Result<(Profile, SourceInfo)> {
        let mut p = Profile::default();
        let mut src = SourceInfo::default();
        read(s.as_bytes(), &mut p, &mut src)?;
        Ok((p, src))
    }

    const SMALL: &str = r#"{"rocprofiler-sdk-tool":[{"metadata":{"pid":7,"node":{"hostname":"h"}},
      "agents":[{"id":{"handle":10},"type":1,"name":"cpu"},
                {"id":{"handle":11},"type":2,"name":"gfx950","product_name":"AMD Instinct MI350X","logical_node_type_id":0}],
      "strings":{"x":[1,2,{"y":[3]}]},
      "kernel_symbols":[{"kernel_id":3,"kernel_name":"k.kd","formatted_kernel_name":"k","arch_vgpr_count":8,"sgpr_count":16}],
      "buffer_records":{"hip_api":[{"a":1},{"b":[2]}],
        "kernel_dispatch":[{"start_timestamp":100,"end_timestamp":150,"correlation_id":{"internal":1},
          "dispatch_info":{"agent_id":{"handle":11},"queue_id":{"handle":4},"kernel_id":3,
            "workgroup_size":{"x":64,"y":1,"z":1},"grid_size":{"x":128,"y":1,"z":1},"group_segment_size":512}},
          {"start_timestamp":200,"end_timestamp":210,"stream_id":{"handle":9},
          "dispatch_info":{"agent_id":{"handle":11},"queue_id":{"handle":4},"kernel_id":5}}],
        "memory_copy":[{"start_timestamp":1,"end_timestamp":5,"dst_agent_id":{"handle":11},"src_agent_id":{"handle":10},"bytes":64},
                       {"start_timestamp":1,"end_timestamp":5,"dst_agent_id":{"handle":10},"src_agent_id":{"handle":10}}]}}]}"#;

    #[test]
    fn reads_dispatches_names_devices_streams_and_copies() {
        assert!(looks_like(SMALL.as_bytes()));
        assert!(!looks_like(br#"{"traceEvents":[]}"#));
        let (p, src) = read_str(SMALL).expect("a document");
        assert_eq!(p.dispatches.len(), 2);
        let d: Vec<KernelDispatch> = p.dispatches.iter().collect();
        assert_eq!(p.names.name(d[0].name), "k");
        assert_eq!(p.names.name(d[1].name), "kernel_id 5");
        assert_eq!((d[0].device, d[0].stream, d[1].stream), (0, 4, 9));
        assert_eq!((d[0].duration.ns(), d[0].correlation), (50, Some(1)));
        let launch = p.launches.get(d[0].launch).expect("launch");
        assert_eq!(launch.grid, Some([128, 1, 1]));
        assert_eq!(launch.resources.registers, Some(8));
        assert_eq!(launch.resources.shared_bytes, Some(512));
        assert_eq!(p.transfers.len(), 1);
        assert_eq!(p.transfers[0].bytes, Some(64));
        let fact = |k: &str| src.facts.iter().find(|f| f.0 == k).map(|f| f.1.clone());
        assert_eq!(
            fact("device").as_deref(),
            Some("AMD Instinct MI350X (gfx950)")
        );
        assert_eq!(fact("rank").as_deref(), Some("h/7"));
        assert!(src.notes.iter().any(|n| n.starts_with("1 dispatches name")));
        assert!(src
            .notes
            .iter()
            .any(|n| n.starts_with("1 copies between host")));
    }

    #[test]
    fn truncated_empty_and_hostile_documents_are_errors() {
        for cut in [10, 200, SMALL.len() / 2, SMALL.len() - 3] {
            let e = read_str(&SMALL[..cut]).err().map(|e| e.to_string());
            assert!(e.is_some(), "cut at {cut}");
        }
        let e = read_str("{}").expect_err("no tool array").to_string();
        assert!(e.contains("rocprofiler-sdk-tool"), "{e}");
        let backwards = SMALL.replace("\"end_timestamp\":150", "\"end_timestamp\":50");
        let e = read_str(&backwards).expect_err("negative").to_string();
        assert!(e.contains("non-negative duration"), "{e}");
        let wrong = SMALL.replace(
            "\"kernel_id\":3,\"kernel_name\"",
            "\"kernel_id\":\"x\",\"kernel_name\"",
        );
        let e = read_str(&wrong).expect_err("bad symbol").to_string();
        assert!(e.contains("kernel_symbols[]"), "{e}");
        let (p, _) = read_str(r#"{"rocprofiler-sdk-tool":[]}"#).expect("no processes");
        assert_eq!(p.dispatches.len(), 0);
        let deep = format!(
            r#"{{"rocprofiler-sdk-tool":[{{"strings":{}{}}}]}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert!(read_str(&deep).is_ok());
    }
}
