//! PyTorch profiler (Kineto) Chrome-trace JSON, CUDA and ROCm flavours, old (absolute epoch µs,
//! 19 significant digits) and new (`baseTimeNanoseconds` + relative µs) layouts, and the plain
//! Chrome trace array form. See `docs/formats.md` (Kineto).
//!
//! The file is streamed: only kernel, memcpy, memset and annotation events (and, for phases,
//! runtime launch calls) are parsed; every other event is skipped by the byte scanner, so
//! memory does not grow with the number of CPU-side events.

mod host_work;
mod legacy;
mod parallel;
mod scan;
mod skip;
mod values;
pub(crate) mod window;

use crate::error::{snippet, Error, ErrorKind, Result};
use crate::format::Format;
use crate::graph_calls::{capture_edge, is_graph_launch, is_kernel_launch};
use kernelab_model::{
    Annotation, AnnotationScope, FlopWidth, GraphCapture, GraphLaunch, HostOp, KernelDispatch,
    KernelLaunchCall, Launch, LaunchConfig, Location, Nanos, OpShape, Profile, RecordedWork,
    Resources, SourceInfo, Timestamp, Transfer, TransferKind, WorkOf,
};
use scan::Fields;
use serde::Deserialize;
use std::collections::HashMap;
use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use values::{input_dims, int_of, non_negative, text, time_field, triple, uint};
use window::Window;

pub(crate) use parallel::{read_path, reader_threads, Split};

/// Options of the Kineto reader.
#[derive(Clone, Debug, Default)]
pub struct KinetoOptions {
    /// Also collect host runtime launch calls (needed to place kernels in CPU-side annotations).
    pub host_launches: bool,
    /// Also collect each host operator's `Input Dims` (and the launch calls that link kernels
    /// to their operators), for work models evaluated launch by launch.
    pub op_shapes: bool,
    /// Also collect graph replay calls (`cudaGraphLaunch`, `hipGraphLaunch`), stream
    /// captures and kernel launch calls.
    pub graphs: bool,
    /// Also collect host operators (`cpu_op`), naming what each captured launch was for.
    pub graph_operators: bool,
    /// Also take the work (`kernel_flop`, `kernel_num_gb`) host events record to the kernel
    /// each links to (see [`host_work`]).
    pub host_work: bool,
}

impl KinetoOptions {
    /// True when runtime and driver calls are read at all.
    fn runtime(&self) -> bool {
        self.host_launches || self.op_shapes || self.graphs || self.host_work
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Kernel,
    Memcpy,
    Memset,
    GpuAnnotation,
    CpuAnnotation,
    CpuOp,
    Runtime,
    /// A `python_function` event, read only for the work it may record.
    Python,
}

fn classify(cat: &[u8], o: &KinetoOptions) -> Option<Kind> {
    match cat {
        b"kernel" | b"Kernel" => Some(Kind::Kernel),
        b"gpu_memcpy" | b"Memcpy" => Some(Kind::Memcpy),
        b"gpu_memset" | b"Memset" => Some(Kind::Memset),
        b"gpu_user_annotation" => Some(Kind::GpuAnnotation),
        b"user_annotation" => Some(Kind::CpuAnnotation),
        b"cpu_op" if o.op_shapes || o.graph_operators || o.host_work => Some(Kind::CpuOp),
        b"cuda_runtime" | b"cuda_driver" | b"Runtime" if o.runtime() => Some(Kind::Runtime),
        b"python_function" if o.host_work => Some(Kind::Python),
        _ => None,
    }
}

/// Reads a Kineto trace from `reader` into `profile`, recording facts and notes in `source`.
pub(crate) fn read<R: Read>(
    reader: R,
    options: &KinetoOptions,
    profile: &mut Profile,
    source: &mut SourceInfo,
) -> Result<()> {
    read_top(Window::new(reader), options, profile, source, read_events)
}

/// Reads the trace's top level from `w`, handing each `traceEvents` array (after its `[`) to
/// `events`, which leaves `w` after the array's `]`.
fn read_top<R: Read>(
    mut w: Window<R>,
    options: &KinetoOptions,
    profile: &mut Profile,
    source: &mut SourceInfo,
    mut events: impl FnMut(&mut Window<R>, &mut State<'_, '_>) -> Result<()>,
) -> Result<()> {
    let before = (profile.dispatches.len(), profile.transfers.len());
    let first = w.expect(
        b"{[",
        "a JSON object with \"traceEvents\" or an array of trace events",
    )?;
    let mut state = State {
        options,
        profile,
        counts: Counts::default(),
        process_names: HashMap::new(),
        open_captures: HashMap::new(),
        log: None,
    };
    if first == b'[' {
        events(&mut w, &mut state)?;
    } else {
        let mut saw_events = false;
        if w.peek()? == Some(b'}') {
            w.consume(1);
        } else {
            loop {
                let end = w.next_value()?;
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
                    events(&mut w, &mut state)?;
                    saw_events = true;
                } else {
                    let end = w.next_value()?;
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
    if options.host_work {
        host_work::link(state.profile, before.0, source);
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
    if source.format == Format::ProtonTrace.name() {
        crate::proton::trace_note(source);
    }
    if c.zero_duration > 0 {
        source.notes.push(format!(
            "{} kernel events had zero duration",
            c.zero_duration
        ));
    }
    Ok(())
}

#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
struct Counts {
    parsed: u64,
    legacy: u64,
    skipped: u64,
    zero_duration: u64,
}

impl Counts {
    /// Adds the counts of a later part of the trace.
    fn add(&mut self, o: Counts) {
        self.parsed += o.parsed;
        self.legacy += o.legacy;
        self.skipped += o.skipped;
        self.zero_duration += o.zero_duration;
    }
}

/// A change to state that spans events, kept in file order by a chunk scanned on its own
/// (whose earlier events another thread reads) and applied when the chunk is merged.
#[derive(Debug)]
enum Deferred {
    /// A `process_name` metadata event: (pid key, name).
    ProcessName(String, String),
    /// A stream capture began on (pid, tid).
    CaptureBegin((i64, i64), Timestamp),
    /// A stream capture ended on (pid, tid).
    CaptureEnd((i64, i64), Timestamp),
}

/// Where a loop over trace events stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// The array's `]` was consumed; the stream offset after it.
    Array(u64),
    /// The next event starts at stop `i` (not consumed).
    Landed(usize),
    /// The event at this stream offset needs what earlier chunks saw (a legacy event without
    /// `cat`, placed by its process's name): it is to be read on one thread.
    Serial(u64),
    /// The chunk is no longer wanted.
    Cancelled,
}

/// Limits of a loop over trace events that reads one chunk of the array.
#[derive(Clone, Copy, Default)]
struct Limits<'a> {
    /// Stream offsets, ascending, at which the loop stops when an event starts exactly there.
    stops: &'a [u64],
    /// Stop when the counter has moved past this chunk's number.
    cancel: Option<(&'a AtomicUsize, usize)>,
}

pub(crate) struct State<'o, 'p> {
    options: &'o KinetoOptions,
    profile: &'p mut Profile,
    counts: Counts,
    /// `process_name` metadata by pid, for Chrome traces without `cat` (legacy rocprof).
    process_names: HashMap<String, String>,
    /// Stream captures begun and not yet ended, by (pid, tid): the begin call's start.
    open_captures: HashMap<(i64, i64), Timestamp>,
    /// For a chunk read on its own: the changes to `process_names` and `open_captures`, in
    /// order, applied when it is merged (those maps then stay empty).
    log: Option<Vec<Deferred>>,
}

impl State<'_, '_> {
    /// Applies `d` now, or logs it when this state reads a chunk on its own.
    fn defer(&mut self, d: Deferred) {
        if let Some(log) = self.log.as_mut() {
            log.push(d);
            return;
        }
        match d {
            Deferred::ProcessName(pid, name) => {
                self.process_names.insert(pid, name);
            }
            Deferred::CaptureBegin(key, start) => {
                self.open_captures.insert(key, start);
            }
            Deferred::CaptureEnd((pid, tid), end) => {
                if let Some(begin) = self.open_captures.remove(&(pid, tid)) {
                    self.profile.graph_captures.push(GraphCapture {
                        pid,
                        tid,
                        start: begin,
                        end,
                    });
                }
            }
        }
    }
}

/// Reads the events of an array whose `[` was just consumed, through its `]`.
fn read_events<R: Read>(w: &mut Window<R>, st: &mut State<'_, '_>) -> Result<()> {
    if w.peek()? == Some(b']') {
        w.consume(1);
        return Ok(());
    }
    events_loop(w, st, Limits::default()).map(|_| ())
}

/// Reads trace events from the start of one (after whitespace) until the array's `]` or a
/// limit (see [`Limits`], [`End`]).
fn events_loop<R: Read>(
    w: &mut Window<R>,
    st: &mut State<'_, '_>,
    limits: Limits<'_>,
) -> Result<End> {
    let options = st.options;
    let mut f = Fields::default();
    let mut next_stop = 0;
    loop {
        if let Some((counter, chunk)) = limits.cancel {
            if counter.load(Ordering::Relaxed) > chunk {
                return Ok(End::Cancelled);
            }
        }
        if !limits.stops.is_empty() && w.peek()?.is_some() {
            let here = w.offset(w.pos);
            while limits.stops.get(next_stop).is_some_and(|&s| s < here) {
                next_stop += 1;
            }
            if limits.stops.get(next_stop) == Some(&here) {
                return Ok(End::Landed(next_stop));
            }
        }
        let end = w.next_event(&mut f, |cat| classify(cat, options).is_some())?;
        let ev = w.slice(0..end);
        let at = w.offset(w.pos);
        let kind = f.cat.and_then(|c| classify(values::raw(ev, c), options));
        let ph = f.ph.map(|p| values::raw(ev, p));
        match kind {
            Some(kind) if ph == Some(b"X") => {
                handle_event(ev, &f, at, kind, st)?;
                st.counts.parsed += 1;
            }
            // Chrome traces without `cat` (legacy rocprof `results.json`): kernels and copies
            // are told apart by their process's name.
            None if f.cat.is_none() && ph == Some(b"X") && st.log.is_some() => {
                return Ok(End::Serial(at));
            }
            None if f.cat.is_none() && ph.is_some() => {
                if legacy::handle(ev, &f, at, ph.unwrap_or_default(), st)? {
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
            return Ok(End::Array(w.offset(w.pos)));
        }
    }
}

fn handle_event(ev: &[u8], f: &Fields, at: u64, kind: Kind, st: &mut State<'_, '_>) -> Result<()> {
    let start = time_field(ev, f.ts, "ts", at)?;
    let dur = time_field(ev, f.dur, "dur", at)?;
    let duration = u64::try_from(dur).map_err(|_| {
        Error::syntax(
            Location::byte(at).with_field("dur"),
            "a non-negative duration",
            format!("{dur}"),
        )
    })?;
    let start = Timestamp::from_ns(start);
    let duration = Nanos::from_ns(duration);
    let a = &f.args;
    let pid = int_of(ev, f.pid);
    let tid = int_of(ev, f.tid);
    let device = int_of(ev, a.device)
        .or(pid)
        .and_then(|d| u32::try_from(d).ok())
        .unwrap_or(0);
    let stream = int_of(ev, a.stream)
        .or(tid)
        .and_then(|s| u64::try_from(s).ok())
        .unwrap_or(0);
    let correlation = uint::<u64>(ev, a.correlation, "args.correlation", at)?;
    let host = matches!(
        kind,
        Kind::CpuOp | Kind::Runtime | Kind::Python | Kind::CpuAnnotation
    );
    if st.options.host_work && host {
        host_work::record(ev, f, at, correlation, st.profile)?;
    }
    if kind == Kind::Python {
        return Ok(());
    }
    let name = |st: &mut State<'_, '_>| -> Result<kernelab_model::NameId> {
        let n = match f.name {
            Some(v) => text(ev, v, at, "name")?,
            None => None,
        };
        Ok(st.profile.names.intern_str(n.as_deref().unwrap_or("")))
    };
    match kind {
        Kind::Kernel => {
            let name = name(st)?;
            let config = LaunchConfig {
                grid: triple(ev, a.grid, "args.grid", at)?,
                block: triple(ev, a.block, "args.block", at)?,
                resources: Resources {
                    registers: uint::<u32>(ev, a.registers, "args.registers per thread", at)?,
                    shared_bytes: uint::<u64>(ev, a.shared, "args.shared memory", at)?
                        .and_then(|s| u32::try_from(s).ok()),
                    ..Resources::default()
                },
            };
            if duration.ns() == 0 {
                st.counts.zero_duration += 1;
            }
            let flops = non_negative(ev, a.kernel_flop, "args.kernel_flop", at)?;
            let gb = non_negative(ev, a.kernel_num_gb, "args.kernel_num_gb", at)?;
            let p = &mut *st.profile;
            if st.options.host_work {
                host_work::pair(ev, f, at, correlation, p)?;
            }
            if flops.is_some() || gb.is_some() {
                p.recorded_work.push(RecordedWork {
                    of: WorkOf::Dispatch(p.dispatches.len()),
                    flops,
                    width: FlopWidth::Unsaid,
                    // Inductor writes bytes / 1e9: whole bytes back (exact below 2^53).
                    bytes: gb.map(|g| (g * 1e9).round()),
                    flops_key: "kernel_flop",
                    bytes_key: "kernel_num_gb",
                });
            }
            let launch = p.launches.intern(config);
            p.dispatches.push(KernelDispatch {
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
        Kind::Memcpy | Kind::Memset => st.profile.transfers.push(Transfer {
            kind: if kind == Kind::Memcpy {
                TransferKind::Memcpy
            } else {
                TransferKind::Memset
            },
            device,
            stream,
            start,
            duration,
            bytes: uint::<u64>(ev, a.bytes, "args.bytes", at)?,
            sub_ns: 0,
        }),
        Kind::GpuAnnotation | Kind::CpuAnnotation | Kind::CpuOp => {
            if kind != Kind::GpuAnnotation && st.options.op_shapes {
                if let Some(dims) = input_dims(ev, a.input_dims) {
                    let dims = st.profile.shapes.intern(dims);
                    st.profile.op_shapes.push(OpShape {
                        pid: pid.unwrap_or(0),
                        tid: tid.unwrap_or(0),
                        start,
                        duration,
                        dims,
                    });
                }
            }
            if kind == Kind::CpuOp {
                if st.options.graph_operators {
                    let name = name(st)?;
                    st.profile.host_ops.push(HostOp {
                        pid: pid.unwrap_or(0),
                        tid: tid.unwrap_or(0),
                        start,
                        duration,
                        name,
                    });
                }
                return Ok(());
            }
            let name = name(st)?;
            let scope = if kind == Kind::GpuAnnotation {
                // Kineto records a GPU range on the stream it annotates (`tid`).
                AnnotationScope::Gpu {
                    device,
                    stream: int_of(ev, a.stream)
                        .or(tid)
                        .and_then(|s| u64::try_from(s).ok()),
                }
            } else {
                AnnotationScope::Cpu {
                    pid: pid.unwrap_or(0),
                    tid: tid.unwrap_or(0),
                }
            };
            st.profile.annotations.push(Annotation {
                name,
                scope,
                start,
                duration,
            });
        }
        Kind::Python => {}
        Kind::Runtime => {
            if st.options.host_work {
                host_work::pair(ev, f, at, correlation, st.profile)?;
            }
            let (pid, tid) = (pid.unwrap_or(0), tid.unwrap_or(0));
            if st.options.graphs {
                let n = match f.name {
                    Some(v) => text(ev, v, at, "name")?,
                    None => None,
                };
                let n = n.as_deref().unwrap_or("");
                match (is_graph_launch(n), capture_edge(n), correlation) {
                    (true, _, Some(correlation)) => st.profile.graph_launches.push(GraphLaunch {
                        correlation,
                        pid,
                        tid,
                        start,
                        duration,
                    }),
                    (_, Some(true), _) => st.defer(Deferred::CaptureBegin((pid, tid), start)),
                    (_, Some(false), _) => {
                        st.defer(Deferred::CaptureEnd((pid, tid), start.plus(duration)))
                    }
                    _ if is_kernel_launch(n) => st
                        .profile
                        .kernel_launch_calls
                        .push(KernelLaunchCall { pid, tid, start }),
                    _ => {}
                }
            }
            if let Some(correlation) = correlation {
                st.profile.host_launches.push(Launch {
                    correlation,
                    pid,
                    tid,
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
