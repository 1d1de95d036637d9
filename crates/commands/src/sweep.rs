//! The end of `sweep` and `check sweep`: every point's result merged into the sweep matrix.

use crate::{Outcome, OutputFile, Recordable, Status, View};
use anyhow::Result;
use kernelab_model::sweep::{PointResult, SweepMatrix};
use kernelab_model::Document;
use kernelab_report::sweep_matrix_sections;
use kernelab_runner::sweep::Sweep;
use std::path::Path;

/// The outcome of `sweep`'s `results` merged into its matrix, with `matrix.json` written in
/// the results folder `dir` when there is one. It fails when a point failed a gate, and is
/// incomplete (with a note saying why) when a point could not run or has not run: the sweep's
/// answer is not known yet, even where another point failed.
pub fn outcome(sweep: &Sweep, results: Vec<PointResult>, dir: Option<&Path>) -> Result<Outcome> {
    let builds = sweep.code_changes()?;
    let m = SweepMatrix::merge(
        &sweep.path.display().to_string(),
        sweep.mode_name(),
        &sweep.ids(),
        results,
        builds,
    );
    let doc = Document::new("sweep", m);
    let record = Recordable::of(&doc, &sweep.inputs(), None)?;
    let matrix = match dir.filter(|d| d.is_dir()) {
        Some(dir) => Some(OutputFile {
            option: "the results folder",
            path: dir.join("matrix.json"),
            text: crate::json(&doc)?,
            replace: true,
        }),
        None => None,
    };
    let m = &doc.body;
    let (status, note) = if !m.pending.is_empty() || m.errors > 0 {
        let note = format!(
            "the matrix is incomplete: {} points not run, {} could not run{}",
            m.pending.len(),
            m.errors,
            if dir.is_some() {
                "; rerun to resume"
            } else {
                " (see their errors)"
            }
        );
        (Status::Incomplete, Some(note))
    } else {
        (Status::of(m.failed == 0), None)
    };
    let view = View::shared(doc, |doc, _| sweep_matrix_sections(&doc.body)).without_csv(
        "--format csv is not offered for sweep; use json, or `kernelab export --parquet`",
    );
    let mut outcome = Outcome::new(view, status).recording(record);
    outcome.files.extend(matrix);
    outcome.late_notes.extend(note);
    Ok(outcome)
}
