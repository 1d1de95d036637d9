//! An uncompressed trace read on every core: the `traceEvents` array is cut into chunks at
//! likely event boundaries, each chunk is scanned by a worker thread into a store of its own
//! (with its own name, launch and shape tables), and the stores are merged in file order
//! (their ids remapped), so the profile is the one the one-thread reader makes, bit for bit.
//!
//! A cut is guessed without reading the bytes before it: at the `{` of the first `}` `,` `{`
//! (whitespace allowed between) after an evenly spaced offset. Such bytes can also sit inside
//! a string (a name like `"a},{b"`) or inside an event (`"args": {"l": [{…},{…}]}`), so a guess
//! is trusted only once proven: the chunk before
//! it, scanned from a proven start, must arrive exactly there. A worker does not stop at the
//! first later cut but at the first it arrives at exactly, and the merge goes from a chunk to
//! the one its scan arrived at; chunks behind a false cut are dropped (the worker scanning one
//! stops once the merge has gone past it). Chunk 0 starts right after the array's `[`, so the
//! chain is proven from the start, and each merged chunk was read from a true event start.
//!
//! State that spans events (process names of legacy rocprof traces, open stream captures) is
//! logged by a chunk in order and applied at its merge. A legacy event without `cat` needs the
//! process names of all earlier events: at the first, the rest of the array is read on one
//! thread. Errors come from the first chunk, in file order, that has one, with the byte the
//! one-thread reader names. Memory: one read window per worker and the stores of chunks not
//! merged yet; nothing holds the whole file.

use super::scan::is_ws;
use super::window::Window;
use super::{events_loop, Counts, Deferred, End, KinetoOptions, Limits, State};
use crate::error::{Error, ErrorKind, Result};
use kernelab_model::{KernelDispatch, Location, NameId, Profile, RecordedWork, SourceInfo, WorkOf};
use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;

/// The smallest chunk the automatic split makes (8 MiB): below two of them, one thread reads.
pub(super) const MIN_CHUNK_BYTES: u64 = 8 << 20;

/// At most this many chunks.
const MAX_CHUNKS: u64 = 1 << 16;

/// The environment variable that sets the number of reader threads (`1`: the one-thread path).
pub(super) const THREADS_ENV: &str = "KERNELAB_THREADS";

/// The reader threads to use: `$KERNELAB_THREADS` when set to a positive number, else one per
/// core (1 when that is unknown).
pub(crate) fn reader_threads() -> usize {
    std::env::var(THREADS_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1)
}

/// How the events array of one file is split over threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Split {
    /// Worker threads.
    pub threads: usize,
    /// Bytes per chunk (about; cuts move forward to the next event boundary).
    pub chunk_bytes: u64,
}

impl Split {
    /// The split for a file of `size` bytes on this machine: `$KERNELAB_THREADS` threads (else
    /// one per core), four chunks per thread of at least [`MIN_CHUNK_BYTES`]; `None` (one
    /// thread) for one core or a file under two minimum chunks.
    pub(crate) fn auto(size: u64) -> Option<Split> {
        let threads = reader_threads();
        if threads < 2 || size < 2 * MIN_CHUNK_BYTES {
            return None;
        }
        let per = size / (threads as u64 * 4);
        Some(Split {
            threads,
            chunk_bytes: per.max(MIN_CHUNK_BYTES),
        })
    }
}

/// Reads the uncompressed Kineto trace at `path` (of `size` bytes) as [`super::read`] does,
/// its events array split as `split` says; `consumed` follows the bytes merged (progress).
pub(crate) fn read_path(
    path: &Path,
    size: u64,
    split: Split,
    options: &KinetoOptions,
    profile: &mut Profile,
    source: &mut SourceInfo,
    consumed: Option<&AtomicU64>,
) -> Result<()> {
    let io = |e: std::io::Error| Error::new(Location::byte(0), ErrorKind::Io(e));
    // Opened the way every input is (regular files only, under the confining root when one
    // is set), once per worker: each seeks on its own.
    let file = kernelab_model::open_regular(path).map_err(io)?;
    let mut files = Vec::with_capacity(split.threads);
    for _ in 0..split.threads {
        files.push(kernelab_model::open_regular(path).map_err(io)?);
    }
    let job = Job {
        size,
        split,
        files,
        consumed,
    };
    super::read_top(
        Window::new(file),
        options,
        profile,
        source,
        |w: &mut Window<File>, st: &mut State<'_, '_>| job.events(w, st),
    )
}

/// What every events array of one file is read with.
struct Job<'c> {
    size: u64,
    split: Split,
    /// One handle per worker (each seeks on its own).
    files: Vec<File>,
    consumed: Option<&'c AtomicU64>,
}

/// What a worker made of one chunk.
struct Chunk {
    profile: Profile,
    counts: Counts,
    log: Vec<Deferred>,
    /// Where it stopped; `Landed` holds the number of the chunk it arrived at.
    end: End,
}

fn internal(at: u64, what: &str) -> Error {
    Error::new(
        Location::byte(at),
        ErrorKind::Io(std::io::Error::other(what.to_string())),
    )
}

impl Job<'_> {
    /// Reads an events array whose `[` was just consumed, leaving `w` after its `]`.
    fn events(&self, w: &mut Window<File>, st: &mut State<'_, '_>) -> Result<()> {
        let first = w.peek()?;
        if first == Some(b']') {
            w.consume(1);
            return Ok(());
        }
        let p0 = w.offset(w.pos);
        let span = self.size.saturating_sub(p0);
        let chunk = self.split.chunk_bytes.max(1);
        let starts = match first {
            Some(_) if self.split.threads >= 2 && span >= 2 * chunk => {
                split_points(self.files.first(), p0, self.size, chunk)?
            }
            _ => Vec::new(),
        };
        if starts.len() < 2 {
            return events_loop(w, st, Limits::default()).map(|_| ());
        }
        let capacity = usize::try_from((chunk / 16).next_power_of_two())
            .unwrap_or(usize::MAX)
            .clamp(256, 4 << 20);
        let keep_correlations = st.profile.dispatches.keeps_correlations();
        let options = st.options;
        let next = AtomicUsize::new(0);
        let want = AtomicUsize::new(0);
        std::thread::scope(|s| {
            let (tx, rx) = mpsc::channel::<(usize, Result<Chunk>)>();
            for file in &self.files {
                let tx = tx.clone();
                let (starts, next, want) = (&starts, &next, &want);
                s.spawn(move || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= starts.len() || want.load(Ordering::Relaxed) == usize::MAX {
                        return;
                    }
                    if want.load(Ordering::Relaxed) > i {
                        continue;
                    }
                    let r = scan_chunk(file, starts, i, capacity, options, keep_correlations, want);
                    if tx.send((i, r)).is_err() {
                        return;
                    }
                });
            }
            drop(tx);
            let r = self.merge_all(w, st, &starts, &rx, &want);
            want.store(usize::MAX, Ordering::Relaxed);
            r
        })
    }

    /// Merges the chunks in file order, following each to the chunk it arrived at.
    fn merge_all(
        &self,
        w: &mut Window<File>,
        st: &mut State<'_, '_>,
        starts: &[u64],
        rx: &mpsc::Receiver<(usize, Result<Chunk>)>,
        want: &AtomicUsize,
    ) -> Result<()> {
        let mut pending: HashMap<usize, Result<Chunk>> = HashMap::new();
        loop {
            let c = want.load(Ordering::Relaxed);
            let result = match pending.remove(&c) {
                Some(r) => r,
                None => match rx.recv() {
                    Ok((i, r)) if i == c => r,
                    Ok((i, r)) => {
                        if i > c {
                            pending.insert(i, r);
                        }
                        continue;
                    }
                    Err(_) => {
                        let at = starts.get(c).copied().unwrap_or(0);
                        return Err(internal(at, "a reader thread ended without its chunk"));
                    }
                },
            };
            let chunk = result?;
            let end = chunk.end;
            merge_chunk(st, chunk);
            let reached = match end {
                End::Array(e) => e,
                End::Landed(j) => starts.get(j).copied().unwrap_or(self.size),
                End::Serial(at) => at,
                End::Cancelled => {
                    let at = starts.get(c).copied().unwrap_or(0);
                    return Err(internal(at, "a chunk was cancelled before it was merged"));
                }
            };
            if let Some(p) = self.consumed {
                p.fetch_max(reached, Ordering::Relaxed);
            }
            match end {
                End::Landed(j) => want.store(j, Ordering::Relaxed),
                End::Array(e) => return w.restart_at(e),
                End::Serial(at) => {
                    // Legacy events need every earlier process name: one thread reads on.
                    want.store(usize::MAX, Ordering::Relaxed);
                    w.restart_at(at)?;
                    return events_loop(w, st, Limits::default()).map(|_| ());
                }
                End::Cancelled => return Ok(()),
            }
        }
    }
}

/// Scans chunk `i` (from `starts[i]`) on its own until it arrives exactly at a later start,
/// or at the array's end.
fn scan_chunk(
    mut file: &File,
    starts: &[u64],
    i: usize,
    capacity: usize,
    options: &KinetoOptions,
    keep_correlations: bool,
    want: &AtomicUsize,
) -> Result<Chunk> {
    let start = starts.get(i).copied().unwrap_or(0);
    file.seek(SeekFrom::Start(start))
        .map_err(|e| Error::new(Location::byte(start), ErrorKind::Io(e)))?;
    let mut w = Window::at(file, start, capacity);
    let mut profile = Profile::default();
    profile.dispatches.keep_correlations(keep_correlations);
    let mut st = State {
        options,
        profile: &mut profile,
        counts: Counts::default(),
        process_names: HashMap::new(),
        open_captures: HashMap::new(),
        log: Some(Vec::new()),
    };
    let later = starts.get(i + 1..).unwrap_or_default();
    let end = events_loop(
        &mut w,
        &mut st,
        Limits {
            stops: later,
            cancel: Some((want, i)),
        },
    )?;
    let end = match end {
        End::Landed(j) => End::Landed(i + 1 + j),
        other => other,
    };
    let counts = st.counts;
    let log = st.log.take().unwrap_or_default();
    Ok(Chunk {
        profile,
        counts,
        log,
        end,
    })
}

/// Adds a chunk's store, counts and logged state changes to `st`.
fn merge_chunk(st: &mut State<'_, '_>, chunk: Chunk) {
    merge_profile(st.profile, chunk.profile);
    st.counts.add(chunk.counts);
    for d in chunk.log {
        st.defer(d);
    }
}

/// Adds what a chunk's store holds to `p`, in order, its names, launch configs and shapes
/// interned into `p`'s tables (in the chunk's first-seen order, which is the file's).
fn merge_profile(p: &mut Profile, src: Profile) {
    // Every field is named, so a new one is not forgotten here.
    let Profile {
        names,
        launches,
        dispatches,
        transfers,
        annotations,
        host_launches,
        shapes,
        op_shapes,
        graph_launches,
        kernel_launch_calls,
        host_ops,
        // Filled only through the log (stream captures) or by the one-thread path (legacy
        // events and stats inputs): empty in a chunk's store.
        graph_captures: _,
        // Nsight Systems only: empty for a Kineto chunk.
        graph_nodes: _,
        graph_node_creations: _,
        aggregates: _,
        activities: _,
        sources: _,
        untimed: _,
        launch_metrics: _,
        remainders: _,
        recorded_work,
        host_work,
        external_ids,
    } = src;
    // Host work and (correlation, External id) pairs name no index: kept in file order.
    p.host_work.extend(host_work);
    p.external_ids.extend(external_ids);
    let name_ids: Vec<NameId> = (0..names.len())
        .map(|i| {
            let id = NameId(u32::try_from(i).unwrap_or(u32::MAX));
            p.names.intern_str(names.name(id))
        })
        .collect();
    let name = |n: NameId| name_ids.get(n.0 as usize).copied().unwrap_or(n);
    let launch_ids: Vec<u32> = (0..launches.len())
        .map(|i| {
            let id = u32::try_from(i).unwrap_or(u32::MAX);
            p.launches
                .intern(launches.get(id).copied().unwrap_or_default())
        })
        .collect();
    // A chunk's dispatch indexes count from its first dispatch.
    let first = p.dispatches.len();
    p.recorded_work
        .extend(recorded_work.into_iter().map(|w| RecordedWork {
            of: match w.of {
                WorkOf::Dispatch(i) => WorkOf::Dispatch(first + i),
                other => other,
            },
            ..w
        }));
    for d in dispatches.iter() {
        p.dispatches.push(KernelDispatch {
            name: name(d.name),
            launch: launch_ids
                .get(d.launch as usize)
                .copied()
                .unwrap_or(d.launch),
            ..d
        });
    }
    p.transfers.extend(transfers);
    p.annotations
        .extend(annotations.into_iter().map(|a| kernelab_model::Annotation {
            name: name(a.name),
            ..a
        }));
    p.host_launches.extend(host_launches);
    let shape_ids: Vec<u32> = (0..shapes.len())
        .map(|i| {
            let id = u32::try_from(i).unwrap_or(u32::MAX);
            p.shapes.intern(shapes.get(id).cloned().unwrap_or_default())
        })
        .collect();
    p.op_shapes
        .extend(op_shapes.into_iter().map(|o| kernelab_model::OpShape {
            dims: shape_ids.get(o.dims as usize).copied().unwrap_or(o.dims),
            ..o
        }));
    p.graph_launches.extend(graph_launches);
    p.kernel_launch_calls.extend(kernel_launch_calls);
    p.host_ops
        .extend(host_ops.into_iter().map(|o| kernelab_model::HostOp {
            name: name(o.name),
            ..o
        }));
}

/// Reads up to `buf.len()` bytes at `offset`; returns how many came (fewer only at the end).
fn read_at(mut file: &File, offset: u64, buf: &mut [u8]) -> Result<usize> {
    let io = |e: std::io::Error| Error::new(Location::byte(offset), ErrorKind::Io(e));
    file.seek(SeekFrom::Start(offset)).map_err(io)?;
    let mut n = 0;
    while let Some(free) = buf.get_mut(n..).filter(|f| !f.is_empty()) {
        match file.read(free) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io(e)),
        }
    }
    Ok(n)
}

/// The chunk starts: `p0` (the first event), then a guessed event start (see
/// [`find_split`]) after each evenly spaced offset, ascending; a guess not found within the
/// bytes looked at is left out.
fn split_points(file: Option<&File>, p0: u64, size: u64, chunk: u64) -> Result<Vec<u64>> {
    let mut starts = vec![p0];
    let Some(file) = file else {
        return Ok(starts);
    };
    let span = size.saturating_sub(p0);
    let k = span.div_ceil(chunk.max(1)).clamp(1, MAX_CHUNKS);
    let look = usize::try_from(chunk.clamp(256, 1 << 20)).unwrap_or(1 << 20);
    let mut buf = vec![0u8; look];
    for i in 1..k {
        let approx =
            p0 + u64::try_from(u128::from(span) * u128::from(i) / u128::from(k)).unwrap_or(span);
        let last = starts.last().copied().unwrap_or(p0);
        if approx <= last {
            continue;
        }
        let n = read_at(file, approx, &mut buf)?;
        if let Some(j) = find_split(buf.get(..n).unwrap_or_default()) {
            let at = approx + j as u64;
            if at > last {
                starts.push(at);
            }
        }
    }
    Ok(starts)
}

/// The index of the `{` of the first `}` `,` `{` in `b` (whitespace allowed around the comma):
/// where an event likely starts.
fn find_split(b: &[u8]) -> Option<usize> {
    let skip_ws = |mut j: usize| {
        while b.get(j).is_some_and(|&c| is_ws(c)) {
            j += 1;
        }
        j
    };
    let mut from = 0;
    while let Some(k) = memchr::memchr(b'}', b.get(from..)?) {
        let j = skip_ws(from + k + 1);
        if b.get(j) == Some(&b',') {
            let j = skip_ws(j + 1);
            if b.get(j) == Some(&b'{') {
                return Some(j);
            }
        }
        from += k + 1;
    }
    None
}

#[cfg(test)]
#[path = "parallel_tests.rs"]
mod tests;
