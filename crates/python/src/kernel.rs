//! `kernelab.kernel.compare`'s native half: the ABBA order and batch size `kernel run` uses,
//! and the `kernel_run` document (rounds, verdict, record) of what the Python side measured.
//! The statistics are `kernel run`'s own (`kernelab_launcher::run`), never Python's.

use super::{released, to_dict, Res};
use kernelab_commands::kernel::{abba_orders, measured, Measured};
use kernelab_model::InputFile;
use kernelab_report::bundle::{self, Record};
use pyo3::prelude::*;
use std::path::PathBuf;

/// The order of each of `rounds` timed rounds: `"AB"` (baseline first) or `"BA"`.
#[pyfunction]
pub(crate) fn kernel_orders(rounds: usize) -> Vec<&'static str> {
    abba_orders(rounds)
        .into_iter()
        .map(|o| match o {
            kernelab_stats::Order::AB => "AB",
            kernelab_stats::Order::BA => "BA",
        })
        .collect()
}

/// Calls per timed sample for a callable timed once per call in `us` (microseconds): `kernel
/// run`'s batch rule applied to their median.
#[pyfunction]
pub(crate) fn kernel_batch(us: Vec<f64>) -> usize {
    kernelab_launcher::run::batch_for(kernelab_stats::rank::median(&us).unwrap_or(1.0))
}

/// The environment fingerprint now (`kernel run`'s: GPU, driver, clocks and their locks,
/// power cap, ECC, persistence, compute mode; null where no tool says), as JSON, with
/// `command` as the benchmark's command.
#[pyfunction]
#[pyo3(signature = (command=None))]
pub(crate) fn fingerprint(py: Python<'_>, command: Option<String>) -> PyResult<String> {
    let f = py.allow_threads(|| kernelab_runner::provenance::fingerprint::read(command.as_deref()));
    serde_json::to_string(&f)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("the fingerprint: {e}")))
}

/// One provenance input named by the caller: `(name, sha256, bytes)` (a callable's qualified
/// name with the hash of its source, a library with its version).
type Named = (String, Option<String>, Option<u64>);

/// The `kernel_run` document of `measured` (the JSON of what the Python side ran and timed):
/// samples written to a run's samples file (`samples`, else one in the state folder), rounds
/// and verdict computed as `kernel run` computes them, and the record added to the bundle
/// `record` under `label` with `inputs` in its provenance.
#[pyfunction]
#[pyo3(signature = (measured_json, label, source, samples=None, record=None, argv=Vec::new(), started=String::new(), inputs=Vec::new(), written=None, controls=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn kernel_measured(
    py: Python<'_>,
    measured_json: String,
    label: String,
    source: String,
    samples: Option<PathBuf>,
    record: Option<PathBuf>,
    argv: Vec<String>,
    started: String,
    inputs: Vec<Named>,
    written: Option<PathBuf>,
    controls: Option<PathBuf>,
) -> PyResult<PyObject> {
    let doc = released(py, move || -> Res<_> {
        let m: Measured = serde_json::from_str(&measured_json)
            .map_err(|e| anyhow::anyhow!("the measured run: {e}"))?;
        let gpu = (!m.device.starts_with("cpu")).then(|| m.device.clone());
        let mut doc = match written {
            Some(path) => kernelab_commands::kernel::measured_from(m, path)?,
            None => measured(m, &label, &source, samples.as_deref())?,
        };
        if let Some(ledger) = &controls {
            kernelab_commands::kernel::callable_controls(&mut doc, &source, ledger)?;
        }
        if let Some(dir) = record {
            let mut provenance = kernelab_runner::provenance::collect(argv, started, &[], gpu);
            provenance
                .inputs
                .extend(inputs.into_iter().map(|(path, sha256, bytes)| InputFile {
                    path,
                    sha256,
                    bytes,
                }));
            let rec = Record {
                schema_version: kernelab_model::SCHEMA_VERSION,
                kind: doc.kind.clone(),
                label,
                provenance,
                result: serde_json::to_value(&doc.body)?,
            };
            bundle::write(&dir, &rec)
                .map_err(|e| anyhow::anyhow!("{}: writing the record: {e}", dir.display()))?;
        }
        Ok(doc)
    })?;
    to_dict(py, &doc)
}

/// Reads the controls ledger `path` whole (none yet is fine): a line that is not a control
/// raises, naming the file and the line, before anything is timed.
#[pyfunction]
pub(crate) fn controls_check(py: Python<'_>, path: PathBuf) -> PyResult<()> {
    released(py, move || -> Res<_> {
        kernelab_commands::controls::read(&path, "")?;
        Ok(())
    })
}

/// A kernel run's samples file written as each sample is measured: `KernelSamples(label,
/// source, rounds, samples=None)`, then `write(sample_json)` per sample and `finish(complete)`
/// (returns the file's path, for `kernel_measured(..., written=path)`).
#[pyclass(module = "kernelab._native")]
pub(crate) struct KernelSamples {
    stream: Option<kernelab_commands::kernel::SampleStream>,
}

#[pymethods]
impl KernelSamples {
    #[new]
    #[pyo3(signature = (label, source, rounds, samples=None))]
    fn new(label: &str, source: &str, rounds: usize, samples: Option<PathBuf>) -> PyResult<Self> {
        let stream = kernelab_commands::kernel::SampleStream::create(
            label,
            source,
            rounds,
            samples.as_deref(),
        )
        .map_err(super::py_err)?;
        Ok(KernelSamples {
            stream: Some(stream),
        })
    }

    /// Appends one sample (the JSON of a `kernel_run` sample).
    fn write(&mut self, sample_json: &str) -> PyResult<()> {
        let sample: kernelab_model::kernel_run::Sample = serde_json::from_str(sample_json)
            .map_err(|e| super::usage(format!("a sample: {e}")))?;
        match self.stream.as_mut() {
            Some(s) => s.write(&sample).map_err(super::py_err),
            None => Err(super::usage("the samples file is finished".to_string())),
        }
    }

    /// Ends the run (complete, or failed) and returns the samples file's path.
    fn finish(&mut self, complete: bool) -> PyResult<String> {
        match self.stream.take() {
            Some(s) => Ok(s
                .finish(complete)
                .map_err(super::py_err)?
                .display()
                .to_string()),
            None => Err(super::usage("the samples file is finished".to_string())),
        }
    }
}

/// The text `kernel run` prints for the `kernel_run` document `doc_json`: `table` (the
/// terminal's, at `width` columns) or `md`.
#[pyfunction]
#[pyo3(signature = (doc_json, format="table", width=None))]
pub(crate) fn kernel_text(doc_json: &str, format: &str, width: Option<u16>) -> PyResult<String> {
    use kernelab_report::documents::KernelRunBody;
    use kernelab_report::{kernel_sections, render, OutputFormat};
    let out = match format {
        "table" => OutputFormat::Terminal,
        "md" => OutputFormat::Markdown,
        other => {
            return Err(super::usage(format!(
                "format={other:?}: expected \"table\" or \"md\""
            )))
        }
    };
    let body: KernelRunBody = serde_json::from_str(doc_json)
        .map_err(|e| super::usage(format!("not a kernel_run document: {e}")))?;
    Ok(render(&kernel_sections(&body.run), out, width))
}

/// Kernel `base_symbol` of the code object `base` against kernel `cand_symbol` of `cand`:
/// `(identical, line, [registers], [frame bytes])`, the machine code compared with what does
/// not execute set aside (`kernel run`'s own comparison).
#[pyfunction]
pub(crate) fn kernel_code_pair(
    py: Python<'_>,
    base: PathBuf,
    base_symbol: String,
    cand: PathBuf,
    cand_symbol: String,
) -> PyResult<KernelCodePair> {
    released(py, move || -> Res<_> {
        let p = kernelab_commands::kernel::kernel_pair(&base, &base_symbol, &cand, &cand_symbol)?;
        Ok((p.identical, p.line, p.registers, p.frame_bytes))
    })
}

/// What [`kernel_code_pair`] returns.
type KernelCodePair = (bool, String, [Option<u32>; 2], [Option<u64>; 2]);

/// The launch spec `path` resolved without a GPU (`kernel run --dry-run --format json`): both
/// builds' symbol, geometry and parameters, and the buffers. Bad specs raise `UsageError`.
#[pyfunction]
pub(crate) fn kernel_plan(py: Python<'_>, path: PathBuf) -> PyResult<PyObject> {
    let plan = released(py, move || -> Res<_> {
        let spec = kernelab_launcher::Spec::read(&path)?;
        Ok(kernelab_launcher::plan::plan(&spec)?)
    })?;
    to_dict(py, &plan)
}
