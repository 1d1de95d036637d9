//! The declared schema of every samples and sweep table, in one place: a column's type never
//! depends on the values seen (an all-null column keeps its type, so the exports of different
//! runs read together, e.g. DuckDB's `read_parquet([...])`). docs/parquet.md lists the same.

use anyhow::{bail, Result};
use arrow_array::builder::{BooleanBuilder, Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use serde_json::{Map, Value};
use std::sync::Arc;

/// The type of a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    /// Text.
    Utf8,
    /// Text holding JSON (arrays, objects).
    Json,
    /// A 64-bit integer.
    Int64,
    /// A double.
    Float64,
    /// A boolean.
    Boolean,
}

use Column::{Boolean, Float64, Int64, Json, Utf8};

/// `ab_samples.parquet`: one row per run and metric.
pub const AB_SAMPLES: &[(&str, Column)] = &[
    ("file", Utf8),
    ("line", Int64),
    ("pair", Int64),
    ("aa", Boolean),
    ("order", Utf8),
    ("slot", Utf8),
    ("exit_code", Int64),
    ("metric", Utf8),
    ("value", Float64),
];

/// `kernel_samples.parquet`: one row per timed sample of `kernel run`.
pub const KERNEL_SAMPLES: &[(&str, Column)] = &[
    ("file", Utf8),
    ("line", Int64),
    ("spec", Utf8),
    ("point", Utf8),
    ("round", Int64),
    ("build", Utf8),
    ("sample", Int64),
    ("batch", Int64),
    ("ns_per_launch", Float64),
    ("sm_mhz", Int64),
    ("temp_c", Int64),
    ("power_w", Float64),
];

/// `serve_samples.parquet`: one row per start, request, point and stop record of `serve`.
pub const SERVE_SAMPLES: &[(&str, Column)] = &[
    ("file", Utf8),
    ("line", Int64),
    ("kind", Utf8),
    ("round", Int64),
    ("slot", Utf8),
    ("case", Int64),
    ("concurrency", Int64),
    ("health_s", Float64),
    ("error", Utf8),
    ("log", Utf8),
    ("index", Int64),
    ("input_sha256", Utf8),
    ("measured_ttft_s", Float64),
    ("measured_tt2t_s", Float64),
    ("measured_itl_s", Json),
    ("measured_e2e_s", Float64),
    ("measured_prompt_tokens", Int64),
    ("measured_completion_tokens", Int64),
    ("measured_chunks", Int64),
    ("measured_output_sha256", Utf8),
    ("measured_output_ids_sha256", Utf8),
    ("send_lag_s", Float64),
    ("wall_s", Float64),
    ("guard_loop_lag_max_s", Float64),
    ("guard_loop_lag_p99_s", Float64),
    ("guard_send_lag_max_s", Float64),
    ("guard_idle_lag_p99_s", Float64),
    ("ending", Utf8),
    ("failure", Utf8),
    ("telemetry_peak_gpu_memory_bytes", Int64),
    ("telemetry_peak_server_memory_bytes", Int64),
    ("telemetry_sm_mhz_min", Int64),
    ("telemetry_sm_mhz_max", Int64),
    ("telemetry_samples", Int64),
    ("telemetry_gpus", Json),
    ("telemetry_unavailable", Utf8),
    ("warmup", Boolean),
    ("measured_cached_tokens", Int64),
    ("steady", Boolean),
    ("server_metrics_prefix_cache_hits", Float64),
    ("server_metrics_prefix_cache_queries", Float64),
    ("server_metrics_kv_cache_usage", Float64),
    ("server_metrics_preemptions", Float64),
    ("server_metrics_spec_drafts", Float64),
    ("server_metrics_spec_draft_tokens", Float64),
    ("server_metrics_spec_accepted_tokens", Float64),
    ("server_metrics_unavailable", Utf8),
    ("energy_mj", Int64),
    ("energy_unavailable", Utf8),
];

/// `sweep_points.parquet`: one row per point of a sweep matrix (plus `param_NAME`, utf8).
pub const SWEEP_POINTS: &[(&str, Column)] = &[
    ("file", Utf8),
    ("sweep", Utf8),
    ("mode", Utf8),
    ("id", Utf8),
    ("build", Utf8),
    ("verdict", Utf8),
    ("bitwise", Boolean),
    ("code_changed", Boolean),
    ("ratio", Float64),
    ("change", Float64),
    ("interval_low", Float64),
    ("interval_high", Float64),
    ("baseline_ns", Float64),
    ("candidate_ns", Float64),
    ("device", Utf8),
    ("worker", Utf8),
    ("wall_ns", Int64),
    ("error", Utf8),
    ("gates", Json),
];

/// Rows of one table, typed by its declared schema when written. A table first only counts
/// its rows and the columns it meets ([`Table::push`] without a sink); with a sink
/// ([`Table::stream_to`]) it writes every [`BATCH_ROWS`] rows as one row group, so an export
/// holds at most one batch per table, whatever the size of its inputs.
#[derive(Default)]
pub struct Table {
    /// Columns seen that the schema does not declare (written as utf8).
    extra: std::collections::BTreeSet<String>,
    /// Rows not yet written.
    pub rows: Vec<Map<String, Value>>,
    /// Rows seen.
    pub count: usize,
    /// About how many bytes the rows not yet written hold.
    pending_bytes: usize,
    sink: Option<Sink>,
}

/// Most bytes (roughly) of rows held before a row group is written: rows as large as a serve
/// request's ITL array (a 64 MiB line at most) cannot make a batch grow without bound.
pub const BATCH_BYTES: usize = 64 << 20;

/// About how many bytes `v` holds in memory.
fn approx_bytes(v: &Value) -> usize {
    match v {
        Value::String(s) => 24 + s.len(),
        Value::Array(a) => 24 + a.iter().map(approx_bytes).sum::<usize>(),
        Value::Object(o) => {
            24 + o
                .iter()
                .map(|(k, v)| k.len() + approx_bytes(v))
                .sum::<usize>()
        }
        _ => 16,
    }
}

/// A table's declared columns.
pub type Declared = &'static [(&'static str, Column)];

/// Rows per Parquet row group when streaming.
pub const BATCH_ROWS: usize = 65_536;

/// The Parquet writer of a streamed table.
#[cfg(feature = "parquet")]
type Writer = parquet::arrow::ArrowWriter<kernelab_model::NewFile>;
/// No Parquet writer in this build (the Python wheel's): no table is ever streamed.
#[cfg(not(feature = "parquet"))]
enum Writer {}

/// A Parquet writer of `schema` into `file`, a row group per batch (the writer keeps no more
/// than one batch encoded).
#[cfg(feature = "parquet")]
fn writer(file: kernelab_model::NewFile, schema: arrow_schema::SchemaRef) -> Result<Writer> {
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_size(BATCH_ROWS)
        .build();
    Ok(Writer::try_new(file, schema, Some(props))?)
}

/// Writes `batch` as one row group.
#[cfg(feature = "parquet")]
fn write(w: &mut Writer, batch: &RecordBatch) -> Result<()> {
    Ok(w.write(batch)?)
}

/// Closes the Parquet file and puts it in place.
#[cfg(feature = "parquet")]
fn close(w: Writer) -> Result<()> {
    Ok(w.into_inner()?.finish()?)
}

/// No Parquet writer in this build.
#[cfg(not(feature = "parquet"))]
fn writer(_file: kernelab_model::NewFile, _schema: arrow_schema::SchemaRef) -> Result<Writer> {
    bail!(crate::NO_PARQUET)
}

/// No writer exists in this build to write with.
#[cfg(not(feature = "parquet"))]
fn write(w: &mut Writer, _batch: &RecordBatch) -> Result<()> {
    match *w {}
}

/// No writer exists in this build to close.
#[cfg(not(feature = "parquet"))]
fn close(w: Writer) -> Result<()> {
    match w {}
}

struct Sink {
    writer: Writer,
    schema: Declared,
    /// The columns the first pass found: a second pass that meets another is an error.
    frozen: std::collections::BTreeSet<String>,
}

/// What a column of type `ty` expects, when `v` (not null) is not that.
fn misfit(ty: Column, v: &Value) -> Option<&'static str> {
    match ty {
        Boolean => (!v.is_boolean()).then_some("a boolean"),
        Int64 => v.as_i64().is_none().then_some("an integer"),
        Float64 => v.as_f64().is_none().then_some("a number"),
        Utf8 | Json => None,
    }
}

/// Where a row came from, for an error: `FILE: line N` or `FILE: point ID`.
fn origin(row: &Map<String, Value>) -> String {
    let file = row.get("file").and_then(Value::as_str).unwrap_or("input");
    match (row.get("line"), row.get("id").and_then(Value::as_str)) {
        (Some(l), _) => format!("{file}: line {l}"),
        (None, Some(id)) => format!("{file}: point {id}"),
        (None, None) => file.to_string(),
    }
}

impl Table {
    /// Adds a row; keys the schema does not declare become utf8 columns, unless null. Without
    /// a sink the row is only counted; with one it is written once a batch is full.
    pub fn push(&mut self, row: Map<String, Value>, schema: &[(&str, Column)]) -> Result<()> {
        for (k, v) in &row {
            if !v.is_null() && !schema.iter().any(|(n, _)| n == k) && !self.extra.contains(k) {
                if self.sink.is_some() {
                    bail!(
                        "{}: column `{k}` was not there when the inputs were first read: an input changed while exporting",
                        origin(&row)
                    );
                }
                self.extra.insert(k.clone());
            }
        }
        // Every value against its declared type now, so that a bad value stops the export
        // before anything is written.
        for (col, ty) in schema {
            if let Some(v) = row.get(*col).filter(|v| !v.is_null()) {
                if let Some(what) = misfit(*ty, v) {
                    bail!("{}: `{col}`: expected {what}, found {v}", origin(&row));
                }
            }
        }
        self.count += 1;
        if self.sink.is_some() {
            self.pending_bytes += row.values().map(approx_bytes).sum::<usize>();
            self.rows.push(row);
            if self.rows.len() >= BATCH_ROWS || self.pending_bytes >= BATCH_BYTES {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Starts writing this table's rows to `file`: the schema is its declared columns and the
    /// others this table met; the row count starts again at 0 (the inputs are read again).
    pub fn stream_to(&mut self, file: kernelab_model::NewFile, schema: Declared) -> Result<()> {
        let empty = Table {
            extra: self.extra.clone(),
            ..Table::default()
        };
        let arrow_schema = empty.batch(schema)?.schema();
        let writer = writer(file, arrow_schema)?;
        self.sink = Some(Sink {
            writer,
            schema,
            frozen: self.extra.clone(),
        });
        self.count = 0;
        self.rows.clear();
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        let Some(schema) = self.sink.as_ref().map(|s| s.schema) else {
            return Ok(());
        };
        if self.rows.is_empty() {
            return Ok(());
        }
        let batch = self.batch(schema)?;
        self.rows.clear();
        self.pending_bytes = 0;
        if let Some(s) = self.sink.as_mut() {
            debug_assert_eq!(s.frozen, self.extra);
            write(&mut s.writer, &batch)?;
        }
        Ok(())
    }

    /// Whether the rows are being written ([`Table::stream_to`]).
    pub fn is_streaming(&self) -> bool {
        self.sink.is_some()
    }

    /// Writes what is left, closes the Parquet file and puts it in place.
    pub fn finish(mut self) -> Result<usize> {
        self.flush()?;
        let Some(s) = self.sink.take() else {
            bail!("a table finished without being written");
        };
        close(s.writer)?;
        Ok(self.count)
    }

    /// The rows as a batch: every declared column in its declared type and order (present
    /// even when no row has it), then the others, alphabetically, as utf8 (non-strings as JSON
    /// text). A value of another type than declared is an error naming its row and column.
    pub fn batch(&self, schema: &[(&str, Column)]) -> Result<RecordBatch> {
        let mut fields = Vec::new();
        let mut arrays: Vec<ArrayRef> = Vec::new();
        let extra = self.extra.iter().map(|c| (c.as_str(), Utf8));
        for (col, ty) in schema.iter().copied().chain(extra) {
            let cells = self
                .rows
                .iter()
                .map(|r| (r, r.get(col).filter(|v| !v.is_null())));
            // The one statement of what each type takes is `misfit` (also checked on `push`).
            let bad = |r: &Map<String, Value>, v: &Value| {
                let what = misfit(ty, v).unwrap_or("a value of its type");
                anyhow::anyhow!("{}: `{col}`: expected {what}, found {v}", origin(r))
            };
            let (dt, array): (DataType, ArrayRef) = match ty {
                Boolean => {
                    let mut b = BooleanBuilder::new();
                    for (r, v) in cells {
                        match v {
                            None => b.append_null(),
                            Some(Value::Bool(x)) => b.append_value(*x),
                            Some(v) => return Err(bad(r, v)),
                        }
                    }
                    (DataType::Boolean, Arc::new(b.finish()))
                }
                Int64 => {
                    let mut b = Int64Builder::new();
                    for (r, v) in cells {
                        match v {
                            None => b.append_null(),
                            Some(v) => match v.as_i64() {
                                Some(x) => b.append_value(x),
                                None => return Err(bad(r, v)),
                            },
                        }
                    }
                    (DataType::Int64, Arc::new(b.finish()))
                }
                Float64 => {
                    let mut b = Float64Builder::new();
                    for (r, v) in cells {
                        match v {
                            None => b.append_null(),
                            Some(v) => match v.as_f64() {
                                Some(x) => b.append_value(x),
                                None => return Err(bad(r, v)),
                            },
                        }
                    }
                    (DataType::Float64, Arc::new(b.finish()))
                }
                Utf8 | Json => {
                    let mut b = StringBuilder::new();
                    for (_, v) in cells {
                        match v {
                            None => b.append_null(),
                            Some(Value::String(s)) if ty == Utf8 => b.append_value(s),
                            Some(other) => b.append_value(other.to_string()),
                        }
                    }
                    (DataType::Utf8, Arc::new(b.finish()))
                }
            };
            fields.push(Field::new(col, dt, true));
            arrays.push(array);
        }
        if fields.is_empty() {
            bail!("a table with no columns");
        }
        Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)?)
    }
}

/// The dispatch table (`dispatches.parquet`, the Python `Profile.dispatches`): one row per
/// kernel dispatch, straight from the dispatch store. Text columns repeat a few values over
/// many rows, so they are dictionary-encoded (pandas reads them as categoricals).
pub fn dispatches_schema() -> Schema {
    let text = |n: &str| {
        Field::new(
            n,
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            false,
        )
    };
    let u32f = |n: &str| Field::new(n, DataType::UInt32, true);
    Schema::new(vec![
        text("file"),
        text("format"),
        text("name"),
        text("family"),
        Field::new("device", DataType::UInt32, false),
        Field::new("stream", DataType::UInt64, false),
        Field::new("start_ns", DataType::Int64, false),
        Field::new("duration_ns", DataType::Int64, false),
        u32f("grid_x"),
        u32f("grid_y"),
        u32f("grid_z"),
        u32f("block_x"),
        u32f("block_y"),
        u32f("block_z"),
        Field::new("correlation", DataType::UInt64, true),
    ])
}

/// `profile`'s kernel rows (the document's `kernels`, `other` and each phase's `kernels`):
/// value ranges flattened to `_min` / `_max`; a grid or block that varies is JSON text.
pub const KERNELS: &[(&str, Column)] = &[
    ("rank", Int64),
    ("name", Utf8),
    ("family", Utf8),
    ("variants", Int64),
    ("calls", Int64),
    ("total_ns", Int64),
    ("mean_ns", Float64),
    ("median_ns", Float64),
    ("min_ns", Int64),
    ("max_ns", Int64),
    ("stddev_ns", Float64),
    ("share", Float64),
    ("grid", Json),
    ("block", Json),
    ("registers_min", Int64),
    ("registers_max", Int64),
    ("agprs_min", Int64),
    ("agprs_max", Int64),
    ("sgprs_min", Int64),
    ("sgprs_max", Int64),
    ("shared_bytes_min", Int64),
    ("shared_bytes_max", Int64),
    ("scratch_bytes_min", Int64),
    ("scratch_bytes_max", Int64),
    ("register_granules", Boolean),
];

/// `profile --by-phase`'s phases: one row per phase, its kernels as JSON text.
pub const PHASES: &[(&str, Column)] = &[
    ("phase", Utf8),
    ("calls", Int64),
    ("total_ns", Int64),
    ("share", Float64),
    ("kernels", Json),
];

/// `profile --by-graph`'s graphs: one row per graph and replay site.
pub const GRAPHS: &[(&str, Column)] = &[
    ("graph", Utf8),
    ("site", Utf8),
    ("replays", Int64),
    ("kernels_per_replay", Int64),
    ("kernel_ns_per_replay_median", Int64),
    ("kernel_ns_per_replay_min", Int64),
    ("kernel_ns_per_replay_max", Int64),
    ("kernel_ns_total", Int64),
    ("span_ns_per_replay_median", Int64),
    ("span_ns_per_replay_min", Int64),
    ("span_ns_per_replay_max", Int64),
    ("launch_latency_ns_median", Int64),
    ("launch_latency_ns_min", Int64),
    ("launch_latency_ns_max", Int64),
    ("top_kernels", Json),
    ("operators", Json),
];

/// Rows of a document (each a JSON object) as one batch of the declared schema: nested
/// objects flattened to `parent_child` columns, except columns declared JSON, which stay
/// whole (as JSON text).
pub fn rows_batch<'a>(
    rows: impl IntoIterator<Item = &'a Value>,
    schema: Declared,
) -> Result<RecordBatch> {
    // Every row is kept for the batch: a document's tables are small (its rows are already in
    // memory as the document).
    let mut table = Table::default();
    for row in rows {
        let Value::Object(obj) = row else {
            bail!("a table row that is not an object: {row}");
        };
        let mut flat = Map::new();
        for (k, v) in obj {
            let json = schema.iter().any(|(n, t)| n == k && *t == Json);
            match v {
                Value::Object(inner) if !json => crate::flatten_into(k, inner, &mut flat),
                other => {
                    flat.insert(k.clone(), other.clone());
                }
            }
        }
        // `push` without a sink checks the row's types and notes its extra columns.
        table.push(flat.clone(), schema)?;
        table.rows.push(flat);
    }
    table.batch(schema)
}
