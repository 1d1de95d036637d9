//! `--record DIR` / `KERNELAB_BUNDLE`: a command's document, with its provenance, added to an
//! evidence bundle. A command hands its document to the [`Session`] it runs in; `main` writes the
//! record once the command has succeeded (no global state, and no record of a command that
//! failed half-way).

use anyhow::{Context, Result};
use kernelab_commands::Recordable;
use kernelab_model::{Document, SCHEMA_VERSION};
use kernelab_report::bundle::{self, Record};
use kernelab_runner::provenance::{collect, rfc3339};
use serde::Serialize;
use std::path::PathBuf;
use std::time::SystemTime;

/// One run of one command: where to record, the `--label`, the command line and start time, and
/// the documents the command produced.
pub(crate) struct Session {
    dir: Option<PathBuf>,
    label: Option<String>,
    argv: Vec<String>,
    started: String,
    documents: Vec<Recordable>,
}

impl Session {
    /// A session of the command line `argv` recording into `dir` (the `--record` option, else
    /// `KERNELAB_BUNDLE`) under `label`, started now.
    pub(crate) fn new(dir: Option<PathBuf>, label: Option<String>, argv: Vec<String>) -> Session {
        let dir = dir.or_else(|| {
            std::env::var_os("KERNELAB_BUNDLE")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        });
        Session {
            dir,
            label,
            argv,
            started: rfc3339(SystemTime::now()),
            documents: Vec::new(),
        }
    }

    /// Whether a bundle was requested (`--record` or `KERNELAB_BUNDLE`).
    pub(crate) fn enabled(&self) -> bool {
        self.dir.is_some()
    }

    /// Keeps `doc` (its kind names the record) for recording; `inputs` are hashed then.
    pub(crate) fn record<T: Serialize>(
        &mut self,
        doc: &Document<T>,
        inputs: &[PathBuf],
        gpu: Option<String>,
    ) -> Result<()> {
        self.keep(Recordable::of(doc, inputs, gpu)?);
        Ok(())
    }

    /// Keeps `record` for recording (its inputs are hashed then).
    pub(crate) fn keep(&mut self, record: Recordable) {
        self.documents.push(record);
    }

    /// Writes every document kept as a record of the bundle, when one was asked for.
    pub(crate) fn finish(self) -> Result<()> {
        let Some(dir) = &self.dir else { return Ok(()) };
        for d in &self.documents {
            let mut provenance = collect(
                self.argv.clone(),
                self.started.clone(),
                &d.inputs,
                d.gpu.clone(),
            );
            provenance.inputs.extend(d.hashed.iter().cloned());
            let label = self
                .label
                .clone()
                .unwrap_or_else(|| bundle::default_label(&provenance.inputs, &d.kind));
            let rec = Record {
                schema_version: SCHEMA_VERSION,
                kind: d.kind.clone(),
                label,
                provenance,
                result: d.body.clone(),
            };
            bundle::write(dir, &rec)
                .with_context(|| format!("{}: writing the record", dir.display()))?;
        }
        Ok(())
    }
}
