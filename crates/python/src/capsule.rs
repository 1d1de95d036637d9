//! The Arrow PyCapsule interface (<https://arrow.apache.org/docs/format/CDataInterface/PyCapsuleInterface.html>):
//! a table's schema (`arrow_schema`), its rows as a C stream (`arrow_array_stream`) and one
//! column as a C array (`arrow_array`), each a capsule that owns an `arrow-array` FFI struct.
//!
//! Written here rather than taken from `pyo3-arrow`: kernelab exports three capsules and
//! imports none, and that crate brings NumPy, ndarray, time zones and Arrow's cast kernels
//! into the wheel's build (about a tenth of `pip install .`, docs/benchmarks.md). No unsafe
//! code: a consumer moves the struct out of the capsule (leaving it released), and the
//! capsule's destructor drops what is left, which calls `release` only when no consumer did,
//! as the interface asks.

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchIterator};
use arrow_schema::{ArrowError, FieldRef, Schema, SchemaRef};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};
use std::ffi::CString;

/// A capsule named `name` owning `value`.
fn capsule<'py, T: 'static + Send>(
    py: Python<'py>,
    value: T,
    name: &str,
) -> PyResult<Bound<'py, PyCapsule>> {
    let name = CString::new(name).map_err(|e| PyValueError::new_err(e.to_string()))?;
    PyCapsule::new(py, value, Some(name))
}

fn arrow(e: ArrowError) -> PyErr {
    PyValueError::new_err(format!("exporting to Arrow: {e}"))
}

/// The schema as an `arrow_schema` capsule.
pub(crate) fn schema<'py>(py: Python<'py>, schema: &Schema) -> PyResult<Bound<'py, PyCapsule>> {
    capsule(
        py,
        FFI_ArrowSchema::try_from(schema).map_err(arrow)?,
        "arrow_schema",
    )
}

/// The batches as an `arrow_array_stream` capsule (each batch a struct array of the schema,
/// its metadata kept).
pub(crate) fn stream(
    py: Python<'_>,
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
) -> PyResult<Bound<'_, PyCapsule>> {
    let reader = RecordBatchIterator::new(batches.into_iter().map(Ok), schema);
    capsule(
        py,
        FFI_ArrowArrayStream::new(Box::new(reader)),
        "arrow_array_stream",
    )
}

/// One column of a table, handed to Python as an Arrow C array (`pyarrow.array(column)`).
#[pyclass(module = "kernelab", name = "Column", frozen)]
pub(crate) struct Column {
    array: ArrayRef,
    field: FieldRef,
}

impl Column {
    /// The column `array` of the field `field`.
    pub(crate) fn new(array: ArrayRef, field: FieldRef) -> Column {
        Column { array, field }
    }
}

#[pymethods]
impl Column {
    /// The field and the array as an (`arrow_schema`, `arrow_array`) pair of capsules. A
    /// requested schema is a hint the producer may ignore (the interface says so): the column
    /// is exported as it is.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema;
        let field = FFI_ArrowSchema::try_from(self.field.as_ref()).map_err(arrow)?;
        let array = FFI_ArrowArray::new(&self.array.to_data());
        PyTuple::new(
            py,
            [
                capsule(py, field, "arrow_schema")?,
                capsule(py, array, "arrow_array")?,
            ],
        )
    }

    fn __len__(&self) -> usize {
        self.array.len()
    }
}
