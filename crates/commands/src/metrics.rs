//! `metrics`: per-launch metric tables from Nsight Compute CSV.

use crate::{setting, Hooks, Medium, Outcome, Recordable, Status, View};
use anyhow::{bail, Result};
use kernelab_model::{Document, Profile};
use kernelab_report::documents::MetricsBody;
use kernelab_report::{metric_columns, metrics_csv, metrics_tables};
use kernelab_trace::{read_file, ReadOptions};
use std::path::PathBuf;
use std::rc::Rc;

/// `metrics`: the launches of `files` (Nsight Compute CSV, each with per-launch metrics), shown
/// with the columns `metrics` names (the default set when empty).
pub fn metrics(files: &[PathBuf], metrics: &[String], hooks: &dyn Hooks) -> Result<Outcome> {
    if files.is_empty() {
        return Err(setting("metrics: give at least one file"));
    }
    let mut profile = Profile::default();
    for path in files {
        let options = ReadOptions {
            metrics_only: true,
            ..ReadOptions::default()
        };
        read_file(path, &options, &mut profile, hooks.reading(path).as_ref())?;
        if profile.launch_metrics.is_empty() {
            bail!(
                "{}: has no per-launch metrics (expected Nsight Compute CSV output)",
                path.display()
            );
        }
    }
    let columns = metric_columns(&profile.launch_metrics, metrics);
    let doc = Document::of(MetricsBody {
        launches: profile.launch_metrics,
    });
    let record = Recordable::of(&doc, files, None)?;
    let shown = Rc::new(columns);
    let view = View::shared_with_csv(
        doc,
        {
            let columns = Rc::clone(&shown);
            move |d, m: Medium| metrics_tables(&d.body.launches, &columns, m.name_width())
        },
        move |d| Ok(metrics_csv(&d.body.launches, &shown)?),
    );
    Ok(Outcome::new(view, Status::Pass).recording(record))
}
