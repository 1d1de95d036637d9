//! Parquet export of kernelab's tables (see docs/parquet.md for the schemas).
//!
//! Inputs are classified by what they are: a folder or a `matrix.json` is a sweep matrix, a
//! `.jsonl` (or `.jsonl.gz`) file is a samples file (ab, kernel run or serve, told apart by its lines), anything
//! else is a trace that `kernelab profile` reads. Each kind becomes one Parquet file in the
//! output folder; no existing file is ever replaced.

// Lints for libraries (issue #40, as uv has them): a library returns what it has to say,
// names no `pub` item its users cannot reach, documents every `unsafe` and panics on no `expect`.

use anyhow::{bail, Context, Result};
use arrow_array::builder::{Int32Builder, Int64Builder, UInt32Builder, UInt64Builder};
use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, DictionaryArray, Int32Array, RecordBatch, StringArray};
use kernelab_model::{family_key, Profile};
use kernelab_trace::{read_file, NoProgress, ReadOptions};
#[cfg(feature = "parquet")]
use parquet::arrow::ArrowWriter;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub mod schema;
use schema::Table;

/// What `export` says in a build without the Parquet writer (the Python wheel's).
pub const NO_PARQUET: &str = "this kernelab was built without the Parquet writer (the Python \
    wheel leaves it out to install in minutes): write a table with pyarrow \
    (`pyarrow.parquet.write_table(pyarrow.table(kernelab.profile(TRACE).dispatches), FILE)`), or \
    run `kernelab export --parquet` of the kernelab binary (`cargo install --path crates/kernelab`)";

/// File name of the dispatch table.
pub const DISPATCHES: &str = "dispatches.parquet";
/// File name of the ab samples table.
pub const AB_SAMPLES: &str = "ab_samples.parquet";
/// File name of the kernel run samples table.
pub const KERNEL_SAMPLES: &str = "kernel_samples.parquet";
/// File name of the serve samples table.
pub const SERVE_SAMPLES: &str = "serve_samples.parquet";
/// File name of the sweep points table.
pub const SWEEP_POINTS: &str = "sweep_points.parquet";

/// One written file and its row count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// The Parquet file.
    pub path: PathBuf,
    /// Rows in it.
    pub rows: usize,
}

/// An output file already exists (the caller exits 2 naming it).
#[derive(Debug)]
pub struct ExistsError(pub PathBuf);

impl std::fmt::Display for ExistsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: already exists; not replacing it (use --force to replace)",
            self.0.display()
        )
    }
}

impl std::error::Error for ExistsError {}

/// Flattens nested objects into `parent_child` keys; arrays stay whole (as JSON text later).
pub(crate) fn flatten_into(prefix: &str, obj: &Map<String, Value>, out: &mut Map<String, Value>) {
    for (k, v) in obj {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}_{k}")
        };
        match v {
            Value::Object(inner) => flatten_into(&key, inner, out),
            other => {
                out.insert(key, other.clone());
            }
        }
    }
}

/// What an input is.
enum Kind {
    Sweep(PathBuf),
    Samples,
    Trace,
}

fn classify(path: &Path) -> Kind {
    if path.is_dir() {
        return Kind::Sweep(path.join("matrix.json"));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name == "matrix.json" {
        Kind::Sweep(path.to_path_buf())
    } else if name.ends_with(".jsonl") || name.ends_with(".jsonl.gz") {
        Kind::Samples
    } else {
        Kind::Trace
    }
}

#[derive(Default)]
struct Tables {
    ab: Table,
    kernel: Table,
    serve: Table,
    sweep: Table,
}

/// Largest sweep `matrix.json` read by `export`: 256 MiB.
pub const MAX_MATRIX_BYTES: u64 = 256 << 20;

/// Longest line of a samples file read by `export`: 64 MiB.
pub const MAX_LINE_BYTES: u64 = 64 << 20;

/// The lines of a samples file, streamed: a `.gz` file is read across all its members (a
/// concatenated gzip stream), and bytes after the last member that are not a gzip member are
/// an error, never silently ignored.
fn sample_lines(path: &Path) -> Result<Box<dyn std::io::BufRead>> {
    let f = kernelab_model::open_regular(path)
        .with_context(|| format!("opening {}", path.display()))?;
    Ok(if path.extension().is_some_and(|e| e == "gz") {
        Box::new(std::io::BufReader::new(flate2::read::MultiGzDecoder::new(
            std::io::BufReader::new(f),
        )))
    } else {
        Box::new(std::io::BufReader::new(f))
    })
}

fn read_samples(path: &Path, tables: &mut Tables) -> Result<()> {
    use std::io::{BufRead, Read};
    let mut reader = sample_lines(path)?;
    let mut buf = Vec::new();
    let mut i = 0usize;
    let file = Value::String(path.display().to_string());
    // The run kind its header names (files since #27); older files are told by their lines.
    let mut run: Option<String> = None;
    loop {
        buf.clear();
        let n = (&mut reader)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut buf)
            .with_context(|| {
                format!(
                    "{}: line {}: cannot read (corrupt or trailing data after the gzip stream)",
                    path.display(),
                    i + 1
                )
            })?;
        if n == 0 {
            break;
        }
        if buf.len() as u64 > MAX_LINE_BYTES {
            bail!(
                "{}:{}: line longer than {MAX_LINE_BYTES} bytes",
                path.display(),
                i + 1
            );
        }
        let line = std::str::from_utf8(&buf)
            .with_context(|| format!("{}:{}: not UTF-8", path.display(), i + 1))?;
        let r = read_sample_line(path, i, line, &file, &mut run, tables);
        i += 1;
        r?;
    }
    Ok(())
}

/// One line of a samples file (`i` is 0-based) into its table.
fn read_sample_line(
    path: &Path,
    i: usize,
    line: &str,
    file: &Value,
    run: &mut Option<String>,
    tables: &mut Tables,
) -> Result<()> {
    if line.trim().is_empty() {
        return Ok(());
    }
    let v: Value = serde_json::from_str(line)
        .with_context(|| format!("{}:{}: not a JSON line", path.display(), i + 1))?;
    let Value::Object(obj) = v else {
        bail!("{}:{}: not a JSON object", path.display(), i + 1);
    };
    let kind = obj.get("kind").and_then(Value::as_str);
    if kind == Some("header") {
        // The header describes the run (and names its kind); it is not a sample.
        *run = obj.get("run").and_then(Value::as_str).map(str::to_string);
        return Ok(());
    }
    // A run that names its kind: only its sample lines are rows (an ab failure or a counters
    // process line is not a sample of any table).
    match (run.as_deref(), kind) {
        (Some("ab"), Some("run"))
        | (Some("kernel_run"), Some("sample"))
        | (Some("sweep_point"), Some("sample")) => {}
        (Some("serve"), _) => {}
        (Some(_), _) => return Ok(()),
        (None, _) => {}
    }
    let mut row = Map::new();
    row.insert("file".into(), file.clone());
    row.insert("line".into(), Value::from(i as u64 + 1));
    if let (Some(Value::String(spec)), Some(Value::Object(sample))) =
        (obj.get("spec"), obj.get("sample"))
    {
        // kernel run: {"spec", "sample"}; a sweep's kernel point also names its `point`.
        // Files written before schema version 4 hold `us_per_launch`: one column, in
        // nanoseconds, for every version.
        row.insert("spec".into(), Value::String(spec.clone()));
        if let Some(p) = obj.get("point").filter(|p| p.is_string()) {
            row.insert("point".into(), p.clone());
        }
        flatten_into("", sample, &mut row);
        if let Some(us) = row.remove("us_per_launch") {
            let ns = us.as_f64().map_or(Value::Null, |x| Value::from(x * 1e3));
            row.entry("ns_per_launch").or_insert(ns);
        }
        tables.kernel.push(row, schema::KERNEL_SAMPLES)?;
    } else if obj.get("kind").and_then(Value::as_str) == Some("run")
        && obj.get("values").is_some_and(Value::is_array)
    {
        // ab: one row per (run, metric).
        let mut base = row;
        let mut values = Vec::new();
        for (k, v) in &obj {
            match (k.as_str(), v) {
                ("kind", _) => {}
                ("values", Value::Array(a)) => values.clone_from(a),
                (_, Value::Object(inner)) => flatten_into(k, inner, &mut base),
                _ => {
                    base.insert(k.clone(), v.clone());
                }
            }
        }
        for m in values {
            let mut r = base.clone();
            r.insert(
                "metric".into(),
                m.get("name").cloned().unwrap_or(Value::Null),
            );
            r.insert(
                "value".into(),
                m.get("value").cloned().unwrap_or(Value::Null),
            );
            tables.ab.push(r, schema::AB_SAMPLES)?;
        }
    } else {
        // serve (start / request / point / stop records, `kind` kept as a column) and any
        // other JSONL samples file.
        flatten_into("", &obj, &mut row);
        tables.serve.push(row, schema::SERVE_SAMPLES)?;
    }
    Ok(())
}

fn read_sweep(matrix: &Path, tables: &mut Tables) -> Result<()> {
    let text = kernelab_model::read_regular_text(matrix, MAX_MATRIX_BYTES)
        .with_context(|| format!("reading {}", matrix.display()))?;
    let m: kernelab_model::sweep::SweepMatrix = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a sweep matrix", matrix.display()))?;
    let changed_by_key: std::collections::HashMap<&str, bool> = m
        .builds
        .iter()
        .rev()
        .map(|c| (c.key.as_str(), c.changed))
        .collect();
    for p in &m.points {
        let changed = p
            .build
            .as_deref()
            .and_then(|b| changed_by_key.get(b).copied());
        let mut row = Map::new();
        row.insert("file".into(), matrix.display().to_string().into());
        row.insert("sweep".into(), m.sweep.clone().into());
        row.insert("mode".into(), m.mode.clone().into());
        row.insert("id".into(), p.id.clone().into());
        row.insert("build".into(), p.build.clone().into());
        row.insert("verdict".into(), serde_json::to_value(p.verdict)?);
        row.insert("bitwise".into(), p.bitwise.into());
        row.insert("code_changed".into(), changed.into());
        row.insert("ratio".into(), p.change.ratio().into());
        row.insert("change".into(), p.change.change().into());
        row.insert(
            "interval_low".into(),
            p.change.interval().map(|i| i.low).into(),
        );
        row.insert(
            "interval_high".into(),
            p.change.interval().map(|i| i.high).into(),
        );
        row.insert("baseline_ns".into(), p.baseline_ns.into());
        row.insert("candidate_ns".into(), p.candidate_ns.into());
        row.insert("device".into(), p.device.clone().into());
        row.insert("worker".into(), p.worker.clone().into());
        row.insert("wall_ns".into(), p.wall_ns.into());
        row.insert("error".into(), p.error.clone().into());
        row.insert("gates".into(), serde_json::to_value(&p.gates)?);
        for (k, v) in &p.params {
            row.insert(format!("param_{k}"), v.clone().into());
        }
        tables.sweep.push(row, schema::SWEEP_POINTS)?;
    }
    Ok(())
}

/// Column builders of the dispatch table ([`schema::dispatches_schema`]). The text columns
/// are dictionaries whose keys come straight from the dispatch store (its interned name ids,
/// the input's index): no string is hashed or copied per row.
#[derive(Default)]
struct Dispatches {
    /// Dictionary values: every input's path and format, every interned name, every family.
    files: Vec<String>,
    formats: Vec<String>,
    names: Vec<String>,
    families: Vec<String>,
    family_index: std::collections::HashMap<String, i32>,
    file: Int32Builder,
    name: Int32Builder,
    family: Int32Builder,
    device: UInt32Builder,
    stream: UInt64Builder,
    start_ns: Int64Builder,
    duration_ns: Int64Builder,
    grid: [UInt32Builder; 3],
    block: [UInt32Builder; 3],
    correlation: UInt64Builder,
    rows: usize,
}

/// `n` as a dictionary key (a dictionary of more than `i32::MAX` values is an error).
fn key(n: usize) -> Result<i32> {
    i32::try_from(n).context("more than 2^31 distinct values in a dispatch table column")
}

impl Dispatches {
    /// Builders sized for `rows` dispatches up front, so that no column doubles its buffer
    /// while it grows (a table built once holds exactly its rows' bytes).
    fn with_capacity(rows: usize) -> Dispatches {
        let u32s = || std::array::from_fn(|_| UInt32Builder::with_capacity(rows));
        Dispatches {
            file: Int32Builder::with_capacity(rows),
            name: Int32Builder::with_capacity(rows),
            family: Int32Builder::with_capacity(rows),
            device: UInt32Builder::with_capacity(rows),
            stream: UInt64Builder::with_capacity(rows),
            start_ns: Int64Builder::with_capacity(rows),
            duration_ns: Int64Builder::with_capacity(rows),
            grid: u32s(),
            block: u32s(),
            correlation: UInt64Builder::with_capacity(rows),
            ..Dispatches::default()
        }
    }

    /// Adds every dispatch of `profile`, each with the file and format of the input it came
    /// from.
    fn add(&mut self, profile: &Profile) -> Result<()> {
        let name_base = self.names.len();
        let mut family_of = Vec::with_capacity(profile.names.len());
        for id in 0..profile.names.len() {
            let name = u32::try_from(id)
                .ok()
                .and_then(|i| profile.names.get(i))
                .cloned()
                .unwrap_or_default();
            let family = family_key(&name);
            let next = key(self.families.len())?;
            let k = *self.family_index.entry(family.clone()).or_insert_with(|| {
                self.families.push(family);
                next
            });
            family_of.push(k);
            self.names.push(name);
        }
        for source in &profile.sources {
            let file = key(self.files.len())?;
            self.files.push(source.path.display().to_string());
            self.formats.push(source.format.clone());
            for i in source.dispatches.clone() {
                let Some(d) = profile.dispatches.get(i) else {
                    continue;
                };
                let id = d.name.0 as usize;
                let launch = profile.launch(&d);
                self.file.append_value(file);
                self.name.append_value(key(name_base + id)?);
                self.family
                    .append_value(family_of.get(id).copied().unwrap_or_default());
                self.device.append_value(d.device);
                self.stream.append_value(d.stream);
                self.start_ns.append_value(d.start.ns());
                self.duration_ns
                    .append_value(i64::try_from(d.duration.ns()).unwrap_or(i64::MAX));
                for i in 0..3 {
                    self.grid[i].append_option(launch.grid.map(|g| g[i]));
                    self.block[i].append_option(launch.block.map(|b| b[i]));
                }
                self.correlation.append_option(d.correlation);
                self.rows += 1;
            }
        }
        Ok(())
    }

    fn batch(mut self) -> Result<RecordBatch> {
        let dict = |keys: Int32Array, values: &[String]| -> Result<ArrayRef> {
            let values: ArrayRef = Arc::new(StringArray::from_iter_values(values));
            Ok(Arc::new(DictionaryArray::<Int32Type>::try_new(
                keys, values,
            )?))
        };
        // A file and its format have the same key: the input's index.
        let file_keys = self.file.finish();
        let [gx, gy, gz] = &mut self.grid;
        let [bx, by, bz] = &mut self.block;
        let arrays: Vec<ArrayRef> = vec![
            dict(file_keys.clone(), &self.files)?,
            dict(file_keys, &self.formats)?,
            dict(self.name.finish(), &self.names)?,
            dict(self.family.finish(), &self.families)?,
            Arc::new(self.device.finish()),
            Arc::new(self.stream.finish()),
            Arc::new(self.start_ns.finish()),
            Arc::new(self.duration_ns.finish()),
            Arc::new(gx.finish()),
            Arc::new(gy.finish()),
            Arc::new(gz.finish()),
            Arc::new(bx.finish()),
            Arc::new(by.finish()),
            Arc::new(bz.finish()),
            Arc::new(self.correlation.finish()),
        ];
        Ok(RecordBatch::try_new(
            Arc::new(schema::dispatches_schema()),
            arrays,
        )?)
    }
}

/// The dispatch table of `profile` ([`schema::dispatches_schema`]): one row per dispatch of
/// every input, as `dispatches.parquet` holds it.
pub fn dispatch_batch(profile: &Profile) -> Result<RecordBatch> {
    let mut d = Dispatches::with_capacity(profile.dispatches.len());
    d.add(profile)?;
    d.batch()
}

/// Starts writing `path` through the workspace's one no-clobber writer.
fn new_file(path: &Path, replace: bool) -> Result<kernelab_model::NewFile> {
    kernelab_model::NewFile::create(path, replace).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            anyhow::Error::new(ExistsError(path.to_path_buf()))
        } else {
            anyhow::Error::new(e).context(format!("creating {}", path.display()))
        }
    })
}

#[cfg(not(feature = "parquet"))]
fn write_batch(_path: &Path, _batch: &RecordBatch, _replace: bool) -> Result<()> {
    bail!(NO_PARQUET)
}

#[cfg(feature = "parquet")]
fn write_batch(path: &Path, batch: &RecordBatch, replace: bool) -> Result<()> {
    let mut w = ArrowWriter::try_new(new_file(path, replace)?, batch.schema(), None)?;
    w.write(batch)?;
    w.into_inner()?
        .finish()
        .with_context(|| format!("creating {}", path.display()))
}

impl Tables {
    /// Each table with its file name and declared schema.
    fn each(&mut self) -> [(&'static str, &mut Table, schema::Declared); 4] {
        [
            (AB_SAMPLES, &mut self.ab, schema::AB_SAMPLES),
            (KERNEL_SAMPLES, &mut self.kernel, schema::KERNEL_SAMPLES),
            (SERVE_SAMPLES, &mut self.serve, schema::SERVE_SAMPLES),
            (SWEEP_POINTS, &mut self.sweep, schema::SWEEP_POINTS),
        ]
    }
}

/// Reads every input into `tables`; traces into `dispatches` when given (else skipped).
fn read_inputs(
    inputs: &[PathBuf],
    tables: &mut Tables,
    mut dispatches: Option<&mut Dispatches>,
) -> Result<()> {
    for path in inputs {
        match classify(path) {
            Kind::Sweep(matrix) => read_sweep(&matrix, tables)?,
            Kind::Samples => read_samples(path, tables)?,
            Kind::Trace => {
                if let Some(d) = dispatches.as_deref_mut() {
                    let mut profile = Profile::default();
                    read_file(path, &ReadOptions::default(), &mut profile, &NoProgress)?;
                    d.add(&profile)?;
                }
            }
        }
    }
    Ok(())
}

/// Reads every input and writes one Parquet file per non-empty table into `out_dir` (created
/// when missing). Fails with [`ExistsError`] before writing anything when a target exists,
/// unless `replace`. Samples and sweep inputs are read twice, so that memory stays bounded:
/// the first pass counts the rows and finds the columns, the second writes them in row groups
/// of [`schema::BATCH_ROWS`]; a file is put in place only once complete.
pub fn export(out_dir: &Path, inputs: &[PathBuf], replace: bool) -> Result<Vec<Written>> {
    if cfg!(not(feature = "parquet")) {
        bail!(NO_PARQUET);
    }
    let mut tables = Tables::default();
    let mut dispatches = Dispatches::default();
    read_inputs(inputs, &mut tables, Some(&mut dispatches))?;
    let mut names: Vec<&'static str> = Vec::new();
    if dispatches.rows > 0 {
        names.push(DISPATCHES);
    }
    for (name, table, _) in tables.each() {
        if table.count > 0 {
            names.push(name);
        }
    }
    if names.is_empty() {
        bail!("no rows to export: the inputs hold no dispatches, samples or sweep points");
    }
    for name in &names {
        let target = out_dir.join(name);
        if !replace && std::fs::symlink_metadata(&target).is_ok() {
            return Err(ExistsError(target).into());
        }
    }
    std::fs::create_dir_all(out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let mut written = Vec::new();
    let mut streamed = false;
    for (name, table, declared) in tables.each() {
        if table.count > 0 {
            table.stream_to(new_file(&out_dir.join(name), replace)?, declared)?;
            streamed = true;
        }
    }
    if streamed {
        read_inputs(inputs, &mut tables, None)?;
    }
    // Every table was read whole: only now is anything put in place.
    if dispatches.rows > 0 {
        let path = out_dir.join(DISPATCHES);
        let batch = dispatches.batch()?;
        write_batch(&path, &batch, replace)?;
        written.push(Written {
            path,
            rows: batch.num_rows(),
        });
    }
    let Tables {
        ab,
        kernel,
        serve,
        sweep,
    } = tables;
    for (name, table) in [
        (AB_SAMPLES, ab),
        (KERNEL_SAMPLES, kernel),
        (SERVE_SAMPLES, serve),
        (SWEEP_POINTS, sweep),
    ] {
        if table.is_streaming() {
            let rows = table.finish()?;
            written.push(Written {
                path: out_dir.join(name),
                rows,
            });
        }
    }
    Ok(written)
}
