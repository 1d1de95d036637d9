//! Readers that turn profiler files into the kernelab model, and the per-kernel ranking built
//! on it.
//!
//! ```
//! use kernelab_trace::{read_bytes, rank, RankOptions, ReadOptions};
//! let csv = "\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\"\n\"k\",2,300,150,100.0\n";
//! let profile = read_bytes(csv.as_bytes(), &ReadOptions::default())?;
//! let ranking = rank(&profile, &RankOptions::default())?;
//! assert_eq!(ranking.rows[0].total_ns, 300);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Adding a format: one module, one [`Format`] variant, one detection arm in `detect.rs`,
//! fixtures with expected outputs under `tests/`, and its section in `docs/formats.md`.
#![deny(missing_docs)]
// Lints for libraries (issue #40, as uv has them): a library returns what it has to say,
// names no `pub` item its users cannot reach, documents every `unsafe` and panics on no `expect`.

mod agents;
mod compare;
mod detect;
mod durations;
mod error;
mod format;
mod graph_calls;
mod input;
mod kineto;
mod ncu;
mod ncu_rep;
mod nsys;
mod proton;
mod rank;
mod rocprof;
mod sqlite;
mod sqlite_header;
pub mod sqlite_pages;
mod tool;
mod xplane;

pub use compare::{
    by_family, compare, CompareOptions, Comparison, FamilyDelta, FigureDelta, Side, Status,
};
pub use detect::{detect, formats_read, Format};
pub use error::{Error, ErrorKind, Result};
pub use input::{NoProgress, Progress};
pub use kineto::KinetoOptions;
pub use ncu::read_launches as read_ncu_launches;
pub use rank::graphs::{
    compare_graphs, graphs, GraphChange, GraphComparison, GraphKernel, GraphOperator, GraphRow,
    Graphs, NsSpread, OperatorsFrom,
};
pub use rank::ranks::{ranks, RankRow};
pub use rank::shapes::launch_shapes;
pub use rank::{
    parse_time_range, rank, ActivityRow, Filters, Geometry, KernelRow, Outlier, PhaseRow,
    RankOptions, Ranking, Summary, TimeRange, ValueRange,
};
pub use rocprof::compute_analysis::{
    read_compute_analysis, ComputeAnalysis, ComputeKernel, ComputeMetricDef, ComputePoint,
    ComputeValue,
};
pub use rocprof::counters::{
    is_counter_header, read_counter_collection, CounterRow, MAX_COUNTER_CSV_BYTES,
};
pub use rocprof::CsvKind;

use kernelab_model::{Location, Profile, SourceInfo};
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// What to collect while reading.
#[derive(Clone, Debug, Default)]
pub struct ReadOptions {
    /// Collect host launch calls, needed to place kernels in CPU-side annotated ranges.
    pub host_launches: bool,
    /// Read only per-launch metrics (Nsight Compute), without requiring durations.
    pub metrics_only: bool,
    /// Do not keep each dispatch's correlation id: 12 bytes per dispatch instead of 28, for a
    /// ranking without phases. Ignored when `host_launches`, `op_shapes`, `graphs` or
    /// `host_work` is set.
    pub skip_correlations: bool,
    /// Collect each host operator's input shapes (Kineto `Input Dims`), so every launch's own
    /// shapes can be found with [`launch_shapes`].
    pub op_shapes: bool,
    /// Collect graph replay calls, stream captures and kernel launch calls (Kineto), for
    /// [`graphs`] and for phases of replayed kernels.
    pub graphs: bool,
    /// With `graphs`, also collect host operators (Kineto `cpu_op`), to name the operator
    /// that captured each replayed kernel.
    pub graph_operators: bool,
    /// Also take the work (`kernel_flop`, `kernel_num_gb`) that Kineto host events record
    /// (Inductor's launch `cpu_op`) to the kernel each links to (by `correlation` or
    /// `External id`).
    pub host_work: bool,
}

impl ReadOptions {
    /// Whether dispatches keep their correlation ids: unless skipped, and always when launch
    /// calls, operator shapes or graphs need them.
    pub fn keeps_correlations(&self) -> bool {
        !self.skip_correlations
            || self.host_launches
            || self.op_shapes
            || self.graphs
            || self.host_work
    }
}

/// Reads one file (any supported format, detected from content) into `profile`.
pub fn read_file(
    path: &Path,
    options: &ReadOptions,
    profile: &mut Profile,
    progress: &dyn Progress,
) -> Result<()> {
    let before = profile.dispatches.len();
    let marks = kernelab_model::plausible::Marks::of(profile);
    read_file_inner(path, options, profile, progress).map_err(|e| e.with_path(path))?;
    // Every reader's launch figures and durations pass the one plausibility check
    // (kernelab_model::plausible), before the input's dispatch range is taken.
    let notes = kernelab_model::plausible::check_input(profile, marks);
    if let Some(s) = profile.sources.last_mut() {
        s.dispatches = before..profile.dispatches.len();
        s.notes.extend(notes);
    }
    Ok(())
}

fn read_file_inner(
    path: &Path,
    options: &ReadOptions,
    profile: &mut Profile,
    progress: &dyn Progress,
) -> Result<()> {
    if !options.keeps_correlations() {
        profile.dispatches.keep_correlations(false);
    }
    let mut opened = input::open(path)?;
    if opened.head.starts_with(detect::NCU_REP_MAGIC) {
        if opened.gzip {
            return Err(gzip_refused("Nsight Compute report"));
        }
        drop(opened);
        return read_ncu_report(path, options, profile);
    }
    let format = detect(&opened.head)?;
    let mut source = SourceInfo {
        path: path.to_path_buf(),
        format: format.name().to_string(),
        ..SourceInfo::default()
    };
    if opened.gzip {
        source.facts.push(("compression".into(), "gzip".into()));
    }
    if format == Format::Sqlite {
        if opened.gzip {
            return Err(gzip_refused("SQLite database"));
        }
        drop(opened);
        return read_sqlite(path, options, profile, source);
    }
    if format == Format::NsysRep {
        if opened.gzip {
            return Err(gzip_refused("Nsight Systems report"));
        }
        let head = std::mem::take(&mut opened.head);
        drop(opened);
        let db = nsys::rep::sqlite_for(path, &head)?;
        source
            .facts
            .push(("exported to".into(), db.display().to_string()));
        return read_sqlite(&db, options, profile, source);
    }
    let done = AtomicBool::new(false);
    let consumed = opened.consumed.clone();
    progress.start(opened.size);
    // An uncompressed Kineto trace is read on every core (a gzip stream only in order).
    let split = if matches!(format, Format::Kineto | Format::ProtonTrace) && !opened.gzip {
        kineto::Split::auto(opened.size)
    } else {
        None
    };
    let result = std::thread::scope(|s| {
        // The ticker reports every 100 ms and is woken the moment reading ends, so a small
        // input never waits for a tick (no fixed wait).
        let ticker = s.spawn(|| {
            while !done.load(Ordering::Acquire) {
                progress.position(consumed.load(Ordering::Relaxed));
                std::thread::park_timeout(std::time::Duration::from_millis(100));
            }
        });
        let r = match split {
            Some(split) => {
                let size = opened.size;
                drop(opened.reader);
                kineto::read_path(
                    path,
                    size,
                    split,
                    &kineto_options(options),
                    profile,
                    &mut source,
                    Some(&consumed),
                )
            }
            None => read_stream(opened.reader, format, options, profile, &mut source),
        };
        done.store(true, Ordering::Release);
        ticker.thread().unpark();
        r
    });
    progress.finish();
    result?;
    profile.sources.push(source);
    Ok(())
}

/// The error for a compressed `what` that is read from a file (decompress it first).
fn gzip_refused(what: &str) -> Error {
    Error::new(
        Location::byte(0),
        ErrorKind::Unsupported {
            detail: format!("a gzip-compressed {what}: decompress it first"),
        },
    )
}

/// An Nsight Compute report, through its CSV export (`ncu --import … --csv --page raw`).
fn read_ncu_report(path: &Path, options: &ReadOptions, profile: &mut Profile) -> Result<()> {
    let csv = ncu_rep::csv_for(path)?;
    let opened = input::open(&csv)?;
    let mut source = SourceInfo {
        path: path.to_path_buf(),
        format: "ncu-rep".into(),
        ..SourceInfo::default()
    };
    source
        .facts
        .push(("exported to".into(), csv.display().to_string()));
    ncu::read(opened.reader, options.metrics_only, profile, &mut source)
        .map_err(|e| e.with_path(&csv))?;
    profile.sources.push(source);
    Ok(())
}

fn read_sqlite(
    path: &Path,
    options: &ReadOptions,
    profile: &mut Profile,
    mut source: SourceInfo,
) -> Result<()> {
    let conn = sqlite::open(path)?;
    let objs = sqlite::objects(&conn)?;
    if objs
        .iter()
        .any(|o| o == "rocpd_metadata" || o == "rocpd_kernel_dispatch")
    {
        source.format = "rocpd".into();
        rocprof::rocpd::read(&conn, options.host_launches, profile, &mut source)?;
        profile.sources.push(source);
        return Ok(());
    }
    if rocprof::compute_db::is_compute_db(&objs) {
        source.format = "rocprof-compute-db".into();
        rocprof::compute_db::read(&conn, profile, &mut source)?;
        profile.sources.push(source);
        return Ok(());
    }
    if nsys::is_nsys(&objs) {
        source.format = "nsys-sqlite".into();
        nsys::read(&conn, options, profile, &mut source)?;
        profile.sources.push(source);
        return Ok(());
    }
    Err(Error::new(
        Location::default(),
        ErrorKind::UnknownFormat {
            detail: "a SQLite database that is neither a rocpd database (rocpd_metadata, kernels), a rocprof-compute analysis database (compute_kernel, compute_dispatch) nor an Nsight Systems export (StringIds, CUPTI_ACTIVITY_KIND_*)".into(),
        },
    ))
}

/// Reads the uncompressed Kineto trace at `path` with its events array cut into chunks of
/// about `chunk_bytes` read by `threads` threads (at least 2): the profile [`read_file`] makes
/// of it, bit for bit, or the same error. For differential tests and fuzzing of the parallel
/// reader at small chunk sizes; [`read_file`] picks the split itself.
pub fn read_kineto_split(
    path: &Path,
    threads: usize,
    chunk_bytes: u64,
    options: &ReadOptions,
) -> Result<Profile> {
    let size = std::fs::metadata(path)
        .map_err(|e| Error::new(Location::byte(0), ErrorKind::Io(e)))?
        .len();
    let mut profile = Profile::default();
    if !options.keeps_correlations() {
        profile.dispatches.keep_correlations(false);
    }
    let mut source = SourceInfo {
        format: Format::Kineto.name().to_string(),
        ..SourceInfo::default()
    };
    kineto::read_path(
        path,
        size,
        kineto::Split {
            threads: threads.max(2),
            chunk_bytes: chunk_bytes.max(1),
        },
        &kineto_options(options),
        &mut profile,
        &mut source,
        None,
    )?;
    source.notes.extend(kernelab_model::plausible::check_input(
        &mut profile,
        Default::default(),
    ));
    profile.sources.push(source);
    Ok(profile)
}

fn kineto_options(options: &ReadOptions) -> KinetoOptions {
    KinetoOptions {
        host_launches: options.host_launches,
        op_shapes: options.op_shapes,
        graphs: options.graphs,
        graph_operators: options.graphs && options.graph_operators,
        host_work: options.host_work,
    }
}

fn read_stream(
    reader: Box<dyn Read + Send>,
    format: Format,
    options: &ReadOptions,
    profile: &mut Profile,
    source: &mut SourceInfo,
) -> Result<()> {
    match format {
        Format::Kineto | Format::ProtonTrace => {
            kineto::read(reader, &kineto_options(options), profile, source)
        }
        Format::RocprofCsv(kind) => rocprof::csv_file::read(reader, kind, profile, source),
        Format::NcuCsv => ncu::read(reader, options.metrics_only, profile, source),
        Format::NsysStatsCsv => {
            rocprof::csv_file::read(reader, CsvKind::KernelStats, profile, source)
        }
        Format::Sqlite => Err(Error::new(
            Location::byte(0),
            ErrorKind::Unsupported {
                detail: "a SQLite database given as a stream: open it from a file".into(),
            },
        )),
        Format::Xplane => xplane::read(reader, profile, source),
        Format::RocprofJson => rocprof::sdk_json::read(reader, profile, source),
        Format::Proton => proton::read(reader, profile, source),
        Format::NsysRep => Err(Error::new(
            Location::byte(0),
            ErrorKind::Unsupported {
                detail: "an Nsight Systems report given as a stream: open it from a file".into(),
            },
        )),
    }
}

/// Reads an in-memory input (not SQLite) into a new profile.
pub fn read_bytes(bytes: &[u8], options: &ReadOptions) -> Result<Profile> {
    read_bytes_as(bytes, detect(bytes)?, options)
}

/// Reads an in-memory input as `format`, without detecting it (a SQLite format is an error).
pub fn read_bytes_as(bytes: &[u8], format: Format, options: &ReadOptions) -> Result<Profile> {
    let mut profile = Profile::default();
    let mut source = SourceInfo {
        format: format.name().to_string(),
        ..SourceInfo::default()
    };
    read_stream(
        Box::new(std::io::Cursor::new(bytes.to_vec())),
        format,
        options,
        &mut profile,
        &mut source,
    )?;
    source.notes.extend(kernelab_model::plausible::check_input(
        &mut profile,
        Default::default(),
    ));
    profile.sources.push(source);
    Ok(profile)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_bytes_as_reads_the_format_named_without_detecting() {
        let json = br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2, "pid": 0, "tid": 7}]}"#;
        let options = ReadOptions::default();
        let p = read_bytes_as(json, Format::Kineto, &options).expect("a Kineto trace");
        assert_eq!(p.sources[0].format, "kineto");
        assert!(read_bytes_as(json, Format::NcuCsv, &options).is_err());
        assert!(read_bytes_as(b"SQLite format 3\0", Format::Sqlite, &options).is_err());
    }

    /// PyTorch Inductor's `kernel_flop` and `kernel_num_gb` (GB) in a kernel's args are its
    /// recorded work, bytes whole; a value that is not a non-negative number is an error at
    /// the event's byte, naming the member.
    #[test]
    fn inductor_kernel_work_is_read_and_a_bad_value_is_located() {
        let json = br#"{"traceEvents": [
            {"ph": "X", "cat": "kernel", "name": "a", "ts": 1, "dur": 2, "args": {"kernel_flop": 17179869184, "kernel_num_gb": 0.029360128}},
            {"ph": "X", "cat": "kernel", "name": "b", "ts": 3, "dur": 2, "args": {"kernel_num_gb": null}},
            {"ph": "X", "cat": "kernel", "name": "c", "ts": 5, "dur": 2, "args": {"kernel_num_gb": 1e-3}}]}"#;
        let p = read_bytes(json, &ReadOptions::default()).expect("a trace");
        let w = &p.recorded_work;
        assert_eq!(w.len(), 2);
        assert_eq!(w[0].of, kernelab_model::WorkOf::Dispatch(0));
        assert_eq!(
            (w[0].flops, w[0].bytes),
            (Some(17179869184.0), Some(29360128.0))
        );
        assert_eq!(
            (w[1].of, w[1].flops),
            (kernelab_model::WorkOf::Dispatch(2), None)
        );
        assert_eq!(w[1].bytes, Some(1e6));
        let text = String::from_utf8_lossy(json);
        for bad in ["-1", "\"12\"", "1e999"] {
            let hostile = text.replace("17179869184", bad);
            let e = read_bytes(hostile.as_bytes(), &ReadOptions::default())
                .expect_err("a bad kernel_flop")
                .to_string();
            assert!(
                e.contains("args.kernel_flop") && e.contains("non-negative number"),
                "{e}"
            );
            assert!(e.starts_with("byte 30: "), "{e}");
        }
    }

    /// A stored fuzz finding: a damaged rocpd database whose `kernels` table has a column name
    /// that is not UTF-8 (rusqlite's column names panicked on it): now an error naming a
    /// table. Its b-trees are damaged too: since issue 39 the check of every table before the
    /// read (`PRAGMA quick_check`) names the first damaged one, with its page.
    #[test]
    fn sqlite_column_name_not_utf8_is_an_error_not_a_panic() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/fuzz/rocpd/non_utf8_column_name.db");
        let mut profile = Profile::default();
        let e = read_file(&path, &ReadOptions::default(), &mut profile, &NoProgress)
            .expect_err("a damaged database")
            .to_string();
        assert!(e.contains("non_utf8_column_name.db"), "{e}");
        assert!(e.contains("quick_check of rocpd_info_agent"), "{e}");
        assert!(e.contains("malformed") && e.contains("page 3"), "{e}");
    }
}
