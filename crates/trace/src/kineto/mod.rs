//! PyTorch profiler (Kineto) Chrome-trace JSON, CUDA and ROCm flavours, old (absolute epoch µs,
//! 19 significant digits) and new (`baseTimeNanoseconds` + relative µs) layouts, and the plain
//! Chrome trace array form. See `docs/formats.md` (Kineto).
//!
//! The file is streamed: only kernel, memcpy, memset and annotation events (and, for phases,
//! runtime launch calls) are parsed; every other event is skipped by the byte scanner, so
//! memory does not grow with the number of CPU-side events.

mod legacy;
mod scan;

use crate::error::{snippet, Error, ErrorKind, Result};
use kernelab_model::{
    parse_scaled_decimal, Annotation, AnnotationScope, KernelDispatch, Launch, LaunchConfig,
    Location, Nanos, Profile, Resources, SourceInfo, Timestamp, Transfer, TransferKind,
};
use scan::Window;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Read;

/// Options of the Kineto reader.
#[derive(Clone, Debug, Default)]
pub struct KinetoOptions {
    /// Also collect host runtime launch calls (needed to place kernels in CPU-side annotations).
    pub host_launches: bool,
}

#[derive(Deserialize)]
struct Event<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pid: Option<&'a RawValue>,
    #[serde(borrow)]
    tid: Option<&'a RawValue>,
    #[serde(borrow)]
    ts: Option<&'a RawValue>,
    #[serde(borrow)]
    dur: Option<&'a RawValue>,
    #[serde(borrow)]
    args: Option<Args<'a>>,
}

#[derive(Deserialize, Default)]
struct Args<'a> {
    #[serde(borrow)]
    device: Option<&'a RawValue>,
    #[serde(borrow)]
    stream: Option<&'a RawValue>,
    correlation: Option<u64>,
    #[serde(rename = "registers per thread")]
    registers: Option<u32>,
    #[serde(rename = "shared memory")]
    shared: Option<u64>,
    grid: Option<[u32; 3]>,
    block: Option<[u32; 3]>,
    bytes: Option<u64>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Kernel,
    Memcpy,
    Memset,
    GpuAnnotation,
    CpuAnnotation,
    Runtime,
}

fn classify(cat: &[u8], host_launches: bool) -> Option<Kind> {
    match cat {
        b"kernel" | b"Kernel" => Some(Kind::Kernel),
        b"gpu_memcpy" | b"Memcpy" => Some(Kind::Memcpy),
        b"gpu_memset" | b"Memset" => Some(Kind::Memset),
        b"gpu_user_annotation" => Some(Kind::GpuAnnotation),
        b"user_annotation" => Some(Kind::CpuAnnotation),
        b"cuda_runtime" | b"cuda_driver" | b"Runtime" if host_launches => Some(Kind::Runtime),
        _ => None,
    }
}

/// Reads a Kineto trace from `reader` into `profile`, recording facts and notes in `source`.
pub fn read<R: Read>(
    reader: R,
    options: &KinetoOptions,
    profile: &mut Profile,
    source: &mut SourceInfo,
) -> Result<()> {
    let before = (profile.dispatches.len(), profile.transfers.len());
    let mut w = Window::new(reader);
    let first = w.expect(
        b"{[",
        "a JSON object with \"traceEvents\" or an array of trace events",
    )?;
    let mut state = State {
        options,
        profile,
        counts: Counts::default(),
        process_names: HashMap::new(),
    };
    if first == b'[' {
        read_events(&mut w, &mut state)?;
    } else {
        let mut saw_events = false;
        if w.peek()? == Some(b'}') {
            w.consume(1);
        } else {
            loop {
                let (end, _, _) = w.next_value()?;
                let key_raw = w.slice(0..end).to_vec();
                let key_at = w.offset(w.pos);
                let key: String = serde_json::from_slice(&key_raw).map_err(|_| {
                    Error::syntax(
                        Location::byte(key_at),
                        "an object key string",
                        snippet(&key_raw, 24),
                    )
                })?;
                w.consume(end);
                w.expect(b":", "`:` after an object key")?;
                if key == "traceEvents" {
                    w.expect(b"[", "an array of events for \"traceEvents\"")?;
                    read_events(&mut w, &mut state)?;
                    saw_events = true;
                } else {
                    let (end, _, _) = w.next_value()?;
                    record_fact(&key, w.slice(0..end), source);
                    w.consume(end);
                }
                if w.expect(b",}", "`,` or `}` after a top-level member")? == b'}' {
                    break;
                }
            }
        }
        if !saw_events {
            return Err(Error::new(
                Location::byte(w.offset(w.pos)).with_field("traceEvents"),
                ErrorKind::Syntax {
                    expected: "a top-level \"traceEvents\" array".into(),
                    found: "none".into(),
                },
            ));
        }
    }
    if let Some(c) = w.peek()? {
        return Err(Error::syntax(
            Location::byte(w.offset(w.pos)),
            "end of input after the trace",
            format!("{:?}", c as char),
        ));
    }
    let c = state.counts;
    let devices = if c.legacy > 0 && c.legacy == c.parsed {
        source.format = "rocprof-chrome-trace".into();
        legacy::renumber(state.profile, before)
    } else {
        "GPU index (args.device, else pid), as --device selects it".into()
    };
    source
        .facts
        .push(("events read".into(), c.parsed.to_string()));
    source.facts.push(("device numbers".into(), devices));
    source
        .facts
        .push(("events skipped".into(), c.skipped.to_string()));
    if c.zero_duration > 0 {
        source.notes.push(format!(
            "{} kernel events had zero duration",
            c.zero_duration
        ));
    }
    Ok(())
}

#[derive(Default, Clone, Copy)]
struct Counts {
    parsed: u64,
    legacy: u64,
    skipped: u64,
    zero_duration: u64,
}

pub(crate) struct State<'o, 'p> {
    options: &'o KinetoOptions,
    profile: &'p mut Profile,
    counts: Counts,
    /// `process_name` metadata by pid, for Chrome traces without `cat` (legacy rocprof).
    process_names: HashMap<String, String>,
}

fn read_events<R: Read>(w: &mut Window<R>, st: &mut State<'_, '_>) -> Result<()> {
    if w.peek()? == Some(b']') {
        w.consume(1);
        return Ok(());
    }
    loop {
        let (end, cat, ph) = w.next_value()?;
        let kind = cat
            .as_ref()
            .and_then(|c| classify(w.slice(c.clone()), st.options.host_launches));
        let is_complete = ph
            .as_ref()
            .map(|p| w.slice(p.clone()) == b"X")
            .unwrap_or(false);
        let at = w.offset(w.pos);
        match kind {
            Some(kind) if is_complete => {
                handle_event(w.slice(0..end), at, kind, st)?;
                st.counts.parsed += 1;
            }
            // Chrome traces without `cat` (legacy rocprof `results.json`): kernels and copies
            // are told apart by their process's name.
            None if cat.is_none() && ph.is_some() => {
                let ph = w.slice(ph.clone().unwrap_or_default()).to_vec();
                if legacy::handle(w.slice(0..end), at, &ph, st)? {
                    st.counts.parsed += 1;
                    st.counts.legacy += 1;
                } else {
                    st.counts.skipped += 1;
                }
            }
            _ => st.counts.skipped += 1,
        }
        w.consume(end);
        if w.expect(b",]", "`,` or `]` between trace events")? == b']' {
            return Ok(());
        }
    }
}

pub(crate) fn json_error(e: &serde_json::Error, text: &[u8], at: u64) -> Error {
    // Map serde's line/column inside the event back to a stream byte offset.
    let mut offset = 0usize;
    let mut line = 1usize;
    for (i, &c) in text.iter().enumerate() {
        if line == e.line() {
            offset = i + e.column().saturating_sub(1);
            break;
        }
        if c == b'\n' {
            line += 1;
        }
    }
    let message = e.to_string();
    let message = message
        .split(" at line ")
        .next()
        .unwrap_or(&message)
        .to_string();
    Error::syntax(
        Location::byte(at + offset as u64),
        "a valid trace event",
        format!("invalid JSON ({message})"),
    )
}

pub(crate) fn time_field(raw: Option<&RawValue>, key: &str, at: u64) -> Result<i64> {
    let raw = raw.ok_or_else(|| {
        Error::syntax(
            Location::byte(at).with_field(key),
            format!("a \"{key}\" number"),
            "none",
        )
    })?;
    parse_scaled_decimal(raw.get().trim_matches('"'), 3).ok_or_else(|| {
        Error::syntax(
            Location::byte(at).with_field(key),
            "a decimal number of microseconds",
            raw.get().to_string(),
        )
    })
}

pub(crate) fn int_of(raw: Option<&RawValue>) -> Option<i64> {
    let t = raw?.get().trim();
    if let Ok(v) = t.parse::<i64>() {
        return Some(v);
    }
    // ROCm writes streams as "0x0" strings.
    let s: String = serde_json::from_str(t).ok()?;
    let s = s.trim();
    if let Some(hex) = s.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16).ok();
    }
    s.parse::<i64>().ok()
}

fn handle_event(text: &[u8], at: u64, kind: Kind, st: &mut State<'_, '_>) -> Result<()> {
    let ev: Event<'_> = serde_json::from_slice(text).map_err(|e| json_error(&e, text, at))?;
    let start = time_field(ev.ts, "ts", at)?;
    let dur = time_field(ev.dur, "dur", at)?;
    let duration = u64::try_from(dur).map_err(|_| {
        Error::syntax(
            Location::byte(at).with_field("dur"),
            "a non-negative duration",
            format!("{dur}"),
        )
    })?;
    let start = Timestamp::from_ns(start);
    let duration = Nanos::from_ns(duration);
    let args = ev.args.unwrap_or_default();
    let pid = int_of(ev.pid);
    let tid = int_of(ev.tid);
    let device = int_of(args.device)
        .or(pid)
        .and_then(|d| u32::try_from(d).ok())
        .unwrap_or(0);
    let stream = int_of(args.stream)
        .or(tid)
        .and_then(|s| u64::try_from(s).ok())
        .unwrap_or(0);
    let p = &mut *st.profile;
    match kind {
        Kind::Kernel => {
            let name = p.names.intern_str(ev.name.as_deref().unwrap_or(""));
            let launch = p.launches.intern(LaunchConfig {
                grid: args.grid,
                block: args.block,
                resources: Resources {
                    registers: args.registers,
                    shared_bytes: args.shared.and_then(|s| u32::try_from(s).ok()),
                    ..Resources::default()
                },
            });
            if duration.ns() == 0 {
                st.counts.zero_duration += 1;
            }
            p.dispatches.push(KernelDispatch {
                name,
                device,
                stream,
                start,
                duration,
                launch,
                correlation: args.correlation,
                sub_ns: 0,
            });
        }
        Kind::Memcpy | Kind::Memset => p.transfers.push(Transfer {
            kind: if kind == Kind::Memcpy {
                TransferKind::Memcpy
            } else {
                TransferKind::Memset
            },
            device,
            stream,
            start,
            duration,
            bytes: args.bytes,
            sub_ns: 0,
        }),
        Kind::GpuAnnotation | Kind::CpuAnnotation => {
            let name = p.names.intern_str(ev.name.as_deref().unwrap_or(""));
            let scope = if kind == Kind::GpuAnnotation {
                // Kineto records a GPU range on the stream it annotates (`tid`).
                AnnotationScope::Gpu {
                    device,
                    stream: int_of(args.stream)
                        .or(tid)
                        .and_then(|s| u64::try_from(s).ok()),
                }
            } else {
                AnnotationScope::Cpu {
                    pid: pid.unwrap_or(0),
                    tid: tid.unwrap_or(0),
                }
            };
            p.annotations.push(Annotation {
                name,
                scope,
                start,
                duration,
            });
        }
        Kind::Runtime => {
            if let Some(correlation) = args.correlation {
                p.host_launches.push(Launch {
                    correlation,
                    pid: pid.unwrap_or(0),
                    tid: tid.unwrap_or(0),
                    start,
                });
            }
        }
    }
    Ok(())
}

/// Keeps the top-level metadata a reader of the report wants (versions, time base, devices).
fn record_fact(key: &str, raw: &[u8], source: &mut SourceInfo) {
    const SCALARS: [&str; 6] = [
        "schemaVersion",
        "baseTimeNanoseconds",
        "displayTimeUnit",
        "cupti_version",
        "cuda_runtime_version",
        "cuda_driver_version",
    ];
    if SCALARS.contains(&key) {
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(raw) {
            let text = match v {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            };
            source.facts.push((key.to_string(), text));
        }
    } else if key == "deviceProperties" {
        #[derive(Deserialize)]
        struct Dev {
            name: Option<String>,
        }
        if let Ok(devs) = serde_json::from_slice::<Vec<Dev>>(raw) {
            // An empty or missing name is an unknown device, not an empty string.
            let mut names: Vec<String> = devs
                .into_iter()
                .map(|d| {
                    d.name
                        .filter(|n| !n.trim().is_empty())
                        .unwrap_or_else(|| "unknown".into())
                })
                .collect();
            names.dedup();
            if !names.is_empty() {
                source.facts.push(("device".into(), names.join(", ")));
            }
        }
    }
}
