//! `kernelab._native`: the Python module's native half (the Python package `kernelab`, in
//! `python/kernelab`, wraps it). Every function calls the library crates the command line
//! calls (the use cases of `kernelab_commands` and the readers) and holds no logic of its own: documents
//! come back as the dicts of the CLI's JSON, tables as Arrow through the PyCapsule interface
//! (schemas declared in `kernelab_export::schema`). Files are read with the GIL released.

use anyhow::Context;
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use kernelab_commands::profile::ProfileReads;
use kernelab_commands::rank::RankSettings;
use kernelab_commands::{
    ab, bundle, check, code, compare as comparing, profile as profiling, rank, serve,
};
use kernelab_export::schema::{self, Declared};
use kernelab_model::{Document, Location};
use kernelab_report::documents::ProfileBody;
use kernelab_stats::{DesignSettings, Direction, Order, Pair};
use kernelab_tensor::{BitwiseOptions, DType, ReadSpec, SharedBytes, TensorFile};
use kernelab_trace::{CompareOptions, NoProgress, Progress};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyMemoryError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod capsule;
mod kernel;
mod optional;

create_exception!(
    kernelab,
    Error,
    PyException,
    "A kernelab error: `str(e)` is the CLI's message; `file`, `line`, `byte` and `field` say where in which input, when known."
);
create_exception!(
    kernelab,
    InputError,
    Error,
    "An input file kernelab cannot read, or reads as something it is not (the CLI exits 2)."
);
create_exception!(
    kernelab,
    UsageError,
    Error,
    "A setting that is not valid (the CLI's usage errors, exit 2)."
);

/// The location of the first error in `e`'s chain that has one.
fn location_of(e: &anyhow::Error) -> Option<Location> {
    e.chain().find_map(|c| {
        c.downcast_ref::<kernelab_trace::Error>()
            .map(|t| t.location().clone())
            .or_else(|| {
                c.downcast_ref::<kernelab_tensor::Error>()
                    .map(|t| t.location().clone())
            })
            .or_else(|| {
                c.downcast_ref::<kernelab_runner::Error>()
                    .and_then(|r| r.location())
            })
            .or_else(|| {
                c.downcast_ref::<kernelab_code::Error>()
                    .and_then(|r| r.location())
            })
    })
}

/// An exception of class `E` with the CLI's `message` and, as attributes, where it happened.
fn raise<E: pyo3::PyTypeInfo>(message: String, location: Option<Location>) -> PyErr {
    Python::with_gil(|py| {
        let err = PyErr::from_type(py.get_type::<E>(), message.clone());
        let value = err.value(py);
        let l = location.unwrap_or_default();
        let file = l.path.map(|p| p.display().to_string());
        let set = || -> PyResult<()> {
            value.setattr("message", &message)?;
            value.setattr("file", file)?;
            value.setattr("line", l.line)?;
            value.setattr("byte", l.byte)?;
            value.setattr("field", l.field)?;
            Ok(())
        };
        // The attributes are extras: an exception without them still carries the message.
        let _ = set();
        err
    })
}

/// Whether `e` says that memory could not be had (a reader's fallible allocation).
fn out_of_memory(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<kernelab_tensor::Error>(),
            Some(kernelab_tensor::Error::Alloc { .. })
        ) || matches!(
            c.downcast_ref::<kernelab_model::CappedReadError>(),
            Some(kernelab_model::CappedReadError::Alloc { .. })
        ) || c.is::<std::collections::TryReserveError>()
    })
}

/// `e` as a `kernelab.Error`: the CLI's message (`{e:#}`) and where it happened. An input
/// that could not be read or parsed is an `InputError`, a setting that is not valid a
/// `UsageError`; memory a reader could not have is Python's `MemoryError` (with the same
/// attributes).
fn py_err(e: anyhow::Error) -> PyErr {
    let message = format!("{e:#}");
    let location = location_of(&e);
    if out_of_memory(&e) {
        return raise::<PyMemoryError>(message, location);
    }
    let argument = e.chain().any(|c| {
        c.is::<kernelab_commands::SettingError>()
            || c.downcast_ref::<kernelab_trace::Error>()
                .is_some_and(|t| matches!(t.kind(), kernelab_trace::ErrorKind::Argument { .. }))
    });
    let io = e
        .chain()
        .any(|c| c.downcast_ref::<std::io::Error>().is_some());
    let in_file = location.as_ref().is_some_and(|l| l.path.is_some());
    if argument {
        raise::<UsageError>(message, location)
    } else if in_file || io {
        raise::<InputError>(message, location)
    } else {
        raise::<Error>(message, location)
    }
}

/// A usage error raised by this module's own argument checks.
fn usage(message: impl Into<String>) -> PyErr {
    raise::<UsageError>(message.into(), None)
}

type Res<T> = Result<T, anyhow::Error>;

/// Runs `f` with the GIL released; its error becomes a `kernelab.Error`.
fn released<T: Send>(py: Python<'_>, f: impl Send + FnOnce() -> Res<T>) -> PyResult<T> {
    py.allow_threads(f).map_err(py_err)
}

/// A document as the dict of the CLI's JSON (parsed by Python's `json`, so that every value is
/// what `json.loads` of the CLI's output gives).
fn to_dict<T: Serialize>(py: Python<'_>, doc: &T) -> PyResult<PyObject> {
    let text = serde_json::to_string(doc).map_err(|e| py_err(e.into()))?;
    loads(py, &text)
}

fn loads(py: Python<'_>, text: &str) -> PyResult<PyObject> {
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}

/// An Arrow table: batches of one schema, handed to Python through the Arrow PyCapsule
/// interface (`__arrow_c_stream__`), so that `pyarrow.table(t)`, `polars.DataFrame(t)` and
/// DuckDB read it without copying, and kernelab depends on none of them.
#[pyclass(module = "kernelab", name = "Table", frozen)]
pub struct Table {
    batches: Vec<RecordBatch>,
    schema: SchemaRef,
}

impl Table {
    fn one(batch: RecordBatch) -> Table {
        Table {
            schema: batch.schema(),
            batches: vec![batch],
        }
    }

    /// The table as a `pyarrow.Table` whose columns are exported one by one (each its own
    /// Arrow C array, released on its own), so that a column pandas converts rather than
    /// shares (dictionary keys become smaller categorical codes) is freed once converted;
    /// through one stream, every column would live as long as any column the frame shares.
    fn by_column<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let pa = optional::import(py, "Table.to_pandas", &["pyarrow"])?;
        let this = slf.borrow();
        if this.batches.is_empty() {
            return Self::to_pyarrow(slf);
        }
        let mut columns = Vec::with_capacity(this.schema.fields().len());
        for (i, field) in this.schema.fields().iter().enumerate() {
            let mut chunks = Vec::with_capacity(this.batches.len());
            for b in &this.batches {
                let column =
                    Bound::new(py, capsule::Column::new(b.column(i).clone(), field.clone()))?;
                chunks.push(pa.call_method1("array", (column,))?);
            }
            columns.push(pa.call_method1("chunked_array", (chunks,))?);
        }
        let schema = pa.call_method1("schema", (slf,))?;
        let kw = pyo3::types::PyDict::new(py);
        kw.set_item("schema", schema)?;
        pa.getattr("Table")?
            .call_method("from_arrays", (columns,), Some(&kw))
    }

    /// The rows of a document (JSON objects) as a table of the declared schema.
    fn rows<T: Serialize>(rows: &[T], declared: Declared) -> Res<Table> {
        let values = rows
            .iter()
            .map(serde_json::to_value)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Table::one(schema::rows_batch(&values, declared)?))
    }
}

#[pymethods]
impl Table {
    /// The schema as an Arrow PyCapsule (`arrow_schema`).
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        capsule::schema(py, self.schema.as_ref())
    }

    /// The rows as an Arrow C stream PyCapsule (`arrow_array_stream`). A requested schema is
    /// a hint the producer may ignore (the PyCapsule interface): the table is exported as it
    /// is.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyCapsule>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        capsule::stream(py, self.schema.clone(), self.batches.clone())
    }

    /// Number of rows.
    #[getter]
    fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }

    /// The column names, in order.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }

    fn __len__(&self) -> usize {
        self.num_rows()
    }

    /// The table as a `pyarrow.Table` (needs pyarrow).
    fn to_pyarrow<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        optional::import(slf.py(), "Table.to_pyarrow", &["pyarrow"])?.call_method1("table", (slf,))
    }

    /// The table as a pandas DataFrame, through pyarrow (`pyarrow.Table.to_pandas`, whose
    /// keywords it takes); dictionary-encoded text becomes categoricals. By default each
    /// column is its own block (`split_blocks=True`), so that integer columns without nulls
    /// share the table's memory instead of being copied into one consolidated block.
    #[pyo3(signature = (**kwargs))]
    fn to_pandas<'py>(
        slf: &Bound<'py, Self>,
        kwargs: Option<&Bound<'py, pyo3::types::PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let kw = match kwargs {
            Some(k) => k.copy()?,
            None => pyo3::types::PyDict::new(slf.py()),
        };
        optional::import(slf.py(), "Table.to_pandas", &["pyarrow", "pandas"])?;
        if !kw.contains("split_blocks")? {
            kw.set_item("split_blocks", true)?;
        }
        Self::by_column(slf)?.call_method("to_pandas", (), Some(&kw))
    }

    /// The table as a polars DataFrame (needs polars).
    fn to_polars<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        optional::import(slf.py(), "Table.to_polars", &["polars"])?
            .call_method1("DataFrame", (slf,))
    }

    fn __repr__(&self) -> String {
        let cols: Vec<String> = self
            .schema
            .fields()
            .iter()
            .map(|f| format!("{}: {}", f.name(), f.data_type()))
            .collect();
        format!(
            "kernelab.Table({} rows; {})",
            self.num_rows(),
            cols.join(", ")
        )
    }
}

/// Grouping and filters as the Python keywords give them.
fn settings(
    group: &str,
    rules: Option<PathBuf>,
    name: Option<String>,
    device: Option<u32>,
    stream: Option<u64>,
    time_range: Option<String>,
) -> PyResult<RankSettings> {
    let family = match group {
        "family" => true,
        "none" | "name" => false,
        other => {
            return Err(usage(format!(
                "group={other:?}: expected \"family\" or \"none\""
            )))
        }
    };
    Ok(RankSettings {
        family,
        rules,
        name,
        device,
        stream,
        time_range,
        top: None,
    })
}

fn no_progress(_: &Path) -> Box<dyn Progress> {
    Box::new(NoProgress)
}

/// A profile: the ranking document and the dispatch store it was made from.
#[pyclass(module = "kernelab", name = "Profile", frozen)]
pub struct Profile {
    profile: kernelab_model::Profile,
    doc: Document<ProfileBody>,
}

#[pymethods]
impl Profile {
    /// The whole document, equal to `kernelab profile --format json` of the same inputs.
    #[getter]
    fn document(&self, py: Python<'_>) -> PyResult<PyObject> {
        to_dict(py, &self.doc)
    }

    /// Whole-trace figures (the document's `summary`).
    #[getter]
    fn summary(&self, py: Python<'_>) -> PyResult<PyObject> {
        to_dict(py, &self.doc.body.summary)
    }

    /// The inputs read: path, format, facts and notes of each (the document's `inputs`).
    #[getter]
    fn sources(&self, py: Python<'_>) -> PyResult<PyObject> {
        to_dict(py, &self.doc.body.inputs)
    }

    /// Reader and ranking notes (the document's `notes`).
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.doc.body.notes.clone()
    }

    /// One row per kernel or family, every row (the document's `kernels`).
    #[getter]
    fn kernels(&self) -> PyResult<Table> {
        Table::rows(&self.doc.body.kernels, schema::KERNELS).map_err(py_err)
    }

    /// One row per annotated phase (`by_phase=True`; empty otherwise).
    #[getter]
    fn phases(&self) -> PyResult<Table> {
        let rows = self.doc.body.phases.as_deref().unwrap_or_default();
        Table::rows(rows, schema::PHASES).map_err(py_err)
    }

    /// One row per graph and replay site (`by_graph=True`; empty otherwise).
    #[getter]
    fn graphs(&self) -> PyResult<Table> {
        let rows = self.doc.body.graphs.as_ref().map(|g| g.rows.as_slice());
        Table::rows(rows.unwrap_or_default(), schema::GRAPHS).map_err(py_err)
    }

    /// Every kernel dispatch of every input, straight from the dispatch store (the schema of
    /// `kernelab export --parquet`'s `dispatches.parquet`). Built with the GIL released.
    #[getter]
    fn dispatches(&self, py: Python<'_>) -> PyResult<Table> {
        let batch = released(py, || kernelab_export::dispatch_batch(&self.profile))?;
        Ok(Table::one(batch))
    }

    fn __repr__(&self) -> String {
        let s = &self.doc.body.summary;
        format!(
            "kernelab.Profile({} inputs, {} kernels, {} rows)",
            self.doc.body.inputs.len(),
            s.kernel_count,
            self.doc.body.kernels.len()
        )
    }
}

/// Reads and ranks profiler files (`kernelab profile`).
#[pyfunction]
#[pyo3(signature = (paths, group="family", rules=None, by_phase=false, by_graph=false, device=None, stream=None, time_range=None, name=None))]
#[allow(clippy::too_many_arguments)]
fn profile(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    group: &str,
    rules: Option<PathBuf>,
    by_phase: bool,
    by_graph: bool,
    device: Option<u32>,
    stream: Option<u64>,
    time_range: Option<String>,
    name: Option<String>,
) -> PyResult<Profile> {
    if paths.is_empty() {
        return Err(usage("profile: give at least one file"));
    }
    let s = settings(group, rules, name, device, stream, time_range)?;
    released(py, move || {
        let options = kernelab_trace::RankOptions {
            by_phase,
            ..rank::rank_options(&s)?
        };
        let reads = ProfileReads {
            by_phase,
            by_graph,
            correlations: true,
        };
        let profile = profiling::read_profile(&paths, reads, &no_progress)?;
        let (_, doc) = profiling::profile_doc(&profile, &options, by_graph, false)?;
        Ok(Profile { profile, doc })
    })
}

/// Baseline versus candidate runs, per family (`kernelab compare`).
#[pyfunction]
#[pyo3(signature = (base, cand, control=Vec::new(), group="family", rules=None, device=None, stream=None, time_range=None, name=None, by_graph=false))]
#[allow(clippy::too_many_arguments)]
fn compare(
    py: Python<'_>,
    base: Vec<PathBuf>,
    cand: Vec<PathBuf>,
    control: Vec<String>,
    group: &str,
    rules: Option<PathBuf>,
    device: Option<u32>,
    stream: Option<u64>,
    time_range: Option<String>,
    name: Option<String>,
    by_graph: bool,
) -> PyResult<PyObject> {
    let s = settings(group, rules, name, device, stream, time_range)?;
    let doc = released(py, move || {
        let options = CompareOptions {
            rank: rank::rank_options(&s)?,
            controls: control,
            by_graph,
        };
        let b = comparing::read_runs(&base, by_graph, &no_progress)?;
        let c = comparing::read_runs(&cand, by_graph, &no_progress)?;
        comparing::compare_doc(&b, &c, &options)
    })?;
    to_dict(py, &doc)
}

fn load_options(disassemble: bool, max_decompressed: Option<u64>) -> kernelab_code::LoadOptions {
    kernelab_code::LoadOptions {
        disassemble,
        max_decompressed,
    }
}

/// Every code object of `paths` (`kernelab code show`).
#[pyfunction]
#[pyo3(signature = (paths, disassemble=true, max_decompressed=None))]
fn code_show(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    disassemble: bool,
    max_decompressed: Option<u64>,
) -> PyResult<PyObject> {
    let o = load_options(disassemble, max_decompressed);
    let doc = released(py, move || {
        let mut objects = Vec::new();
        for p in &paths {
            objects.extend(kernelab_code::load_file(p, &o)?);
        }
        Ok(code::show_doc(objects))
    })?;
    to_dict(py, &doc)
}

/// Per-kernel changes from a baseline to a candidate code object (`kernelab code diff`);
/// with `record`, the `code_diff` record is added to that bundle under `label` (default the
/// baseline's file name), both files hashed in its provenance.
#[pyfunction]
#[pyo3(signature = (base, cand, disassemble=true, max_decompressed=None, record=None, label=None))]
fn code_diff(
    py: Python<'_>,
    base: PathBuf,
    cand: PathBuf,
    disassemble: bool,
    max_decompressed: Option<u64>,
    record: Option<PathBuf>,
    label: Option<String>,
) -> PyResult<PyObject> {
    let o = load_options(disassemble, max_decompressed);
    let doc = released(py, move || {
        let b = kernelab_code::load_file(&base, &o)?;
        let c = kernelab_code::load_file(&cand, &o)?;
        let doc = code::diff_doc(&b, &c);
        if let Some(dir) = record {
            let argv = ["python", "kernelab.code.diff"]
                .into_iter()
                .map(String::from)
                .chain([&base, &cand].map(|p| p.display().to_string()))
                .collect();
            let started = kernelab_runner::provenance::rfc3339(std::time::SystemTime::now());
            let provenance =
                kernelab_runner::provenance::collect(argv, started, &[base, cand], None);
            let label = label.unwrap_or_else(|| {
                kernelab_report::bundle::default_label(&provenance.inputs, &doc.kind)
            });
            let rec = kernelab_report::bundle::Record {
                schema_version: kernelab_model::SCHEMA_VERSION,
                kind: doc.kind.clone(),
                label,
                provenance,
                result: serde_json::to_value(&doc.body)?,
            };
            kernelab_report::bundle::write(&dir, &rec)
                .map_err(|e| anyhow::anyhow!("{}: writing the record: {e}", dir.display()))?;
        }
        Ok(doc)
    })?;
    to_dict(py, &doc)
}

/// Which code objects changed between two builds (`kernelab code matrix`).
#[pyfunction]
#[pyo3(signature = (base, cand, base_dir=None, cand_dir=None, key=None, disassemble=false, max_decompressed=None))]
#[allow(clippy::too_many_arguments)]
fn code_matrix(
    py: Python<'_>,
    base: Vec<PathBuf>,
    cand: Vec<PathBuf>,
    base_dir: Option<PathBuf>,
    cand_dir: Option<PathBuf>,
    key: Option<String>,
    disassemble: bool,
    max_decompressed: Option<u64>,
) -> PyResult<PyObject> {
    let read = code::ReadSettings {
        disassemble,
        max_decompressed,
    };
    let (doc, _) = released(py, move || {
        let base = code::BuildPaths {
            dir: base_dir,
            files: base,
        };
        let cand = code::BuildPaths {
            dir: cand_dir,
            files: cand,
        };
        code::matrix_doc(&base, &cand, key.as_deref(), read)
    })?;
    to_dict(py, &doc)
}

/// Memory of a Python object (`bytes`, a NumPy array), read in place with the GIL released:
/// `len` bytes at `ptr`, kept alive by `owner`.
struct PyMemory {
    /// The object whose memory this is; held, so that the memory outlives every read.
    _owner: Py<PyAny>,
    ptr: *const u8,
    len: usize,
}

// SAFETY: `PyMemory` only ever reads the memory, which stays allocated while `_owner` (a
// strong reference, `Send` and `Sync` itself; its release without the GIL is deferred by PyO3)
// lives: a `bytes` object's is immutable; an ndarray's is the array's own buffer, which NumPy
// frees or moves only when the array dies (or is resized, which the reference forbids), and a
// `bytearray`'s is pinned by the buffer export of the NumPy view over it. Another thread that
// writes to the array while a gate reads it races as it would with NumPy's own GIL-free loops:
// the gate may see old or new values, as with a mapped file another process writes.
#[allow(unsafe_code)]
unsafe impl Send for PyMemory {}
// SAFETY: as for `Send`: shared access only reads.
#[allow(unsafe_code)]
unsafe impl Sync for PyMemory {}

impl AsRef<[u8]> for PyMemory {
    fn as_ref(&self) -> &[u8] {
        if self.len == 0 || self.ptr.is_null() {
            return &[];
        }
        // SAFETY: `ptr` and `len` are the data pointer and byte count of `_owner`'s memory,
        // taken from the object itself (`PyBytes::as_bytes`, or NumPy's own
        // `ndarray.__array_interface__` and `ndarray.nbytes` of a C-contiguous array); that
        // memory lives as long as `_owner` (see `Send` above); `u8` has no alignment or
        // validity requirement.
        #[allow(unsafe_code)]
        unsafe {
            std::slice::from_raw_parts(self.ptr, self.len)
        }
    }
}

/// A NumPy array read in place: its NumPy type string (a structured dtype as its field list),
/// the element type its dtype names where that string is opaque, its shape and its memory.
struct ArrayView {
    descr: String,
    named: Option<DType>,
    shape: Vec<usize>,
    memory: SharedBytes,
}

/// The element type of an `ml_dtypes` array (whose NumPy type string, `V2` or `f1`, does not
/// say), by name.
fn named_dtype(name: &str) -> Option<DType> {
    match name {
        "bfloat16" => Some(DType::BF16),
        "float8_e4m3fn" => Some(DType::F8E4M3),
        "float8_e5m2" => Some(DType::F8E5M2),
        _ => None,
    }
}

/// `obj`, a NumPy array, read in place. An array that is not C-contiguous (a strided view,
/// Fortran order) is first copied once into C order by NumPy, which raises `MemoryError` when
/// it cannot have the memory. Every figure is read through `numpy.ndarray`'s own attributes,
/// so that a subclass cannot misstate where the memory is or how large it is.
fn ndarray_view<'py>(label: &Path, obj: &Bound<'py, PyAny>) -> PyResult<ArrayView> {
    let py = obj.py();
    let np = optional::import(py, "an array", &["numpy"])?;
    let nd = np.getattr("ndarray")?;
    if !obj.is_instance(&nd)? {
        return Err(usage(format!(
            "{}: expected a NumPy array, found {}",
            label.display(),
            obj.get_type().name()?
        )));
    }
    let own = |attr: &str, arr: &Bound<'py, PyAny>| -> PyResult<Bound<'py, PyAny>> {
        nd.getattr(attr)?.call_method1("__get__", (arr,))
    };
    let contiguous: bool = own("flags", obj)?.getattr("c_contiguous")?.extract()?;
    let arr = if contiguous {
        obj.clone()
    } else {
        np.call_method1("ascontiguousarray", (obj,))?
    };
    let iface = own("__array_interface__", &arr)?;
    if !iface.get_item("strides")?.is_none() {
        return Err(usage(format!(
            "{}: expected a C-contiguous array after the copy into C order",
            label.display()
        )));
    }
    let (ptr, _readonly): (usize, bool) = iface.get_item("data")?.extract()?;
    let len: usize = own("nbytes", &arr)?.extract()?;
    let shape: Vec<usize> = iface.get_item("shape")?.extract()?;
    let fields = iface.get_item("descr")?;
    let plain = fields.len()? == 1
        && fields
            .get_item(0)?
            .get_item(0)?
            .extract::<String>()?
            .is_empty();
    let descr: String = if plain {
        iface.get_item("typestr")?.extract()?
    } else {
        fields.str()?.extract()?
    };
    let name: String = own("dtype", &arr)?.getattr("name")?.extract()?;
    let memory = PyMemory {
        _owner: arr.unbind(),
        ptr: ptr as *const u8,
        len,
    };
    Ok(ArrayView {
        descr,
        named: named_dtype(&name),
        shape,
        memory: Arc::new(memory),
    })
}

/// The bytes of a tensor file held by `obj` (`bytes`, or a NumPy byte view of a `bytearray`
/// or `memoryview`), read in place.
fn file_bytes(label: &Path, obj: &Bound<'_, PyAny>) -> PyResult<SharedBytes> {
    if let Ok(b) = obj.downcast::<PyBytes>() {
        let data = b.as_bytes();
        let memory = PyMemory {
            ptr: data.as_ptr(),
            len: data.len(),
            _owner: b.clone().into_any().unbind(),
        };
        return Ok(Arc::new(memory));
    }
    Ok(ndarray_view(label, obj)?.memory)
}

/// A tensor input as the Python package passes it, `(name, kind, data)`: a file
/// (`(path, "path", None)`), the bytes of a tensor file (`(label, "file", bytes)`) or a NumPy
/// array (`(label, "array", ndarray)`). Memory is read in place, never copied into Rust.
enum TensorInput {
    /// A tensor file.
    Path(PathBuf),
    /// The bytes of a tensor file, under a label.
    File(PathBuf, SharedBytes),
    /// An array, under a label.
    Array(PathBuf, ArrayView),
}

impl<'py> FromPyObject<'py> for TensorInput {
    fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        let (name, kind, data): (PathBuf, String, Bound<'py, PyAny>) = ob.extract()?;
        match kind.as_str() {
            "path" => Ok(TensorInput::Path(name)),
            "file" => {
                let bytes = file_bytes(&name, &data)?;
                Ok(TensorInput::File(name, bytes))
            }
            "array" => {
                let view = ndarray_view(&name, &data)?;
                Ok(TensorInput::Array(name, view))
            }
            other => Err(usage(format!(
                "{}: input kind {other:?}: expected \"path\", \"file\" or \"array\"",
                name.display()
            ))),
        }
    }
}

fn read_spec(
    dtype: Option<&str>,
    shape: Option<Vec<usize>>,
    max_decompressed: Option<u64>,
) -> PyResult<ReadSpec> {
    check::ReadSettings {
        dtype: dtype.map(str::to_string),
        shape,
        max_decompressed,
    }
    .spec("dtype=")
    .map_err(py_err)
}

/// Reads a tensor input for a gate: no tensors or no elements is an error (a gate with nothing
/// to compare is not a pass), as for the CLI.
fn load_tensor(input: TensorInput, spec: &ReadSpec) -> Res<TensorFile> {
    let f = match input {
        TensorInput::Path(path) => kernelab_tensor::open(&path, spec)?,
        TensorInput::File(label, bytes) => kernelab_tensor::from_shared(&label, bytes, spec)?,
        TensorInput::Array(label, a) => {
            kernelab_tensor::from_array(&label, &a.descr, a.named, a.shape, a.memory, spec)?
        }
    };
    f.check_comparable()?;
    Ok(f)
}

/// Bit-for-bit equality of two tensor files (`kernelab check bitwise`).
#[pyfunction]
#[pyo3(signature = (a, b, zero_equal=false, nan_equal=false, first=10, dtype=None, shape=None, max_decompressed=None))]
#[allow(clippy::too_many_arguments)]
fn check_bitwise(
    py: Python<'_>,
    a: TensorInput,
    b: TensorInput,
    zero_equal: bool,
    nan_equal: bool,
    first: usize,
    dtype: Option<&str>,
    shape: Option<Vec<usize>>,
    max_decompressed: Option<u64>,
) -> PyResult<PyObject> {
    let spec = read_spec(dtype, shape, max_decompressed)?;
    let c = released(py, move || {
        let (x, y) = (load_tensor(a, &spec)?, load_tensor(b, &spec)?);
        let options = BitwiseOptions {
            zero_equal,
            nan_equal,
            first,
        };
        Ok(check::bitwise_doc(&x, &y, options))
    })?;
    to_dict(py, &c)
}

/// Closeness of two tensor files within tolerances (`kernelab check close` and `oracle`).
#[pyfunction]
#[pyo3(signature = (a, b, oracle=false, rtol=None, atol=None, ulp=None, nan_equal=false, dtype=None, shape=None, max_decompressed=None))]
#[allow(clippy::too_many_arguments)]
fn check_close(
    py: Python<'_>,
    a: TensorInput,
    b: TensorInput,
    oracle: bool,
    rtol: Option<f64>,
    atol: Option<f64>,
    ulp: Option<u64>,
    nan_equal: bool,
    dtype: Option<&str>,
    shape: Option<Vec<usize>>,
    max_decompressed: Option<u64>,
) -> PyResult<PyObject> {
    let spec = read_spec(dtype, shape, max_decompressed)?;
    let c = released(py, move || {
        let (x, y) = (load_tensor(a, &spec)?, load_tensor(b, &spec)?);
        let settings = check::CloseSettings {
            rtol,
            atol,
            ulp,
            nan_equal,
            oracle,
        };
        Ok(check::close_doc(&x, &y, settings))
    })?;
    to_dict(py, &c)
}

/// A gate over several tensor files: `finite` (NaN and infinity counts, `kernelab check
/// finite`) or `repeat` (whether repeated runs wrote identical tensors, `kernelab check
/// repeat`).
#[pyfunction]
#[pyo3(signature = (gate, inputs, dtype=None, shape=None, max_decompressed=None))]
fn check_files(
    py: Python<'_>,
    gate: &str,
    inputs: Vec<TensorInput>,
    dtype: Option<&str>,
    shape: Option<Vec<usize>>,
    max_decompressed: Option<u64>,
) -> PyResult<PyObject> {
    let repeat = match gate {
        "finite" => false,
        "repeat" if inputs.len() < 2 => return Err(usage("check repeat needs at least two files")),
        "repeat" => true,
        other => return Err(usage(format!("gate {other:?}: expected finite or repeat"))),
    };
    let spec = read_spec(dtype, shape, max_decompressed)?;
    let files = released(py, move || {
        inputs
            .into_iter()
            .map(|i| load_tensor(i, &spec))
            .collect::<Res<Vec<_>>>()
    })?;
    if repeat {
        let r = py
            .allow_threads(|| check::repeat_doc(&files))
            .map_err(py_err)?;
        return to_dict(py, &r);
    }
    let doc = py.allow_threads(|| check::finite_doc(&files));
    to_dict(py, &doc)
}

/// Pairs `(baseline, candidate, order)`; an order not given is ABBA from AB by position, as
/// for another harness's CSV.
fn pairs(rows: Vec<(f64, f64, Option<String>)>) -> PyResult<Vec<Pair>> {
    rows.into_iter()
        .enumerate()
        .map(|(k, (a, b, order))| {
            let order = match order.as_deref().map(str::to_ascii_uppercase).as_deref() {
                None => kernelab_runner::pairs::default_order(k),
                Some("AB") => Order::AB,
                Some("BA") => Order::BA,
                Some(o) => {
                    return Err(usage(format!(
                        "order of pair {k}: {o:?}: expected \"AB\" or \"BA\""
                    )))
                }
            };
            Ok(Pair { order, a, b })
        })
        .collect()
}

/// The statistical design's settings as the Python keywords give them.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct DesignKw {
    threshold: String,
    alpha: f64,
    until: Option<String>,
    watch: bool,
    fixed: bool,
    min_pairs: usize,
    max_pairs: usize,
    higher_is_better: bool,
}

impl DesignKw {
    fn settings(&self) -> DesignSettings {
        DesignSettings {
            threshold: self.threshold.clone(),
            until: self.until.clone(),
            watch: self.watch,
            fixed: self.fixed,
            alpha: self.alpha,
            min_pairs: self.min_pairs,
            max_pairs: self.max_pairs,
            ..DesignSettings::default()
        }
    }

    fn direction(&self) -> Direction {
        if self.higher_is_better {
            Direction::HigherIsBetter
        } else {
            Direction::LowerIsBetter
        }
    }
}

/// The A/B analysis of paired samples (`kernelab ab analyze`), from pairs or a samples file
/// (kernelab's JSONL, another harness's CSV or JSON).
#[pyfunction]
#[pyo3(signature = (design, pairs_=None, aa=None, file=None, metric=None))]
fn ab_analyze(
    py: Python<'_>,
    design: DesignKw,
    pairs_: Option<Vec<(f64, f64, Option<String>)>>,
    aa: Option<Vec<(f64, f64, Option<String>)>>,
    file: Option<PathBuf>,
    metric: Option<String>,
) -> PyResult<PyObject> {
    let settings = design.settings();
    let direction = design.direction();
    let doc = match file {
        Some(path) => released(py, move || {
            ab::analyze_file(&path, metric.as_deref(), &settings, |_| direction)
        })?,
        None => {
            let main = pairs(pairs_.unwrap_or_default())?;
            let aa = pairs(aa.unwrap_or_default())?;
            if main.is_empty() {
                return Err(usage("no complete pairs to analyse"));
            }
            let d = settings.analysis_design(direction, None).map_err(usage)?;
            let runs = 2 * (main.len() + aa.len());
            let metric = metric.unwrap_or_else(|| "value".into());
            ab::ab_analysis(None, metric, &main, &aa, (0, runs), &d)
        }
    };
    to_dict(py, &doc)
}

/// The analysis of a `kernelab serve` samples file (`kernelab serve --analyze`).
#[pyfunction]
fn serve_analyze(py: Python<'_>, samples: PathBuf) -> PyResult<PyObject> {
    let doc = released(py, move || serve::analyze_samples(&samples))?;
    to_dict(py, &doc)
}

/// A bundle's record texts, and the files that could not be read with the reason.
type BundleTexts = (Vec<String>, Vec<(String, String)>);

/// The records of an evidence bundle, each as its file holds it.
#[pyfunction]
fn bundle_records(py: Python<'_>, dir: PathBuf) -> PyResult<BundleTexts> {
    released(py, move || {
        let (entries, bad) = bundle::bundle_records(&dir)?;
        let texts = entries
            .iter()
            .map(|e| {
                kernelab_report::bundle::read_record_text(&e.path)
                    .with_context(|| e.path.display().to_string())
            })
            .collect::<Res<Vec<_>>>()?;
        let bad = bad
            .iter()
            .map(|b| {
                let u = b.unreadable();
                (u.path.display().to_string(), u.reason)
            })
            .collect();
        Ok((texts, bad))
    })
}

/// A bundle's report (`kernelab report`): `md` (the pull-request body, whole), `html` or
/// `json`.
#[pyfunction]
#[pyo3(signature = (dir, format="md", title="kernelab evidence", strict=false))]
fn bundle_report(
    py: Python<'_>,
    dir: PathBuf,
    format: &str,
    title: &str,
    strict: bool,
) -> PyResult<PyObject> {
    let report = released(py, move || bundle::bundle_report(&dir, strict))?;
    match format {
        "md" => {
            let (body, _) = kernelab_report::pr_body(title, &report, usize::MAX, "");
            Ok(body.into_pyobject(py)?.into_any().unbind())
        }
        "html" => Ok(kernelab_report::evidence_html(title, &report)
            .into_pyobject(py)?
            .into_any()
            .unbind()),
        "json" => to_dict(py, &bundle::report_summary(title, &report)),
        other => Err(usage(format!(
            "format={other:?}: expected \"md\", \"html\" or \"json\""
        ))),
    }
}

/// The figures of a note that the bundle does not support (`kernelab report check`).
#[pyfunction]
#[pyo3(signature = (dir, note=None, text=None))]
fn bundle_check(
    py: Python<'_>,
    dir: PathBuf,
    note: Option<PathBuf>,
    text: Option<String>,
) -> PyResult<PyObject> {
    let (doc, _) = released(py, move || {
        let text = match (note, text) {
            (Some(path), _) => bundle::read_note(&path)?,
            (None, Some(t)) => t,
            (None, None) => anyhow::bail!("give a note file or its text"),
        };
        bundle::report_check(&text, &dir)
    })?;
    to_dict(py, &doc)
}

/// Runs the `kernelab` command line in this process (the `kernelab` command of the wheel);
/// returns its exit code.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<String>) -> u8 {
    let argv = argv.into_iter().map(Into::into).collect();
    py.allow_threads(move || kernelab::main_with(argv))
}

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("UsageError", py.get_type::<UsageError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Table>()?;
    m.add_class::<Profile>()?;
    m.add_function(wrap_pyfunction!(profile, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(code_show, m)?)?;
    m.add_function(wrap_pyfunction!(code_diff, m)?)?;
    m.add_function(wrap_pyfunction!(code_matrix, m)?)?;
    m.add_function(wrap_pyfunction!(check_bitwise, m)?)?;
    m.add_function(wrap_pyfunction!(check_close, m)?)?;
    m.add_function(wrap_pyfunction!(check_files, m)?)?;
    m.add_function(wrap_pyfunction!(ab_analyze, m)?)?;
    m.add_function(wrap_pyfunction!(serve_analyze, m)?)?;
    m.add_function(wrap_pyfunction!(bundle_records, m)?)?;
    m.add_function(wrap_pyfunction!(bundle_report, m)?)?;
    m.add_function(wrap_pyfunction!(bundle_check, m)?)?;
    m.add_function(wrap_pyfunction!(kernel::kernel_orders, m)?)?;
    m.add_function(wrap_pyfunction!(kernel::kernel_batch, m)?)?;
    m.add_function(wrap_pyfunction!(kernel::kernel_measured, m)?)?;
    m.add_function(wrap_pyfunction!(kernel::controls_check, m)?)?;
    m.add_function(wrap_pyfunction!(kernel::kernel_text, m)?)?;
    m.add_function(wrap_pyfunction!(kernel::kernel_code_pair, m)?)?;
    m.add_function(wrap_pyfunction!(kernel::kernel_plan, m)?)?;
    m.add_function(wrap_pyfunction!(kernel::fingerprint, m)?)?;
    m.add_class::<kernel::KernelSamples>()?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    Ok(())
}
