//! `--record DIR` / `KERNELAB_BUNDLE`: appends each command's result, with its provenance, to an
//! evidence bundle.

use anyhow::{Context, Result};
use kernelab_model::{Document, SCHEMA_VERSION};
use kernelab_report::bundle::{self, Record};
use kernelab_runner::provenance::{collect, rfc3339};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::SystemTime;

struct Recorder {
    dir: Option<PathBuf>,
    label: Option<String>,
    argv: Vec<String>,
    started: String,
}

static RECORDER: OnceLock<Recorder> = OnceLock::new();

/// Remembers where to record (the `--record` option, else `KERNELAB_BUNDLE`), the `--label`
/// and the start time.
pub fn init(dir: Option<PathBuf>, label: Option<String>) {
    let dir = dir.or_else(|| {
        std::env::var_os("KERNELAB_BUNDLE")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    });
    let _ = RECORDER.set(Recorder {
        dir,
        label,
        argv: std::env::args().collect(),
        started: rfc3339(SystemTime::now()),
    });
}

/// Whether a bundle was requested (`--record` or `KERNELAB_BUNDLE`).
pub fn enabled() -> bool {
    RECORDER.get().is_some_and(|r| r.dir.is_some())
}

/// Records `doc` (its kind names the record) when a bundle was requested; `inputs` are hashed.
pub fn record<T: Serialize>(
    doc: &Document<T>,
    inputs: &[PathBuf],
    gpu: Option<String>,
) -> Result<()> {
    let Some(r) = RECORDER.get() else {
        return Ok(());
    };
    let Some(dir) = &r.dir else { return Ok(()) };
    let provenance = collect(r.argv.clone(), r.started.clone(), inputs, gpu);
    let result = serde_json::to_value(doc).context("serializing the record")?;
    let label = r
        .label
        .clone()
        .unwrap_or_else(|| bundle::default_label(&provenance.inputs, &doc.kind));
    let rec = Record {
        schema_version: SCHEMA_VERSION,
        kind: doc.kind.clone(),
        label,
        provenance,
        result,
    };
    bundle::write(dir, &rec).with_context(|| format!("{}: writing the record", dir.display()))?;
    Ok(())
}
